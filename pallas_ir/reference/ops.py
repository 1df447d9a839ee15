"""numpy meanings of the `arith`, `math` and `special` ops, shared by the ta and pallas
interpreters.

Both interpreters hold values as numpy arrays (scalars broadcast over a loop domain in
`ta`, tiles in `pallas`), so one table serves both. Integer division and remainder
truncate toward zero (C, torch and XLA semantics), and by 0 have no meaning (a
`ReferenceError`; random inputs draw divisors without 0: `random_array`);
`maximumf`/`minimumf` propagate NaN,
`maxnumf`/`minnumf` ignore it; integer casts wrap, an `i1` is signed (`extsi` of true
is -1) and a cast to `i1` keeps the low bit; `u*` float comparisons are true on NaN;
the special functions are `scipy.special`'s, computed in float64 and rounded.
The tile ops (`*.convert` is numpy `astype`) have their meaning in `evaluate_tile`.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from pallas_ir.dialects import special
from pallas_ir.dialects.arith_ext import RemFOp
from pallas_ir.dialects.common import (
    BroadcastOpBase,
    CompareOpBase,
    ConvertOpBase,
    DotOpBase,
    ReduceTileOpBase,
    ReductionKind,
    ReshapeOpBase,
    RollOpBase,
    SelectOpBase,
    TransposeOpBase,
)
from pallas_ir.dialects.library_call import LibraryCallOpBase
from pallas_ir.dtypes import numpy_dtype


class ReferenceError(Exception):
    """The program uses something the reference interpreters do not model, or does
    something with no meaning (an out-of-range index)."""


def _scipy(name: str) -> Callable[..., Any]:
    """`scipy.special`'s function `name`, imported at its first call: pallas-opt, which
    loads this module, starts without scipy."""

    def call(*args: Any) -> Any:
        import scipy.special

        return getattr(scipy.special, name)(*args)

    return call


def bind_buffers(
    kernel_name: str, args: Sequence[BlockArgument], buffers: Sequence[np.ndarray]
) -> dict[SSAValue, Any]:
    """Bind a kernel's memref arguments to numpy buffers of exactly their shapes."""
    if len(buffers) != len(args):
        raise ReferenceError(
            f"@{kernel_name} takes {len(args)} buffers, got {len(buffers)}"
        )
    env: dict[SSAValue, Any] = {}
    for arg, buf in zip(args, buffers, strict=True):
        t = arg.type
        assert isinstance(t, MemRefType)  # kernel verifiers require memref arguments
        if tuple(buf.shape) != tuple(t.get_shape()):
            raise ReferenceError(
                f"@{kernel_name} argument #{arg.index}: shape {buf.shape}, expected {t}"
            )
        env[arg] = buf
    return env


