"""Element-wise ops: each emits its scalar `arith`/`math` ops on the operands' values at
the broadcast index, so a chain of them fuses into the kernel that needs its result."""

from __future__ import annotations

import math

import torch
from xdsl.ir import SSAValue

from pallas_ir.frontend.kernel_builder import (
    Kernel,
    Value,
    broadcast_index,
    scalar_element,
)
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten
prims = torch.ops.prims

_FLOAT_UNARY = {
    aten.exp.default: "math.exp",
    aten.log.default: "math.log",
    aten.tanh.default: "math.tanh",
    aten.sqrt.default: "math.sqrt",
    aten.rsqrt.default: "math.rsqrt",
    aten.sin.default: "math.sin",
    aten.cos.default: "math.cos",
    aten.tan.default: "math.tan",
    aten.erf.default: "math.erf",
    aten.floor.default: "math.floor",
    aten.ceil.default: "math.ceil",
    aten.log1p.default: "math.log1p",
    aten.expm1.default: "math.expm1",
}

_FLOAT_COMPOSED = {
    aten.sigmoid.default,
    aten.reciprocal.default,
    aten.sinh.default,
    aten.cosh.default,
    aten.asin.default,
    aten.acos.default,
    aten.atan.default,
}
"""Unary ops with a float result made of other scalar ops (see `_unary`)."""


def _unary(target, k: Kernel, a: SSAValue, element: str) -> SSAValue | None:
    """The scalar op of an element-wise unary ATen op on `a` (already of `element`)."""
    if target in _FLOAT_UNARY:
        return k.op(_FLOAT_UNARY[target], a)
    f = element == "f32"
    if target is aten.neg.default:
        return (
            k.op("arith.negf", a) if f else k.op("arith.subi", k.constant(0, element), a)
        )
    if target is aten.abs.default:
        return k.op("math.absf" if f else "math.absi", a)
    if target is aten.relu.default:
        return k.op("arith.maximumf" if f else "arith.maxsi", a, k.constant(0, element))
    if target is aten.sigmoid.default:  # 1 / (1 + exp(-a))
        e = k.op("math.exp", k.op("arith.negf", a))
        one = k.constant(1.0)
        return k.op("arith.divf", one, k.op("arith.addf", k.constant(1.0), e))
    if target is aten.reciprocal.default:
        return k.op("arith.divf", k.constant(1.0), a)
    if target in (aten.sinh.default, aten.cosh.default):  # (e^a -+ e^-a) / 2
        up = k.op("math.exp", a)
        down = k.op("math.exp", k.op("arith.negf", a))
        op = "arith.subf" if target is aten.sinh.default else "arith.addf"
        return k.op("arith.mulf", k.op(op, up, down), k.constant(0.5))
    if target in (aten.asin.default, aten.acos.default):  # atan2 of the sides
        square = k.op("arith.mulf", a, a)
        side = k.op("math.sqrt", k.op("arith.subf", k.constant(1.0), square))
        y, x = (a, side) if target is aten.asin.default else (side, a)
        return k.op("math.atan2", y, x)
    if target is aten.atan.default:
        return k.op("math.atan2", a, k.constant(1.0))
    if target in (aten.round.default, aten.trunc.default) and not f:
        return a  # integers are whole already
    if target is aten.round.default:  # half to even, as torch
        return k.op("math.roundeven", a)
    if target is aten.trunc.default:  # toward zero
        negative = k.cmp("olt", a, k.constant(0.0))
        up, down = k.op("math.ceil", a), k.op("math.floor", a)
        return k.op("arith.select", negative, up, down)
    if target is aten.sign.default:  # (a > 0) - (a < 0): +0 for NaN and -0, as torch
        zero = k.constant(0, element)
        pos = k.cmp("ogt" if f else "sgt", a, zero)
        neg = k.cmp("olt" if f else "slt", a, zero)
        v = k.op("arith.select", neg, k.constant(-1, element), zero)
        return k.op("arith.select", pos, k.constant(1, element), v)
    if target is aten.logical_not.default:
        return k.op("arith.xori", a, k.constant(True, "i1"))
    if target is aten.bitwise_not.default:  # all bits flipped (true for a bool)
        if element == "f32":
            return None
        ones = k.constant(True, "i1") if element == "i1" else k.constant(-1, element)
        return k.op("arith.xori", a, ones)
    return None


