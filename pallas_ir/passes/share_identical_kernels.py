"""share-identical-kernels: kernels that compute the same thing on buffers the host
holds alike become one kernel, launched at each place the others were.

The layers of a model are the same code on other weights: a 2-layer GPT's frontend
writes each layer's kernels twice. Tiling, lowering, emitting and jax's tracing and
lowering are per kernel, so each copy costs compile time and makes the emitted module
longer. After this pass the copies are launches of one kernel:

```mlir
ta.kernel @k4(%x: memref<4096xf32> {role = "in"}, %o: memref<4096xf32> {role = "out"}) { body }
ta.kernel @k20(%x: memref<4096xf32> {role = "in"}, %o: memref<4096xf32> {role = "out"}) { body }
func.func @forward(...) {
  ta.launch @k4(%a, %b) : ...
  ta.launch @k20(%c, %d) : ...
}
```

becomes `@k4` alone, launched as `ta.launch @k4(%a, %b)` then `ta.launch @k4(%c, %d)`.
The emitter then writes one kernel function and one jitted `pallas_call` for both.

Two kernels are one when (each checked):
- their bodies, argument types and roles are structurally equal (xDSL's structural
  equivalence: the same ops, attributes and types, in the same order), and neither is
  marked for XLA;
- every launch of either passes each argument through host views of the same types,
  from a root buffer of the same kind (an iota argument or not), and passes the same
  buffer at the same argument positions: the tiler reads the host's views to choose
  blocks, and aliasing decides how outputs are written, so the shared kernel is
  tiled and lowered as each copy would have been.

It runs after the rewrites that look at one kernel's launch (fusion wants a kernel
launched once), just before `tile-policy`. Each removed copy gets a remark naming the
kernel it now launches, and counts under `kernels shared` in `--pass-statistics`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import Rewriter

from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.passes.options import CheckedOptionsPass


def _launch_context(launch: ta.LaunchOp) -> tuple[object, ...]:
    """What tiling and lowering read of a launch besides the kernel: for each
    argument, the types along its chain of host views and the kind of its root, and
    the first argument position holding the same root (aliasing)."""
    roots: list[SSAValue] = []
    views: list[tuple[object, ...]] = []
    for arg in launch.args:
        chain: list[Attribute] = [arg.type]
        value: SSAValue = arg
        while isinstance(value.owner, ta.ReshapeOp):
            value = value.owner.source
            chain.append(value.type)
        roots.append(value)
        views.append((tuple(chain), ta.is_iota_argument(value)))
    first_of_root = tuple(roots.index(r) for r in roots)
    return (tuple(views), first_of_root)


def _kernel_key(kernel: ta.KernelOp) -> tuple[object, ...]:
    """A cheap key that structurally equal kernels share."""
    return (
        tuple(a.type for a in kernel.body.block.args),
        kernel.roles,
        tuple(op.name for op in kernel.body.walk()),
    )


@dataclass(frozen=True)
class ShareIdenticalKernelsPass(CheckedOptionsPass):
    """Launch one kernel where several identical ones were (see the module docstring).

    Options: none.
    """

    name = "share-identical-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kept: dict[tuple[object, ...], list[tuple[ta.KernelOp, set[object]]]] = {}
        by_kernel = ta.launches_by_kernel(op)
        for kernel in [k for k in op.ops if isinstance(k, ta.KernelOp)]:
            if kernel.on_xla or kernel.attributes:
                continue
            launches = by_kernel.get(kernel.sym_name.data, [])
            contexts = {_launch_context(launch) for launch in launches}
            if len(contexts) != 1:
                continue  # launched nowhere, or on differently held buffers
            candidates = kept.setdefault(_kernel_key(kernel), [])
            twin = next(
                (
                    first
                    for first, first_contexts in candidates
                    if first_contexts == contexts
                    and first.body.is_structurally_equivalent(kernel.body)
                ),
                None,
            )
            if twin is None:
                candidates.append((kernel, contexts))
                continue
            for launch in launches:
                shared = ta.LaunchOp(twin.sym_name.data, list(launch.args))
                shared.location = launch.location
                Rewriter.replace_op(launch, shared)
            emit_remark(
                kernel,
                f"share-identical-kernels: @{kernel.sym_name.data} computes what "
                f"@{twin.sym_name.data} does on buffers held alike: launched as "
                f"@{twin.sym_name.data}",
            )
            count(self.name, "kernels shared")
            Rewriter.erase_op(kernel)
