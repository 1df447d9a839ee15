"""Row DMA writes of tl-to-pallas: `tl.scatter`, the KV-cache update idiom.

The dest stays in HBM (`any`), passed in and aliased to an `any` output, so the rows no
row reaches keep their contents and exactly the rows written move. The tile is stored
to a VMEM scratch; then, row by row (a `pallas.loop`), the row's index is read from SMEM
and the row is written by DMA, each write waited for before the next (a later row to the same place
wins, as in eager PyTorch; an accumulating one reads what an earlier one wrote).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.interval_bounds import map_bounds
from pallas_ir.lowering.tl_to_pallas.access import KernelConverter, grid_scalar
from pallas_ir.lowering.tl_to_pallas.gathers import row_loop

ROW_WRITE_BITS = 32
"""Element width of the rows a DMA writes one at a time: a row of 8- or 16-bit data
shares a 32-bit sublane with its neighbours, and Mosaic rejects a write of one (measured,
bf16: "Offsets along tiled dimensions must be aligned to tiles")."""


def check_scatters(
    scatters: Sequence[tl.ScatterOp], body_ops: Sequence[Operation]
) -> None:
    """What the row-DMA form needs: 32-bit rows, and a dest that no other op of the
    kernel reads or writes (its rows move by DMA only, in HBM)."""
    for s in scatters:
        t = s.value.type
        assert isinstance(t, TensorType)
        bits = numpy_dtype(t.element_type).itemsize * 8
        if bits != ROW_WRITE_BITS:
            raise PassError(
                s,
                f"tl-to-pallas: a scatter writes rows by DMA, one at a time, and a row of "
                f"{t.element_type} shares a 32-bit sublane with its neighbours; only "
                "32-bit rows are written so",
            )
        for o in body_ops:
            if o is not s and s.dest in o.operands:
                raise PassError(
                    o,
                    "tl-to-pallas: a scattered buffer stays in HBM, written by row DMAs; "
                    f"'{o.name}' may not use it in the same kernel",
                )


def scatter_semantics(
    conv: KernelConverter,
    scatters: Sequence[tl.ScatterOp],
    semantics: list[pallas.DimensionSemantics],
) -> list[pallas.DimensionSemantics]:
    """A grid dim the lead map of a scatter does not use may send rows of different
    steps to one place: it runs in order (`arbitrary`), so the later one wins there
    too. (The dims of the index map are `sequential` already.)"""
    out = list(semantics)
    for s in scatters:
        used = conv.grid_map(s.lead_map.data, s.dims, s).used_dims()
        for k in range(len(out)):
            if k not in used:
                out[k] = pallas.DimensionSemantics.ARBITRARY
    return out


def scatter_scratch(op: tl.ScatterOp) -> list[pallas.RefType]:
    """The VMEM rows the tile is stored to, a DMA semaphore and, to accumulate, one
    row the dest's row is read into and one the tile's row is copied into."""
    t = op.value.type
    assert isinstance(t, TensorType)
    scratch = [
        pallas.RefType(t.get_shape(), t.element_type),
        pallas.RefType([], i32, pallas.MemorySpace.SEMAPHORE),
    ]
    if op.accumulate is not None:
        row = pallas.RefType([1, t.get_shape()[1]], t.element_type)
        scratch += [row, row]
    return scratch


def scatter_rows(
    conv: KernelConverter,
    op: tl.ScatterOp,
    value: SSAValue,
    index_ref: SSAValue,
    dest_ref: SSAValue,
    scratch: Sequence[SSAValue],
) -> list[Operation]:
    """Store the tile to the VMEM rows, then, in a `pallas.loop` over them, for each row
    r: read `index[m + r]` and write the row there by DMA, waiting for it. The rows
    that may be past the end of the index buffer at some step (`m + r < len(index)`)
    are a second loop, each write under that condition. With `accumulate <sum>`, first
    read the dest row into a spare row, copy the tile's row into the other, add them,
    and write the sum."""
    rows_ref, sem, *spare = scratch
    t = value.type
    assert isinstance(t, TensorType)
    n_rows, width = t.get_shape()
    ops: list[Operation] = [pallas.StoreOp(value, rows_ref)]
    lead: list[SSAValue] = []
    for e in conv.grid_map(op.lead_map.data, op.dims, op).results:
        more, at = grid_scalar(e, op)
        at.name_hint = "lead"
        ops += more
        lead.append(at)
    index_map = conv.grid_map(op.index_map.data, op.dims, op)
    more, start = grid_scalar(index_map.results[0], op)
    start.name_hint = "first"
    ops += more
    index = op.index.type
    assert isinstance(index, MemRefType)
    count = index.element_count()
    grid = [(0, n - 1) for n in conv.grid.extents]
    bounds = map_bounds(index_map, grid, [])[0]
    assert bounds is not None  # grid_scalar checked it is linear in the grid
    first, last = bounds
    # Rows past the end at every step are never written; rows inside at every step
    # need no condition.
    n_written = min(n_rows, count - first)
    n_inside = max(0, min(n_written, count - last))
    end = arith.ConstantOp(IntegerAttr(count, i32))
    end.result.name_hint = "count"

    def write(r: SSAValue, guarded: bool) -> list[Operation]:
        position = arith.AddiOp(start, r)
        position.result.name_hint = "at"
        read = pallas.ReadOp(index_ref, [position.result])
        row = read.result
        row.name_hint = "row"
        writes: list[Operation] = [read]
        if spare:
            old, new = spare
            row_t = TensorType(t.element_type, [1, width])
            add = (
                arith.AddiOp if isinstance(t.element_type, IntegerType) else arith.AddfOp
            )
            there = pallas.LoadOp(old, row_t)
            mine = pallas.LoadOp(new, row_t)
            total = add(there.result, mine.result)
            there.result.name_hint, mine.result.name_hint = "old_row", "new_row"
            total.result.name_hint = "sum"
            writes += [
                pallas.DmaStartOp(dest_ref, row, old, 0, sem, lead),
                pallas.DmaWaitOp(dest_ref, row, old, 0, sem, lead),
                pallas.RowCopyOp(rows_ref, r, new, 0),
                there,
                mine,
                total,
                pallas.StoreOp(total.result, old),
                pallas.DmaWriteStartOp(old, 0, dest_ref, row, sem, lead),
                pallas.DmaWriteWaitOp(old, 0, dest_ref, row, sem, lead),
            ]
        else:
            writes += [
                pallas.DmaWriteStartOp(rows_ref, (0, r), dest_ref, row, sem, lead),
                pallas.DmaWriteWaitOp(rows_ref, (0, r), dest_ref, row, sem, lead),
            ]
        if not guarded:
            return [position, *writes]
        inside = arith.CmpiOp(position.result, end.result, "slt")
        inside.result.name_hint = "inside"
        return [position, inside, pallas.WhenOp(inside.result, Region(Block(writes)))]

    if n_inside > 0:
        ops.append(row_loop(n_inside, lambda r: write(r, guarded=False)))
    if n_written > n_inside:  # some step's rows from n_inside on are past the end
        ops.append(end)
        ops.append(row_loop(n_written, lambda r: write(r, guarded=True), n_inside))
    return ops
