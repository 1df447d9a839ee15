"""What the kernel-fusion passes ask of `@forward`'s launches (the host buffer behind a
launch argument, its views, a kernel's one loop, where an access reads or writes, how
often each kernel is launched), how they put a fused kernel in place of two, and an
element-wise kernel's loop collapsed to coarser extents (`collapsed`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
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


def place(op: LoadOp | StoreOp) -> tuple[AffineExpr, ...]:
    """An access's index expressions over its loop's variables (dimension k: the k-th
    variable; one over a single point is 0), simplified with the loop's ranges, so
    `(d0 * 64 + d1) floordiv 64` and `d0` agree when d1 < 64, and a store `(d0) ->
    (d0)` over `[1]` and a load `(d0, d1) -> (0)` are one place. Symbols stay."""
    loop = op.parent_op()
    while loop is not None and not isinstance(loop, LoopOp):
        loop = loop.parent_op()
    assert loop is not None, "ta.load and ta.store verify inside a ta.loop"
    as_variables = [
        AffineExpr.dimension(d.index)  # type: ignore[attr-defined]
        if loop.extents[d.index] > 1  # type: ignore[attr-defined]
        else AffineExpr.constant(0)
        for d in op.dims
    ]
    symbols = [AffineExpr.symbol(k) for k in range(op.map.data.num_symbols)]
    bounds = [(0, n - 1) for n in loop.extents]
    return tuple(
        simplify(e.replace_dims_and_symbols(as_variables, symbols), bounds)
        for e in op.map.data.results
    )


def access_key(op: LoadOp | StoreOp) -> tuple[object, ...] | None:
    """Where an access reads or writes, by view and `place` (None with symbols: a
    data-dependent index)."""
    if op.symbols:
        return None
    return (op.buffer.type, tuple(map(str, place(op))), _view_chain(op.buffer))


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
    keep_first: bool = False,
) -> tuple[KernelOp, LaunchOp]:
    """Put the kernel of `block` (`@<first>_<second>`, a fresh name) where the second
    kernel was and its launch on `args` where the second launch was, then erase both
    kernels and both launches (the second's only, with `keep_first`)."""
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
    erased = (second_launch, second_kernel)
    if not keep_first:
        erased += (first_launch, first_kernel)
    for o in erased:
        Rewriter.erase_op(o)
    return fused, launch


def remapped(
    access: LoadOp | StoreOp,
    replacements: Sequence[AffineExpr],
    dims: Sequence[SSAValue],
    bounds: Sequence[tuple[int, int]],
    values: dict[SSAValue, SSAValue] | None = None,
) -> LoadOp | StoreOp:
    """A copy of `access` (not inserted) over the loop variables `dims`: its map's dim
    k is `replacements[k]`, an expression of `dims`, simplified with their `bounds`; a
    data-dependent index keeps its symbols. `values`: its operands' replacements."""
    values = values or {}
    n_symbols = access.map.data.num_symbols
    symbols = [AffineExpr.symbol(k) for k in range(n_symbols)]
    results = [
        simplify(e.replace_dims_and_symbols(list(replacements), symbols), bounds)
        for e in access.map.data.results
    ]
    map_ = AffineMapAttr(AffineMap(len(dims), n_symbols, tuple(results)))
    buffer = values.get(access.buffer, access.buffer)
    at = [values.get(s, s) for s in access.symbols]
    if isinstance(access, LoadOp):
        copy: LoadOp | StoreOp = LoadOp(buffer, map_, dims, at)
        copy.results[0].name_hint = access.result.name_hint
    else:
        value = values.get(access.value, access.value)
        copy = StoreOp(value, buffer, map_, dims, at, access.combine)
    copy.location = access.location
    copy.attributes.update(access.attributes)  # a gather's strategy, chosen earlier
    return copy


def simplify_maps(loop: LoopOp) -> None:
    """Each access map of the loop's body in `simplify`'s canonical form (with the
    loop's ranges), so that two loads of one place written differently (one rewritten
    by `collapsed`, or from another kernel's body) are the same op to `cse`."""
    extents = list(loop.extents)
    for o in loop.body.block.ops:
        if not isinstance(o, LoadOp | StoreOp):
            continue
        bounds = [(0, extents[d.index] - 1) for d in o.dims]  # type: ignore[attr-defined]
        m = o.map.data
        results = tuple(simplify(e, bounds) for e in m.results)
        if results != m.results:
            o.properties["map"] = AffineMapAttr(
                AffineMap(m.num_dims, m.num_symbols, results)
            )


class NotCollapsible(Exception):
    """Why an element-wise kernel's loop cannot run over coarser extents."""


def _groups(fine: Sequence[int], coarse: Sequence[int]) -> list[list[int]] | None:
    """Consecutive runs of `fine`'s dims whose extents multiply to each of `coarse`'s,
    in order (unit dims join the run before them), or None."""
    groups: list[list[int]] = []
    k = 0
    for target in coarse:
        group, size = [], 1
        while k < len(fine) and (size < target or not group):
            group.append(k)
            size *= fine[k]
            k += 1
        if size != target:
            return None
        groups.append(group)
    if not groups:
        return None
    while k < len(fine) and fine[k] == 1:
        groups[-1].append(k)
        k += 1
    return groups if k == len(fine) else None


def collapsed(reader: KernelOp, extents: Sequence[int]) -> KernelOp:
    """A detached copy of an element-wise kernel whose loop runs over `extents`, each a
    run of its own dims collapsed into one (`[2, 16, 64]` as `[32, 64]`): a dim of a
    run is `(d floordiv inner) mod extent` of the collapsed dim d, and each access's
    map is rewritten with that and simplified. `NotCollapsible` when the dims do not
    group that way, or a loop dim is used other than as an access index."""
    loop = the_loop(reader)
    assert loop is not None
    fine = list(loop.parallel_extents)
    groups = _groups(fine, extents)
    if groups is None:
        raise NotCollapsible(
            f"@{reader.sym_name.data} loops over {fine}, which does not group "
            f"row-major into {list(extents)}"
        )
    copy = reader.clone()
    old = the_loop(copy)
    assert old is not None
    new_loop = LoopOp(list(extents))
    new_dims = list(new_loop.body.block.args)
    # Each fine dim as an expression of the collapsed dims.
    as_coarse: list[AffineExpr] = [AffineExpr.constant(0)] * len(fine)
    for d, group in enumerate(groups):
        inner = 1
        for l in reversed(group):
            as_coarse[l] = (AffineExpr.dimension(d) // inner) % fine[l]
            inner *= fine[l]
    bounds = [(0, n - 1) for n in extents]
    body = old.body.block
    for arg in body.args:
        for use in arg.uses:
            access = use.operation
            if (
                not isinstance(access, LoadOp | StoreOp)
                or arg in access.symbols
                or access.parent_block() is not body
            ):
                raise NotCollapsible(
                    f"@{reader.sym_name.data} uses a loop index other than to index "
                    "a buffer"
                )
    for o in list(body.ops):
        o.detach()
        new_loop.body.block.add_op(o)
        if isinstance(o, LoadOp | StoreOp):
            replacements = [as_coarse[d.index] for d in o.dims]  # type: ignore[attr-defined]
            Rewriter.replace_op(o, remapped(o, replacements, new_dims, bounds))
    new_loop.location = old.location
    Rewriter.replace_op(old, new_loop)
    return copy
