"""What the kernel-fusion passes ask of `@forward`'s launches (the host buffer behind a
launch argument, its views, a kernel's one loop, where an access reads or writes, how
often each kernel is launched) and how they put a fused kernel in place of two."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.affine_analysis import simplify
from pallas_ir.dialects.common import ArgRole
from pallas_ir.dialects.tensor_access import (
    KernelOp,
    LaunchOp,
    LoadOp,
    LoopOp,
    ReshapeOp,
    StoreOp,
    launches_by_kernel,
)


def host_root(value: SSAValue) -> SSAValue:
    """A host buffer through its `ta.reshape` views."""
    while isinstance(value.owner, ReshapeOp):
        value = value.owner.source
    return value


def host_views(value: SSAValue) -> list[SSAValue]:
    """A host buffer and every view of it (through `ta.reshape`)."""
    found = [value]
    for use in value.uses:
        if isinstance(use.operation, ReshapeOp):
            found += host_views(use.operation.result)
    return found


def the_loop(kernel: KernelOp) -> LoopOp | None:
    """The kernel's loop, None unless it has exactly one."""
    loops = [o for o in kernel.body.block.ops if isinstance(o, LoopOp)]
    return loops[0] if len(loops) == 1 else None


def access_key(op: LoadOp | StoreOp) -> tuple[object, ...] | None:
    """Where an access reads or writes, by view, index expressions and loop dims (None
    with symbols: a data-dependent index). The expressions are simplified with the
    loop's ranges, so `(d0 * 64 + d1) floordiv 64` and `d0` agree when d1 < 64."""
    if op.symbols:
        return None
    loop = op.parent_op()
    while loop is not None and not isinstance(loop, LoopOp):
        loop = loop.parent_op()
    extents = list(loop.extents) if loop is not None else []
    bounds = [
        (0, extents[d.index] - 1)
        if loop is not None
        and isinstance(d, BlockArgument)
        and d.owner is loop.body.block
        else None
        for d in op.dims
    ]
    where = tuple(str(simplify(e, bounds)) for e in op.map.data.results)
    dims = tuple(d.index if isinstance(d, BlockArgument) else -1 for d in op.dims)
    return (op.buffer.type, where, dims, _view_chain(op.buffer))


def _view_chain(buffer: SSAValue) -> tuple[object, ...]:
    """The kernel-level views from an argument to `buffer`, by type."""
    chain: list[object] = []
    while isinstance(buffer.owner, ReshapeOp):
        chain.append(buffer.type)
        buffer = buffer.owner.source
    return tuple(chain)


def launch_counts(module: ModuleOp) -> dict[str, int]:
    """How many `ta.launch`es name each kernel."""
    return {name: len(ls) for name, ls in launches_by_kernel(module).items()}


def replace_pair(
    module: ModuleOp,
    block: Block,
    roles: list[ArgRole],
    args: list[SSAValue],
    first: tuple[LaunchOp, KernelOp],
    second: tuple[LaunchOp, KernelOp],
) -> tuple[KernelOp, LaunchOp]:
    """Put the kernel of `block` (`@<first>_<second>`, a fresh name) where the second
    kernel was and its launch on `args` where the second launch was, then erase both
    kernels and both launches."""
    (first_launch, first_kernel), (second_launch, second_kernel) = first, second
    taken = {k.sym_name.data for k in module.ops if isinstance(k, KernelOp)}
    name = f"{first_kernel.sym_name.data}_{second_kernel.sym_name.data}"
    while name in taken:
        name += "_"
    fused = KernelOp(name, block.arg_types, roles, Region(block))
    fused.location = second_kernel.location
    fused.attributes.update(first_kernel.attributes | second_kernel.attributes)
    Rewriter.insert_op(fused, InsertPoint.before(second_kernel))
    launch = LaunchOp(name, args)
    launch.location = second_launch.location
    Rewriter.insert_op(launch, InsertPoint.before(second_launch))
    for o in (second_launch, first_launch, second_kernel, first_kernel):
        Rewriter.erase_op(o)
    return fused, launch
