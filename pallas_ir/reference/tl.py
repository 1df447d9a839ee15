"""The reference semantics of `tl`: run tiled kernels on numpy arrays, grid point by grid
point in row-major order.

A `tl.load` reads the tile whose first element is at the map's element offsets (with its
strides); the part of a tile past the end of its buffer reads as NaN (0 for integers), so a
kernel whose valid results depend on padding is caught. A `tl.store` writes the in-bounds
part of its tile; a `tl.scatter` writes its rows one by one, in order. Tile compute is
numpy on whole tiles. A `tl.accumulate` keeps its running total per point of the
parallel grid dims (a rescaled one `total * factor + partial`), a `tl.previous` reads
the total before this point's combination, and a `tl.on_last_step` body runs at the
last point of the sequential ones. A `tl.when` body runs where its condition is >= 0;
elsewhere its results are its accumulators' totals so far.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import ReductionKind
from pallas_ir.reference.ops import (
    ReferenceError,
    bind_buffers,
    divisor_arguments,
    eval_affine,
    evaluate,
    evaluate_tile,
)
from pallas_ir.reference.pallas import _iota
from pallas_ir.reference.ta import symbol_limits


def _window(
    op: tl.LoadOp | tl.StoreOp, env: dict[SSAValue, Any], shape: Sequence[int]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per buffer dim: the element indices of the tile, and which of them are in bounds."""
    dims = [env[d] for d in op.dims]
    symbols = [int(env[s]) for s in op.symbols]
    tile = op.result.type if isinstance(op, tl.LoadOp) else op.value.type
    assert isinstance(tile, TensorType)
    strides = op.strides.get_values() if op.strides is not None else (1,) * len(shape)
    idx, ok = [], []
    for e, t, s, n in zip(
        op.map.data.results, tile.get_shape(), strides, shape, strict=True
    ):
        start = int(eval_affine(e, dims, symbols))
        if not 0 <= start < n:
            raise ReferenceError(
                f"'{op.name}': a tile starts at {start}, outside a dim of {n}"
            )
        i = start + s * np.arange(t)
        idx.append(i)
        ok.append(i < n)
    return idx, ok


def _load(op: tl.LoadOp, env: dict[SSAValue, Any], buffer: np.ndarray) -> np.ndarray:
    idx, ok = _window(op, env, buffer.shape)
    fill = np.nan if buffer.dtype.kind == "f" else 0
    tile = np.full([len(i) for i in idx], fill, dtype=buffer.dtype)
    inside = np.ix_(*(np.nonzero(o)[0] for o in ok))
    tile[inside] = buffer[np.ix_(*(i[o] for i, o in zip(idx, ok)))]
    return tile


def _store(
    op: tl.StoreOp, env: dict[SSAValue, Any], buffer: np.ndarray, first: bool
) -> None:
    """Write the in-bounds part of the tile; an accumulating store combines it with
    what is there, except at the first point of the sequential grid dims."""
    idx, ok = _window(op, env, buffer.shape)
    tile = np.asarray(env[op.value])[np.ix_(*(np.nonzero(o)[0] for o in ok))]
    where = np.ix_(*(i[o] for i, o in zip(idx, ok)))
    if op.accumulate is not None and not first:
        tile = _COMBINE[ReductionKind(op.accumulate.data).value](buffer[where], tile)
    buffer[where] = tile


_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
"""How a split reduction's partial results combine."""


def _identity(kind: ReductionKind, like: np.ndarray) -> np.ndarray:
    """A tile like `like` of the identity of `kind` (what `tl.previous` reads at the
    first point of the sequential dims): 0, 1, or the lowest or highest value."""
    like = np.asarray(like)
    if like.dtype.kind == "f":
        lowest, highest = -np.inf, np.inf
    else:
        info = np.iinfo(like.dtype)
        lowest, highest = info.min, info.max
    value = {"sum": 0, "prod": 1, "max": lowest, "min": highest}[kind.value]
    return np.full(like.shape, value, dtype=like.dtype)


