"""The reference semantics of `xla`: run an `xla.func` on numpy arrays.

Domain values are numpy arrays that broadcast to their tensors (an iota varies along
its axis only), as in the ta reference, whose meaning an `xla.func` keeps: index
arithmetic in int64, positions checked against the view they index (an out-of-range
index raises `ReferenceError` naming the op), stores in row-major order over the
domain (the later point wins; an accumulating scatter combines every point).
`reference/pallas.py` runs `pallas.xla_call` with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.dialects import xla
from pallas_ir.dialects.common import ReductionKind
from pallas_ir.reference.ops import (
    ReferenceError,
    combine_at,
    divisor_arguments,
    eval_affine,
    evaluate,
    evaluate_tile,
    numpy_dtype,
    reduce_array,
    run_library_call,
)
from pallas_ir.reference.ta import symbol_limits


def _op_name(op: Operation) -> str:
    from pallas_ir.diagnostics import location_of

    loc = location_of(op)
    return f"'{op.name}'" + (f" at {loc}" if loc else "")


def _tensor(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def _flat_index(op: xla.FlatIndexOp, args: list[Any]) -> np.ndarray:
    dims = args[: len(op.dims)]
    symbols = [np.asarray(s).astype(np.int64) for s in args[len(op.dims) :]]
    flat: Any = np.int64(0)
    shape = op.shape.get_values()
    for k, (expr, n, stride) in enumerate(zip(op.map.data.results, shape, op.strides)):
        idx = np.asarray(eval_affine(expr, dims, symbols), dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = idx[(idx < 0) | (idx >= n)].flat[0]
            raise ReferenceError(
                f"{_op_name(op)}: index {bad} is out of range for dim {k} of size {n}"
            )
        flat = flat + idx * stride
    return np.asarray(flat)


def _reduce(op: xla.ReduceOp, value: Any) -> np.ndarray:
    kind = ReductionKind(op.kind.data)
    shape = _tensor(op.source).get_shape()
    axes = op.axes.get_values()
    v = np.asarray(value)
    v = v.reshape((1,) * (len(shape) - v.ndim) + v.shape)
    # A value that does not vary along a reduced axis still counts once per point.
    v = np.broadcast_to(
        v, tuple(shape[a] if a in axes else v.shape[a] for a in range(len(shape)))
    )
    return reduce_array(kind, v, axes, numpy_dtype(_tensor(op.result).element_type))


def _scatter(
    buffer: np.ndarray, index: Any, value: Any, combine: ReductionKind | None
) -> np.ndarray:
    out = np.array(buffer)
    shape = np.broadcast_shapes(np.shape(index), np.shape(value))
    at = np.broadcast_to(index, shape)
    value = np.broadcast_to(value, shape).astype(out.dtype)
    if combine is None:
        out.reshape(-1)[at] = value
    else:
        combine_at(combine, out.reshape(-1), at, value)
    return out


def _window_positions(
    op: xla.WindowOp | xla.UpdateWindowOp, extents: Sequence[int]
) -> np.ndarray:
    """The row-major positions a window reaches at each point of the domain (as
    `xla.flat_index` computes them), broadcastable to the domain."""
    rank = len(extents)
    dims = [
        np.arange(n, dtype=np.int64).reshape([n if k == d else 1 for k in range(rank)])
        for d, n in enumerate(extents)
    ]
    view = op.shape.get_values()
    index = [
        np.asarray(eval_affine(e, dims, []), dtype=np.int64) for e in op.map.data.results
    ]
    at = np.zeros([1] * rank, np.int64)
    for i, stride in zip(index, row_major_strides(view), strict=True):
        at = at + i * stride
    return at


def _run(op: Operation, args: list[Any]) -> Any:
    if isinstance(op, xla.BufferOp):
        t = _tensor(op.result)
        return np.array(args[0], dtype=numpy_dtype(t.element_type)).reshape(t.get_shape())
    if isinstance(op, xla.ZerosOp):
        t = _tensor(op.result)
        return np.zeros(t.get_shape(), dtype=numpy_dtype(t.element_type))
    if isinstance(op, xla.ConstantOp):
        return np.asarray(op.value.value.data).astype(numpy_dtype(op.value.type))
    if isinstance(op, xla.IotaOp):
        t = _tensor(op.result)
        axis = op.axis.value.data
        along = [1] * t.get_num_dims()
        along[axis] = t.get_shape()[axis]
        elt = t.element_type
        dtype = np.int64 if isinstance(elt, IndexType) else numpy_dtype(elt)
        return np.arange(along[axis], dtype=dtype).reshape(along)
    if isinstance(op, xla.FlatIndexOp):
        return _flat_index(op, args)
    if isinstance(op, xla.TakeOp):
        return np.asarray(args[0]).reshape(-1)[args[1]]
    if isinstance(op, xla.ScatterOp):
        return _scatter(args[1], args[2], args[0], op.combine)
    if isinstance(op, xla.WindowOp):
        at = _window_positions(op, _tensor(op.result).get_shape())
        return np.asarray(args[0]).reshape(-1)[at]
    if isinstance(op, xla.UpdateWindowOp):
        at = _window_positions(op, _tensor(op.value).get_shape())
        return _scatter(args[1], at, args[0], op.combine)
    if isinstance(op, xla.ReduceOp):
        return _reduce(op, args[0])
    if (tile := evaluate_tile(op, args)) is not None:
        return tile
    if (value := evaluate(op, args)) is not None:
        return value
    raise ReferenceError(f"the reference interpreter does not model '{op.name}'")


def run_function(function: xla.FuncOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The function's results on numpy arguments (of its argument types' sizes)."""
    block = function.body.block
    if len(args) != len(block.args):
        raise ReferenceError(
            f"@{function.sym_name.data} takes {len(block.args)} arrays, got {len(args)}"
        )
    env: dict[SSAValue, Any] = dict(zip(block.args, args))
    for op in block.ops:
        values = [env[o] for o in op.operands]
        if isinstance(op, xla.ReturnOp):
            outputs = function.function_type.outputs.data
            return [
                np.asarray(v).reshape(t.get_shape())  # type: ignore[attr-defined]
                for v, t in zip(values, outputs, strict=True)
            ]
        if isinstance(op, xla.LibraryCallOp):
            env.update(zip(op.outputs, run_library_call(op, values)))
            continue
        env[op.results[0]] = _run(op, values)
    raise ReferenceError(f"@{function.sym_name.data} has no xla.return")


