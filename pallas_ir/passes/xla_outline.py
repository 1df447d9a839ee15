"""The rewrites of xla-outline (ta → ta): accesses (and kernels) no Pallas idiom covers
run as XLA.

The xla-outline pass (`pallas_ir.lowering.tile.xla_outline`, which asks the tile policy)
calls these for each access its plan (`pallas_ir.lowering.tile.outline_plan`) moves: an
index that is not a loop dim plus a constant after the ta passes (overlapping, negative or `floordiv` strides), an index
computed from data that indirect-load-to-scalar-prefetch left alone (element-wise or
lane gathers, wrapped indices), a gather along a reduction dim, or a store that would
write part of a block. Nothing is mis-tiled and nothing is refused; the part no Pallas
idiom covers becomes its own `ta.kernel {target = #ta<target xla>}`, which tl-to-pallas calls with
`pallas.xla_call` and emit-python writes as a vectorized jnp function (an XLA gather or
scatter on TPU):

- a load of whole rows at a computed row index (`emb[idx + 1]`, `emb[perm[idx]]`, a
  wrapped negative index): only the row index moves to XLA, a new loop that computes
  it as i32 per lookup; the kernel gathers the rows by row DMA from the table left in
  HBM (G3), so the rows move once and only the indices make an extra pass;
- any other load: a new loop, before the kernel's, computes the value the load reads at
  every point of the loop dims it depends on (its index computation included) into a
  fresh buffer; the kernel then reads that buffer at those dims, a plain tiled access;
- a store: the kernel stores into a fresh buffer at the store's loop dims; a new loop
  after the kernel's copies it to the store's real place;
- a kernel with 64-bit data (TPU kernels have none) runs wholly on XLA, and so does an
  element-wise kernel whose odd access has a static index (xla-outline decides: one XLA
  fusion moves less than an outlined access plus a Pallas kernel).

The new loop goes into the same kernel, which `split_kernel` then cuts into one kernel
per loop with the roles each needs, so the buffer the parts share is allocated on the
host (`ta.alloc`) before every launch. The cost model counts an XLA kernel as a full
read and write of what it touches.

Each rewrite has a check that changes nothing (`load_outlines`, `rows_outline`,
`store_outlines`) and says which ops it takes out of the loop (`outlined_ops`), so that
the plan can decide every access of a kernel before the first one moves. The checks
take the ops the outlinings planned before take out (`gone`): the plan asks them about
the loop those outlinings leave, which is the loop the rewrite then finds.
"""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.affine_analysis import LinearExpr, flat_offset
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import ArgRole
from pallas_ir.passes.kernel_fission import split_kernel
from pallas_ir.tpu_rules import SMEM_BYTES, reshape_is_free


def _loop_of(op: Operation) -> ta.LoopOp | None:
    parent = op.parent_op()
    return parent if isinstance(parent, ta.LoopOp) else None


def _chain(value_op: Operation, loop: ta.LoopOp) -> list[Operation] | None:
    """The ops of the loop body `value_op` depends on (itself included), in program
    order; None if one is not a load or a pure scalar op (a reduction, say)."""
    body = loop.body.block
    seen: set[Operation] = set()
    pending = [value_op]
    while pending:
        op = pending.pop()
        if op in seen:
            continue
        if isinstance(op, ta.ReduceOp | ta.StoreOp) or op.regions:
            return None
        seen.add(op)
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner.parent_block() is body:
                pending.append(owner)
    return [op for op in body.ops if op in seen]


def _used_loop_dims(ops: list[Operation], loop: ta.LoopOp) -> list[int]:
    """The loop dims the ops depend on: map dims of accesses, and loop variables used
    as values."""
    ivs = loop.body.block.args
    used: set[int] = set()
    for op in ops:
        if isinstance(op, ta.LoadOp | ta.StoreOp):
            for p in op.map.data.used_dims():
                used.add(op.dims[p].index)  # type: ignore[attr-defined]
            operands = [op.value] if isinstance(op, ta.StoreOp) else []
            operands += list(op.symbols)
        else:
            operands = list(op.operands)
        used |= {v.index for v in operands if v in ivs}  # type: ignore[attr-defined]
    return sorted(used)