def element_type(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


def eval_affine(expr: AffineExpr, dims: Sequence[Any], symbols: Sequence[Any]) -> Any:
    """An affine expression on numpy integer arrays (broadcasting), or ints."""
    match expr:
        case AffineConstantExpr(value=v):
            return np.int64(v)
        case AffineDimExpr(position=p):
            return dims[p]
        case AffineSymExpr(position=p):
            return symbols[p]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a = eval_affine(lhs, dims, symbols)
            b = eval_affine(rhs, dims, symbols)
            if kind == AffineBinaryOpKind.Add:
                return a + b
            if kind == AffineBinaryOpKind.Mul:
                return a * b
            if kind == AffineBinaryOpKind.FloorDiv:
                return a // b
            if kind == AffineBinaryOpKind.CeilDiv:
                return -(-a // b)
            return a % b  # mod: non-negative for a positive divisor, as affine mod is
    raise ReferenceError(f"unknown affine expression {expr}")


def _nonzero_divisor(
    f: Callable[[Any, Any], Any], what: str
) -> Callable[[Any, Any], Any]:
    """An integer division or remainder, which has no meaning for a zero divisor (torch
    raises, the device gives whatever it gives)."""

    def divide(a: Any, b: Any) -> Any:
        if np.any(np.asarray(b) == 0):
            raise ReferenceError(f"integer {what} by zero")
        return f(a, b)

    return divide


def _trunc_div(a: Any, b: Any) -> Any:
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _unsigned(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The unsigned form of an integer op: operate on the bits as unsigned."""
    return lambda a, b: f(_as_unsigned(a), _as_unsigned(b)).astype(np.asarray(a).dtype)


_erf = np.vectorize(pymath.erf, otypes=[np.float64])


def _in_float64(f: Callable[..., Any]) -> Callable[..., Any]:
    """A `scipy.special` function computed in float64 and rounded to the operands'
    type (scipy's float32 loops are less accurate than the kernels' expansions)."""

    def compute(*args: Any) -> Any:
        dtype = np.result_type(*args)
        return f(*(np.asarray(a, np.float64) for a in args)).astype(dtype)

    return compute


def _lgamma(x: Any) -> Any:
    # log |Gamma(-inf)| is inf in torch (and C), -inf in scipy.
    return np.where(np.isneginf(x), np.inf, _scipy("gammaln")(x))


def _nan_at_infinity(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    # torch's y0, y1 and airy_ai are NaN at +-inf (scipy's 0 or NaN)
    return lambda x: np.where(np.isinf(x), np.nan, f(x))


def _airy_ai(x: Any) -> Any:
    # 0 beyond 103.892 as torch (where scipy's is NaN from 1e10 or so)
    return np.where(x > 103.892, 0.0, _scipy("airy")(x)[0])


def _erfinv(x: Any) -> Any:
    return np.copysign(_scipy("erfinv")(x), x)  # -0 for -0, as torch


BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddfOp: np.add,
    arith.AddiOp: np.add,
    arith.SubfOp: np.subtract,
    arith.SubiOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.MuliOp: np.multiply,
    arith.DivfOp: np.divide,
    RemFOp: np.fmod,
    arith.DivSIOp: _nonzero_divisor(_trunc_div, "division"),
    arith.DivUIOp: _nonzero_divisor(_unsigned(np.floor_divide), "division"),
    arith.FloorDivSIOp: _nonzero_divisor(np.floor_divide, "division"),
    arith.RemSIOp: _nonzero_divisor(np.fmod, "remainder"),
    arith.RemUIOp: _nonzero_divisor(_unsigned(np.remainder), "remainder"),
    arith.MaximumfOp: np.maximum,
    arith.MaxnumfOp: np.fmax,
    arith.MaxSIOp: np.maximum,
    arith.MaxUIOp: _unsigned(np.maximum),
    arith.MinimumfOp: np.minimum,
    arith.MinnumfOp: np.fmin,
    arith.MinSIOp: np.minimum,
    arith.MinUIOp: _unsigned(np.minimum),
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.ShLIOp: np.left_shift,
    arith.ShRSIOp: np.right_shift,
    arith.ShRUIOp: _unsigned(np.right_shift),
    math.PowFOp: np.power,
    math.Atan2Op: np.arctan2,
    math.CopySignOp: np.copysign,
    special.NextAfterOp: np.nextafter,  # in the operands' type
    special.ZetaOp: _in_float64(_scipy("zeta")),
    special.IgammaOp: _in_float64(_scipy("gammainc")),
    special.IgammacOp: _in_float64(_scipy("gammaincc")),
}

UNARY: dict[type[Operation], Callable[[Any], Any]] = {
    arith.NegfOp: np.negative,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.LogOp: np.log,
    math.Log1pOp: np.log1p,
    math.Log2Op: np.log2,
    math.Log10Op: np.log10,
    math.TanhOp: np.tanh,
    math.SqrtOp: np.sqrt,
    math.RsqrtOp: lambda a: 1 / np.sqrt(a),
    math.ErfOp: lambda a: _erf(a).astype(np.asarray(a).dtype),
    math.AbsFOp: np.abs,
    math.AbsIOp: np.abs,
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.TanOp: np.tan,
    math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos,
    math.AtanOp: np.arctan,
    math.SinhOp: np.sinh,
    math.CoshOp: np.cosh,
    math.AsinhOp: np.arcsinh,
    math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.RoundEvenOp: np.rint,
    math.RoundOp: lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5),
    math.TruncOp: np.trunc,
    math.CbrtOp: np.cbrt,
    special.ErfcOp: _in_float64(_scipy("erfc")),
    special.ErfcxOp: _in_float64(_scipy("erfcx")),
    special.ErfInvOp: _in_float64(_erfinv),
    special.NdtriOp: _in_float64(_scipy("ndtri")),
    special.LgammaOp: _in_float64(_lgamma),
    special.DigammaOp: _in_float64(_scipy("digamma")),
    special.I0eOp: _in_float64(_scipy("i0e")),
    special.I1eOp: _in_float64(_scipy("i1e")),
    special.BesselJ0Op: _in_float64(_scipy("j0")),
    special.BesselJ1Op: _in_float64(_scipy("j1")),
    special.BesselY0Op: _in_float64(_nan_at_infinity(_scipy("y0"))),
    special.BesselY1Op: _in_float64(_nan_at_infinity(_scipy("y1"))),
    special.BesselK0Op: _in_float64(_scipy("k0")),
    special.BesselK1Op: _in_float64(_scipy("k1")),
    special.BesselK0eOp: _in_float64(_scipy("k0e")),
    special.BesselK1eOp: _in_float64(_scipy("k1e")),
    special.AiryAiOp: _in_float64(_nan_at_infinity(_airy_ai)),
}

CASTS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.FPToSIOp,
    arith.ExtSIOp,
    arith.TruncIOp,
    arith.IndexCastOp,
)

COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "oeq": np.equal, "ueq": np.equal, "one": np.not_equal, "une": np.not_equal,
    "ogt": np.greater, "ugt": np.greater, "oge": np.greater_equal, "uge": np.greater_equal,
    "olt": np.less, "ult": np.less, "ole": np.less_equal, "ule": np.less_equal,
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
    "sgt": np.greater, "sge": np.greater_equal,
}  # fmt: skip


_ORDERED: dict[str, Callable[[Any, Any], Any]] = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less,
    "ole": np.less_equal, "one": lambda a, b: np.less(a, b) | np.greater(a, b),
    "ord": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
}  # fmt: skip
_UNORDERED = {"ueq": "one", "une": "oeq", "ugt": "ole", "uge": "olt", "ult": "oge",
              "ule": "ogt", "uno": "ord"}  # fmt: skip
"""Each `u*` float predicate is the negation of an `o*` one (NaN makes it true)."""


def compare_arrays(name: str, a: Any, b: Any, floating: bool) -> Any:
    """arith's comparison `name` (a cmpf predicate if `floating`, else a cmpi one)."""
    if floating:
        if name in _UNORDERED:
            return ~np.asarray(_ORDERED[_UNORDERED[name]](a, b))
        if name not in _ORDERED:
            raise ReferenceError(f"unsupported predicate {name}")
        return _ORDERED[name](a, b)
    if name not in COMPARE:
        raise ReferenceError(f"unsupported predicate {name}")
    if name.startswith("u"):
        a, b = _as_unsigned(a), _as_unsigned(b)
    return COMPARE[name](a, b)


def constant_value(op: arith.ConstantOp) -> Any:
    dtype = numpy_dtype(element_type(op.result.type))
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr):
        t = op.result.type
        assert isinstance(t, TensorType)
        return np.array(value.get_values(), dtype=dtype).reshape(t.get_shape())
    if isinstance(value, FloatAttr | IntegerAttr):
        return np.asarray(value.value.data).astype(dtype)
    raise ReferenceError(f"unsupported constant {value}")


def evaluate(op: Operation, args: list[Any]) -> Any | None:
    """The value of one arith/math op on numpy operands, or None if it is not one."""
    if isinstance(op, arith.ConstantOp):
        return constant_value(op)
    result_dtype = (
        numpy_dtype(element_type(op.results[0].type)) if len(op.results) == 1 else None
    )
    with np.errstate(all="ignore"):  # inf/nan follow IEEE, as on the device
        if (f := BINARY.get(type(op))) is not None:
            r = f(args[0], args[1])
        elif (f1 := UNARY.get(type(op))) is not None:
            r = f1(args[0])
        elif isinstance(op, math.FmaOp):
            r = args[0] * args[1] + args[2]
        elif isinstance(op, arith.CmpfOp | arith.CmpiOp):
            names = (
                arith.CMPF_COMPARISON_OPERATIONS
                if isinstance(op, arith.CmpfOp)
                else arith.CMPI_COMPARISON_OPERATIONS
            )
            name = names[op.predicate.value.data]
            r = compare_arrays(name, args[0], args[1], isinstance(op, arith.CmpfOp))
        elif isinstance(op, arith.SelectOp):
            r = np.where(args[0], args[1], args[2])
        elif isinstance(op, arith.ExtSIOp | arith.SIToFPOp) and _is_bool(args[0]):
            r = -np.asarray(args[0]).astype(result_dtype)  # a signed i1: true is -1
        elif isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
            r = _as_unsigned(args[0])
        elif isinstance(op, arith.FPToUIOp):
            r = np.trunc(args[0])
        elif isinstance(op, CASTS):
            r = np.asarray(args[0])
            if (
                result_dtype is not None
                and result_dtype.kind in "iu"
                and r.dtype.kind == "f"
            ):
                r = np.trunc(r)
        elif isinstance(op, arith.BitcastOp):
            assert result_dtype is not None
            return np.asarray(args[0]).view(result_dtype)
        else:
            return None
        assert result_dtype is not None
        r = np.asarray(r)
        if result_dtype.kind == "b" and r.dtype.kind != "b" and _is_cast(op):
            # An integer cast to i1 keeps the low bit (astype(bool) would test != 0).
            r = (np.trunc(r) if r.dtype.kind == "f" else r).astype(np.int64) & 1
        if result_dtype.kind in "iu" and r.dtype.kind in "iub":
            return r.astype(result_dtype)  # wraps, as integer casts do
        return r.astype(result_dtype)


def _is_bool(a: Any) -> bool:
    return np.asarray(a).dtype.kind == "b"


def _is_cast(op: Operation) -> bool:
    return isinstance(op, (*CASTS, arith.ExtUIOp, arith.UIToFPOp, arith.FPToUIOp))


def convert_array(value: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """`astype` as the tile-level convert means it: float → int truncates toward zero,
    int → int wraps, → bool tests != 0, bool → number gives 0 or 1."""
    v = np.asarray(value)
    with np.errstate(all="ignore"):
        if dtype.kind in "iu" and v.dtype.kind == "f":
            v = np.trunc(v)
        return v.astype(dtype)


def _as_unsigned(a: Any) -> Any:
    a = np.asarray(a)
    if a.dtype.kind != "i":
        return a
    return a.astype(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def reduce_array(
    kind: ReductionKind, value: Any, axes: Sequence[int], dtype: np.dtype[Any]
) -> np.ndarray:
    """Reduce over `axes`, keeping them with size 1. argmax/argmin give the i32 row-major
    position over the reduced axes of the first extreme value (torch's convention)."""
    v = np.asarray(value)
    if kind.returns_index:
        rest = [a for a in range(v.ndim) if a not in axes]
        moved = np.transpose(v, [*rest, *axes])
        flat = moved.reshape([v.shape[a] for a in rest] + [-1])
        pick = np.argmax if kind == ReductionKind.ARGMAX else np.argmin
        return np.expand_dims(pick(flat, axis=-1).astype(np.int32), tuple(axes))
    fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[kind.value]
    with np.errstate(all="ignore"):
        return np.asarray(fn(v, axis=tuple(axes), keepdims=True)).astype(dtype)


_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def combine_at(kind: ReductionKind, buffer: np.ndarray, index: Any, values: Any) -> None:
    """`buffer[index] = buffer[index] <kind> values` in place, one element of `values`
    at a time, so that indices that repeat all count (an accumulating store)."""
    with np.errstate(all="ignore"):
        _COMBINE[kind.value].at(buffer, index, values)


def evaluate_tile(op: Operation, args: list[Any]) -> Any | None:
    """The value of a tile op shared by tl and pallas (transpose, reshape, broadcast,
    reduce, convert, select), or None if it is not one."""
    result = op.results[0].type if op.results else None
    if isinstance(op, ConvertOpBase):
        assert isinstance(result, TensorType)
        return convert_array(args[0], numpy_dtype(result.element_type))
    if isinstance(op, SelectOpBase):
        return np.where(args[0], args[1], args[2])
    if isinstance(op, CompareOpBase):
        floating = isinstance(element_type(op.lhs.type), AnyFloat)
        with np.errstate(all="ignore"):
            return compare_arrays(op.predicate.data, args[0], args[1], floating)
    if isinstance(op, DotOpBase):
        assert isinstance(result, TensorType)
        acc = numpy_dtype(result.element_type)
        a = np.asarray(args[0]).astype(acc)
        b = np.asarray(args[1]).astype(acc)
        return np.matmul(a, b, dtype=np.float64 if acc.kind == "f" else None).astype(acc)
    if isinstance(op, TransposeOpBase):
        return np.transpose(args[0], op.permutation.get_values())
    if isinstance(op, RollOpBase):
        return np.roll(args[0], op.shift.value.data, op.dim.value.data)
    if isinstance(op, ReshapeOpBase | BroadcastOpBase):
        assert isinstance(result, TensorType)
        shape = result.get_shape()
        if isinstance(op, ReshapeOpBase):
            return np.reshape(args[0], shape)
        return np.broadcast_to(args[0], shape).copy()
    if isinstance(op, ReduceTileOpBase):
        assert isinstance(result, TensorType)
        kind = ReductionKind(op.kind.data)
        return reduce_array(
            kind, args[0], op.dims.get_values(), numpy_dtype(result.element_type)
        )
    return None


# ---------------------------------------------------------------------------------------
# Random inputs, shared by the interpreters of every level


def array_type(t: Attribute) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype of the numpy array that holds a value of type `t`: a memref's
    or a tensor's, or () for a scalar."""
    if isinstance(t, MemRefType | TensorType):
        shape: tuple[int, ...] = tuple(t.get_shape())
        elt: Attribute = t.element_type
    else:
        shape, elt = (), t
    try:
        dtype = numpy_dtype(elt)
    except TypeError:
        dtype = None
    if dtype is None or any(d < 0 for d in shape):
        raise ReferenceError(f"the reference interpreters hold no values of type {t}")
    return shape, dtype


def random_array(
    t: Attribute,
    rng: np.random.Generator,
    limit: int | None = None,
    nonzero: bool = False,
) -> np.ndarray:
    """Random contents for a value of type `t`: floats uniform in [-2, 2]; integers in
    [0, limit) when they are indices, else in [-8, 8); booleans either way. `nonzero`
    (a divisor) leaves out 0: [1, limit), or [-8, 8) without 0."""
    shape, dtype = array_type(t)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.kind in "iu":
        lo, hi = (0, limit) if limit is not None else (-8, 8)
        if not nonzero:
            return rng.integers(lo, hi, shape).astype(dtype)
        if lo == 0:  # an index that must stay in bounds, if only 0 is
            return rng.integers(min(1, hi - 1), hi, shape).astype(dtype)
        values = rng.integers(lo, hi - 1, shape)
        return (values + (values >= 0)).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


INTEGER_DIVISIONS = (
    arith.DivSIOp,
    arith.DivUIOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
)


def divisor_arguments(
    root: Operation, loaded_from: Callable[[Operation], SSAValue | None]
) -> set[BlockArgument]:
    """The block arguments (buffers, refs, arrays) whose values reach the divisor of an
    integer division in `root`: through ops of one operand (casts, layout changes) and
    the loads of a level (`loaded_from` gives what an op loads from, or None)."""
    found: set[BlockArgument] = set()
    for op in root.walk():
        if not isinstance(op, INTEGER_DIVISIONS):
            continue
        value: SSAValue = op.rhs
        while isinstance(owner := value.owner, Operation):
            source = loaded_from(owner)
            if source is None and len(owner.operands) != 1:
                break
            value = source if source is not None else owner.operands[0]
        if isinstance(value, BlockArgument):
            found.add(value)
    return found


def run_library_call(op: LibraryCallOpBase, arrays: Sequence[Any]) -> list[np.ndarray]:
    """A `ta.library_call` or `xla.library_call` on its operands' (flat) arrays: the
    library function on them in the call's shapes, each result cast to its output's
    element type and flat."""
    shapes = op.call_shapes
    operands = [np.asarray(a).reshape(s) for a, s in zip(arrays, shapes)]
    from pallas_ir.library import functions as library  # jax: only when called

    results = library.run(op.function, operands, op.arguments)
    outputs = op.typed_values()[len(operands) :]
    if len(results) != len(outputs):
        raise ReferenceError(
            f"{op.name}: {op.function} gave {len(results)} results for {len(outputs)}"
        )
    flat = []
    for r, out in zip(results, outputs):
        dtype = numpy_dtype(out.type.element_type)  # type: ignore[attr-defined]
        count = out.type.element_count()  # type: ignore[attr-defined]
        values = np.asarray(r).astype(dtype).reshape(-1)
        flat.append(np.resize(values, count) if values.size != count else values)
    return flat
