"""fuse-siblings: two kernels launched one after the other (or with launches between
that the first can move past), whose loops run over the same points and read a common
input, become one kernel with one loop that computes both bodies and stores every
output of both (horizontal fusion). The shared input is read
once where it was read twice: a layer norm's mean and variance kernels, a softmax's row
max and row sum, two element-wise kernels that read one matrix product.

```mlir
ta.kernel @mean(%x: memref<2048xf32> {role = "in"}, %m: memref<32xf32> {role = "out"}) {
  ta.loop [32] reduce [64] (%i, %k) { ... ta.store %s, %m[...](%i) : memref<32xf32> }
}
ta.kernel @var(%x: memref<2048xf32> {role = "in"}, %v: memref<32xf32> {role = "out"}) {
  ta.loop [32] reduce [64] (%i, %k) { ... ta.store %w, %v[...](%i) : memref<32xf32> }
}
func.func @forward(...) {
  ta.launch @mean(%x, %m) : ...
  ta.launch @var(%x, %v) : ...
}
```

becomes one `@mean_var(%x, %m, %v)` whose `ta.loop [32] reduce [64]` holds the body of
`@mean`, then that of `@var`, launched where `@var` was. Two element-wise loops over
the same points nested differently (`[8, 16, 32]` and `[128, 32]`) are one loop once the
finer is collapsed to the coarser's extents (`launch_graph.collapsed`).

The meaning is kept when (each checked; a remark at the second loop says which failed
when the loops have the same extents and share an input):
- both kernels are launched once, and neither runs on XLA; the first is among the 32
  launches before the second (`WINDOW`) with only launches, views and allocations
  between, and none of those launches reads what the first writes or writes what it
  reads or writes, so it can run at the second's place (the saved activations a
  training graph stores at the end of its forward, each recomputed from the inputs by
  a kernel of its own, fuse with the kernels that share their inputs);
- neither writes a buffer the other reads or writes, so no point of one loop depends
  on a point of the other, and running them interleaved computes what running them
  one after the other did;
- no store has a data-dependent index (scatters keep their own kernels, where
  indirect-store-to-row-dma looks for them). Loads with one may fuse: two lookups of
  the same rows (a layer norm's statistics of a token embedding) become one load under
  `cse`, and indirect-load-to-scalar-prefetch rewrites it in the fused kernel.
A pair without matrix products where some loop has no load that varies along every
loop dim (through its index or its data-dependent index) stays apart: its body is an outer product of broadcasts
(iotas of an overflow check, over a 2048 x 2048 loop) whose values outgrow every block,
which the tiler's VMEM count leaves out; two such checks fused asked 32 MiB of VMEM.
Broadcast loads beside a load of each point (a causal mask's iota positions beside the
scores) are no larger than that load's blocks, so a softmax's row max and row sum fuse.
Loops whose innermost dim has extent 1 are left apart too: each value of such a body
takes a VMEM lane tile per element, which the tiler's VMEM count leaves out, and two
(128, 128, 1) int32 bodies fused asked 17.7 MiB of v5e's 16 (one alone fits).
A matrix product fuses only with another whose factor is computed from the same loads
(`x @ w1` beside `x @ w2`: a llama layer's k and v projections, its gate and up); the
tiler then sizes the pair's blocks by one roofline over both products. Other pairs
with a product stay apart: the tiler sizes a product's blocks against the chip's VMEM
for that product alone.
In the fused loop the stores come last, and common subexpressions are computed once
(xDSL's `cse`): the shared loads, and what both bodies compute from them (a variance
kernel sums the mean again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.transforms.common_subexpression_elimination import cse

from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import WRITABLE_ROLES, ArgRole, find_forward
from pallas_ir.dialects.tensor_access import (
    AllocOp,
    KernelOp,
    LaunchOp,
    LoadOp,
    LoopOp,
    ReshapeOp,
    StoreOp,
)
from pallas_ir.passes.launch_graph import (
    NotCollapsible,
    access_key,
    collapsed,
    host_root,
    launch_counts,
    replace_pair,
    simplify_maps,
    the_loop,
)
from pallas_ir.passes.options import CheckedOptionsPass

WINDOW = 32
"""How many launches back a kernel looks for a sibling to fuse with."""


def _buffers(launch: LaunchOp, kernel: KernelOp) -> tuple[set[SSAValue], set[SSAValue]]:
    """The host buffers a launch reads, and those it writes."""
    read: set[SSAValue] = set()
    written: set[SSAValue] = set()
    for a in kernel.body.block.args:
        root = host_root(launch.args[a.index])
        (written if kernel.role_of(a) in WRITABLE_ROLES else read).add(root)
    return read, written


def _has_indirect_store(loop: LoopOp) -> bool:
    return any(isinstance(o, StoreOp) and access_key(o) is None for o in loop.walk())


def _loads_each_point(loop: LoopOp) -> bool:
    """Whether some load of the loop varies along every loop dim of extent over 1
    (through its index or its data-dependent index): a block of it is as large as any
    value of the body, so the tiler's VMEM count, which counts blocks, bounds the
    body's values too. Where no load does (x[i] * y[j] of broadcasts), the body's
    values outgrow every block."""
    wide = {d for d, n in enumerate(loop.extents) if n > 1}
    seen: dict[SSAValue, frozenset[int]] = {}
    return any(
        wide <= ta.varying_dims(o.result, loop, seen)
        for o in loop.walk()
        if isinstance(o, LoadOp)
    )


def _matrix_products(loop: LoopOp) -> list[Operation]:
    """The products the loop sums as matrix products (x[i, k] * y[k, j],
    `ta.matmul_dims`, over the dims of extent over 1): what the tiler makes a `tl.dot`.
    A row times a weight vector, summed (a norm's backward), is not one."""
    wide = {d for d, n in enumerate(loop.extents) if n > 1}
    reduce_dims = [
        d for d in range(len(loop.parallel_extents), len(loop.extents)) if d in wide
    ]
    found = []
    for o in loop.body.block.ops:
        mul = ta.contraction(o)
        if mul is not None:
            x, y = (ta.varying_dims(v, loop) & wide for v in mul.operands)
            integer = isinstance(mul, arith.MuliOp)
            if ta.matmul_dims(x, y, reduce_dims, integer) is not None:
                found.append(mul)
    return found


def _factor_reads(launch: LaunchOp, loop: LoopOp) -> set[frozenset[object]]:
    """What each factor of the loop's matrix products is computed from: the loads it
    reaches in the loop body (a norm in the product's prologue reads the rows, the
    statistics and the weight), each by host buffer and `access_key`. Two products
    with a factor of equal reads read the same blocks for it. A factor with a load of
    a data-dependent index (a gather: no place to compare) is left out."""
    reads: set[frozenset[object]] = set()
    for mul in _matrix_products(loop):
        for factor in mul.operands:
            loads: set[object] = set()
            seen: set[SSAValue] = set()
            pending = [factor]
            while pending:
                value = pending.pop()
                if value in seen:
                    continue
                seen.add(value)
                owner = value.owner
                if isinstance(owner, LoadOp):
                    key = access_key(owner)
                    if key is None:
                        break
                    root = ta.root_buffer(owner.buffer)
                    assert isinstance(root, BlockArgument)
                    loads.add((host_root(launch.args[root.index]), key))
                elif isinstance(owner, Operation) and owner.parent_op() is loop:
                    pending.extend(owner.operands)
            else:
                if loads:
                    reads.add(frozenset(loads))
    return reads


def _over_same_extents(
    first: KernelOp, second: KernelOp
) -> tuple[KernelOp, KernelOp] | None:
    """Two element-wise kernels over the same points, one nesting them more finely
    (`[8, 16, 32]` and `[128, 32]`): the finer collapsed to the coarser's extents
    (`collapsed`), so their loops can be one. None otherwise."""
    loop, second_loop = the_loop(first), the_loop(second)
    assert loop is not None and second_loop is not None
    if loop.reduce_extents or second_loop.reduce_extents:
        return None
    extents, second_extents = list(loop.extents), list(second_loop.extents)
    if math.prod(extents) != math.prod(second_extents):
        return None
    try:
        if len(extents) > len(second_extents):
            return collapsed(first, second_extents), second
        if len(second_extents) > len(extents):
            return first, collapsed(second, extents)
    except NotCollapsible:
        return None
    return None


class _NotFused(Exception):
    """Why two sibling kernels stay apart."""


@dataclass(frozen=True)
class FuseSiblingsPass(CheckedOptionsPass):
    """Fuse each pair of consecutive sibling kernels (same loop extents, a common input)
    into one kernel (see the module docstring for when). Each fusion gets a remark and
    counts under `siblings fused` in `--pass-statistics`; a candidate pair that cannot
    be fused gets a remark saying why. A fused kernel can fuse again with the next.

    Options: none.
    """

    name = "fuse-siblings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forward = find_forward(op)
        if forward is None:
            return
        kernels = {k.sym_name.data: k for k in op.ops if isinstance(k, KernelOp)}
        launched = launch_counts(op)
        # The launches since the last host op that is not a launch or a view, latest
        # last: each may move down to a later sibling past the launches after it.
        window: list[LaunchOp] = []
        for o in list(forward.body.block.ops):
            if isinstance(o, ReshapeOp | AllocOp):
                continue
            if not isinstance(o, LaunchOp):
                window = []
                continue
            second = kernels[o.callee.string_value()]
            found = self.earlier_sibling(window, o, second, kernels, launched)
            if found is not None:
                at, bodies = found
                first_launch = window.pop(at)
                first = kernels[first_launch.callee.string_value()]
                fused, o = fuse(op, first_launch, first, o, second, bodies)
                kernels[fused.sym_name.data] = fused
                launched[fused.sym_name.data] = 1
                emit_remark(
                    fused,
                    f"{self.name}: fused @{first.sym_name.data} and "
                    f"@{second.sym_name.data} into @{fused.sym_name.data}",
                )
                count(self.name, "siblings fused")
            window = [*window[-WINDOW + 1 :], o]

    def earlier_sibling(
        self,
        window: list[LaunchOp],
        launch: LaunchOp,
        kernel: KernelOp,
        kernels: dict[str, KernelOp],
        launched: dict[str, int],
    ) -> tuple[int, tuple[KernelOp, KernelOp]] | None:
        """The position in `window` of the latest launch to fuse `launch` with, and the
        kernels to fuse (`siblings`): a sibling that can run at `launch`'s place (no
        launch after it reads what it writes, or writes what it reads or writes). The
        launch just before gets a remark where it is a candidate that cannot fuse."""
        read_after: set[SSAValue] = set()
        written_after: set[SSAValue] = set()
        for k in range(len(window) - 1, -1, -1):
            candidate = window[k]
            first = kernels[candidate.callee.string_value()]
            read, written = _buffers(candidate, first)
            movable = not (written & (read_after | written_after) or written_after & read)
            if movable:
                try:
                    bodies = self.siblings(candidate, first, launch, kernel, launched)
                    if bodies is not None:
                        return k, bodies
                except _NotFused as why:
                    if k == len(window) - 1:
                        loop = the_loop(kernel)
                        assert loop is not None
                        emit_remark(
                            loop,
                            f"{self.name}: not fused with @{first.sym_name.data}: {why}",
                        )
            read_after |= read
            written_after |= written
        return None

    def siblings(
        self,
        first_launch: LaunchOp,
        first: KernelOp,
        second_launch: LaunchOp,
        second: KernelOp,
        launched: dict[str, int],
    ) -> tuple[KernelOp, KernelOp] | None:
        """The pair's kernels to fuse, each over the same loop extents (an element-wise
        kernel that nests the other's points more finely collapsed to its extents,
        `collapsed`): None when they are no candidates (nothing to say), `_NotFused`
        when they are but the meaning would change."""
        loop, second_loop = the_loop(first), the_loop(second)
        if loop is None or second_loop is None:
            return None
        bodies = (first, second)
        if tuple(loop.parallel_extents) != tuple(second_loop.parallel_extents) or tuple(
            loop.reduce_extents
        ) != tuple(second_loop.reduce_extents):
            bodies = _over_same_extents(first, second)
            if bodies is None:
                return None
            loop, second_loop = (the_loop(k) for k in bodies)
            assert loop is not None and second_loop is not None
        read, written = _buffers(first_launch, first)
        second_read, second_written = _buffers(second_launch, second)
        if not read & second_read:
            return None  # nothing read twice: fusing would save no bytes
        if first.on_xla or second.on_xla:
            return None
        if (
            launched.get(first.sym_name.data) != 1
            or launched.get(second.sym_name.data) != 1
        ):
            raise _NotFused("a kernel launched more than once")
        if written & (second_read | second_written) or second_written & read:
            raise _NotFused("one writes a buffer the other reads or writes")
        if _has_indirect_store(loop) or _has_indirect_store(second_loop):
            raise _NotFused("a store has a data-dependent index")
        if loop.extents[-1] == 1 and math.prod(loop.extents) > 1:
            raise _NotFused(
                "the loops' innermost dim has extent 1, so each value of a body takes a "
                "VMEM lane tile per element, which the tiler's budget does not count; "
                "two such bodies fused went over the scoped VMEM"
            )
        if _matrix_products(loop) or _matrix_products(second_loop):
            # The tiler makes each product a `tl.dot` and counts its VMEM, so the
            # broadcast factors need no load of each point.
            if not (
                _factor_reads(first_launch, loop)
                & _factor_reads(second_launch, second_loop)
            ):
                raise _NotFused(
                    "a matrix product fuses only with another that reads one of its "
                    "factors at the same places (x @ w1 beside x @ w2); otherwise the "
                    "tiler sizes its blocks for it alone"
                )
        elif not (_loads_each_point(loop) and _loads_each_point(second_loop)):
            raise _NotFused(
                "no load varies along every loop dim, so the bodies' values (an outer "
                "product of broadcasts) outgrow every block, and the tiler's VMEM count "
                "leaves them out"
            )
        return bodies


def fuse(
    module: ModuleOp,
    first_launch: LaunchOp,
    first: KernelOp,
    second_launch: LaunchOp,
    second: KernelOp,
    bodies: tuple[KernelOp, KernelOp] | None = None,
) -> tuple[KernelOp, LaunchOp]:
    """One kernel for the pair, launched where the second was; the two kernels and
    their launches are erased. `bodies`: the kernels whose bodies are fused, over the
    same extents (`siblings`), by default the pair's own. A buffer both only read is
    one argument."""
    launched_kernels = (first, second)
    first, second = bodies or launched_kernels
    args: list[SSAValue] = []
    roles: list[ArgRole] = []
    index_of: dict[SSAValue, int] = {}
    position: dict[tuple[int, int], int] = {}
    for k, (launch, kernel) in enumerate(
        ((first_launch, first), (second_launch, second))
    ):
        for a in kernel.body.block.args:
            value, role = launch.args[a.index], kernel.role_of(a)
            shared = value in index_of and role not in WRITABLE_ROLES
            if shared and roles[index_of[value]] == role:
                position[(k, a.index)] = index_of[value]
                continue
            position[(k, a.index)] = len(args)
            if role not in WRITABLE_ROLES:
                index_of.setdefault(value, len(args))
            args.append(value)
            roles.append(role)
    block = Block(arg_types=[a.type for a in args])
    mapping: list[dict[SSAValue, SSAValue]] = [{}, {}]
    for k, kernel in enumerate((first, second)):
        for a in kernel.body.block.args:
            new = block.args[position[(k, a.index)]]
            new.name_hint = new.name_hint or a.name_hint
            mapping[k][a] = new
    for k, kernel in enumerate((first, second)):
        for o in kernel.body.block.ops:
            if not isinstance(o, LoopOp):
                block.add_op(o.clone(value_mapper=mapping[k]))
    loop, second_loop = the_loop(first), the_loop(second)
    assert loop is not None and second_loop is not None
    new_loop = loop.clone(value_mapper=mapping[0])
    for old, new in zip(loop.walk(), new_loop.walk()):
        new.location = old.location
    body = new_loop.body.block
    for old, new in zip(second_loop.body.block.args, body.args, strict=True):
        mapping[1][old] = new
    for o in second_loop.body.block.ops:
        copy = o.clone(value_mapper=mapping[1])
        for old, new in zip(o.walk(), copy.walk()):
            new.location = old.location
        body.add_op(copy)
        for r_old, r_new in zip(o.results, copy.results):
            mapping[1][r_old] = r_new
    # The stores last (neither body reads what the other writes, so a point's stores
    # may wait for both bodies), then what both compute once: the shared loads, the
    # statistics both take (a mean that the variance sums again).
    for store in [o for o in body.ops if isinstance(o, StoreOp)]:
        store.detach()
        body.add_op(store)
    block.add_op(new_loop)
    simplify_maps(new_loop)  # equal accesses of the two bodies print equally
    cse(new_loop)
    return replace_pair(
        module,
        block,
        roles,
        args,
        (first_launch, launched_kernels[0]),
        (second_launch, launched_kernels[1]),
    )