def _remapped(
    op: ta.LoadOp | ta.StoreOp, position: dict[int, int], n_dims: int
) -> AffineMapAttr:
    """The access's map over the new loop's dims (`position`: old loop dim → new)."""
    replacements: list[AffineExpr] = []
    for d in op.dims:
        l = d.index  # type: ignore[attr-defined]
        replacements.append(
            AffineDimExpr(position[l]) if l in position else AffineConstantExpr(0)
        )
    m = op.map.data
    symbols = [AffineExpr.symbol(k) for k in range(m.num_symbols)]
    results = [e.replace_dims_and_symbols(replacements, symbols) for e in m.results]
    return AffineMapAttr(AffineMap(n_dims, m.num_symbols, tuple(results)))


def _identity_on(dims: list[int], n_dims: int) -> AffineMapAttr:
    """`(d0, ..., dn) -> (d_dims[0], ...)`, or `-> (0)` when no dim is used."""
    results: list[AffineExpr] = [AffineDimExpr(d) for d in dims] or [
        AffineConstantExpr(0)
    ]
    return AffineMapAttr(AffineMap(n_dims, 0, tuple(results)))


def _scratch_type(loop: ta.LoopOp, dims: list[int], element: Attribute) -> MemRefType:
    extents = list(loop.extents)
    return MemRefType(element, [extents[d] for d in dims] or [1])


def _add_scratch(module: ModuleOp, kernel: ta.KernelOp, t: MemRefType) -> BlockArgument:
    """A new last kernel argument (`inout`: one loop writes it, another reads it), with a
    fresh `ta.alloc` passed to it at every launch."""
    block = kernel.body.block
    arg = block.insert_arg(t, len(block.args))
    arg.name_hint = "xla"
    kernel.set_roles([*(r.data for r in kernel.roles.data), ArgRole.INOUT])
    for launch in ta.kernel_launches(module, kernel):
        alloc = ta.AllocOp(t)
        alloc.result.name_hint = "xla"
        Rewriter.insert_op(alloc, InsertPoint.before(launch))
        new = ta.LaunchOp(kernel.sym_name.data, [*launch.args, alloc.result])
        new.location = launch.location
        Rewriter.replace_op(launch, new)
    return arg


def _written(loop: ta.LoopOp) -> set[SSAValue]:
    return {ta.root_buffer(s.buffer) for s in loop.walk() if isinstance(s, ta.StoreOp)}


def _new_loop(extents: list[int]) -> ta.LoopOp:
    loop = ta.LoopOp(extents or [1])
    for k, iv in enumerate(loop.body.block.args):
        iv.name_hint = f"x{k}"
    return loop


def _clone_into(
    ops: list[Operation], loop: ta.LoopOp, new: ta.LoopOp, dims: list[int]
) -> dict[SSAValue, SSAValue]:
    """Clone `ops` (a chain of the old loop) into `new`, whose dim k is old dim dims[k]."""
    position = {l: k for k, l in enumerate(dims)}
    mapping: dict[SSAValue, SSAValue] = {}
    new_ivs = new.body.block.args
    for l, k in position.items():
        mapping[loop.body.block.args[l]] = new_ivs[k]
    for op in ops:
        if isinstance(op, ta.LoadOp):
            clone: Operation = ta.LoadOp(
                op.buffer,
                _remapped(op, position, len(new_ivs)),
                list(new_ivs),
                [mapping[s] for s in op.symbols],
            )
            clone.results[0].name_hint = op.result.name_hint
            mapping[op.result] = clone.results[0]
        else:  # every loop variable it uses is a dim of the new loop
            clone = op.clone(value_mapper=mapping)
            for old, nv in zip(op.results, clone.results):
                nv.name_hint = old.name_hint
                mapping[old] = nv
        clone.location = op.location
        new.body.block.add_op(clone)
    return mapping


