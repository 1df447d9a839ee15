"""A numpy interpreter for the `pallas` level: what a pallas module means, independent
of JAX.

It walks each `pallas.call`'s grid in row-major order (the order a TPU core runs it),
cuts every operand into the block its spec's index map selects (prefetched scalars
read from the prefetch operands), runs the kernel body on numpy arrays and writes the
output blocks back. Edge blocks that run past an array are padded on read and clipped
on write, as Pallas does. Tests and `python -m pallas_ir` compare the emitted Python,
run by JAX, against this.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from pallas_ir.dialects import pallas
from pallas_ir.dialects.common import ReductionKind


class ReferenceError(Exception):
    """The module uses something the reference interpreter does not model."""


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    match t:
        case Float32Type():
            return np.dtype(np.float32)
        case BFloat16Type():
            return np.dtype(ml_dtypes.bfloat16)
        case Float16Type():
            return np.dtype(np.float16)
        case Float64Type():
            return np.dtype(np.float64)
        case IntegerType():
            w = t.width.data
            if w == 1:
                return np.dtype(np.bool_)
            unsigned = t.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else ''}int{w}")
    raise ReferenceError(f"no numpy dtype for {t}")


def _elt(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddfOp: np.add,
    arith.AddiOp: np.add,
    arith.SubfOp: np.subtract,
    arith.SubiOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.MuliOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.DivSIOp: lambda a, b: np.trunc(a / b).astype(np.result_type(a, b)),
    arith.FloorDivSIOp: np.floor_divide,
    arith.RemSIOp: np.fmod,
    arith.MaximumfOp: np.maximum,
    arith.MaxnumfOp: np.fmax,
    arith.MaxSIOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MinnumfOp: np.fmin,
    arith.MinSIOp: np.minimum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.ShLIOp: np.left_shift,
    arith.ShRSIOp: np.right_shift,
    math.PowFOp: np.power,
    math.Atan2Op: np.arctan2,
}

_UNARY: dict[type[Operation], Callable[[Any], Any]] = {
    arith.NegfOp: np.negative,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.LogOp: np.log,
    math.Log1pOp: np.log1p,
    math.Log2Op: np.log2,
    math.TanhOp: np.tanh,
    math.SqrtOp: np.sqrt,
    math.RsqrtOp: lambda a: 1 / np.sqrt(a),
    math.AbsFOp: np.abs,
    math.AbsIOp: np.abs,
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.TanOp: np.tan,
    math.AtanOp: np.arctan,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.RoundEvenOp: np.round,
}

_CMP = {
    "oeq": np.equal, "ueq": np.equal, "one": np.not_equal, "une": np.not_equal,
    "ogt": np.greater, "ugt": np.greater, "oge": np.greater_equal, "uge": np.greater_equal,
    "olt": np.less, "ult": np.less, "ole": np.less_equal, "ule": np.less_equal,
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
    "sgt": np.greater, "sge": np.greater_equal,
}  # fmt: skip


def _index(op: pallas.LoadOp | pallas.StoreOp) -> tuple[Any, ...] | Any:
    if not op.indexers.data:
        return Ellipsis
    out: list[Any] = []
    for ix in op.indexers.data:
        if isinstance(ix, pallas.SliceAttr):
            s, n, k = ix.start.data, ix.size.data, ix.stride.data
            out.append(slice(s, s + (n - 1) * k + 1, k))
        else:
            out.append(ix.data)  # type: ignore[union-attr]
    return tuple(out)


def _constant(op: arith.ConstantOp) -> Any:
    dtype = numpy_dtype(_elt(op.result.type))
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr):
        t = op.result.type
        assert isinstance(t, TensorType)
        return np.array(value.get_values(), dtype=dtype).reshape(t.get_shape())
    if isinstance(value, FloatAttr | IntegerAttr):
        return dtype.type(value.value.data)
    raise ReferenceError(f"unsupported constant {value}")


def _run_kernel(
    call: pallas.CallOp, refs: Sequence[np.ndarray], grid_pos: tuple[int, ...]
):
    env: dict[SSAValue, Any] = dict(zip(call.body.block.args, refs, strict=True))
    for op in call.body.block.ops:
        args = [env[o] for o in op.operands]
        if isinstance(op, pallas.StoreOp):
            args[1][_index(op)] = args[0]
            continue
        if isinstance(op, pallas.LoadOp):
            r = np.array(args[0][_index(op)])
        elif isinstance(op, pallas.ProgramIdOp):
            r = np.int32(grid_pos[op.axis.value.data])
        elif isinstance(op, pallas.TransposeOp):
            r = np.transpose(args[0], op.permutation.get_values())
        elif isinstance(op, pallas.BroadcastOp):
            assert isinstance(op.result.type, TensorType)
            r = np.broadcast_to(args[0], op.result.type.get_shape()).copy()
        elif isinstance(op, pallas.ReduceOp):
            kind = ReductionKind(op.kind.data)
            axes = op.dims.get_values()
            if kind.returns_index:
                fn = np.argmax if kind == ReductionKind.ARGMAX else np.argmin
                r = fn(args[0], axis=axes[0], keepdims=True).astype(np.int32)
            else:
                fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}
                r = fn[kind.value](args[0], axis=axes, keepdims=True).astype(
                    args[0].dtype
                )
        elif isinstance(op, arith.ConstantOp):
            r = _constant(op)
        elif (f := _BINARY.get(type(op))) is not None:
            r = f(args[0], args[1])
        elif (f1 := _UNARY.get(type(op))) is not None:
            r = f1(args[0])
        elif isinstance(op, arith.CmpfOp | arith.CmpiOp):
            names = (
                arith.CMPF_COMPARISON_OPERATIONS
                if isinstance(op, arith.CmpfOp)
                else arith.CMPI_COMPARISON_OPERATIONS
            )
            r = _CMP[names[op.predicate.value.data]](args[0], args[1])
        elif isinstance(op, arith.SelectOp):
            r = np.where(args[0], args[1], args[2])
        elif len(op.results) == 1 and len(args) == 1 and op.name.startswith("arith."):
            r = np.asarray(args[0]).astype(numpy_dtype(_elt(op.results[0].type)))
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")
        if len(op.results) == 1 and isinstance(op.results[0].type, TensorType):
            r = np.asarray(r).astype(numpy_dtype(_elt(op.results[0].type)), copy=False)
        env[op.results[0]] = r


def _block_window(
    spec: pallas.BlockSpecAttr,
    grid_pos: tuple[int, ...],
    prefetch: Sequence[np.ndarray],
    shape: Sequence[int],
) -> list[tuple[int, int, bool]]:
    """(start, size, squeezed) per array dim for the block at this grid point."""
    symbols = [int(prefetch[p][tuple(m.eval(grid_pos, ()))]) for p, m in spec.prefetch]
    block_idx = spec.map.eval(grid_pos, symbols)
    out: list[tuple[int, int, bool]] = []
    for b, i, n in zip(spec.shape, block_idx, shape, strict=True):
        size = 1 if b is None else b
        start = i * size
        if not 0 <= start < n:
            raise ReferenceError(
                f"block index {i} starts at element {start} outside a dim of {n}"
            )
        out.append((start, size, b is None))
    return out


def _read_block(array: np.ndarray, window: list[tuple[int, int, bool]]) -> np.ndarray:
    block = np.zeros([s for _, s, _ in window], dtype=array.dtype)
    src = tuple(slice(a, min(a + s, n)) for (a, s, _), n in zip(window, array.shape))
    dst = tuple(slice(0, min(a + s, n) - a) for (a, s, _), n in zip(window, array.shape))
    block[dst] = array[src]
    squeeze = tuple(k for k, (_, _, sq) in enumerate(window) if sq)
    return block.squeeze(axis=squeeze) if squeeze else block


def _write_block(
    array: np.ndarray, window: list[tuple[int, int, bool]], block: np.ndarray
):
    full = block.reshape([s for _, s, _ in window])
    dst = tuple(slice(a, min(a + s, n)) for (a, s, _), n in zip(window, array.shape))
    src = tuple(slice(0, min(a + s, n) - a) for (a, s, _), n in zip(window, array.shape))
    array[dst] = full[src]


def run_call(call: pallas.CallOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    prefetch = list(args[: call.n_prefetch])
    ins = list(args[call.n_prefetch :])
    outs: list[np.ndarray] = []
    for r in call.outs:
        t = r.type
        assert isinstance(t, TensorType)
        outs.append(np.zeros(t.get_shape(), dtype=numpy_dtype(t.element_type)))
    for i, o in call.aliases:
        outs[o][...] = args[i]
    scratch = [
        np.zeros(s.get_shape(), dtype=numpy_dtype(s.element_type))
        for s in call.scratch_shapes.data
    ]
    grid = call.grid.get_values()
    for pos in itertools.product(*(range(n) for n in grid)):
        in_refs: list[np.ndarray] = []
        for a, spec in zip(ins, call.in_specs.data, strict=True):
            if spec.space == pallas.MemorySpace.ANY:
                in_refs.append(a)
            else:
                in_refs.append(
                    _read_block(a, _block_window(spec, pos, prefetch, a.shape))
                )
        windows: list[list[tuple[int, int, bool]] | None] = []
        out_refs: list[np.ndarray] = []
        for o, spec in zip(outs, call.out_specs.data, strict=True):
            if spec.space == pallas.MemorySpace.ANY:
                windows.append(None)
                out_refs.append(o)
            else:
                w = _block_window(spec, pos, prefetch, o.shape)
                windows.append(w)
                out_refs.append(_read_block(o, w))
        _run_kernel(call, [*prefetch, *in_refs, *out_refs, *scratch], pos)
        for o, w, ref in zip(outs, windows, out_refs, strict=True):
            if w is not None:
                _write_block(o, w, ref)
    return outs


def run_forward(module: ModuleOp, *arrays: np.ndarray) -> list[np.ndarray]:
    """Run `func.func @forward` of a pallas module on numpy arrays."""
    forward = next(
        (
            op
            for op in module.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data == "forward"
        ),
        None,
    )
    if forward is None:
        raise ReferenceError("the module has no func.func @forward")
    params = forward.body.block.args
    if len(arrays) != len(params):
        raise ReferenceError(f"@forward takes {len(params)} arrays, got {len(arrays)}")
    env: dict[SSAValue, np.ndarray] = {}
    for p, a in zip(params, arrays):
        t = p.type
        assert isinstance(t, TensorType)
        a = np.asarray(a)
        if tuple(a.shape) != tuple(t.get_shape()):
            raise ReferenceError(f"argument {p.name_hint}: shape {a.shape}, expected {t}")
        env[p] = a.astype(numpy_dtype(t.element_type), copy=False)
    for op in forward.body.block.ops:
        if isinstance(op, pallas.CallOp):
            for r, v in zip(op.outs, run_call(op, [env[a] for a in op.args])):
                env[r] = v
        elif isinstance(op, func.ReturnOp):
            return [env[v] for v in op.arguments]
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")
    raise ReferenceError("@forward has no func.return")
