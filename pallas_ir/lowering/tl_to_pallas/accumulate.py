"""Accumulating stores and `tl.accumulate`s of tl-to-pallas across `sequential` grid
dims: a guarded read-combine-write; and the grid-position conditions that guard them
(and `tl.when` bodies)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerAttr,
    IntegerType,
    TensorType,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr

from pallas_ir.dialects import pallas
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import ReductionKind
from pallas_ir.lowering.tl_to_pallas.access import grid_scalar

_COMBINE: dict[str, tuple[type[Operation], type[Operation]]] = {
    "sum": (arith.AddfOp, arith.AddiOp),
    "prod": (arith.MulfOp, arith.MuliOp),
    "max": (arith.MaximumfOp, arith.MaxSIOp),
    "min": (arith.MinimumfOp, arith.MinSIOp),
}


def accumulator_type(t: TensorType) -> TensorType | None:
    """The 32-bit type a split reduction of 8- or 16-bit data accumulates in (None:
    the data is 32-bit, and the output block itself is the accumulator)."""
    elt = t.element_type
    bits = getattr(elt, "bitwidth", 32)
    if bits >= 32 or (isinstance(elt, IntegerType) and bits == 1):
        return None
    wide = i32 if isinstance(elt, IntegerType) else Float32Type()
    return TensorType(wide, t.get_shape())


def sequential_steps(
    grid: tl.GridOp, step: Callable[[int, int], int]
) -> tuple[list[Operation], SSAValue]:
    """`i1` that holds where every sequential grid dim k is at step `step(k, n)` (of
    its n steps)."""
    ops: list[Operation] = []
    all_at: SSAValue | None = None
    for k, (sem, n) in enumerate(zip(grid.semantics.data, grid.extents)):
        if sem.data != tl.GridSemantics.SEQUENTIAL:
            continue
        pid = pallas.ProgramIdOp(k)
        at = arith.ConstantOp(IntegerAttr(step(k, n), i32))
        eq = arith.CmpiOp(pid.result, at.result, "eq")
        ops += [pid, at, eq]
        if all_at is None:
            all_at = eq.result
        else:
            both = arith.AndIOp(all_at, eq.result)
            ops.append(both)
            all_at = both.result
    assert all_at is not None  # the verifier requires sequential dims
    return ops, all_at


def grid_condition(
    expr: AffineExpr, where: Operation
) -> tuple[list[Operation], SSAValue]:
    """`i1` that holds where `expr` (of the grid indices) is >= 0, as a `tl.when`
    condition."""
    ops, value = grid_scalar(expr, where)
    zero = arith.ConstantOp(IntegerAttr(0, i32))
    holds = arith.CmpiOp(value, zero.result, "sge")
    return [*ops, zero, holds], holds.result


def _combine_over_steps(
    kind: str,
    tile: SSAValue,
    ref: SSAValue,
    grid: tl.GridOp,
    indexers: Sequence[pallas.Indexer] = (),
) -> list[Operation]:
    """`tile` into `ref` across the sequential grid dims: the first step stores it,
    every later one combines it (`kind`) with what `ref` holds."""
    ops, first = sequential_steps(grid, lambda k, n: 0)
    true = arith.ConstantOp(IntegerAttr(1, IntegerType(1)))
    later = arith.XOrIOp(first, true.result)
    t = tile.type
    assert isinstance(t, TensorType)
    float_op, int_op = _COMBINE[kind]
    combine_op = int_op if isinstance(t.element_type, IntegerType) else float_op
    old = pallas.LoadOp(ref, t, indexers)
    combine = combine_op(old.result, tile)
    store_later = pallas.StoreOp(combine.results[0], ref, indexers)
    return [
        *ops,
        pallas.WhenOp(first, Region(Block([pallas.StoreOp(tile, ref, indexers)]))),
        true,
        later,
        pallas.WhenOp(later.result, Region(Block([old, combine, store_later]))),
    ]


def accumulate(
    store: tl.StoreOp,
    value: SSAValue,
    ref: SSAValue,
    indexers: Sequence[pallas.Indexer],
    grid: tl.GridOp,
    acc_ref: SSAValue | None = None,
) -> list[Operation]:
    """An accumulating store. The output block stays in VMEM across the sequential grid
    dims (its index does not change along them). Without `acc_ref`, the first step
    stores the tile and the others combine with it in place; Pallas writes the block
    back once. With `acc_ref` (a 32-bit VMEM scratch for 8- and 16-bit data), the first
    step initialises the scratch with the widened tile, every later step combines into
    it, and the last step (finalize) stores it, narrowed, into the output block."""
    kind = store.accumulate.data  # type: ignore[union-attr]
    if acc_ref is None:
        return _combine_over_steps(kind, value, ref, grid, indexers)
    t = value.type
    assert isinstance(t, TensorType)
    wide = accumulator_type(t)
    assert wide is not None
    widened = pallas.ConvertOp(value, wide)
    last_ops, last = sequential_steps(grid, lambda k, n: n - 1)
    total = pallas.LoadOp(acc_ref, wide)
    narrowed = pallas.ConvertOp(total.result, t)
    return [
        widened,
        *_combine_over_steps(kind, widened.result, acc_ref, grid),
        *last_ops,
        pallas.WhenOp(
            last,
            Region(
                Block([total, narrowed, pallas.StoreOp(narrowed.result, ref, indexers)])
            ),
        ),
    ]


def running_total(
    op: tl.AccumulateOp,
    partial: SSAValue,
    acc_ref: SSAValue,
    grid: tl.GridOp,
    factor: SSAValue | None = None,
    keep_previous: bool = False,
) -> tuple[list[Operation], SSAValue | None]:
    """A `tl.accumulate` on its VMEM scratch: the first step of the sequential grid
    dims stores the partial tile, every later one combines it with the scratch (a
    rescaled one stores `scratch * factor + partial`); the last op reads the total back
    (its result is the accumulate's).

    With `keep_previous` (a `tl.previous` reads the total before this step), the first
    step first sets the scratch to the kind's identity, and the scratch is read before
    the combination: that read is the second value returned (else None). The product
    by `factor` is only computed at the later steps, so an inf or NaN factor at the
    first step cannot leak into the total."""
    t = partial.type
    assert isinstance(t, TensorType)
    kind = op.kind.data
    if factor is None and not keep_previous:
        return [
            *_combine_over_steps(kind, partial, acc_ref, grid),
            pallas.LoadOp(acc_ref, t),
        ], None
    ops, first = sequential_steps(grid, lambda k, n: 0)
    old: pallas.LoadOp | None = None
    if keep_previous:
        identity = arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(
                t, [ReductionKind(kind).identity(t.element_type)]
            ),
            t,
        )
        old = pallas.LoadOp(acc_ref, t)
        ops += [
            identity,
            pallas.WhenOp(
                first, Region(Block([pallas.StoreOp(identity.result, acc_ref)]))
            ),
            old,
        ]
    true = arith.ConstantOp(IntegerAttr(1, IntegerType(1)))
    later = arith.XOrIOp(first, true.result)
    combine: list[Operation] = []
    if old is None:
        old_value = (load := pallas.LoadOp(acc_ref, t)).result
        combine.append(load)
    else:
        old_value = old.result
    integer = isinstance(t.element_type, IntegerType)
    if factor is not None:
        scaled = (arith.MuliOp if integer else arith.MulfOp)(old_value, factor)
        combine.append(scaled)
        old_value = scaled.results[0]
    float_op, int_op = _COMBINE[kind]
    combined = (int_op if integer else float_op)(old_value, partial)
    combine += [combined, pallas.StoreOp(combined.results[0], acc_ref)]
    ops += [
        pallas.WhenOp(first, Region(Block([pallas.StoreOp(partial, acc_ref)]))),
        true,
        later,
        pallas.WhenOp(later.result, Region(Block(combine))),
        pallas.LoadOp(acc_ref, t),
    ]
    return ops, None if old is None else old.result
