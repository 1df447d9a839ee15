"""Where the kernels cannot compute what eager does on some data, the program checks
for that data and the call raises, never a silent wrong result:

- int64 data is int32 in kernels (TPU kernels have no 64-bit types): an int64 `add`,
  `sub`, `mul`, `neg`, `abs` or left shift, or an int64 `sum` or `prod` (of int32 data
  too), whose result leaves int32 is an UnsupportedError at the call, as is a float
  cast to int64 outside int32;
- an integer division (`//`, `%`, `fmod`, `div` with a rounding mode) by zero raises
  ZeroDivisionError, where eager raises too;
- `igamma` and `igammac`, which run on XLA, are an UnsupportedError at the call for a
  shape parameter where XLA's float32 algorithm is not accurate (a > 20);
- a comparison of int data with a Python int outside int32 is answered when the program
  is compiled (the data is in int32: inputs are checked at the boundary), and other
  arithmetic with such a constant is an UnsupportedError.

Each check is `Program.check` (two small reduction kernels; `runtime_checks=False` drops
them), registered with `@checks` for the ops it guards.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from xdsl.ir import SSAValue

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Buffer,
    Kernel,
    UnsupportedError,
    Value,
    broadcast_index,
    is_float,
    storage_value,
)
from pallas_ir.frontend.lowerings.reductions import reduced_dims
from pallas_ir.frontend.lowerings.registry import (
    LOWERINGS,
    Lowering,
    checks,
    lowers_wide_constants,
)
from pallas_ir.lowering.special_functions import ZETA_LOWEST_Q

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


_SAME_VALUES = {
    aten.unsqueeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.view.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.expand.default,
    aten.permute.default,
    aten.clone.default,
    aten.alias.default,
}
"""Ops whose result holds only values of their first operand."""


def static_range(x) -> tuple[int, int] | None:
    """The range of every value `x` (a traced node or a Python int) can hold, when the
    graph says it without data: an `arange`, its views, and add, sub, mul and neg of
    such (a causal mask's `arange(t) - arange(t)[:, None]`); None otherwise."""
    if isinstance(x, bool) or not isinstance(x, int | torch.fx.Node):
        return None
    if isinstance(x, int):
        return (x, x)
    target, args = x.target, x.args
    if target in (aten.arange.default, aten.arange.start, aten.arange.start_step):
        bounds = [0, *args] if target == aten.arange.default else list(args)
        start, end, step = (*bounds, 1)[:3]
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            return None
        points = range(start, end, step)
        return (min(points), max(points)) if points else None
    if target in _SAME_VALUES:
        return static_range(args[0])
    if target not in _ARITHMETIC or len(args) < 1:
        return None
    a = static_range(args[0])
    op = _ARITHMETIC[target]
    if a is None:
        return None
    if op == "neg":
        return (-a[1], -a[0])
    if op == "abs":
        return (0 if a[0] <= 0 <= a[1] else min(map(abs, a)), max(map(abs, a)))
    b = static_range(args[1]) if len(args) > 1 else None
    alpha = x.kwargs.get("alpha", 1)
    if b is None or not isinstance(alpha, int):
        return None
    if op in ("add", "sub"):
        b = (b[0] * alpha, b[1] * alpha) if alpha >= 0 else (b[1] * alpha, b[0] * alpha)
        if op == "sub":
            b = (-b[1], -b[0])
        return (a[0] + b[0], a[1] + b[1])
    corners = [p * q for p in a for q in b]
    return (min(corners), max(corners))


@checks(*_ARITHMETIC)
def int64_arithmetic_in_range(c: Lowering, args, value: Value) -> None:
    """An int64 result of add, sub, mul, neg or abs stays inside int32; no check when
    the graph bounds it there (`static_range`)."""
    if _result_dtype(c) != torch.int64:
        return
    known = static_range(c.node)
    if known is not None and _INT32_MIN <= known[0] and known[1] < 2**31:
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


_WIDE_REDUCTION = (
    "an int64 result leaves the int32 range the kernels compute int64 data in "
    "(a {what} of about {{value}})"
)


def _reduction_of(c: Lowering, args, emit, kind: str, element: str) -> Value:
    """`emit` (a value of the shape of `args[0]`) reduced by `kind` over the dims the
    reduction `c` of `args` reduces, read at the indices of its result."""
    x = args[0]
    dims = reduced_dims(x, args[1] if len(args) > 1 else None)
    kept = [n for d, n in enumerate(x.shape) if d not in dims]
    buf = Buffer.holding(c.prog.fresh("t"), kept, element)
    c.buffers.append(buf)
    c.prog.kernel(Value(x.shape, emit, element), buf, dims, kind)
    stored = storage_value(buf, kept, row_major_strides(kept))
    if len(c.shape) == len(kept):
        return stored
    return Value(
        c.shape,
        lambda k, idx: stored.emit(k, [i for d, i in enumerate(idx) if d not in dims]),
        element,
    )


def _int_reduction(c: Lowering, args) -> Value | None:
    """The int32 data an int64 `sum` or `prod` reduces, None where it cannot leave
    int32 (bool data: a sum is a count) or is not int64."""
    x = args[0]
    if _result_dtype(c) != torch.int64 or not isinstance(x, Value):
        return None
    return x if x.element == "i32" else None


@checks(aten.sum.dim_IntList)
def int64_sum_in_range(c: Lowering, args, value: Value) -> None:
    """An int64 sum stays inside int32. The int32 sum wraps, exact modulo 2**32, so
    only whether the exact sum is inside int32 is checked, exactly: each element is
    cut into bit fields (unsigned ones, and the signed top one), each field summed in
    int32 where N elements cannot wrap it (fields of w = 30 - ceil(log2 N) bits), and
    the field sums carried from the lowest: the exact sum is top * 2**s + r (0 <= r <
    2**s), inside int32 iff top is inside [-2**(31-s), 2**(31-s))."""
    x = _int_reduction(c, args)
    if x is None:
        return
    n = math.prod(x.shape[d] for d in reduced_dims(x, args[1] if len(args) > 1 else None))
    if n <= 1:
        return
    width = 30 - (n - 1).bit_length()
    if width < 1:
        raise c.unsupported(f"an int64 sum of {n} elements is not checked for overflow")
    shifts = [0]
    while 32 - shifts[-1] > width + 1:  # the top field: at most width + 1 bits
        shifts.append(shifts[-1] + width)

    def field(shift: int, top: bool):
        def emit(k: Kernel, idx) -> SSAValue:
            v = k.op("arith.shrsi", x.emit(k, idx), k.constant(shift, "i32"))
            if top:
                return v
            return k.op("arith.andi", v, k.constant((1 << width) - 1, "i32"))

        return emit

    sums = [
        _reduction_of(c, args, field(s, s == shifts[-1]), "sum", "i32") for s in shifts
    ]

    def carried(k: Kernel, idx) -> tuple[SSAValue, SSAValue]:
        """The top field's exact sum (with the carry) and the low bits r."""
        carry, low = k.constant(0, "i32"), k.constant(0, "i32")
        for s, total in zip(shifts[:-1], sums[:-1], strict=True):
            t = k.op("arith.addi", carry, total.emit(k, idx))
            bits = k.op("arith.andi", t, k.constant((1 << width) - 1, "i32"))
            low = k.op("arith.ori", low, k.op("arith.shli", bits, k.constant(s, "i32")))
            carry = k.op("arith.shrsi", t, k.constant(width, "i32"))
        return k.op("arith.addi", carry, sums[-1].emit(k, idx)), low

    bound = 1 << (31 - shifts[-1])

    def bad(k: Kernel, idx) -> SSAValue:
        top, _ = carried(k, idx)
        below = k.cmp("slt", top, k.constant(-bound, "i32"))
        above = k.cmp("sge", top, k.constant(bound, "i32"))
        return k.op("arith.ori", below, above)

    def about(k: Kernel, idx) -> SSAValue:
        top, low = carried(k, idx)
        high = k.op(
            "arith.mulf", k.cast(top, "i32", "f32"), k.constant(2.0 ** shifts[-1])
        )
        return k.op("arith.addf", high, k.cast(low, "i32", "f32"))

    c.prog.check(
        Value(c.shape, bad, "i1"),
        Value(c.shape, about, "f32"),
        UnsupportedError,
        str(c.target),
        _WIDE_REDUCTION.format(what="sum"),
        c.where,
    )


@checks(aten.prod.dim_int, aten.prod.default)
def int64_prod_in_range(c: Lowering, args, value: Value) -> None:
    """An int64 product stays inside int32, decided exactly: with no zero factor, the
    float32 product F of the factors is within 2**-17 of the exact P (only factors
    other than +-1 round, and past 2**33 |F| only grows), so |F| < 2**31 - 2**15 is
    inside and |F| > 2**31 + 2**15 outside; between them P is within 2**16 of +-2**31,
    where the wrapped int32 product has P's sign iff it is P."""
    x = _int_reduction(c, args)
    if x is None:
        return

    def factor(k: Kernel, idx) -> SSAValue:  # zeros as ones: no inf * 0
        v = k.cast(x.emit(k, idx), "i32", "f32")
        zero = k.cmp("oeq", v, k.constant(0.0))
        return k.op("arith.select", zero, k.constant(1.0), v)

    def is_zero(k: Kernel, idx) -> SSAValue:
        return k.cast(k.cmp("eq", x.emit(k, idx), k.constant(0, "i32")), "i1", "i32")

    product = _reduction_of(c, args, factor, "prod", "f32")
    zeros = _reduction_of(c, args, is_zero, "max", "i32")

    def bad(k: Kernel, idx) -> SSAValue:
        f = product.emit(k, idx)
        size = k.op("math.absf", f)
        inside = k.cmp("olt", size, k.constant(2.0**31 - 2.0**15))
        near = k.cmp("ole", size, k.constant(2.0**31 + 2.0**15))
        wrapped = k.cast(value.emit(k, idx), value.element, "i32")
        same_sign = k.cmp(
            "eq",
            k.cmp("slt", wrapped, k.constant(0, "i32")),
            k.cmp("olt", f, k.constant(0.0)),
        )
        fine = k.op("arith.ori", inside, k.op("arith.andi", near, same_sign))
        no_zero = k.cmp("eq", zeros.emit(k, idx), k.constant(0, "i32"))
        return k.op(
            "arith.andi", no_zero, k.op("arith.xori", fine, k.constant(True, "i1"))
        )

    c.prog.check(
        Value(c.shape, bad, "i1"),
        product,
        UnsupportedError,
        str(c.target),
        _WIDE_REDUCTION.format(what="product"),
        c.where,
    )


@checks(aten._to_copy.default, torch.ops.prims.convert_element_type.default)
def float_to_int64_in_range(c: Lowering, args, value: Value) -> None:
    """A float cast to int64 is inside int32 (NaN too is outside: eager gives
    the lowest int64)."""
    x = args[0]
    if (
        _result_dtype(c) != torch.int64
        or not isinstance(x, Value)
        or not is_float(x.element)
    ):
        return

    def bad(k: Kernel, idx) -> SSAValue:
        v = x.emit(k, idx)
        above = k.cmp("oge", v, k.constant(_INT32_MIN, x.element))
        below = k.cmp("olt", v, k.constant(2.0**31, x.element))
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


IGAMMA_LARGEST_A = 20.0
"""The largest finite a for which XLA's igamma and igammac (a series and a continued
fraction, in float32) agree with torch's to 5e-6; beyond it torch turns to an
asymptotic series near x = a, and XLA's drift (2e-5 at a = 50, 6e-4 at a = 1e4,
nonsense from 1e5)."""


@checks(aten.igamma.default, aten.igammac.default)
def igamma_within_xla_range(c: Lowering, args, value: Value) -> None:
    """igamma(a, x) and igammac(a, x) run on XLA: a finite a above IGAMMA_LARGEST_A is
    an UnsupportedError at the call (where x is neither 0 nor inf: there the result
    is exact)."""

    def operand(x, k: Kernel, idx) -> SSAValue:
        if isinstance(x, Value):
            return k.cast(x.emit(k, broadcast_index(x, c.shape, idx)), x.element, "f32")
        return k.constant(float(x))

    def bad(k: Kernel, idx) -> SSAValue:
        a, x = operand(args[0], k, idx), operand(args[1], k, idx)
        large = k.op(
            "arith.andi",
            k.cmp("ogt", a, k.constant(IGAMMA_LARGEST_A)),
            k.cmp("olt", a, k.constant(math.inf)),
        )
        inside = k.op(
            "arith.andi",
            k.cmp("ogt", x, k.constant(0.0)),
            k.cmp("olt", x, k.constant(math.inf)),
        )
        return k.op("arith.andi", large, inside)

    c.prog.check(
        Value(c.shape, bad, "i1"),
        Value(c.shape, lambda k, idx: operand(args[0], k, idx), "f32"),
        UnsupportedError,
        str(c.target),
        f"a = {{value}}: XLA's float32 series, which computes it, is accurate for "
        f"a <= {IGAMMA_LARGEST_A:g} only",
        c.where,
    )


@checks(
    aten.special_zeta.default,
    aten.special_zeta.self_scalar,
    aten.special_zeta.other_scalar,
    aten.polygamma.default,
    aten.special_polygamma.default,
)
def zeta_q_in_range(c: Lowering, args, value: Value) -> None:
    """zeta(x, q) (and polygamma(n, q) = +-n! zeta(n + 1, q) for n >= 2) with q below
    ZETA_LOWEST_Q, not whole, and x whole and >= 1 (where it is a number) is an
    UnsupportedError at the call: its sum of (q + k)^-x takes 9 - q terms, more than
    the kernels unroll (XLA's zeta is wrong there too)."""
    polygamma = c.target in (aten.polygamma.default, aten.special_polygamma.default)
    if polygamma and args[0] < 2:
        return

    def operand(x, k: Kernel, idx) -> SSAValue:
        if isinstance(x, Value):
            return k.cast(x.emit(k, broadcast_index(x, c.shape, idx)), x.element, "f32")
        return k.constant(float(x))

    def whole(k: Kernel, v: SSAValue) -> SSAValue:
        return k.cmp("oeq", v, k.op("math.floor", v))

    def bad(k: Kernel, idx) -> SSAValue:
        q = operand(args[1], k, idx)
        low = k.cmp("olt", q, k.constant(ZETA_LOWEST_Q))
        low = k.op("arith.xori", k.op("arith.andi", low, whole(k, q)), low)
        if polygamma:
            return low
        x = operand(args[0], k, idx)
        number = k.op("arith.andi", whole(k, x), k.cmp("oge", x, k.constant(1.0)))
        return k.op("arith.andi", low, number)

    c.prog.check(
        Value(c.shape, bad, "i1"),
        Value(
            c.shape, lambda k, idx: k.op("arith.negf", operand(args[1], k, idx)), "f32"
        ),
        UnsupportedError,
        str(c.target),
        f"q = -{{value}}: the Hurwitz zeta sum is computed for q >= {ZETA_LOWEST_Q:g}",
        c.where,
    )


_LEFT_SHIFTS = (
    aten.bitwise_left_shift.Tensor,
    aten.bitwise_left_shift.Tensor_Scalar,
    aten.bitwise_left_shift.Scalar_Tensor,
    aten.__lshift__.Tensor,
    aten.__lshift__.Scalar,
)


@checks(*_LEFT_SHIFTS)
def int64_left_shift_in_range(c: Lowering, args, value: Value) -> None:
    """An int64 a << b (b in [0, 64), else eager's 0) stays inside int32: a is 0, or b
    is below 31 and shifting back gives a (the int32 shift did not wrap). A shift by
    31 or more of a nonzero int32 is taken to leave int32 (only -1 << 31, and shifts
    whose int64 result wraps to a small value, do not)."""
    if _result_dtype(c) != torch.int64:
        return

    def bad(k: Kernel, idx) -> SSAValue:
        a, b = _operand(c, args[0], k, idx), _operand(c, args[1], k, idx)
        zero = k.constant(0, "i32")
        shifting = k.op(
            "arith.andi",
            k.cmp("sge", b, zero),
            k.cmp("slt", b, k.constant(64, "i32")),
        )
        wide = k.cmp("sge", b, k.constant(31, "i32"))
        small = k.op("arith.select", wide, zero, b)
        back = k.op("arith.shrsi", k.op("arith.shli", a, small), small)
        wraps = k.op("arith.ori", wide, k.cmp("ne", back, a))
        nonzero = k.cmp("ne", a, zero)
        return k.op("arith.andi", k.op("arith.andi", shifting, nonzero), wraps)

    def operand(k: Kernel, idx) -> SSAValue:
        return _operand(c, args[0], k, idx)

    c.prog.check(
        Value(c.shape, bad, "i1"),
        Value(c.shape, operand, "i32"),
        UnsupportedError,
        str(c.target),
        "an int64 result leaves the int32 range the kernels compute int64 data in "
        "(shifting {value})",
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
    if is_float(x.element):
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
    if is_float(c.element) and all(
        not isinstance(a, Value) or is_float(a.element) for a in args
    ):
        return LOWERINGS[c.target](c, args)
    wide = next(a for a in args if isinstance(a, int) and not -(2**31) <= a < 2**31)
    raise c.unsupported(
        f"the int64 constant {wide} is outside the int32 range the kernels compute "
        "int64 data in"
    )