def _argument_of(value: SSAValue) -> BlockArgument | None:
    """The function argument a buffer value holds (through the stores to it)."""
    while isinstance(value.owner, xla.ScatterOp | xla.UpdateWindowOp):
        value = value.owner.buffer
    if isinstance(value.owner, xla.BufferOp):
        source = value.owner.source
        return source if isinstance(source, BlockArgument) else None
    return None


def index_limits(function: xla.FuncOp) -> dict[int, int]:
    """For each integer argument whose values index buffers: the exclusive upper
    bound that keeps every such access inside its view (as `reference.ta`'s)."""
    uses: dict[int, list[tuple[xla.FlatIndexOp, int]]] = {}
    for op in function.body.block.ops:
        if not isinstance(op, xla.FlatIndexOp):
            continue
        for k, v in enumerate(op.symbols):
            loads = xla.TakeOp | xla.WindowOp
            while not isinstance(v.owner, loads) and isinstance(v.owner, Operation):
                if len(v.owner.operands) != 1:
                    break
                v = v.owner.operands[0]
            if isinstance(v.owner, loads):
                arg = _argument_of(v.owner.buffer)
                if arg is not None:
                    uses.setdefault(arg.index, []).append((op, k))
    limits: dict[int, int] = {}
    for i, accesses in uses.items():
        bounds = []
        for op, k in accesses:
            extents = _tensor(op.result).get_shape()
            dims: list[tuple[int, int] | None] = []
            for d in op.dims:
                iota = d.owner
                n = extents[iota.axis.value.data] if isinstance(iota, xla.IotaOp) else 1
                dims.append((0, n - 1))
            bounds.append(symbol_limits(op.map.data, dims, op.shape.get_values())[k])
        limits[i] = min(bounds)
    return limits


def divisor_args(function: xla.FuncOp) -> set[int]:
    """The function arguments whose values are integer divisors (drawn nonzero)."""

    def loaded_from(op: Operation) -> SSAValue | None:
        return op.buffer if isinstance(op, xla.TakeOp | xla.WindowOp) else None

    block = function.body.block
    return {a.index for a in divisor_arguments(function, loaded_from) if a.block is block}
