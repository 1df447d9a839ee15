"""How pallas-ir's ops are spelled in jax/jnp Python: the names, dtypes, literals,
affine expressions and the element-wise, comparison and reduction expressions that
both printers share (emit-python for Pallas kernels and @forward, emit-xla for XLA
functions). Spelling only: no op is rewritten here."""

from __future__ import annotations

import keyword
import math as pymath
import re
from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)
from xdsl.utils.exceptions import DiagnosticException

from pallas_ir.dialects import pallas, special
from pallas_ir.dialects.arith_ext import RemFOp
from pallas_ir.dialects.common import ReductionKind

_RESERVED = {"jax", "jnp", "pl", "pltpu", "forward", "interpret", "np"}


class EmitError(DiagnosticException):
    """An op or attribute that has no Python spelling; carries the op for its location."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


def dtype_name(t: Attribute, op: Operation) -> str:
    """The `jnp` dtype for an element type."""
    match t:
        case Float32Type():
            return "jnp.float32"
        case BFloat16Type():
            return "jnp.bfloat16"
        case Float16Type():
            return "jnp.float16"
        case Float64Type():
            return "jnp.float64"
        case IntegerType():
            width = t.width.data
            if width == 1:
                return "jnp.bool_"
            unsigned = t.signedness.data == Signedness.UNSIGNED
            if width in (8, 16, 32, 64):
                return f"jnp.{'u' if unsigned else ''}int{width}"
        case IndexType():
            return "jnp.int32"
    raise EmitError(op, f"emit-python: no jnp dtype for {t}")


class Namer:
    """Python identifiers for SSA values: their name hints where possible, unique."""

    def __init__(self, taken: Sequence[str] = ()):
        self.names: dict[SSAValue, str] = {}
        self.used: set[str] = set(_RESERVED) | set(taken)

    def fresh(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit():
            base = "v" + base
        if keyword.iskeyword(base):
            base += "_"
        name, n = base, 1
        while name in self.used:
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name

    def define(self, value: SSAValue, fallback: str = "v") -> str:
        name = self.fresh(value.name_hint or fallback)
        self.names[value] = name
        return name

    def __getitem__(self, value: SSAValue) -> str:
        return self.names[value]


def affine_to_python(
    expr: AffineExpr, dims: Sequence[str], symbols: Sequence[str]
) -> str:
    """An affine expression in Python integer arithmetic (floordiv is `//`)."""
    match expr:
        case AffineConstantExpr(value=v):
            return str(v)
        case AffineDimExpr(position=p):
            return dims[p]
        case AffineSymExpr(position=p):
            return symbols[p]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a = affine_to_python(lhs, dims, symbols)
            b = affine_to_python(rhs, dims, symbols)
            if kind == AffineBinaryOpKind.Add:
                if isinstance(rhs, AffineConstantExpr) and rhs.value < 0:
                    return f"({a} - {-rhs.value})"
                return f"({a} + {b})"
            if kind == AffineBinaryOpKind.Mul:
                return f"{a} * {b}"
            if kind == AffineBinaryOpKind.FloorDiv:
                return f"({a} // {b})"
            if kind == AffineBinaryOpKind.CeilDiv:
                return f"(-(-{a} // {b}))"
            return f"({a} % {b})"
    raise ValueError(f"unknown affine expression {expr}")


def tuple_text(values: Sequence[object]) -> str:
    inner = ", ".join(map(str, values))
    return f"({inner},)" if len(values) == 1 else f"({inner})"


BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "{0} + {1}",
    arith.AddiOp: "{0} + {1}",
    arith.SubfOp: "{0} - {1}",
    arith.SubiOp: "{0} - {1}",
    arith.MulfOp: "{0} * {1}",
    arith.MuliOp: "{0} * {1}",
    arith.DivfOp: "{0} / {1}",
    RemFOp: "jax.lax.rem({0}, {1})",
    arith.DivSIOp: "jax.lax.div({0}, {1})",
    arith.FloorDivSIOp: "{0} // {1}",
    arith.RemSIOp: "jax.lax.rem({0}, {1})",
    arith.MaximumfOp: "jnp.maximum({0}, {1})",
    arith.MaxnumfOp: "jnp.fmax({0}, {1})",  # NaN-ignoring
    arith.MaxSIOp: "jnp.maximum({0}, {1})",
    arith.MinimumfOp: "jnp.minimum({0}, {1})",
    arith.MinnumfOp: "jnp.fmin({0}, {1})",
    arith.MinSIOp: "jnp.minimum({0}, {1})",
    arith.AndIOp: "{0} & {1}",
    arith.OrIOp: "{0} | {1}",
    arith.XOrIOp: "{0} ^ {1}",
    arith.ShLIOp: "{0} << {1}",
    arith.ShRSIOp: "{0} >> {1}",
    math.PowFOp: "jnp.power({0}, {1})",
    math.Atan2Op: "jnp.arctan2({0}, {1})",
    math.CopySignOp: "jnp.copysign({0}, {1})",
    special.NextAfterOp: "jax.lax.nextafter({0}, {1})",
    special.ZetaOp: "jax.lax.zeta({0}, {1})",
    special.IgammaOp: "jax.lax.igamma({0}, {1})",
    special.IgammacOp: "jax.lax.igammac({0}, {1})",
}

UNARY: dict[type[Operation], str] = {
    arith.NegfOp: "-{0}",
    math.ExpOp: "jnp.exp({0})",
    math.Exp2Op: "jnp.exp2({0})",
    math.ExpM1Op: "jnp.expm1({0})",
    math.LogOp: "jnp.log({0})",
    math.Log1pOp: "jnp.log1p({0})",
    math.Log2Op: "jnp.log2({0})",
    math.Log10Op: "jnp.log10({0})",
    math.TanhOp: "jnp.tanh({0})",
    math.SqrtOp: "jnp.sqrt({0})",
    math.RsqrtOp: "jax.lax.rsqrt({0})",
    math.ErfOp: "jax.lax.erf({0})",
    math.AbsFOp: "jnp.abs({0})",
    math.AbsIOp: "jnp.abs({0})",
    math.SinOp: "jnp.sin({0})",
    math.CosOp: "jnp.cos({0})",
    math.TanOp: "jnp.tan({0})",
    math.AtanOp: "jnp.arctan({0})",
    math.AsinhOp: "jnp.arcsinh({0})",
    math.AcoshOp: "jnp.arccosh({0})",
    math.AtanhOp: "jnp.arctanh({0})",
    math.FloorOp: "jnp.floor({0})",
    math.CeilOp: "jnp.ceil({0})",
    math.RoundEvenOp: "jnp.round({0})",
    special.ErfcOp: "jax.lax.erfc({0})",
    special.ErfcxOp: "jax.scipy.special.erfcx({0})",
    special.ErfInvOp: "jax.lax.erf_inv({0})",
    special.NdtriOp: "jax.scipy.special.ndtri({0})",
    special.LgammaOp: "jax.lax.lgamma({0})",
    special.DigammaOp: "jax.lax.digamma({0})",
    special.I0eOp: "jax.lax.bessel_i0e({0})",
    special.I1eOp: "jax.lax.bessel_i1e({0})",
}


CMPF = {
    "oeq": "==", "ueq": "==", "one": "!=", "une": "!=",
    "ogt": ">", "ugt": ">", "oge": ">=", "uge": ">=",
    "olt": "<", "ult": "<", "ole": "<=", "ule": "<=",
}  # fmt: skip
CMPI = {
    "eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
    "ult": "<", "ule": "<=", "ugt": ">", "uge": ">=",
}  # fmt: skip


_FLOAT_COMPARE = {
    "oeq": "{0} == {1}", "ogt": "{0} > {1}", "oge": "{0} >= {1}", "olt": "{0} < {1}",
    "ole": "{0} <= {1}", "one": "({0} < {1}) | ({0} > {1})",
    "ord": "~(jnp.isnan({0}) | jnp.isnan({1}))",
    "ueq": "~(({0} < {1}) | ({0} > {1}))", "ugt": "~({0} <= {1})", "uge": "~({0} < {1})",
    "ult": "~({0} >= {1})", "ule": "~({0} > {1})", "une": "{0} != {1}",
    "uno": "jnp.isnan({0}) | jnp.isnan({1})",
}  # fmt: skip
"""Ordered predicates are false where either side is NaN, unordered ones true."""
_SIGNED = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}


def compare_text(op: pallas.CompareOp, a: str, b: str) -> str:
    """`pallas.compare` exactly: `u*` float predicates are true on NaN, unsigned
    integer predicates compare the bits as `uintN`."""
    pred = op.predicate.data
    elt = op.lhs.type.element_type  # type: ignore[attr-defined]
    if not isinstance(elt, IntegerType | IndexType):  # `ult` is a float and an int name
        return _FLOAT_COMPARE[pred].format(a, b)
    if pred in _SIGNED:
        return f"{a} {_SIGNED[pred]} {b}"
    width = elt.width.data if isinstance(elt, IntegerType) else 32
    sym = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}[pred]
    return f"{a}.astype(jnp.uint{width}) {sym} {b}.astype(jnp.uint{width})"


def reduction_text(
    kind: ReductionKind, value: str, axes: Sequence[int], op: Operation
) -> str:
    """A reduction over `axes`, keeping them with size 1 (argmax/argmin: over one axis,
    giving int32 positions)."""
    if kind.returns_index:
        if len(axes) != 1:
            raise EmitError(op, f"emit-python: {kind.value} over several dims")
        return (
            f"jnp.{kind.value}({value}, axis={axes[0]}, keepdims=True).astype(jnp.int32)"
        )
    return f"jnp.{kind.value}({value}, axis={tuple_text(axes)}, keepdims=True)"


def bitcast_text(op: arith.BitcastOp, value: str) -> str:
    """`arith.bitcast`: the same bits as the result's element type."""
    t = op.result.type
    elt = t.element_type if isinstance(t, TensorType) else t
    return f"jax.lax.bitcast_convert_type({value}, {dtype_name(elt, op)})"


def literal_text(v: float, element: Attribute) -> str:
    """A Python literal: `True`/`False` for i1 (whose true reads as -1 when signed),
    `float("inf")` for infinities and NaN."""
    if isinstance(element, IntegerType) and element.width.data == 1:
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v) if pymath.isfinite(v) else f'float("{v}")'
    return str(int(v))