@lowers(
    *_FLOAT_UNARY,
    *_FLOAT_COMPOSED,
    aten.neg.default,
    aten.abs.default,
    aten.relu.default,
    aten.round.default,
    aten.trunc.default,
    aten.sign.default,
    aten.logical_not.default,
    aten.bitwise_not.default,
)
def unary(c: Lowering, args) -> Value:
    a, target, element = args[0], c.target, c.element
    # exp of an int tensor is float: the operand takes the result's type first (and
    # logical_not's is bool: non-zero is true).
    source = element if target in _FLOAT_UNARY or target in _FLOAT_COMPOSED else a.element
    source = "i1" if target is aten.logical_not.default else source

    def emit(k, idx):
        v = k.cast(a.emit(k, idx), a.element, source)
        out = _unary(target, k, v, source)
        if out is None:
            raise c.unsupported(f"not for {a.element} data")
        return out

    return Value(c.shape, emit, element)


_BINARY = {
    # target: (float op, integer op, bool op)
    aten.add.Tensor: ("arith.addf", "arith.addi", "arith.ori"),
    aten.add.Scalar: ("arith.addf", "arith.addi", "arith.ori"),
    aten.sub.Tensor: ("arith.subf", "arith.subi", None),
    aten.sub.Scalar: ("arith.subf", "arith.subi", None),
    aten.mul.Tensor: ("arith.mulf", "arith.muli", "arith.andi"),
    aten.mul.Scalar: ("arith.mulf", "arith.muli", "arith.andi"),
    aten.div.Tensor: ("arith.divf", None, None),
    aten.div.Scalar: ("arith.divf", None, None),
    aten.pow.Scalar: ("math.powf", None, None),
    aten.atan2.default: ("math.atan2", None, None),
    aten.maximum.default: ("arith.maximumf", "arith.maxsi", "arith.ori"),
    aten.minimum.default: ("arith.minimumf", "arith.minsi", "arith.andi"),
    aten.pow.Tensor_Tensor: ("math.powf", None, None),
    aten.pow.Tensor_Scalar: ("math.powf", None, None),
    aten.logical_and.default: (None, None, "arith.andi"),
    aten.logical_or.default: (None, None, "arith.ori"),
    aten.bitwise_and.Tensor: (None, "arith.andi", "arith.andi"),
    aten.bitwise_or.Tensor: (None, "arith.ori", "arith.ori"),
    aten.bitwise_xor.Tensor: (None, "arith.xori", "arith.xori"),
    aten.bitwise_and.Scalar: (None, "arith.andi", "arith.andi"),
    aten.bitwise_or.Scalar: (None, "arith.ori", "arith.ori"),
    aten.bitwise_xor.Scalar: (None, "arith.xori", "arith.xori"),
    aten.logical_xor.default: (None, None, "arith.xori"),
}

_LOGICAL = {aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default}
"""Their operands are truth values: any dtype, compared with zero."""


def _divide(k: Kernel, a, b, element: str, mode: str | None) -> SSAValue:
    """a / b rounded as `mode` (None: true division, "trunc", "floor"), as torch."""
    if element != "f32":
        return k.op("arith.floordivsi" if mode == "floor" else "arith.divsi", a, b)
    q = k.op("arith.divf", a, b)
    if mode is None:
        return q
    if mode == "trunc":
        return _truncating_divide(k, a, b, q)
    return _floor_divide(k, a, b, q)