def _erase_dead(ops: list[Operation]) -> None:
    for op in reversed(ops):
        if op.parent is not None and all(not r.uses for r in op.results):
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class Outlined:
    """What an outlining leaves: the kernel that is left to tile, and where each op of
    the old kernel's loop went (`split_kernel` copies the loops into new kernels)."""

    kernel: ta.KernelOp
    clones: dict[Operation, Operation]
    """Each op of the outlined kernel's remaining loop → its copy in `kernel`."""


def _split(
    module: ModuleOp, kernel: ta.KernelOp, xla_part: int, kind: ta.XlaAccess
) -> Outlined:
    old_loops = [o for o in kernel.body.block.ops if isinstance(o, ta.LoopOp)]
    parts = split_kernel(module, kernel)
    main = parts[1 - xla_part]
    (new_loop,) = [o for o in main.body.block.ops if isinstance(o, ta.LoopOp)]
    clones = dict(zip(old_loops[1 - xla_part].walk(), new_loop.walk()))
    Rewriter.erase_op(kernel)
    parts[xla_part].attributes["target"] = ta.XLA_TARGET
    parts[xla_part].attributes["xla_access"] = ta.XlaAccessAttr(kind)
    return Outlined(main, clones)


def _last_indexed_by(
    load: ta.LoadOp, loop: ta.LoopOp, gone: AbstractSet[Operation] = frozenset()
) -> ta.LoadOp:
    """The last load whose index computation reads `load`'s value (or `load`): a load
    that only indexes a later one (a double indirection) moves with it, as one XLA
    step, not two chained ones. `gone`: loads earlier outlinings replaced (by a read
    of their XLA kernel's buffer or a row gather, which no longer read `load`)."""
    for later in loop.body.block.ops:
        if (
            isinstance(later, ta.LoadOp)
            and later is not load
            and later.symbols
            and later not in gone
        ):
            later_chain = _chain(later, loop)
            if later_chain is not None and load in later_chain:
                load = later
    return load


def _moved_chain(
    load: ta.LoadOp, gone: AbstractSet[Operation] = frozenset()
) -> tuple[ta.LoopOp, list[Operation]] | None:
    """The loop and the chain a gather-form outlining of `load` moves (ending in the
    load that actually moves, `_last_indexed_by`), or None when it cannot move: the
    chain depends on a reduction, or reads a buffer the loop writes. `gone`: as for
    `_last_indexed_by`."""
    loop = _loop_of(load)
    if loop is None:
        return None
    chain = _chain(_last_indexed_by(load, loop, gone), loop)
    if chain is None:
        return None
    written = _written(loop)
    if any(
        ta.root_buffer(o.buffer) in written for o in chain if isinstance(o, ta.LoadOp)
    ):
        return None
    return loop, chain


def load_outlines(load: ta.LoadOp, gone: AbstractSet[Operation] = frozenset()) -> bool:
    """Whether `outline_load` applies to `load` (it changes nothing to ask), once the
    outlinings that take `gone` out of the loop are done."""
    return _moved_chain(load, gone) is not None


def outlined_ops(
    access: ta.LoadOp | ta.StoreOp, gone: AbstractSet[Operation] = frozenset()
) -> tuple[Operation, set[Operation]]:
    """What outlining `access` (by whichever form applies) takes out of its loop: the
    op it replaces (by an access of the same type: a read of the XLA kernel's buffer,
    a row gather, a store to a fresh buffer), and the ops of the moved chain that are
    then dead and erased. `gone`: ops earlier outlinings already took out."""
    if isinstance(access, ta.StoreOp):
        return access, set()
    moved = _moved_chain(access, gone)
    assert moved is not None
    _, chain = moved
    replaced = chain[-1]
    dead: set[Operation] = set()
    for op in reversed(chain[:-1]):
        users = {u.operation for r in op.results for u in r.uses}
        if users <= {replaced, *dead, *gone}:
            dead.add(op)
    return replaced, dead


