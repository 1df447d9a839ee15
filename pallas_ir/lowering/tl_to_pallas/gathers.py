"""Row DMAs of tl-to-pallas: gathers, sublane-strided rows, packed rows and index
chunks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    i1,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineExpr,
    AffineMap,
)

from pallas_ir.affine_analysis import linearize
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.tl_to_pallas.access import KernelConverter, grid_scalar
from pallas_ir.tpu_rules import (
    INDEX_CHUNK,
    rows_per_sublane,
)


def row_strided(load: tl.LoadOp) -> bool:
    """A load of every k-th row (k > 1) of an array, whole rows, one index of each
    leading dim: done by one row DMA per row (at those leading indices), which moves
    exactly those rows (a strided `pl.ds` would read the whole `tile * k`-row block). A
    lane step on top keeps every j-th lane of the rows, compacted in registers. Part of
    the lanes of rows wider than 128 lanes comes the same way, the lanes sliced after
    (Mosaic's strided load wants a 128-lane ref: measured, "The last dim size is not
    128 in original base memref")."""
    t, b = load.result.type, load.buffer.type
    assert isinstance(t, TensorType) and isinstance(b, MemRefType)
    rank = b.get_num_dims()
    if load.strides is None or rank < 2 or load.symbols:
        return False
    *_, row_step, lane_step = load.strides.get_values()
    lane = linearize(load.map.data.results[-1])
    if row_step == 1 or any(d != 1 for d in t.get_shape()[:-2]):
        return False
    if lane is None or not lane.is_constant:
        return False
    lanes, width = t.get_shape()[-1], b.get_shape()[-1]
    whole = lanes * lane_step == width and lane.constant < lane_step
    part = lane_step == 1 and width > 128 and lane.constant + lanes <= width
    return whole or part


def index_chunk_spec(
    index: BlockArgument,
    gathers: Sequence[tl.GatherOp | tl.LoadOp],
    conv: KernelConverter,
) -> pallas.BlockSpecAttr:
    """The SMEM block spec that streams a gather's index buffer in chunks: chunk
    `start floordiv C` holds the lookups of the grid step whose first lookup is
    `start` (tile requires the rows of a step to stay within one chunk)."""
    (gather,) = [
        g for g in gathers if isinstance(g, tl.GatherOp) and g.indices[0] is index
    ]
    n = index.type.element_count()  # type: ignore[attr-defined]
    n_grid = len(conv.grid.extents)
    if n <= INDEX_CHUNK:
        return pallas.BlockSpecAttr(
            [n], AffineMap(n_grid, 0, (AffineConstantExpr(0),)), pallas.MemorySpace.SMEM
        )
    rows = gather.result.type.get_shape()[0]  # type: ignore[attr-defined]
    (start,) = conv.grid_map(gather.map.data, gather.dims, gather).results
    lin = linearize(start)
    if (
        lin is None
        or INDEX_CHUNK % rows
        or lin.constant % rows
        or any(c % rows for c in lin.dims.values())
    ):
        raise PassError(
            gather,
            f"tl-to-pallas: the {rows} lookups of a grid step may straddle two "
            f"{INDEX_CHUNK}-index chunks of the streamed index buffer",
        )
    return pallas.BlockSpecAttr(
        [INDEX_CHUNK],
        AffineMap(n_grid, 0, (start // INDEX_CHUNK,)),
        pallas.MemorySpace.SMEM,
    )


def packed_rows(op: tl.GatherOp) -> int:
    """Rows each lookup copies: those of the table's element type per 32-bit sublane
    (2 for 16-bit and 4 for 8-bit data, whose single rows a DMA cannot address) when the
    gathered dim is the table's second-minor (sublane) dim; otherwise 1 (a lookup then
    copies whole tiles)."""
    bits = numpy_dtype(op.result.type.element_type).itemsize * 8  # type: ignore[attr-defined]
    rank = op.table.type.get_num_dims()  # type: ignore[attr-defined]
    if len(op.indices) - 1 != rank - 2:
        return 1
    return rows_per_sublane(bits)


def resident(op: tl.GatherOp | tl.LoadOp) -> bool:
    """A gather from a VMEM-resident table (the G4 idiom)."""
    return isinstance(op, tl.GatherOp) and op.attributes.get("table") == StringAttr(
        "vmem"
    )


def copied_in_vmem(op: tl.GatherOp | tl.LoadOp) -> bool:
    """Whether a gather's rows are copied within VMEM (`pallas.copy_row`: a load at a
    dynamic row and a store), with no DMA or semaphore: from a VMEM-resident table of
    32-bit data (8- or 16-bit rows keep their local DMAs, of whole sublanes where rows
    are packed)."""
    if not resident(op):
        return False
    return numpy_dtype(op.result.type.element_type).itemsize == 4  # type: ignore[attr-defined]


def rows_source(op: tl.GatherOp | tl.LoadOp) -> SSAValue:
    return op.table if isinstance(op, tl.GatherOp) else op.buffer


def strided_rows(
    conv: KernelConverter,
    load: tl.LoadOp,
    table_ref: SSAValue,
    rows_ref: SSAValue,
    sem: SSAValue,
) -> list[Operation]:
    """Rows `start + k * r` of the array (at the tile's leading indices) by row DMA (a
    loop of starts, then a loop of waits), then the rows as a tile."""
    *lead_exprs, start, _ = conv.grid_map(load.map.data, load.dims, load).results
    ops: list[Operation] = []
    lead: list[SSAValue] = []
    for e in lead_exprs:
        more, value = grid_scalar(e, load)
        ops += more
        lead.append(value)
    more, base = grid_scalar(start, load)
    ops += more
    t = load.result.type
    assert isinstance(t, TensorType) and load.strides is not None
    stride = arith.ConstantOp(IntegerAttr(load.strides.get_values()[-2], i32))
    ops.append(stride)

    def copy(dma: type[pallas.DmaStartOp | pallas.DmaWaitOp]) -> RowCopies:
        def row(r: SSAValue) -> list[Operation]:
            step = arith.MuliOp(r, stride.result)
            at = arith.AddiOp(base, step.result)
            return [step, at, dma(table_ref, at.result, rows_ref, (0, r), sem, lead)]

        return row

    ops += [
        row_loop(t.get_shape()[-2], copy(pallas.DmaStartOp)),
        row_loop(t.get_shape()[-2], copy(pallas.DmaWaitOp)),
    ]
    two_d = TensorType(t.element_type, t.get_shape()[-2:])
    lane_step = load.strides.get_values()[-1]
    indexers: list[pallas.Indexer] = []
    lane = linearize(load.map.data.results[-1])
    assert lane is not None  # row_strided checked
    n_rows, n_lanes = two_d.get_shape()
    if lane_step > 1:  # every k-th lane of the whole rows, compacted in registers
        indexers = [
            pallas.SliceAttr(0, n_rows),
            pallas.SliceAttr(lane.constant, n_lanes, lane_step),
        ]
    elif n_lanes != load.buffer.type.get_shape()[-1]:  # type: ignore[attr-defined]
        indexers = [pallas.SliceAttr(0, n_rows), pallas.SliceAttr(lane.constant, n_lanes)]
    ops.append(pallas.LoadOp(rows_ref, two_d, indexers))
    if two_d != t:  # the leading dims of one index each
        ops.append(pallas.ReshapeOp(ops[-1].results[0], t))
    return ops


def gather_rows(
    start: AffineExpr,
    index_refs: Sequence[SSAValue],
    table_ref: SSAValue,
    rows_ref: SSAValue,
    sem: SSAValue | None,
    gather: tl.GatherOp,
    chunk: int | None = None,
) -> list[Operation]:
    """The G3 idiom: read each row's indices from SMEM, start one row DMA per row into
    the VMEM buffer (`table.at[i0, pl.ds(i1, 1)]` for two index buffers), wait for all,
    then load the rows as a tile; the starts are one `pallas.loop` over the rows, the
    waits another. From a table resident in VMEM (G4, `copied_in_vmem`; `sem` None),
    each row is copied through registers instead. Index positions past
    the end of an index buffer (a ragged last step) read its last index: those rows
    land in the padded part of the tile, which the store drops. With `chunk`, the indices are a streamed SMEM block of
    that many lookups, so a position is taken modulo it (G3c; the clamped last position
    is in the last chunk)."""
    ops, base = grid_scalar(start, gather)
    counts = [i.type.element_count() for i in gather.indices]  # type: ignore[attr-defined]
    last_of = {
        n: arith.ConstantOp(IntegerAttr(n - 1, i32)) for n in dict.fromkeys(counts)
    }
    lasts = [last_of[n] for n in counts]
    size = arith.ConstantOp(IntegerAttr(chunk or 1, i32))
    ops += [*last_of.values(), size]
    t = gather.result.type
    assert isinstance(t, TensorType)
    packed = packed_rows(gather)
    pack = arith.ConstantOp(IntegerAttr(packed, i32))
    if packed > 1:
        ops.append(pack)

    def pick(at: SSAValue) -> tuple[list[Operation], list[SSAValue]]:
        """The leading indices and the row of the lookup at position `at`: each index
        buffer read at it (clamped to its last position, and taken modulo the chunk)."""
        ops: list[Operation] = []
        picked: list[SSAValue] = []
        for index_ref, last in zip(index_refs, lasts):
            clamped = arith.MinSIOp(at, last.result)
            ops.append(clamped)
            position = clamped.result
            if chunk is not None:
                local = arith.RemSIOp(position, size.result)
                ops.append(local)
                position = local.result
            read = pallas.ReadOp(index_ref, [position])
            ops.append(read)
            picked.append(read.result)
        return ops, picked

    n_rows = t.get_shape()[0]
    if packed == 1:

        def copy(
            row_op: type[pallas.RowCopyOp | pallas.DmaStartOp | pallas.DmaWaitOp],
        ) -> RowCopies:
            def row(r: SSAValue) -> list[Operation]:
                at = arith.AddiOp(base, r)
                reads, (*lead, row) = pick(at.result)
                if row_op is pallas.RowCopyOp:
                    copy = pallas.RowCopyOp(table_ref, row, rows_ref, (0, r), lead)
                else:
                    copy = row_op(table_ref, row, rows_ref, (0, r), sem, lead)
                return [at, *reads, copy]

            return row

        if sem is None:
            ops.append(row_loop(n_rows, copy(pallas.RowCopyOp)))
        else:  # all rows in flight at once, then every wait
            ops.append(row_loop(n_rows, copy(pallas.DmaStartOp)))
            ops.append(row_loop(n_rows, copy(pallas.DmaWaitOp)))
        ops.append(pallas.LoadOp(rows_ref, t))
        return ops
    # Packed rows: each lookup's place in its slab picks a slab row after the waits,
    # so the lookups are unrolled and each keeps its scalars.
    picks: list[list[SSAValue]] = []
    selectors: list[SSAValue] = []
    for r in range(n_rows):
        offset = arith.ConstantOp(IntegerAttr(r, i32))
        at = arith.AddiOp(base, offset.result)
        reads, (*lead, row) = pick(at.result)
        ops += [offset, at, *reads]
        # The 32-bit sublane that holds the row: rows P * (row / P) ... + P - 1
        # (the gathered dim is a multiple of P: indirect-load-to-scalar-prefetch
        # does not pick DMA otherwise).
        group = arith.DivSIOp(row, pack.result)
        first = arith.MuliOp(group.result, pack.result)
        ops += [group, first]
        within = arith.SubiOp(row, first.result)
        ops.append(within)
        selectors.append(within.result)
        row = first.result
        assert sem is not None  # a resident table's rows are 32-bit (`copied_in_vmem`)
        ops.append(pallas.DmaStartOp(table_ref, row, rows_ref, r, sem, lead, packed))
        picks.append([*lead, row])
    ops += [
        pallas.DmaWaitOp(table_ref, pick[-1], rows_ref, r, sem, pick[:-1], packed)
        for r, pick in enumerate(picks)
    ]
    ops += pick_packed_rows(rows_ref, selectors, t)
    return ops


RowCopies = Callable[[SSAValue], list[Operation]]
"""The ops that copy one row, given its place in the VMEM buffer (an i32 scalar)."""


def row_loop(n_rows: int, row: RowCopies, first: int = 0) -> pallas.LoopOp:
    """`pallas.loop %r = first to n_rows` around one row's copy: the kernel holds one
    copy, not one per row, whatever the rows (`%r` is named `r`)."""
    body = Block(arg_types=[i32])
    body.args[0].name_hint = "r"
    body.add_ops(row(body.args[0]))
    return pallas.LoopOp(first, n_rows, Region(body))


def pick_packed_rows(
    rows_ref: SSAValue, positions: Sequence[SSAValue], t: TensorType
) -> list[Operation]:
    """Of the slab of P packed rows each lookup copied (`rows_ref`: R x P x ...), keep
    the row at its `position` in the slab: a column `which` of those positions, built
    from the scalars with scalar-predicate selects, picks between the P slabs' rows."""
    R, *rest = t.get_shape()
    packed = rows_ref.type.get_shape()[1]  # type: ignore[attr-defined]
    col = TensorType(i32, [R, 1])

    def splat(value: int) -> arith.ConstantOp:
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(col, [value]))

    zero, offset = splat(0), arith.ConstantOp(IntegerAttr(0, i32))
    iota = pallas.IotaOp(offset.result, 0, col)
    # Row q of a slab, as an i32 scalar and an (R, 1) column, for q = 1 .. P - 1.
    q_ints = {q: arith.ConstantOp(IntegerAttr(q, i32)) for q in range(1, packed)}
    q_cols = {q: splat(q) for q in range(1, packed)}
    ops: list[Operation] = [zero, offset, iota, *q_ints.values(), *q_cols.values()]
    which: SSAValue = zero.result
    for r, position in enumerate(positions):
        at_r = splat(r)
        is_r = pallas.CompareOp("eq", iota.result, at_r.result)
        ops += [at_r, is_r]
        for q in range(1, packed):
            here = pallas.SelectOp(is_r.result, q_cols[q].result, zero.result)
            hit = arith.CmpiOp(position, q_ints[q].result, "eq")
            add = arith.SelectOp(hit.result, here.result, zero.result)
            total = arith.AddiOp(which, add.result)
            ops += [here, hit, add, total]
            which = total.result
    full = [pallas.SliceAttr(0, n, 1) for n in rest]
    out = pallas.LoadOp(rows_ref, t, [pallas.SliceAttr(0, R, 1), IntAttr(0), *full])
    ops.append(out)
    value: SSAValue = out.result
    for q in range(1, packed):
        is_q = pallas.CompareOp("eq", which, q_cols[q].result)
        wide = pallas.BroadcastOp(is_q.result, TensorType(i1, t.get_shape()))
        slab = pallas.LoadOp(rows_ref, t, [pallas.SliceAttr(0, R, 1), IntAttr(q), *full])
        pick = pallas.SelectOp(wide.result, slab.result, value)
        ops += [is_q, wide, slab, pick]
        value = pick.result
    return ops
