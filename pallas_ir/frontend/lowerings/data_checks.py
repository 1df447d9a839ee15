"""Where the kernels cannot compute what eager does on some data, the program checks
for that data and the call raises, never a silent wrong result:

- int64 data is int32 in kernels (TPU kernels have no 64-bit types): an int64 `add`,
  `sub`, `mul`, `neg` or `abs` whose result leaves int32 is an UnsupportedError at the
  call, as is a float cast to int64 outside int32;
- an integer division (`//`, `%`, `fmod`, `div` with a rounding mode) by zero raises
  ZeroDivisionError, where eager raises too;
- a comparison of int data with a Python int outside int32 is answered when the program
  is compiled (the data is in int32: inputs are checked at the boundary), and other
  arithmetic with such a constant is an UnsupportedError.

Each check is `Program.check` (two small reduction kernels; `runtime_checks=False` drops
them), registered with `@checks` for the ops it guards.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from xdsl.ir import SSAValue

from pallas_ir.frontend.kernel_builder import (
    Kernel,
    UnsupportedError,
    Value,
    broadcast_index,
)
from pallas_ir.frontend.lowerings.registry import (
    LOWERINGS,
    Lowering,
    checks,
    lowers_wide_constants,
)

aten = torch.ops.aten

_INT32_MIN = -(2**31)


def _result_dtype(c: Lowering) -> torch.dtype | None:
    val = c.node.meta.get("val")
    return val.dtype if isinstance(val, torch.Tensor) else None


def _operand(c: Lowering, x, k: Kernel, idx) -> SSAValue:
    """Operand `x` (a Value or a Python scalar) at result index `idx`, as i32."""
    if isinstance(x, Value):
        return k.cast(x.emit(k, broadcast_index(x, c.shape, idx)), x.element, "i32")
    return k.constant(int(x), "i32")


def _overflows(k: Kernel, op: str, a: SSAValue, b: SSAValue) -> SSAValue:
    """Whether the int32 `a op b` wraps (its exact value is outside int32)."""
    zero = k.constant(0, "i32")
    if op == "add":  # the result's sign differs from both operands'
        r = k.op("arith.addi", a, b)
        both = k.op("arith.andi", k.op("arith.xori", a, r), k.op("arith.xori", b, r))
        return k.cmp("slt", both, zero)
    if op == "sub":  # the operands' signs differ and the result's is not a's
        r = k.op("arith.subi", a, b)
        both = k.op("arith.andi", k.op("arith.xori", a, b), k.op("arith.xori", a, r))
        return k.cmp("slt", both, zero)
    # mul: a != 0 and (r / a != b, or a == -1 and b == INT32_MIN, where r / a traps)
    r = k.op("arith.muli", a, b)
    one = k.constant(1, "i32")
    nonzero = k.cmp("ne", a, zero)
    divisor = k.op("arith.select", nonzero, a, one)
    wrong = k.cmp("ne", k.op("arith.divsi", r, divisor), b)
    minus_one = k.cmp("eq", a, k.constant(-1, "i32"))
    lowest = k.cmp("eq", b, k.constant(_INT32_MIN, "i32"))
    return k.op(
        "arith.andi",
        nonzero,
        k.op("arith.ori", wrong, k.op("arith.andi", minus_one, lowest)),
    )


_ARITHMETIC = {
    aten.add.Tensor: "add",
    aten.add.Scalar: "add",
    aten.sub.Tensor: "sub",
    aten.sub.Scalar: "sub",
    aten.mul.Tensor: "mul",
    aten.mul.Scalar: "mul",
    aten.neg.default: "neg",
    aten.abs.default: "abs",
}


@checks(*_ARITHMETIC)
def int64_arithmetic_in_range(c: Lowering, args, value: Value) -> None:
    """An int64 result of add, sub, mul, neg or abs stays inside int32."""
    if _result_dtype(c) != torch.int64:
        return
    op = _ARITHMETIC[c.target]
    alpha = c.kwargs.get("alpha", 1)

    def bad(k: Kernel, idx) -> SSAValue:
        a = _operand(c, args[0], k, idx)
        if op in ("neg", "abs"):  # only -INT32_MIN leaves int32
            return k.cmp("eq", a, k.constant(_INT32_MIN, "i32"))
        b = _operand(c, args[1], k, idx)
        wrapped = None
        if op in ("add", "sub") and alpha != 1:
            alpha_value = k.constant(int(alpha), "i32")
            wrapped = _overflows(k, "mul", b, alpha_value)
            b = k.op("arith.muli", b, alpha_value)
        result = _overflows(k, op, a, b)
        return result if wrapped is None else k.op("arith.ori", wrapped, result)

    def largest_operand(k: Kernel, idx) -> SSAValue:
        a = _operand(c, args[0], k, idx)
        if op in ("neg", "abs"):
            return a
        b = _operand(c, args[1], k, idx)
        return k.op("arith.maxsi", _abs(k, a), _abs(k, b))

    c.prog.check(
        Value(c.shape, bad, "i1"),
        Value(c.shape, largest_operand, "i32"),
        UnsupportedError,
        str(c.target),
        "an int64 result leaves the int32 range the kernels compute int64 data in "
        "(an operand as large as {value})",
        c.where,
    )


def _abs(k: Kernel, v: SSAValue) -> SSAValue:
    negative = k.cmp("slt", v, k.constant(0, "i32"))
    return k.op("arith.select", negative, k.op("arith.subi", k.constant(0, "i32"), v), v)


@checks(aten._to_copy.default, torch.ops.prims.convert_element_type.default)
def float_to_int64_in_range(c: Lowering, args, value: Value) -> None:
    """A float cast to int64 is inside int32 (NaN too is outside: eager gives
    the lowest int64)."""
    x = args[0]
    if _result_dtype(c) != torch.int64 or not isinstance(x, Value) or x.element != "f32":
        return

    def bad(k: Kernel, idx) -> SSAValue:
        v = x.emit(k, idx)
        above = k.cmp("oge", v, k.constant(_INT32_MIN, "f32"))
        below = k.cmp("olt", v, k.constant(2.0**31, "f32"))
        inside = k.op("arith.andi", above, below)
        return k.op("arith.xori", inside, k.constant(True, "i1"))

    c.prog.check(
        Value(c.shape, bad, "i1"),
        x,
        UnsupportedError,
        str(c.target),
        "casts {value} to int64, outside the int32 range the kernels compute int64 "
        "data in",
        c.where,
    )


@checks(
    aten.div.Tensor_mode,
    aten.div.Scalar_mode,
    aten.remainder.Tensor,
    aten.remainder.Scalar,
    aten.remainder.Scalar_Tensor,
    aten.fmod.Tensor,
    aten.fmod.Scalar,
)
def integer_divisor_nonzero(c: Lowering, args, value: Value) -> None:
    """An integer division's divisor is not zero (eager raises too)."""
    if c.element != "i32":
        return
    divisor = args[1]
    if not isinstance(divisor, Value):
        if int(divisor) == 0:
            raise ZeroDivisionError(
                f"{c.target}: integer division by zero (at {c.where})"
            )
        return

    def bad(k: Kernel, idx) -> SSAValue:
        return k.cmp("eq", _operand(c, divisor, k, idx), k.constant(0, "i32"))

    c.prog.check(
        Value(c.shape, bad, "i1"),
        Value(c.shape, lambda k, idx: _operand(c, divisor, k, idx), "i32"),
        ZeroDivisionError,
        str(c.target),
        "integer division by zero",
        c.where,
    )