def _scatter(op: tl.ScatterOp, env: dict[SSAValue, Any], dims: list[Any]) -> None:
    """Row r of the tile to `dest[lead..., index[m + r], :]`, in order (a later row
    wins, or with `accumulate` adds); positions past the end of the index buffer are
    not written."""
    dest, tile = env[op.dest], np.asarray(env[op.value])
    flat = env[op.index].reshape(-1)
    lead = tuple(int(eval_affine(e, dims, [])) for e in op.lead_map.data.results)
    (start,) = (int(eval_affine(e, dims, [])) for e in op.index_map.data.results)
    rows = dest[lead]
    for r in range(min(tile.shape[0], flat.size - start)):
        at = int(flat[start + r])
        if not 0 <= at < rows.shape[0]:
            raise ReferenceError(
                f"'tl.scatter': index {at} leaves the scattered dim of {rows.shape[0]}"
            )
        rows[at] = rows[at] + tile[r] if op.accumulate is not None else tile[r]


def run_kernel(kernel: tl.KernelOp, buffers: Sequence[np.ndarray]) -> None:
    """Run one tiled kernel in place on its argument buffers."""
    block = kernel.body.block
    env = bind_buffers(kernel.sym_name.data, block.args, buffers)
    (grid,) = [op for op in block.ops if isinstance(op, tl.GridOp)]
    sequential = [
        k
        for k, sem in enumerate(grid.semantics.data)
        if sem.data == tl.GridSemantics.SEQUENTIAL
    ]
    totals: dict[tuple[Operation, tuple[int, ...]], np.ndarray] = {}
    previous: dict[tuple[Operation, tuple[int, ...]], np.ndarray] = {}
    for point in itertools.product(*(range(n) for n in grid.extents)):
        local = dict(env)
        for arg, i in zip(grid.body.block.args, point):
            local[arg] = np.int64(i)
        step = _Step(
            first=all(point[k] == 0 for k in sequential),
            last=all(point[k] == grid.extents[k] - 1 for k in sequential),
            parallel=tuple(i for k, i in enumerate(point) if k not in sequential),
            totals=totals,
            previous=previous,
        )
        _run_ops(grid.body.block.ops, local, step)


@dataclass
class _Step:
    """Where a grid point is along the sequential dims, and the running totals of the
    `tl.accumulate`s (per op and point of the parallel dims), with what each held
    before this point's combination (`tl.previous`; its kind's identity at the first
    point)."""

    first: bool
    last: bool
    parallel: tuple[int, ...]
    totals: dict[tuple[Operation, tuple[int, ...]], np.ndarray]
    previous: dict[tuple[Operation, tuple[int, ...]], np.ndarray]


def _run_ops(ops: Iterable[Operation], local: dict[SSAValue, Any], step: _Step) -> None:
    for op in ops:
        args = [local[o] for o in op.operands]
        if isinstance(op, tl.LoadOp):
            local[op.result] = _load(op, local, local[op.buffer])
        elif isinstance(op, tl.StoreOp):
            _store(op, local, local[op.buffer], step.first)
        elif isinstance(op, tl.AccumulateOp):
            key = (op, step.parallel)
            kind = ReductionKind(op.kind.data)
            partial = args[0]
            if step.first:
                before = _identity(kind, partial)
                total = partial
            else:
                before = step.totals[key]
                if op.rescale is not None:  # a rescaled <sum>
                    total = before * args[1] + partial
                else:
                    total = _COMBINE[kind.value](before, partial)
            step.previous[key] = before
            step.totals[key] = local[op.result] = total
        elif isinstance(op, tl.PreviousOp):
            local[op.result] = step.previous[(op.accumulate, step.parallel)]
        elif isinstance(op, tl.OnLastStepOp):
            if step.last:
                _run_ops(op.body.block.ops, local, step)
        elif isinstance(op, tl.WhenOp):
            (condition,) = op.map.data.results
            yielded = op.yield_op.values
            if int(eval_affine(condition, args, [])) >= 0:
                _run_ops(op.body.block.ops, local, step)
                totals = [local[v] for v in yielded]
            else:  # the point contributes nothing: each total so far, unchanged
                totals = [step.totals[(v.owner, step.parallel)] for v in yielded]
            for result, total in zip(op.totals, totals, strict=True):
                local[result] = total
        elif isinstance(op, tl.YieldOp):
            pass  # its tl.when reads what it yields
        elif isinstance(op, tl.IotaOp):
            offset = int(eval_affine(op.map.data.results[0], args, []))
            local[op.result] = _iota(op.result.type, op.dim.value.data, offset)  # type: ignore[arg-type]
        elif isinstance(op, tl.GatherOp):
            table = local[op.table]
            n_dims = len(op.dims)
            start = int(
                eval_affine(op.map.data.results[0], args[-n_dims:] if n_dims else [], [])
            )
            rows = op.result.type.get_shape()[0]  # type: ignore[attr-defined]
            picked = []
            for k, index in enumerate(op.indices):
                flat = local[index].reshape(-1)
                positions = np.minimum(np.arange(start, start + rows), flat.size - 1)
                at = flat[positions].astype(np.int64)
                if at.min() < 0 or at.max() >= table.shape[k]:
                    raise ReferenceError(
                        f"'tl.gather': an index leaves the table's dim {k} of "
                        f"{table.shape[k]}"
                    )
                picked.append(at)
            local[op.result] = table[tuple(picked)]
        elif isinstance(op, tl.ScatterOp):
            _scatter(op, local, args[3:])
        elif isinstance(op, tl.ScalarLoadOp):
            buf = local[op.buffer]
            idx = tuple(int(eval_affine(e, args[1:], [])) for e in op.map.data.results)
            local[op.result] = np.int64(buf[idx])
        elif (tile := evaluate_tile(op, args)) is not None:
            local[op.results[0]] = tile
        elif (value := evaluate(op, args)) is not None:
            local[op.results[0]] = value
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")