def _truncating_divide(k: Kernel, a, b, q: SSAValue) -> SSAValue:
    """torch's trunc(a / b) of the correctly rounded a / b, where `q` (a / b as
    computed: XLA divides by a constant as it multiplies by its reciprocal, an ulp off
    at times) may round to the next whole number where a / b does not, or not where it
    does. From the exact remainder: |a / b| is n + |mod / b| (n whole), and a / b rounds
    up to m = n + 1 where |b| - |mod| <= |b| * u / 2, u the float spacing below m
    (half-way: m, an even significand below 2^23). Beyond 2^22, for q not finite and
    for an infinite b, trunc(q)."""
    one, half = k.constant(1.0), k.constant(0.5)
    mod = k.op("arith.remf", a, b)
    abs_b = k.op("math.absf", b)
    # (a - mod) / b is whole but for the division's ulp: rounded to the whole number.
    n = k.op(
        "math.absf",
        k.op("math.roundeven", k.op("arith.divf", k.op("arith.subf", a, mod), b)),
    )
    m = k.op("arith.addf", n, one)
    below_m = k.op("arith.subf", m, k.op("arith.mulf", m, k.constant(2.0**-24)))
    spacing = k.op("arith.subf", m, below_m)
    gap = k.op("arith.subf", abs_b, k.op("math.absf", mod))
    rounds_up = k.cmp(
        "ole", gap, k.op("arith.mulf", abs_b, k.op("arith.mulf", spacing, half))
    )
    magnitude = k.op("arith.select", rounds_up, m, n)
    signed = k.op(
        "arith.select",
        k.cmp("olt", q, k.constant(0.0)),
        k.op("arith.negf", magnitude),
        magnitude,
    )
    # A zero takes the sign of a / b (q is finite here: 0 * q is a zero of its sign).
    signed = k.op(
        "arith.select",
        k.cmp("oeq", magnitude, k.constant(0.0)),
        k.op("arith.mulf", q, k.constant(0.0)),
        signed,
    )
    truncated = _unary(aten.trunc.default, k, q, "f32")
    assert truncated is not None
    near = k.cmp("olt", k.op("math.absf", q), k.constant(2.0**22))
    finite = k.cmp("olt", abs_b, k.constant(math.inf))  # (a gap of inf is no tie)
    return k.op("arith.select", k.op("arith.andi", near, finite), signed, truncated)


def _floor_divide(k: Kernel, a, b, q: SSAValue) -> SSAValue:
    """Float floor division as torch computes it (c10's `div_floor_floating`): from
    the exact remainder, not from floor(a / b), which is off by one where a / b rounds
    up to a whole number:

        if b == 0: a / b
        mod = fmod(a, b); div = (a - mod) / b
        if mod != 0 and (b < 0) != (mod < 0): div -= 1
        if div != 0: floor(div), plus 1 if div - floor(div) > 0.5
        else: copysign(0, a / b)"""
    zero, one = k.constant(0.0), k.constant(1.0)
    mod = k.op("arith.remf", a, b)
    div = k.op("arith.divf", k.op("arith.subf", a, mod), b)
    div = k.op(
        "arith.select", _sign_differs(k, mod, b), k.op("arith.subf", div, one), div
    )
    floor = k.op("math.floor", div)
    up = k.cmp("ogt", k.op("arith.subf", div, floor), k.constant(0.5))
    floor = k.op("arith.select", up, k.op("arith.addf", floor, one), floor)
    # div is 0 only where a / b is finite (or b is 0): 0 * (a / b) is a zero with the
    # sign of a / b.
    signed_zero = k.op("arith.mulf", q, zero)
    floor = k.op("arith.select", k.cmp("une", div, zero), floor, signed_zero)
    return k.op("arith.select", k.cmp("oeq", b, zero), q, floor)


def _sign_differs(k: Kernel, mod: SSAValue, b: SSAValue) -> SSAValue:
    """`mod != 0 and (b < 0) != (mod < 0)` (true for a NaN `mod` and negative `b`, as
    in C): where the truncated remainder needs b's sign."""
    zero = k.constant(0.0)
    differ = k.op("arith.xori", k.cmp("olt", mod, zero), k.cmp("olt", b, zero))
    return k.op("arith.andi", k.cmp("une", mod, zero), differ)


def _remainder(k: Kernel, a, b, element: str, floor: bool) -> SSAValue:
    """torch.fmod (`floor` False: C's fmod, the sign of a) or torch.remainder (the sign
    of b: fmod, plus b where the signs differ, as torch's CPU kernel)."""
    if element == "f32":
        r = k.op("arith.remf", a, b)
        if not floor:
            return r
        return k.op("arith.select", _sign_differs(k, r, b), k.op("arith.addf", r, b), r)
    r = k.op("arith.remsi", a, b)
    if not floor:
        return r
    zero = k.constant(0, element)
    nonzero = k.cmp("ne", r, zero)
    differ = k.op("arith.xori", k.cmp("slt", r, zero), k.cmp("slt", b, zero))
    fix = k.op("arith.andi", nonzero, differ)
    shifted = k.op("arith.addi", r, b)
    return k.op("arith.select", fix, shifted, r)