_COMPARISONS: dict[object, Callable[[int], bool]] = {
    # the answer for every int32 x of `x op constant`, for a constant above int32
    aten.gt.Scalar: lambda above: not above,
    aten.ge.Scalar: lambda above: not above,
    aten.lt.Scalar: lambda above: above,
    aten.le.Scalar: lambda above: above,
    aten.eq.Scalar: lambda above: False,
    aten.ne.Scalar: lambda above: True,
}


@lowers_wide_constants(*_COMPARISONS)
def compare_with_wide_constant(c: Lowering, args) -> Value:
    """int data (inside int32) compared with a constant outside it: the same answer
    everywhere; float data compares as usual (the constant is a float)."""
    x, constant = args
    if x.element == "f32":
        return LOWERINGS[c.target](c, args)
    answer = _COMPARISONS[c.target](constant > 0)
    return Value(c.shape, lambda k, idx: k.constant(answer, "i1"), "i1")


@lowers_wide_constants(
    aten.add.Tensor,
    aten.add.Scalar,
    aten.sub.Tensor,
    aten.sub.Scalar,
    aten.mul.Tensor,
    aten.mul.Scalar,
    aten.div.Tensor,
    aten.div.Scalar,
    aten.div.Tensor_mode,
    aten.div.Scalar_mode,
    aten.remainder.Scalar,
    aten.remainder.Scalar_Tensor,
    aten.fmod.Scalar,
    aten.full.default,
    aten.fill.Scalar,
    aten.clamp.default,
    aten.masked_fill.Scalar,
    aten.where.self,
)
def arithmetic_with_wide_constant(c: Lowering, args) -> Value:
    """A constant outside int32 is fine where the data is float; with int data it
    is a compile-time UnsupportedError."""
    if c.element == "f32" and all(
        not isinstance(a, Value) or a.element == "f32" for a in args
    ):
        return LOWERINGS[c.target](c, args)
    wide = next(a for a in args if isinstance(a, int) and not -(2**31) <= a < 2**31)
    raise c.unsupported(
        f"the int64 constant {wide} is outside the int32 range the kernels compute "
        "int64 data in"
    )