# ---------------------------------------------------------------------------------------
# What random inputs must respect


def _buffer_argument(kernel: tl.KernelOp, value: SSAValue) -> int | None:
    """The kernel argument a scalar index was read from (through casts), if any."""
    while isinstance(owner := value.owner, Operation) and not isinstance(
        owner, tl.ScalarLoadOp
    ):
        if len(owner.operands) != 1:
            return None
        value = owner.operands[0]
    if isinstance(owner, tl.ScalarLoadOp):
        value = owner.buffer
    if isinstance(value, BlockArgument) and value.block is kernel.body.block:
        return value.index
    return None


def index_limits(kernel: tl.KernelOp) -> dict[int, int]:
    """For each integer argument whose values index other buffers (prefetched scalars
    that place a tile, a gather's row indices): the exclusive upper bound that keeps
    every such access inside its buffer (a tile starts inside it)."""
    limits: dict[int, int] = {}

    def bound(arg: int | None, limit: int) -> None:
        if arg is not None:
            limits[arg] = min(limits.get(arg, limit), limit)

    for grid in [op for op in kernel.body.block.ops if isinstance(op, tl.GridOp)]:
        extents = grid.extents
        for op in grid.walk():
            if isinstance(op, tl.GatherOp):
                table = op.table.type
                assert isinstance(table, MemRefType)
                for k, index in enumerate(op.indices):
                    bound(_buffer_argument(kernel, index), table.get_shape()[k])
            elif isinstance(op, tl.ScatterOp):
                dest = op.dest.type
                assert isinstance(dest, MemRefType)
                bound(_buffer_argument(kernel, op.index), dest.get_shape()[-2])
            elif isinstance(op, tl.LoadOp | tl.StoreOp) and op.symbols:
                buffer = op.buffer.type
                assert isinstance(buffer, MemRefType)
                dims = [
                    (0, extents[d.index] - 1)
                    if isinstance(d, BlockArgument) and d.block is grid.body.block
                    else None
                    for d in op.dims
                ]
                found = symbol_limits(op.map.data, dims, buffer.get_shape())
                for symbol, limit in zip(op.symbols, found, strict=True):
                    bound(_buffer_argument(kernel, symbol), limit)
    return limits


def divisor_args(kernel: tl.KernelOp) -> set[int]:
    """The kernel arguments whose values are integer divisors (drawn nonzero)."""

    def loaded_from(op: Operation) -> SSAValue | None:
        if isinstance(op, tl.LoadOp | tl.ScalarLoadOp):
            return op.buffer
        return op.table if isinstance(op, tl.GatherOp) else None

    block = kernel.body.block
    return {a.index for a in divisor_arguments(kernel, loaded_from) if a.block is block}
