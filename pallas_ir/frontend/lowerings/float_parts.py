"""Element-wise ops on the parts of a float: `angle` of real data (0 for x >= 0, pi
for x < 0, NaN for NaN; the complex one is in `complex_pairs`) and `frexp` (the
mantissa in [0.5, 1) and the int32 exponent, from the float32 bits)."""

from __future__ import annotations

import math

import torch
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue

from pallas_ir.frontend.kernel_builder import Kernel, Value
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten


def _bits(k: Kernel, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The float32 `x`'s bits as an i32, and those bits without the sign. The parts
    of a float are read from its bits, never by float compares: a TPU (and XLA on a
    CPU) flushes subnormals to zero in arithmetic, where eager keeps them."""
    bits = k.op("arith.bitcast", x, i32)
    return bits, k.op("arith.andi", bits, k.constant(0x7FFFFFFF, "i32"))


@lowers(aten.angle.default)
def angle(c: Lowering, args) -> Value:
    a = args[0]

    def emit(k: Kernel, idx) -> SSAValue:
        x = k.cast(a.emit(k, idx), a.element, "f32")
        bits, magnitude = _bits(k, x)
        zero = k.constant(0, "i32")
        negative = k.op(
            "arith.andi", k.cmp("slt", bits, zero), k.cmp("ne", magnitude, zero)
        )
        r = k.op("arith.select", negative, k.constant(math.pi), k.constant(0.0))
        nan = k.cmp("sgt", magnitude, k.constant(_INF_BITS, "i32"))
        return k.op("arith.select", nan, k.constant(math.nan), r)

    return Value(c.shape, emit, "f32")


_INF_BITS = 0x7F800000
"""The bits of float32 inf: a magnitude above them is a NaN's."""

_SUBNORMAL_EXPONENT = 149
"""A float32 subnormal with fraction bits f is f * 2^-149 (f < 2^23, exact as a
float: its exponent is read there)."""


def _frexp(k: Kernel, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """C's frexp of a float32: x = m * 2^e with |m| in [0.5, 1), from the bits (a
    subnormal's fraction converted to a normal float first); 0, inf and NaN are
    their own mantissa, with exponent 0."""
    bits, magnitude = _bits(k, x)
    c23, zero = k.constant(23, "i32"), k.constant(0, "i32")
    field = k.op("arith.shrsi", magnitude, c23)  # the biased exponent
    subnormal = k.cmp("eq", field, zero)
    as_normal = k.op("arith.bitcast", k.cast(magnitude, "i32", "f32"), i32)
    normal = k.op("arith.select", subnormal, as_normal, magnitude)
    shift = k.op(
        "arith.select",
        subnormal,
        k.constant(126 + _SUBNORMAL_EXPONENT, "i32"),
        k.constant(126, "i32"),
    )
    exponent = k.op("arith.subi", k.op("arith.shrsi", normal, c23), shift)
    # x's sign, the fraction bits, and the biased exponent of [0.5, 1): 126
    sign = k.op("arith.andi", bits, k.constant(-(2**31), "i32"))
    fraction = k.op("arith.andi", normal, k.constant(0x7FFFFF, "i32"))
    half = k.op(
        "arith.ori", k.op("arith.ori", sign, fraction), k.constant(126 << 23, "i32")
    )
    mantissa = k.op("arith.bitcast", half, f32)
    special = k.op(
        "arith.ori",
        k.cmp("eq", magnitude, zero),
        k.cmp("sge", magnitude, k.constant(_INF_BITS, "i32")),
    )
    mantissa = k.op("arith.select", special, x, mantissa)
    exponent = k.op("arith.select", special, zero, exponent)
    return mantissa, exponent


@lowers(aten.frexp.Tensor)
def frexp(c: Lowering, args) -> list[Value]:
    a = args[0]
    if a.element != "f32" or c.node.meta["val"][0].dtype != torch.float32:
        raise c.unsupported("the float32 bits are read: float32 data only")
    shape = tuple(a.shape)

    def part(i: int):
        def emit(k: Kernel, idx) -> SSAValue:
            return _frexp(k, a.emit(k, idx))[i]

        return emit

    return [Value(shape, part(0), "f32"), Value(shape, part(1), "i32")]