_ARITHMETIC = {
    # target: the scalar op on (kernel, lhs, rhs, element, kwargs)
    aten.fmod.Tensor: lambda k, a, b, e, kw: _remainder(k, a, b, e, False),
    aten.fmod.Scalar: lambda k, a, b, e, kw: _remainder(k, a, b, e, False),
    aten.remainder.Tensor: lambda k, a, b, e, kw: _remainder(k, a, b, e, True),
    aten.remainder.Scalar: lambda k, a, b, e, kw: _remainder(k, a, b, e, True),
    aten.remainder.Scalar_Tensor: lambda k, a, b, e, kw: _remainder(k, a, b, e, True),
    aten.div.Tensor_mode: lambda k, a, b, e, kw: _divide(
        k, a, b, e, kw.get("rounding_mode")
    ),
    aten.div.Scalar_mode: lambda k, a, b, e, kw: _divide(
        k, a, b, e, kw.get("rounding_mode")
    ),
}
"""Binary ops made of several scalar ops."""

_COMPARE = {
    # target: (cmpf predicate, cmpi predicate)
    aten.gt.Tensor: ("ogt", "sgt"), aten.gt.Scalar: ("ogt", "sgt"),
    aten.ge.Tensor: ("oge", "sge"), aten.ge.Scalar: ("oge", "sge"),
    aten.lt.Tensor: ("olt", "slt"), aten.lt.Scalar: ("olt", "slt"),
    aten.le.Tensor: ("ole", "sle"), aten.le.Scalar: ("ole", "sle"),
    aten.eq.Tensor: ("oeq", "eq"), aten.eq.Scalar: ("oeq", "eq"),
    aten.ne.Tensor: ("une", "ne"), aten.ne.Scalar: ("une", "ne"),
}  # fmt: skip


@lowers(*_BINARY, *_COMPARE, *_ARITHMETIC)
def binary(c: Lowering, args) -> Value:
    a, b = args[0], args[1]
    target, shape, kwargs = c.target, c.shape, c.kwargs
    alpha = kwargs.get("alpha", 1)
    compare = target in _COMPARE
    # Operands meet in the result's type (a comparison's: the wider operand's).
    widths = ["f32", "i32", "i1"]
    kinds = [x.element if isinstance(x, Value) else scalar_element(x) for x in (a, b)]
    common = min(kinds, key=widths.index) if compare else c.element
    if target in _LOGICAL:
        common = "i1"

    def operand(k, x, idx):
        if isinstance(x, Value):
            return k.cast(x.emit(k, broadcast_index(x, shape, idx)), x.element, common)
        return k.constant(x, common)

    def emit(k, idx):
        lhs, rhs = operand(k, a, idx), operand(k, b, idx)
        if target in _ARITHMETIC:
            if common == "i1":
                raise c.unsupported("not for bool data")
            return _ARITHMETIC[target](k, lhs, rhs, common, kwargs)
        if compare:
            fp, ip = _COMPARE[target]
            return k.cmp(fp if common == "f32" else ip, lhs, rhs)
        if alpha != 1:
            mul = "arith.mulf" if common == "f32" else "arith.muli"
            rhs = k.op(mul, rhs, k.constant(alpha, common))
        op = dict(zip(["f32", "i32", "i1"], _BINARY[target]))[common]
        if op is None:
            raise c.unsupported(f"not for {common} data")
        return k.op(op, lhs, rhs)

    return Value(shape, emit, c.element)


@lowers(aten.where.self)
def where(c: Lowering, args) -> Value:
    cond, a, b = args
    shape, element = c.shape, c.element

    def pick(k, idx):
        test = cond.emit(k, broadcast_index(cond, shape, idx))
        vals = [
            k.cast(x.emit(k, broadcast_index(x, shape, idx)), x.element, element)
            if isinstance(x, Value)
            else k.constant(x, element)
            for x in (a, b)
        ]
        return k.op("arith.select", test, vals[0], vals[1])

    return Value(shape, pick, element)


@lowers(aten.hardtanh.default)
def hardtanh(c: Lowering, args) -> Value:  # clamp to [min_val, max_val]
    low, high = (list(args[1:]) + [-1.0, 1.0][len(args) - 1 :])[:2]
    return c.lower(aten.clamp.default, [args[0], low, high])


@lowers(aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default)
def clamp(c: Lowering, args) -> Value:
    a, target, element = args[0], c.target, c.element
    low = args[1] if target is not aten.clamp_max.default else None
    high = (
        args[2]
        if target is aten.clamp.default and len(args) > 2
        else (args[1] if target is aten.clamp_max.default else None)
    )

    def emit(k, idx):
        v = k.cast(a.emit(k, idx), a.element, element)
        f = element == "f32"
        if low is not None:
            v = k.op(
                "arith.maximumf" if f else "arith.maxsi", v, k.constant(low, element)
            )
        if high is not None:
            v = k.op(
                "arith.minimumf" if f else "arith.minsi", v, k.constant(high, element)
            )
        return v

    return Value(c.shape, emit, element)


