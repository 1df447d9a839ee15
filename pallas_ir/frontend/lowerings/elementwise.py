"""Element-wise ops: each emits its scalar `arith`/`math` ops on the operands' values at
the broadcast index, so a chain of them fuses into the kernel that needs its result."""

from __future__ import annotations

import math

import torch
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from pallas_ir.frontend.kernel_builder import (
    Kernel,
    Value,
    broadcast_index,
    is_float,
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
    f = is_float(element)
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
        if f:
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
    if not is_float(element):
        return k.op("arith.floordivsi" if mode == "floor" else "arith.divsi", a, b)
    q = k.op("arith.divf", a, b)
    if mode is None:
        return q
    if mode == "trunc" and element == "f64":  # eager's: trunc of the rounded a / b
        return _unary(aten.trunc.default, k, q, element)  # type: ignore[return-value]
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
    truncated = _unary(aten.trunc.default, k, q, "f32")  # (f32's spacings above)
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
    if is_float(element):
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
    if target is aten.pow.Tensor_Scalar and c.element == "i32":
        return _integer_power(c, a, b)
    alpha = kwargs.get("alpha", 1)
    compare = target in _COMPARE
    # Operands meet in the result's type (a comparison's: the wider operand's).
    widths = ["f64", "f32", "i32", "i1"]
    kinds = [x.element if isinstance(x, Value) else scalar_element(x) for x in (a, b)]
    common = min(kinds, key=widths.index) if compare else c.element
    if target in _LOGICAL:
        common = "i1"

    def operand(k, x, idx):
        if isinstance(x, Value):  # (a 0-d float64 one meets float32 data in float32)
            v = x.emit(k, broadcast_index(x, shape, idx))
            return k.cast(v, x.element, common, converts=True)
        return k.constant(x, common)

    def emit(k, idx):
        lhs, rhs = operand(k, a, idx), operand(k, b, idx)
        if target in _ARITHMETIC:
            if common == "i1":
                raise c.unsupported("not for bool data")
            return _ARITHMETIC[target](k, lhs, rhs, common, kwargs)
        if compare:
            fp, ip = _COMPARE[target]
            return k.cmp(fp if is_float(common) else ip, lhs, rhs)
        if alpha != 1:
            mul = "arith.mulf" if is_float(common) else "arith.muli"
            rhs = k.op(mul, rhs, k.constant(alpha, common))
        kind = "float" if is_float(common) else common
        op = dict(zip(["float", "i32", "i1"], _BINARY[target]))[kind]
        if op is None:
            raise c.unsupported(f"not for {common} data")
        return k.op(op, lhs, rhs)

    return Value(shape, emit, c.element)


def _integer_power(c: Lowering, a: Value, exponent) -> Value:
    """a^n of integers, n a whole number >= 0: products by repeated squaring (`mul`'s,
    so an int64 one outside int32 fails its check)."""
    if isinstance(exponent, bool) or not isinstance(exponent, int) or exponent < 0:
        raise c.unsupported(f"an integer power {exponent!r} is not compiled")
    result: Value | None = None
    square = a
    while exponent:
        if exponent & 1:
            result = (
                square if result is None else c.lower(aten.mul.Tensor, [result, square])
            )
        exponent >>= 1
        if exponent:
            square = c.lower(aten.mul.Tensor, [square, square])
    if result is None:
        return Value(c.shape, lambda k, idx: k.constant(1, "i32"), "i32")
    return result


@lowers(aten.where.self)
def where(c: Lowering, args) -> Value:
    cond, a, b = args
    shape, element = c.shape, c.element

    def pick(k, idx):
        test = cond.emit(k, broadcast_index(cond, shape, idx))
        vals = [
            k.cast(x.emit(k, broadcast_index(x, shape, idx)), x.element, element, True)
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
        f = is_float(element)
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

    return Value(c.shape, emit, c.element)


@lowers(aten.isnan.default, aten.isinf.default)
def float_class(c: Lowering, args) -> Value:
    a, nan = args[0], c.target is aten.isnan.default

    if not is_float(a.element):  # an integer or bool is never NaN nor infinite
        return Value(c.shape, lambda k, idx: k.constant(False, "i1"), "i1")

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

    return Value(c.shape, emit, c.element)


@lowers(aten.copy.default)
def copy(c: Lowering, args) -> Value:  # dst's shape and type, src's values
    src, shape, element = args[1], c.shape, c.element
    source = c.node.args[1]
    if (
        tuple(src.shape) == tuple(shape)
        and isinstance(source, torch.fx.Node)
        and getattr(source.meta.get("val"), "dtype", None) == c.node.meta["val"].dtype
    ):
        # src itself (an input's new value, written back: stored where it is)
        return src
    return Value(
        shape,
        lambda k, idx: k.cast(
            src.emit(k, broadcast_index(src, shape, idx)), src.element, element, True
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
        v = k.cast(a.emit(k, idx), a.element, element, converts=True)
        if rounds:  # to bfloat16's or float16's precision, and on in f32
            v = k.cast(k.cast(v, "f32", narrow), narrow, "f32")
        return v

    return Value(c.shape, emit, element)


# Inductor's prim, registered when torch._inductor loads (dynamo's AdamW step has it).
@lowers("prims.fma.default")
def fma(c: Lowering, args) -> Value:  # a * b + addend, rounded twice
    a, b, addend = args
    return c.lower(aten.add.Tensor, [c.lower(aten.mul.Tensor, [a, b]), addend])


def _at(k: Kernel, x, shape, idx, element: str) -> SSAValue:
    """Operand `x` (a Value or a Python number) at result index `idx`, as `element`
    (the result's type, as torch promotes: a 0-d float64 operand may be narrowed)."""
    if isinstance(x, Value):
        v = x.emit(k, broadcast_index(x, shape, idx))
        return k.cast(v, x.element, element, converts=True)
    return k.constant(x, element)


def float_op(c: Lowering, operands, body, float32_only: str | None = None) -> Value:
    """An element-wise op with a float result: `body(k, *values)` on the operands (Values
    or Python numbers) at the broadcast index, as the result's float type (an int
    operand converts, as torch promotes it). `float32_only`: why the op has no float64
    form (an UnsupportedError for a float64 result)."""
    shape = c.shape
    element = c.element if is_float(c.element) else "f32"
    if element == "f64" and float32_only is not None:
        raise c.unsupported(f"not in float64: {float32_only}")

    def emit(k, idx):
        return body(k, *(_at(k, x, shape, idx, element) for x in operands))

    return Value(shape, emit, element)


@lowers(
    aten.clamp.Tensor,
    aten.clamp_min.Tensor,
    aten.clamp_max.Tensor,
)
def clamp_tensor(c: Lowering, args) -> Value:
    """min(max(x, low), high), NaN in any of them NaN, as torch; bounds are tensors or
    None (`clamp.Tensor`)."""
    a, target, element, shape = args[0], c.target, c.element, c.shape
    if target is aten.clamp.Tensor:
        low = args[1] if len(args) > 1 else c.kwargs.get("min")
        high = args[2] if len(args) > 2 else c.kwargs.get("max")
    elif target is aten.clamp_min.Tensor:
        low, high = args[1], None
    else:
        low, high = None, args[1]
    if element == "i1":
        raise c.unsupported("not for bool data")
    f = is_float(element)

    def emit(k, idx):
        v = _at(k, a, shape, idx, element)
        if low is not None:
            bound = _at(k, low, shape, idx, element)
            v = k.op("arith.maximumf" if f else "arith.maxsi", v, bound)
        if high is not None:
            bound = _at(k, high, shape, idx, element)
            v = k.op("arith.minimumf" if f else "arith.minsi", v, bound)
        return v

    return Value(shape, emit, element)


@lowers(aten.fmax.default, aten.fmin.default)
def fmax_fmin(c: Lowering, args) -> Value:
    """The larger (smaller) operand, a NaN only where both are (`arith.maxnumf`)."""
    a, b = args
    element, shape, top = c.element, c.shape, c.target is aten.fmax.default
    ops = {
        "f64": ("arith.maxnumf", "arith.minnumf"),
        "f32": ("arith.maxnumf", "arith.minnumf"),
        "i32": ("arith.maxsi", "arith.minsi"),
    }
    if element not in ops:
        raise c.unsupported(f"not for {element} data")
    op = ops[element][0 if top else 1]
    return Value(
        shape,
        lambda k, idx: k.op(
            op, _at(k, a, shape, idx, element), _at(k, b, shape, idx, element)
        ),
        element,
    )


@lowers(aten.copysign.Tensor, aten.copysign.Scalar)
def copysign(c: Lowering, args) -> Value:
    """|a| with the sign bit of b (of -0.0 and of a NaN too)."""
    return float_op(c, args, lambda k, a, b: k.op("math.copysign", a, b))


@lowers(aten.signbit.default)
def signbit(c: Lowering, args) -> Value:
    """Whether the sign bit is set (-0.0 and a negative NaN too): copysign(1, x) < 0."""
    a, shape = args[0], c.shape

    def emit(k, idx):
        x = a.emit(k, idx)
        if is_float(a.element):
            return k.cmp(
                "olt", k.op("math.copysign", k.constant(1.0), x), k.constant(0.0)
            )
        if a.element == "i32":
            return k.cmp("slt", x, k.constant(0, "i32"))
        return k.constant(False, "i1")

    return Value(shape, emit, "i1")


@lowers(aten.hypot.default)
def hypot(c: Lowering, args) -> Value:
    """sqrt(a^2 + b^2) without overflow: big * sqrt(1 + (small / big)^2); inf where
    either is infinite (a NaN beside it too, as C's hypot), 0 where both are 0."""

    def body(k, a, b):
        a, b = k.op("math.absf", a), k.op("math.absf", b)
        big, small = k.op("arith.maximumf", a, b), k.op("arith.minimumf", a, b)
        ratio = k.op("arith.divf", small, big)
        one_plus = k.op("arith.addf", k.constant(1.0), k.op("arith.mulf", ratio, ratio))
        r = k.op("arith.mulf", big, k.op("math.sqrt", one_plus))
        r = k.op("arith.select", k.cmp("oeq", big, k.constant(0.0)), k.constant(0.0), r)
        inf = k.constant(math.inf)
        infinite = k.op("arith.ori", k.cmp("oeq", a, inf), k.cmp("oeq", b, inf))
        return k.op("arith.select", infinite, inf, r)

    return float_op(c, args, body)


_FLOAT_MATH = {
    aten.log2.default: "math.log2",
    aten.log10.default: "math.log10",
    aten.asinh.default: "math.asinh",
    aten.acosh.default: "math.acosh",
    aten.atanh.default: "math.atanh",
    aten.erfc.default: "special.erfc",
    aten.special_erfcx.default: "special.erfcx",
    aten.special_ndtri.default: "special.ndtri",
    aten.lgamma.default: "special.lgamma",
    aten.digamma.default: "special.digamma",
    aten.special_i0e.default: "special.i0e",
    aten.special_i1e.default: "special.i1e",
    aten.special_bessel_j0.default: "special.bessel_j0",
    aten.special_bessel_j1.default: "special.bessel_j1",
    aten.special_bessel_y0.default: "special.bessel_y0",
    aten.special_bessel_y1.default: "special.bessel_y1",
    aten.special_modified_bessel_k0.default: "special.bessel_k0",
    aten.special_modified_bessel_k1.default: "special.bessel_k1",
    aten.special_scaled_modified_bessel_k0.default: "special.bessel_k0e",
    aten.special_scaled_modified_bessel_k1.default: "special.bessel_k1e",
    aten.special_airy_ai.default: "special.airy_ai",
}
"""Unary ops of a float result that are one `math` or `special` op (Mosaic lowers some;
pallas-legalize-mosaic expands the others)."""


@lowers(*_FLOAT_MATH)
def float_math(c: Lowering, args) -> Value:
    name = _FLOAT_MATH[c.target]
    return float_op(
        c,
        args[:1],
        lambda k, a: k.op(name, a),
        SPECIAL_IN_F32 if "special." in name else None,
    )


SPECIAL_IN_F32 = "its expansion (special_functions) is float32's"


@lowers(aten.erfinv.default)
def erfinv(c: Lowering, args) -> Value:
    """`special.erf_inv` (Mosaic's and XLA's are 6e-6 off, relatively, near +-1), with
    one Newton step on erfc(|y|) = 1 - |x| for 1/2 <= |x| < 1, where 1 - |x| is exact
    and erfc keeps the relative precision erf loses near 1: |y| + (erfc(|y|) - (1 -
    |x|)) sqrt(pi) / 2 exp(y^2), with x's sign."""

    def body(k, x):
        y = k.op("special.erf_inv", x)
        a, t = k.op("math.absf", x), k.op("math.absf", y)
        residual = k.op(
            "arith.subf",
            k.op("special.erfc", t),
            k.op("arith.subf", k.constant(1.0), a),
        )
        slope = k.op("math.exp", k.op("arith.mulf", t, t))
        step = k.op(
            "arith.mulf",
            residual,
            k.op("arith.mulf", slope, k.constant(math.sqrt(math.pi) / 2)),
        )
        refined = k.op("math.copysign", k.op("arith.addf", t, step), x)
        tail = k.op(
            "arith.andi",
            k.cmp("oge", a, k.constant(0.5)),
            k.cmp("olt", a, k.constant(1.0)),
        )
        return k.op("arith.select", tail, refined, y)

    return float_op(c, args[:1], body, SPECIAL_IN_F32)


@lowers(aten.nextafter.default)
def nextafter(c: Lowering, args) -> Value:
    if c.element == "f64":
        raise c.unsupported(f"not in float64: {SPECIAL_IN_F32}")
    if c.element != "f32":
        raise c.unsupported(f"not for {c.element} data")
    if c.node.meta["val"].dtype == torch.bfloat16:
        # (the kernels compute bfloat16 in float32, where the next float is another)
        raise c.unsupported("bfloat16 steps in bfloat16's precision")
    return float_op(c, args, lambda k, a, b: k.op("special.nextafter", a, b))


def _power_of_two(k: Kernel, n: SSAValue) -> SSAValue:
    """2^n exactly, for an i32 n in [-126, 127]: its float bits."""
    biased = k.op("arith.addi", n, k.constant(127, "i32"))
    bits = k.op("arith.shli", biased, k.constant(23, "i32"))
    return k.op("arith.bitcast", bits, f32)


def _scaled(k: Kernel, a: SSAValue, n: SSAValue) -> SSAValue:
    """a * 2^n, n an i32, exactly where it is a normal float (as C's `ldexp`; 0 or inf
    beyond, never NaN for a finite a): by three factors 2^m, m in [-126, 127] (2^m a
    normal float) and of n's sign, so no product over- or underflows before the
    result does; n is clamped to +-400 first, beyond any float's reach."""

    def clamped(v, low, high):
        v = k.op("arith.maxsi", v, k.constant(low, "i32"))
        return k.op("arith.minsi", v, k.constant(high, "i32"))

    rest = clamped(n, -400, 400)
    for step in range(3):
        m = clamped(rest, -126, 127)
        a = k.op("arith.mulf", a, _power_of_two(k, m))
        if step < 2:
            rest = k.op("arith.subi", rest, m)
    return a


@lowers(aten.exp2.default)
def exp2(c: Lowering, args) -> Value:
    """2^x as exp(f ln 2) 2^n, n = floor(x) and f = x - n in [0, 1) (exact): exact at
    whole x, as eager, within 2 ulp elsewhere (XLA's exp2 is exp(x ln 2), off by x
    ulps), and finite up to 2^128 (the first factor is below 2). x is clamped to
    +-300 first, where 2^x is inf or 0 already."""

    def body(k, x):
        x = k.op("arith.maximumf", x, k.constant(-300.0))
        x = k.op("arith.minimumf", x, k.constant(300.0))
        n = k.op("math.floor", x)
        f = k.op("arith.subf", x, n)
        e = k.op("math.exp", k.op("arith.mulf", f, k.constant(math.log(2.0))))
        return _scaled(k, e, k.cast(n, "f32", "i32"))

    return float_op(c, args[:1], body, _BITS_OF_F32)


_BITS_OF_F32 = "it scales by powers of two made of float32's bits"


@lowers(aten.ldexp.Tensor)
def ldexp(c: Lowering, args) -> Value:
    """x * 2^n: for an integer n exactly, as eager (`_scaled`: 0 * 2^1000 is 0, 1e-38
    * 2^100 a number); for a float n, x * pow(2, n)."""
    x, n = args
    shape = c.shape
    if not isinstance(n, Value) or is_float(n.element):
        return float_op(
            c,
            [x, n],
            lambda k, a, b: k.op("arith.mulf", a, k.op("math.powf", k.constant(2.0), b)),
        )

    if c.element == "f64":
        raise c.unsupported(f"not in float64: {_BITS_OF_F32}")

    def emit(k, idx):
        return _scaled(k, _at(k, x, shape, idx, "f32"), _at(k, n, shape, idx, "i32"))

    return Value(shape, emit)


@lowers(aten.round.decimals)
def round_decimals(c: Lowering, args) -> Value:
    """torch's: round(x * 10^d) / 10^d, or round(x / 10^-d) * 10^-d for d < 0 (half
    to even; 10^|d| a float32). XLA divides by the constant as it multiplies by its
    reciprocal, so a result can be an ulp from eager's."""
    decimals = c.kwargs.get("decimals", args[1] if len(args) > 1 else 0)
    if not is_float(c.element):
        raise c.unsupported(f"not for {c.element} data")
    dtype = torch.float64 if c.element == "f64" else torch.float32
    scale = float(torch.tensor(10.0 ** abs(decimals), dtype=dtype))

    def body(k, a):
        if decimals == 0:
            return k.op("math.roundeven", a)
        ten = k.constant(scale)
        if decimals > 0:
            rounded = k.op("math.roundeven", k.op("arith.mulf", a, ten))
            return k.op("arith.divf", rounded, ten)
        return k.op("arith.mulf", k.op("math.roundeven", k.op("arith.divf", a, ten)), ten)

    return float_op(c, args[:1], body)


_SHIFTS = {
    aten.bitwise_left_shift.Tensor: True,
    aten.bitwise_left_shift.Tensor_Scalar: True,
    aten.bitwise_left_shift.Scalar_Tensor: True,
    aten.__lshift__.Tensor: True,
    aten.__lshift__.Scalar: True,
    aten.bitwise_right_shift.Tensor: False,
    aten.bitwise_right_shift.Tensor_Scalar: False,
    aten.bitwise_right_shift.Scalar_Tensor: False,
    aten.__rshift__.Tensor: False,
    aten.__rshift__.Scalar: False,
}


@lowers(*_SHIFTS)
def shift(c: Lowering, args) -> Value:
    """a << b or a >> b (arithmetic) of integers, as torch: a shift by a negative
    amount or by the type's width or more gives 0 (left) or the sign (right). int64
    data is int32 here: a left shift whose int64 result leaves int32 fails its check
    (`data_checks`); a right shift of it is the int32 one."""
    a, b = args
    shape, element, left = c.shape, c.element, _SHIFTS[c.target]
    if element != "i32":
        raise c.unsupported(f"not for {element} data")
    dtype = c.node.meta["val"].dtype
    width = torch.iinfo(dtype).bits

    def emit(k, idx):
        x, n = _at(k, a, shape, idx, "i32"), _at(k, b, shape, idx, "i32")
        zero = k.constant(0, "i32")
        outside = k.op(
            "arith.ori",
            k.cmp("slt", n, zero),
            k.cmp("sge", n, k.constant(min(width, 32), "i32")),
        )
        if left:
            safe = k.op("arith.select", outside, zero, n)
            return k.op("arith.select", outside, zero, k.op("arith.shli", x, safe))
        safe = k.op("arith.select", outside, k.constant(31, "i32"), n)
        return k.op("arith.shrsi", x, safe)

    return Value(shape, emit, element)


_EUCLID_STEPS = 47
"""Euclid's algorithm on int32 takes at most 46 remainders (consecutive Fibonacci
numbers are its worst case; F(47) > 2^31)."""


def _gcd(k: Kernel, a: SSAValue, b: SSAValue) -> SSAValue:
    """gcd(|a|, |b|) by Euclid's algorithm, unrolled to its int32 bound (`calc_gcd`)."""
    zero, one = k.constant(0, "i32"), k.constant(1, "i32")
    a, b = k.op("math.absi", a), k.op("math.absi", b)
    for _ in range(_EUCLID_STEPS):
        done = k.cmp("eq", a, zero)
        divisor = k.op("arith.select", done, one, a)
        remainder = k.op("arith.remsi", b, divisor)
        a, b = k.op("arith.select", done, a, remainder), k.op("arith.select", done, b, a)
    return b


@lowers(aten.gcd.default)
def gcd(c: Lowering, args) -> Value:
    a, b = args
    shape = c.shape
    if c.element != "i32":
        raise c.unsupported(f"not for {c.element} data")
    return Value(
        shape,
        lambda k, idx: _gcd(
            k, _at(k, a, shape, idx, "i32"), _at(k, b, shape, idx, "i32")
        ),
        "i32",
    )


@lowers(aten.lcm.default)
def lcm(c: Lowering, args) -> Value:
    """|a / gcd(a, b) * b| (0 where the gcd is), as torch; the product is `mul`'s, so
    an int64 one outside int32 fails its check."""
    a, b = args
    if c.element != "i32":
        raise c.unsupported(f"not for {c.element} data")
    g = c.lower(aten.gcd.default, [a, b])
    shape = c.shape

    def quotient(k, idx):
        d = g.emit(k, idx)
        zero = k.constant(0, "i32")
        nonzero = k.op("arith.select", k.cmp("eq", d, zero), k.constant(1, "i32"), d)
        return k.op("arith.divsi", _at(k, a, shape, idx, "i32"), nonzero)

    product = c.lower(aten.mul.Tensor, [Value(shape, quotient, "i32"), b])
    return c.lower(aten.abs.default, [product])


@lowers(aten.rrelu_with_noise_functional.default)
def rrelu(c: Lowering, args) -> list[Value]:
    """rrelu in evaluation: leaky_relu with slope (lower + upper) / 2; the noise
    result (unused by eager then) is ones. Training draws random slopes."""
    a = args[0]

    def arg(i: int, name: str, default):
        return args[i] if len(args) > i else c.kwargs.get(name, default)

    lower_, upper = arg(2, "lower", 1 / 8), arg(3, "upper", 1 / 3)
    if arg(4, "training", False):
        raise c.unsupported("random slopes (training) are not compiled")
    shapes = c.shapes
    slope = (lower_ + upper) / 2
    element = a.element if is_float(a.element) else "f32"
    out = c.lower(aten.leaky_relu.default, [a, slope], shape=shapes[0], element=element)
    element = c.element if is_float(c.element) else "f32"
    ones = Value(shapes[1], lambda k, idx: k.constant(1.0, element), element)
    return [out, ones]