def scratch_dims(
    access: ta.LoadOp | ta.StoreOp, gone: AbstractSet[Operation] = frozenset()
) -> list[int]:
    """The loop dims of the buffer the gather or scatter form of outlining `access`
    shares with the kernel left (which reads or writes it whole, in loop order), once
    the outlinings that take `gone` out of the loop are done."""
    if isinstance(access, ta.StoreOp):
        loop = _loop_of(access)
        assert loop is not None
        return _used_loop_dims([access], loop)
    moved = _moved_chain(access, gone)
    assert moved is not None
    return _used_loop_dims(moved[1], moved[0])


def outline_load(
    module: ModuleOp, kernel: ta.KernelOp, load: ta.LoadOp
) -> Outlined | None:
    """Move a load (and the index computation it depends on) into an XLA kernel launched
    before `kernel`. Returns what is left to tile, or None (and changes nothing) when
    the load cannot be moved (`load_outlines`)."""
    moved = _moved_chain(load)
    if moved is None:
        return None
    loop, chain = moved
    load = chain[-1]
    assert isinstance(load, ta.LoadOp)
    dims = _used_loop_dims(chain, loop)
    t = _scratch_type(loop, dims, load.result.type)
    scratch = _add_scratch(module, kernel, t)
    gather = _new_loop([list(loop.extents)[d] for d in dims])
    mapping = _clone_into(chain, loop, gather, dims)
    n = len(gather.body.block.args)
    store = ta.StoreOp(
        mapping[load.result], scratch, _identity_on(list(range(len(dims))), n),
        list(gather.body.block.args),
    )  # fmt: skip
    store.location = load.location
    gather.body.block.add_op(store)
    Rewriter.insert_op(gather, InsertPoint.before(loop))
    read = ta.LoadOp(
        scratch, _identity_on(dims, len(loop.body.block.args)), list(loop.body.block.args)
    )
    read.location = load.location
    read.result.name_hint = load.result.name_hint
    Rewriter.replace_op(load, read)
    _erase_dead(chain[:-1])
    return _split(module, kernel, 0, ta.XlaAccess.GATHER)


@dataclass(frozen=True)
class _RowIndex:
    """A gather of whole rows whose row index can move to XLA (see `rows_outline`)."""

    loop: ta.LoopOp
    load: ta.LoadOp
    """The load that moves (`_last_indexed_by` the blamed one)."""
    chain: list[Operation]
    flat: LinearExpr
    """Its offset into the flat table: `R * width + lane`."""
    root: BlockArgument
    table: MemRefType
    """The table as (rows, width)."""
    lane: int
    """The map dim that walks a row."""
    lookups: list[int]
    """The loop dims the row index depends on (parallel), row-major."""