@lowers(aten.leaky_relu.default, aten.elu.default)
def rectified(c: Lowering, args) -> Value:
    a, leaky = args[0], c.target is aten.leaky_relu.default
    if leaky:
        slope = args[1] if len(args) > 1 else 0.01
        alpha, scale, input_scale = 0.0, 1.0, 1.0
    else:
        alpha, scale, input_scale = (list(args[1:]) + [1.0, 1.0, 1.0])[:3]

    def emit(k, idx):
        x = a.emit(k, idx)
        positive = k.cmp("ogt", x, k.constant(0.0))
        if leaky:
            low = k.op("arith.mulf", x, k.constant(slope))
        else:  # scale * alpha * (exp(x * input_scale) - 1)
            e = k.op("math.expm1", k.op("arith.mulf", x, k.constant(input_scale)))
            low = k.op("arith.mulf", e, k.constant(alpha * scale))
        high = k.op("arith.mulf", x, k.constant(scale))
        return k.op("arith.select", positive, high, low)

    return Value(c.shape, emit)


@lowers(aten.isnan.default, aten.isinf.default)
def float_class(c: Lowering, args) -> Value:
    a, nan = args[0], c.target is aten.isnan.default

    def emit(k, idx):
        x = a.emit(k, idx)
        if nan:
            return k.cmp("uno", x, x)
        return k.cmp("oeq", k.op("math.absf", x), k.constant(math.inf))

    return Value(c.shape, emit, "i1")


@lowers(aten.gelu.default)
def gelu(c: Lowering, args) -> Value:
    a = args[0]
    tanh_form = c.kwargs.get("approximate", "none") == "tanh"

    def emit(k, idx):
        x = a.emit(k, idx)
        if tanh_form:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
            x3 = k.op("arith.mulf", x, k.op("arith.mulf", x, x))
            inner = k.op("arith.addf", x, k.op("arith.mulf", x3, k.constant(0.044715)))
            t = k.op(
                "math.tanh",
                k.op("arith.mulf", inner, k.constant(math.sqrt(2 / math.pi))),
            )
        else:  # 0.5 x (1 + erf(x / sqrt(2)))
            t = k.op("math.erf", k.op("arith.mulf", x, k.constant(1 / math.sqrt(2))))
        one_plus = k.op("arith.addf", k.constant(1.0), t)
        half_x = k.op("arith.mulf", x, k.constant(0.5))
        return k.op("arith.mulf", half_x, one_plus)

    return Value(c.shape, emit)


@lowers(aten.copy.default)
def copy(c: Lowering, args) -> Value:  # dst's shape and type, src's values
    src, shape, element = args[1], c.shape, c.element
    return Value(
        shape,
        lambda k, idx: k.cast(
            src.emit(k, broadcast_index(src, shape, idx)), src.element, element
        ),
        element,
    )


_NARROW_FLOATS = {torch.bfloat16: "bf16", torch.float16: "f16"}
"""Float dtypes computed in f32: a cast to one rounds to its precision."""


@lowers(aten._to_copy.default, prims.convert_element_type.default)
def convert(c: Lowering, args) -> Value:
    a, node, element = args[0], c.node, c.element
    val = node.meta.get("val")
    dtype = val.dtype if isinstance(val, torch.Tensor) else None
    narrow = _NARROW_FLOATS.get(dtype)  # type: ignore[arg-type]
    source = (
        node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    )
    rounds = narrow is not None and getattr(source, "dtype", None) != dtype

    def emit(k, idx):
        v = k.cast(a.emit(k, idx), a.element, element)
        if rounds:  # to bfloat16's or float16's precision, and on in f32
            v = k.cast(k.cast(v, "f32", narrow), narrow, "f32")
        return v

    return Value(c.shape, emit, element)


# Inductor's prim, registered when torch._inductor loads (dynamo's AdamW step has it).
@lowers("prims.fma.default")
def fma(c: Lowering, args) -> Value:  # a * b + addend, rounded twice
    a, b, addend = args
    return c.lower(aten.add.Tensor, [c.lower(aten.mul.Tensor, [a, b]), addend])