def rows_outline(
    load: ta.LoadOp,
    storage: dict[int, MemRefType],
    gone: AbstractSet[Operation] = frozenset(),
) -> _RowIndex | None:
    """Whether `outline_index` applies to `load`, and how (None: it does not; asking
    changes nothing), once the outlinings that take `gone` out of the loop are done.
    `storage`: the N-D shape the host holds each kernel argument in."""
    loop = _loop_of(load)
    if loop is None:
        return None
    load = _last_indexed_by(load, loop, gone)
    if not load.symbols:
        return None
    chain = _chain(load, loop)
    if chain is None or any(
        ta.root_buffer(o.buffer) in _written(loop)
        for o in chain
        if isinstance(o, ta.LoadOp)
    ):
        return None
    t = load.buffer.type
    assert isinstance(t, MemRefType)
    flat = flat_offset(load.map.data.results, t.get_shape())
    root = ta.root_buffer(load.buffer)
    if flat is None or not isinstance(root, BlockArgument):
        return None
    extents = list(loop.extents)
    positions = [d.index for d in load.dims]  # type: ignore[attr-defined]
    units = [p for p, c in flat.dims.items() if c == 1]
    if len(units) != 1:
        return None
    (lane,) = units
    width = extents[positions[lane]]
    root_type = root.type
    assert isinstance(root_type, MemRefType)
    total = root_type.element_count()
    others = [c for p, c in flat.dims.items() if p != lane]
    if total % width or any(
        c % width for c in [*others, *flat.symbols.values(), flat.constant]
    ):
        return None
    table = MemRefType(root_type.element_type, [total // width, width])
    host = storage.get(root.index, root_type)
    bits = getattr(root_type.element_type, "bitwidth", 32)
    if not reshape_is_free(host.get_shape(), table.get_shape(), bits):
        return None  # viewing the table as rows would be a relayout on the host
    row_dims = {positions[p] for p in flat.dims if p != lane}
    row_dims |= set(_used_loop_dims(chain[:-1], loop))
    n_parallel = len(loop.parallel_extents)
    if not row_dims or max(row_dims) >= n_parallel or positions[lane] in row_dims:
        return None  # a gather along a reduction dim, or one row per element
    return _RowIndex(loop, load, chain, flat, root, table, lane, sorted(row_dims))


def outline_index(
    module: ModuleOp,
    kernel: ta.KernelOp,
    load: ta.LoadOp,
    storage: dict[int, MemRefType],
) -> Outlined | None:
    """Move only the row index of a gather of whole rows to XLA (see the module
    docstring). Applies when the load's flat offset is `R * W + l`: one loop dim `l`
    walks a whole row of W elements with step 1, and the row R (all other terms,
    multiples of W) depends, through its index computation, on parallel loop dims other
    than `l` only (the lookups: one row index per point, row-major); and the host holds
    the table so that viewing it as (N, W) rows is free (`tpu_rules.reshape_is_free`).
    The kernel then reads `table[rows[...], l]`, a `gather = #ta<gather_strategy dma>` load. None (nothing
    changed) otherwise (`rows_outline`)."""
    form = rows_outline(load, storage)
    if form is None:
        return None
    loop, load, flat, lookups = form.loop, form.load, form.flat, form.lookups
    positions = [d.index for d in load.dims]  # type: ignore[attr-defined]
    width = form.table.get_shape()[1]
    symbol_chain = form.chain[:-1]
    # The prologue: the index computation, then R, as i32, per lookup (row-major over
    # the loop dims R depends on).
    extents = list(loop.extents)
    lookup_extents = [extents[l] for l in lookups]
    n = math.prod(lookup_extents)
    ridx_type = MemRefType(i32, lookup_extents)
    ridx = _add_scratch(module, kernel, ridx_type)
    ridx.name_hint = "rows"
    prologue = _new_loop(lookup_extents)
    mapping = _clone_into(symbol_chain, loop, prologue, lookups)
    block = prologue.body.block
    pivs = list(block.args)

    def emit(op: Operation) -> SSAValue:
        op.location = load.location
        block.add_op(op)
        return op.results[0]

    def constant(v: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(v, IndexType())))

    terms = [(mapping[load.symbols[q]], c) for q, c in flat.symbols.items()]
    terms += [
        (pivs[lookups.index(positions[p])], c)
        for p, c in flat.dims.items()
        if p != form.lane
    ]
    row: SSAValue | None = None
    for v, c in terms:
        scaled = v if c == width else emit(arith.MuliOp(v, constant(c // width)))
        row = scaled if row is None else emit(arith.AddiOp(row, scaled))
    if flat.constant or row is None:
        offset = constant(flat.constant // width)
        row = offset if row is None else emit(arith.AddiOp(row, offset))
    as_i32 = emit(arith.IndexCastOp(row, i32))
    store = ta.StoreOp(
        as_i32, ridx, _identity_on(list(range(len(pivs))), len(pivs)), pivs
    )
    store.location = load.location
    block.add_op(store)
    Rewriter.insert_op(prologue, InsertPoint.before(loop))
    # The kernel: table[ridx[lookup], lane] as a marked row gather.
    root, table = form.root, form.table
    root_type = root.type
    assert isinstance(root_type, MemRefType)
    rows_view: SSAValue = root
    if tuple(root_type.get_shape()) != tuple(table.get_shape()):
        view = ta.ReshapeOp(root, table)
        view.result.name_hint = root.name_hint
        Rewriter.insert_op(view, InsertPoint.before(loop))
        rows_view = view.result
    ivs = list(loop.body.block.args)
    index = ta.LoadOp(ridx, _identity_on(lookups, len(ivs)), ivs)
    cast = arith.IndexCastOp(index.result, IndexType())
    gathered = ta.LoadOp(
        rows_view,
        AffineMapAttr(
            AffineMap(
                len(ivs),
                1,
                (AffineExpr.symbol(0), AffineDimExpr(positions[form.lane])),
            )
        ),
        ivs,
        [cast.result],
    )
    gathered.attributes[ta.GATHER_ATTR] = ta.GatherStrategyAttr(ta.GatherStrategy.DMA)
    for o in (index, cast, gathered):
        o.location = load.location
    gathered.result.name_hint = load.result.name_hint
    Rewriter.insert_op(index, InsertPoint.before(load))
    Rewriter.insert_op(cast, InsertPoint.before(load))
    Rewriter.replace_op(load, gathered)
    _erase_dead(symbol_chain)
    if 4 * n <= SMEM_BYTES // 2:
        # Small enough to scalar-prefetch whole (G3); else it stays `in` and is streamed
        # to SMEM in chunks (G3c). The split keeps `prefetch` for the reading part.
        roles = [r.data for r in kernel.roles.data]
        roles[ridx.index] = ArgRole.PREFETCH.value
        kernel.set_roles(roles)
    return _split(module, kernel, 0, ta.XlaAccess.INDEX)


def store_outlines(store: ta.StoreOp) -> bool:
    """Whether `outline_store` applies: the store's index does not depend on data, it
    does not accumulate (points the dense buffer would hold once may reach one element
    several times), and the loop does not also read the buffer it stores to (asking
    changes nothing)."""
    loop = _loop_of(store)
    if loop is None or store.symbols or store.combine is not None:
        return False
    target = ta.root_buffer(store.buffer)
    return target not in {
        ta.root_buffer(o.buffer) for o in loop.walk() if isinstance(o, ta.LoadOp)
    }


def outline_store(
    module: ModuleOp, kernel: ta.KernelOp, store: ta.StoreOp
) -> Outlined | None:
    """Make a store an XLA scatter launched after `kernel`: the kernel stores into a
    fresh buffer at the store's loop dims. None (nothing changed) when the store's
    index depends on data, it accumulates, or the kernel also reads the buffer it
    stores to."""
    loop = _loop_of(store)
    if loop is None or not store_outlines(store):
        return None
    dims = _used_loop_dims([store], loop)
    value = store.value
    t = _scratch_type(loop, dims, value.type)
    scratch = _add_scratch(module, kernel, t)
    n_old = len(loop.body.block.args)
    local = ta.StoreOp(
        value, scratch, _identity_on(dims, n_old), list(loop.body.block.args)
    )
    local.location = store.location
    scatter = _new_loop([list(loop.extents)[d] for d in dims])
    ivs = list(scatter.body.block.args)
    copy = ta.LoadOp(scratch, _identity_on(list(range(len(dims))), len(ivs)), ivs)
    copy.result.name_hint = value.name_hint
    position = {l: k for k, l in enumerate(dims)}
    put = ta.StoreOp(copy.result, store.buffer, _remapped(store, position, len(ivs)), ivs)
    for o in (copy, put):
        o.location = store.location
        scatter.body.block.add_op(o)
    Rewriter.insert_op(scatter, InsertPoint.after(loop))
    Rewriter.replace_op(store, local)
    return _split(module, kernel, 1, ta.XlaAccess.SCATTER)


def run_on_xla(kernel: ta.KernelOp) -> None:
    """Hand the whole kernel to XLA."""
    kernel.attributes["target"] = ta.XLA_TARGET
