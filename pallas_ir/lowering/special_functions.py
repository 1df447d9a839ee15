"""The float32 special functions Mosaic has no lowering for, as `arith`, `math` and
`pallas` ops it has: what `pallas-legalize-mosaic` expands `math.asinh`,
`special.lgamma`, ... into inside a `pallas.call` kernel. An XLA function (ta-to-xla)
computes the `special` ones by the same expansions, with `xla` ops: XLA's own
special functions are other algorithms (its zeta drifts below q = -7.4, its erfcx
keeps the precision torch's loses for x < 0), and one algorithm gives one answer
wherever a kernel runs.

Each expansion follows torch's CPU kernel for float32 (ATen's `native/Math.h`, itself
from the Cephes Math Library, 3-clause BSD) where that kernel is a fixed sequence of
operations, so that it agrees with eager to a few ulps; a loop whose trip count depends
on the data is unrolled to its bound for float32 with each step masked. `lgamma` is
XLA's Lanczos approximation (torch calls C's `lgammaf`). The functions are written
against `TileMath`, which builds the ops on tiles of one type.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, TensorType, f32
from xdsl.ir import Operation, SSAValue

from pallas_ir.dialects import pallas, special, xla

Operand = SSAValue | float


class TileMath:
    """Builds element-wise ops on f32 tiles of type `t` (and i1 masks of its shape),
    in order, naming each result after `hint`: `arith` and `math` ops, with the
    comparisons, selects and constants of a Pallas kernel (`pallas.compare`,
    `pallas.select`, splat `arith.constant`) or, `xla` set, of an XLA function
    (`xla.compare`, `xla.select`, `xla.constant`). Operands are values or Python
    floats (constants, built once each)."""

    def __init__(self, t: TensorType, hint: str, xla_function: bool = False):
        self.t = t
        self.hint = hint
        self.ops: list[Operation] = []
        self.constants: dict[tuple[float, float], SSAValue] = {}
        self.compare_op = xla.CompareOp if xla_function else pallas.CompareOp
        self.select_op = xla.SelectOp if xla_function else pallas.SelectOp
        self.xla_function = xla_function

    def _constant(self, v: float) -> Operation:
        if self.xla_function:
            return xla.ConstantOp(FloatAttr(v, f32), self.t.get_shape())
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(self.t, [v]), self.t)

    def _add(self, op: Operation, name: str) -> SSAValue:
        self.ops.append(op)
        op.results[0].name_hint = f"{self.hint}_{name}"
        return op.results[0]

    def value(self, x: Operand) -> SSAValue:
        if isinstance(x, SSAValue):
            return x
        key = float(x)
        bits = (key, pymath.copysign(1.0, key))  # 0.0 and -0.0 apart
        if bits not in self.constants:
            self.constants[bits] = self._add(self._constant(key), "c")
        return self.constants[bits]

    def _binary(self, cls: type[Operation], a: Operand, b: Operand, name: str):
        return self._add(cls(self.value(a), self.value(b)), name)  # type: ignore[call-arg]

    def add(self, a: Operand, b: Operand) -> SSAValue:
        return self._binary(arith.AddfOp, a, b, "sum")

    def sub(self, a: Operand, b: Operand) -> SSAValue:
        return self._binary(arith.SubfOp, a, b, "diff")

    def mul(self, a: Operand, b: Operand) -> SSAValue:
        return self._binary(arith.MulfOp, a, b, "prod")

    def div(self, a: Operand, b: Operand) -> SSAValue:
        return self._binary(arith.DivfOp, a, b, "quot")

    def pow(self, a: Operand, b: Operand) -> SSAValue:
        return self._binary(math.PowFOp, a, b, "pow")

    def copysign(self, a: Operand, b: Operand) -> SSAValue:
        return self._binary(math.CopySignOp, a, b, "signed")

    def unary(self, cls: type[Operation], a: Operand) -> SSAValue:
        name = cls.name.split(".")[-1]  # type: ignore[attr-defined]
        return self._add(cls(self.value(a)), name)  # type: ignore[call-arg]

    def neg(self, a: Operand) -> SSAValue:
        return self.unary(arith.NegfOp, a)

    def abs(self, a: Operand) -> SSAValue:
        return self.unary(math.AbsFOp, a)

    def exp(self, a: Operand) -> SSAValue:
        return self.unary(math.ExpOp, a)

    def log(self, a: Operand) -> SSAValue:
        return self.unary(math.LogOp, a)

    def log1p(self, a: Operand) -> SSAValue:
        return self.unary(math.Log1pOp, a)

    def sqrt(self, a: Operand) -> SSAValue:
        return self.unary(math.SqrtOp, a)

    def floor(self, a: Operand) -> SSAValue:
        return self.unary(math.FloorOp, a)

    def trunc(self, a: Operand) -> SSAValue:
        """Toward zero (Mosaic has floor and ceil, no trunc)."""
        a = self.value(a)
        return self.select(
            self.cmp("olt", a, 0.0), self.unary(math.CeilOp, a), self.floor(a)
        )

    def cmp(self, predicate: str, a: Operand, b: Operand) -> SSAValue:
        return self._add(self.compare_op(predicate, self.value(a), self.value(b)), "is")

    def select(self, test: SSAValue, a: Operand, b: Operand) -> SSAValue:
        return self._add(self.select_op(test, self.value(a), self.value(b)), "pick")

    def both(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.AndIOp(a, b), "and")

    def either(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.OrIOp(a, b), "or")

    def horner(self, x: Operand, coefficients: Sequence[float]) -> SSAValue:
        """c0 x^n + ... + cn (Cephes' `polevl`: highest power first)."""
        acc = self.value(coefficients[0])
        for c in coefficients[1:]:
            acc = self.add(self.mul(acc, x), c)
        return acc

    def chebyshev(self, x: Operand, coefficients: Sequence[float]) -> SSAValue:
        """Cephes' `chbevl`: the Chebyshev series of `coefficients` (highest order
        first) at x / 2."""
        b0: Operand = coefficients[0]
        b1: Operand = 0.0
        b2: Operand = 0.0
        for c in coefficients[1:]:
            b2, b1 = b1, b0
            b0 = self.mul(x, b1)
            if not (isinstance(b2, float) and b2 == 0.0):
                b0 = self.sub(b0, b2)
            b0 = self.add(b0, c)
        return self.mul(self.sub(b0, b2), 0.5)

    def exp_of_square(self, x: SSAValue, sign: float) -> SSAValue:
        """exp(sign * x^2) without the rounding of x^2 (which exp turns into a relative
        error of up to x^2 ulps): x = h + l with h a multiple of 1/64, so h^2 is exact,
        and exp(±h^2) e^r, r = ±(x - h)(x + h), |r| < 0.32. e^r is its Taylor
        polynomial of degree 8 (error below 2^-30): XLA would fold a product of two
        exps into the exp of the rounded sum. |x| is clamped to 20, where the result
        has under- or overflowed already."""
        x = self.select(self.cmp("olt", self.abs(x), 20.0), x, 20.0)
        h = self.div(self.floor(self.add(self.mul(x, 64.0), 0.5)), 64.0)
        rest = self.mul(self.mul(self.sub(x, h), self.add(x, h)), sign)
        taylor = self.horner(rest, [1 / pymath.factorial(n) for n in range(8, -1, -1)])
        return self.mul(self.exp(self.mul(self.mul(h, h), sign)), taylor)


LN2 = pymath.log(2.0)
LARGE = 8192.0
"""Beyond it asinh(x) and acosh(x) are log(2x) to float32 precision (the next term of
the series, 1 / (4 x^2), is below 2^-28 of it)."""


def asinh(b: TileMath, x: SSAValue) -> SSAValue:
    """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), log(2|x|) beyond LARGE."""
    a = b.abs(x)
    square = b.mul(a, a)
    near = b.log1p(b.add(a, b.div(square, b.add(b.sqrt(b.add(square, 1.0)), 1.0))))
    far = b.add(b.log(a), LN2)
    return b.copysign(b.select(b.cmp("olt", a, LARGE), near, far), x)


def acosh(b: TileMath, x: SSAValue) -> SSAValue:
    """log1p(t + sqrt(2t + t^2)), t = x - 1 (exact near 1), log(2x) beyond LARGE; NaN
    below 1."""
    t = b.sub(x, 1.0)
    near = b.log1p(b.add(t, b.sqrt(b.mul(t, b.add(t, 2.0)))))
    far = b.add(b.log(x), LN2)
    value = b.select(b.cmp("olt", x, LARGE), near, far)
    return b.select(b.cmp("ult", x, 1.0), pymath.nan, value)


def atanh(b: TileMath, x: SSAValue) -> SSAValue:
    """sign(x) log1p(2|x| / (1 - |x|)) / 2: inf at 1, NaN beyond."""
    a = b.abs(x)
    value = b.mul(b.log1p(b.div(b.mul(a, 2.0), b.sub(1.0, a))), 0.5)
    return b.copysign(b.select(b.cmp("ogt", a, 1.0), pymath.nan, value), x)


# Cephes' erfcf: exp(x^2) erfc(x) = P(1/x^2) / x on [1, 2], R(1/x^2) / x beyond.
ERFC_P = (
    2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
    -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
    3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1,
)  # fmt: skip
ERFC_R = (
    -1.047766399936249e1, 1.297719955372516e1, -7.495518717768503e0,
    2.921019019210786e0, -1.015265279202700e0, 4.218463358204948e-1,
    -2.820767439740514e-1, 5.641895067754075e-1,
)  # fmt: skip


def _erfcx_from_one(b: TileMath, x: SSAValue) -> SSAValue:
    """exp(x^2) erfc(x) for x >= 1 (0 at inf)."""
    q = b.div(1.0, x)
    y = b.mul(q, q)
    p = b.select(b.cmp("olt", x, 2.0), b.horner(y, ERFC_P), b.horner(y, ERFC_R))
    return b.mul(q, p)


def erfcx(b: TileMath, x: SSAValue) -> SSAValue:
    """exp(x^2) erfc(x). For x >= 0: below 1, exp(x^2) (1 - erf(x)) (erfc(x) >= 0.157
    there, so 1 - erf(x) keeps its relative precision); from 1, Cephes' series in
    1/x^2. Below 0, 2 exp(x^2) - erfcx(-x) with x^2 rounded, as torch (whose float
    result is as far as 4e-6 from the exact one there)."""
    a = b.abs(x)
    below = b.mul(b.exp_of_square(a, 1.0), b.sub(1.0, b.unary(math.ErfOp, a)))
    from_one = _erfcx_from_one(b, b.select(b.cmp("olt", a, 1.0), 1.0, a))
    positive = b.select(b.cmp("olt", a, 1.0), below, from_one)
    negative = b.sub(b.mul(b.exp(b.mul(x, x)), 2.0), positive)
    return b.select(b.cmp("olt", x, 0.0), negative, positive)


def erfc(b: TileMath, x: SSAValue) -> SSAValue:
    """1 - erf(x) for |x| < 1; beyond, exp(-x^2) erfcx(|x|), subtracted from 2 for
    negative x (Cephes' erfcf, with exp(-x^2) free of x^2's rounding)."""
    a = b.abs(x)
    far = b.mul(
        b.exp_of_square(a, -1.0),
        _erfcx_from_one(b, b.select(b.cmp("olt", a, 1.0), 1.0, a)),
    )
    far = b.select(b.cmp("olt", x, 0.0), b.sub(2.0, far), far)
    near = b.sub(1.0, b.unary(math.ErfOp, x))
    return b.select(b.cmp("olt", a, 1.0), near, far)


LANCZOS_GAMMA = 7.0
LANCZOS_BASE = 0.99999999999980993227684700473478
LANCZOS = (
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894, -176.61502916214059906584551354,
    12.507343278686904814458936853, -0.13857109526572011689554707,
    9.984369578019570859563e-6, 1.50563273514931155834e-7,
)  # fmt: skip


def lgamma(b: TileMath, x: SSAValue) -> SSAValue:
    """XLA's `Lgamma`: the Lanczos approximation (g = 7, 9 terms) of log Gamma(z + 1),
    and below 1/2 the reflection log(pi) - log|sin(pi x)| - lgamma(1 - x) with
    sin(pi x) of the fraction of |x| folded into [0, 1/2]; inf at the poles and at
    +-inf, 0 at 1 and 2."""
    reflect = b.cmp("olt", x, 0.5)
    z = b.select(reflect, b.neg(x), b.sub(x, 1.0))
    acc = b.value(LANCZOS_BASE)
    for i, c in enumerate(LANCZOS):
        acc = b.add(acc, b.div(c, b.add(z, float(i + 1))))
    t = b.add(z, LANCZOS_GAMMA + 0.5)
    log_t = b.add(b.log1p(b.div(z, LANCZOS_GAMMA + 0.5)), pymath.log(LANCZOS_GAMMA + 0.5))
    log_y = b.add(
        b.add(b.mul(b.sub(b.add(z, 0.5), b.div(t, log_t)), log_t), b.log(acc)),
        0.5 * pymath.log(2 * pymath.pi),
    )
    a = b.abs(x)
    frac = b.sub(a, b.floor(a))
    frac = b.select(b.cmp("ogt", frac, 0.5), b.sub(1.0, frac), frac)
    denominator = b.log(b.unary(math.SinOp, b.mul(frac, pymath.pi)))
    reflection = b.select(
        b.cmp("olt", b.abs(denominator), pymath.inf),
        b.sub(b.sub(pymath.log(pymath.pi), denominator), log_y),
        b.neg(denominator),
    )
    value = b.select(reflect, reflection, log_y)
    # Exactly 0 at its zeros 1 and 2 (the approximation leaves 5e-7 there).
    zero = b.either(b.cmp("oeq", x, 1.0), b.cmp("oeq", x, 2.0))
    value = b.select(zero, 0.0, value)
    return b.select(b.cmp("oeq", a, pymath.inf), pymath.inf, value)


DIGAMMA_A = (
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)  # fmt: skip
PSI_10 = 2.25175258906672110764


def _push_to_ten(b: TileMath, y: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(y + n, -(1/y + ... + 1/(y + n - 1))) for the n that makes y + n >= 10: torch's
    `while (x < 10)` loop, unrolled to its 10 steps for y > 0."""
    total: Operand = 0.0
    for _ in range(10):
        below = b.cmp("olt", y, 10.0)
        total = b.select(below, b.sub(total, b.div(1.0, y)), total)
        y = b.select(below, b.add(y, 1.0), y)
    return y, b.value(total)


def digamma(b: TileMath, x: SSAValue) -> SSAValue:
    """torch's `calc_digamma(float)`: x pushed to 10 or beyond by the recurrence, then
    the asymptotic series (PSI_10 at 10 exactly); below 0, the reflection
    digamma(1 - x) - pi / tan(pi r), r the fraction of x (folded into [-1/2, 1/2],
    where tan is accurate); -+inf at +-0, NaN at negative integers."""
    negative = b.cmp("olt", x, 0.0)
    y, total = _push_to_ten(b, b.select(negative, b.sub(1.0, x), x))
    z = b.div(1.0, b.mul(y, y))
    series = b.mul(z, b.horner(z, DIGAMMA_A))
    series = b.select(b.cmp("olt", y, 1e17), series, 0.0)
    value = b.sub(b.sub(b.add(total, b.log(y)), b.div(0.5, y)), series)
    value = b.select(b.cmp("oeq", y, 10.0), b.add(total, PSI_10), value)
    r = b.sub(x, b.trunc(x))
    r = b.select(b.cmp("olt", r, -0.5), b.add(r, 1.0), r)
    reflection = b.div(pymath.pi, b.unary(math.TanOp, b.mul(r, pymath.pi)))
    value = b.select(negative, b.sub(value, reflection), value)
    whole = b.cmp("oeq", x, b.trunc(x))
    value = b.select(b.both(negative, whole), pymath.nan, value)
    return b.select(b.cmp("oeq", x, 0.0), b.copysign(pymath.inf, b.neg(x)), value)


ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
    7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
    -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18,
)  # fmt: skip
ZETA_LOWEST_Q = -10.0
"""The lowest q (not whole) zeta(x, q) is computed for (polygamma's OpInfo samples
reach -9): the frontend checks it at the call."""
ZETA_SHIFT = 11
"""Steps of the direct sum beyond Cephes' 9 that the expansion takes while q + n is
still at most 9: enough for q >= ZETA_LOWEST_Q."""


def zeta(b: TileMath, x: SSAValue, q: SSAValue) -> SSAValue:
    """Cephes' `zeta` (the Hurwitz zeta function, as torch): the sum of (q + k)^-x
    over k < n, at least 9 terms and until q + n > 9 (unrolled, the steps beyond 9
    masked), then the Euler-Maclaurin tail of up to 12 terms, stopped where a term is
    below float32's precision of the sum (Cephes returns there; the series diverges
    later). Each tail term is the last times its ratio to it, so no factor of it
    overflows. inf at x = 1 and at whole q <= 0, NaN for x < 1 and for q < 0 not
    whole unless x is whole (a negative base is raised to the whole power -x through
    its magnitude and the parity of x). For q below ZETA_LOWEST_Q the sum would need
    more steps (the frontend checks that no q is)."""
    eps = 2.0**-24
    minus_x = b.neg(x)
    odd = b.cmp("one", b.sub(x, b.mul(b.floor(b.mul(x, 0.5)), 2.0)), 0.0)

    def power(a: SSAValue) -> SSAValue:
        magnitude = b.pow(b.abs(a), minus_x)
        flip = b.both(b.cmp("olt", a, 0.0), odd)
        return b.select(flip, b.neg(magnitude), magnitude)

    s = power(q)
    a = q
    term = b.value(0.0)
    for i in range(9 + ZETA_SHIFT):
        step = b.add(a, 1.0)
        t = power(step)
        if i < 9:
            a, term, s = step, t, b.add(s, t)
        else:
            go = b.cmp("ole", a, 9.0)
            a, term, s = (
                b.select(go, step, a),
                b.select(go, t, term),
                b.select(go, b.add(s, t), s),
            )
    w = a
    s = b.sub(b.add(s, b.div(b.mul(term, w), b.sub(x, 1.0))), b.mul(term, 0.5))
    t = b.div(b.mul(x, b.div(term, w)), ZETA_A[0])
    t = b.select(b.cmp("oeq", term, 0.0), 0.0, t)  # 0, not inf * 0, for x = inf
    live: SSAValue | None = None  # the tail not yet stopped (None: everywhere)
    for i in range(len(ZETA_A)):
        if i:
            ratio = b.mul(b.div(b.add(x, 2.0 * i - 1), w), b.div(b.add(x, 2.0 * i), w))
            t = b.mul(t, b.mul(ratio, ZETA_A[i - 1] / ZETA_A[i]))
        grown = b.add(s, t)
        s = grown if live is None else b.select(live, grown, s)
        going_on = b.cmp("oge", b.abs(t), b.mul(b.abs(grown), eps))
        live = going_on if live is None else b.both(live, going_on)
    nonpositive = b.cmp("ole", q, 0.0)
    whole_q = b.cmp("oeq", q, b.floor(q))
    s = b.select(b.both(nonpositive, whole_q), pymath.inf, s)
    fractions = b.both(b.cmp("une", q, b.floor(q)), b.cmp("une", x, b.floor(x)))
    s = b.select(b.both(nonpositive, fractions), pymath.nan, s)
    s = b.select(b.cmp("olt", x, 1.0), pymath.nan, s)
    return b.select(b.cmp("oeq", x, 1.0), pymath.inf, s)


# Cephes' i0e and i1e (float32 tables), Chebyshev series on [0, 8] and in 32/x beyond.
I0E_A = (
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)  # fmt: skip
I0E_B = (
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)  # fmt: skip
I1E_A = (
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)  # fmt: skip
I1E_B = (
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)  # fmt: skip


def _bessel_scaled(
    b: TileMath, x: SSAValue, near: Sequence[float], far: Sequence[float], order: int
) -> SSAValue:
    a = b.abs(x)
    small = b.cmp("ole", a, 8.0)
    inner = b.chebyshev(b.sub(b.mul(a, 0.5), 2.0), near)
    if order == 1:
        inner = b.mul(inner, a)
    safe = b.select(small, 8.0, a)  # no 32 / 0 in the unused branch
    outer = b.div(b.chebyshev(b.sub(b.div(32.0, safe), 2.0), far), b.sqrt(safe))
    value = b.select(small, inner, outer)
    return b.copysign(value, x) if order == 1 else value


def i0e(b: TileMath, x: SSAValue) -> SSAValue:
    """exp(-|x|) I0(x) (torch's `calc_i0e`)."""
    return _bessel_scaled(b, x, I0E_A, I0E_B, 0)


def i1e(b: TileMath, x: SSAValue) -> SSAValue:
    """exp(-|x|) I1(x), odd (torch's `calc_i1e`)."""
    return _bessel_scaled(b, x, I1E_A, I1E_B, 1)


NDTRI_P0 = (
    -5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
    1.39312609387279679503e1, -1.23916583867381258016e0,
)  # fmt: skip
NDTRI_Q0 = (
    1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
    -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
    1.59056225126211695515e1, -1.18331621121330003142e0,
)  # fmt: skip
NDTRI_P1 = (
    4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
    4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
    -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4,
)  # fmt: skip
NDTRI_Q1 = (
    1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
    1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
    -3.80806407691578277194e-2, -9.33259480895457427372e-4,
)  # fmt: skip
NDTRI_P2 = (
    3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
    1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
    3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9,
)  # fmt: skip
NDTRI_Q2 = (
    1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
    2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
    2.89247864745380683936e-6, 6.79019408009981274425e-9,
)  # fmt: skip
EXP_MINUS_2 = 0.13533528323661269189


def ndtri(b: TileMath, p: SSAValue) -> SSAValue:
    """torch's `calc_ndtri` (Cephes): a rational function of p - 1/2 in the middle;
    in the tails, of z = sqrt(-2 log y) (y the smaller of p and 1 - p), on [2, 8] and
    beyond; -inf at 0, inf at 1, NaN outside [0, 1]."""
    upper = b.cmp("ogt", p, 1.0 - EXP_MINUS_2)
    y = b.select(upper, b.sub(1.0, p), p)
    middle = b.cmp("ogt", y, EXP_MINUS_2)
    h = b.sub(y, 0.5)
    h2 = b.mul(h, h)
    central = b.add(
        h, b.mul(h, b.mul(h2, b.div(b.horner(h2, NDTRI_P0), b.horner(h2, NDTRI_Q0))))
    )
    central = b.mul(central, pymath.sqrt(2 * pymath.pi))
    tail_y = b.select(middle, EXP_MINUS_2, y)  # no log of a value the tail does not use
    z = b.sqrt(b.mul(b.log(tail_y), -2.0))
    first = b.sub(z, b.div(b.log(z), z))
    w = b.div(1.0, z)
    near = b.mul(w, b.div(b.horner(w, NDTRI_P1), b.horner(w, NDTRI_Q1)))
    far = b.mul(w, b.div(b.horner(w, NDTRI_P2), b.horner(w, NDTRI_Q2)))
    tail = b.sub(first, b.select(b.cmp("olt", z, 8.0), near, far))
    tail = b.select(upper, tail, b.neg(tail))
    value = b.select(middle, central, tail)
    value = b.select(b.cmp("oeq", p, 0.0), -pymath.inf, value)
    value = b.select(b.cmp("oeq", p, 1.0), pymath.inf, value)
    outside = b.either(b.cmp("olt", p, 0.0), b.cmp("ogt", p, 1.0))
    return b.select(outside, pymath.nan, value)


J0_PP = (
    7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e00,
    5.44725003058768775090e00, 8.74716500199817011941e00, 5.30324038235394892183e00,
    9.99999999999999997821e-01,
)  # fmt: skip
J0_PQ = (
    9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e00,
    5.47097740330417105182e00, 8.76190883237069594232e00, 5.30605288235394617618e00,
    1.00000000000000000218e00,
)  # fmt: skip
J0_QP = (
    -1.13663838898469149931e-02, -1.28252718670509318512e00, -1.95539544257735972385e01,
    -9.32060152123768231369e01, -1.77681167980488050595e02, -1.47077505154951170175e02,
    -5.14105326766599330220e01, -6.05014350600728481186e00,
)  # fmt: skip
J0_QQ = (
    6.43178256118178023184e01, 8.56430025976980587198e02, 3.88240183605401609683e03,
    7.24046774195652478189e03, 5.93072701187316984827e03, 2.06209331660327847417e03,
    2.42005740240291393179e02,
)  # fmt: skip
J0_RP = (
    -4.79443220978201773821e09, 1.95617491946556577543e12, -2.49248344360967716204e14,
    9.70862251047306323952e15,
)  # fmt: skip
J0_RQ = (
    4.99563147152651017219e02, 1.73785401676374683123e05, 4.84409658339962045305e07,
    1.11855537045356834862e10, 2.11277520115489217587e12, 3.10518229857422583814e14,
    3.18121955943204943306e16, 1.71086294081043136091e18,
)  # fmt: skip
J0_ZEROS_SQUARED = (5.78318596294678452118e00, 3.04712623436620863991e01)
J1_PP = (
    7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e00,
    5.11207951146807644818e00, 8.42404590141772420927e00, 5.21451598682361504063e00,
    1.00000000000000000254e00,
)  # fmt: skip
J1_PQ = (
    5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e00,
    5.07386386128601488557e00, 8.39985554327604159757e00, 5.20982848682361821619e00,
    9.99999999999999997461e-01,
)  # fmt: skip
J1_QP = (
    5.10862594750176621635e-02, 4.98213872951233449420e00, 7.58238284132545283818e01,
    3.66779609360150777800e02, 7.10856304998926107277e02, 5.97489612400613639965e02,
    2.11688757100572135698e02, 2.52070205858023719784e01,
)  # fmt: skip
J1_QQ = (
    7.42373277035675149943e01, 1.05644886038262816351e03, 4.98641058337653607651e03,
    9.56231892404756170795e03, 7.99704160447350683650e03, 2.82619278517639096600e03,
    3.36093607810698293419e02,
)  # fmt: skip
J1_RP = (
    -8.99971225705559398224e08, 4.52228297998194034323e11, -7.27494245221818276015e13,
    3.68295732863852883286e15,
)  # fmt: skip
J1_RQ = (
    6.20836478118054335476e02, 2.56987256757748830383e05, 8.35146791431949253037e07,
    2.21511595479792499675e10, 4.74914122079991414898e12, 7.84369607876235854894e14,
    8.95222336184627338078e16, 5.32278620332680085395e18,
)  # fmt: skip
J1_ZEROS_SQUARED = (1.46819706421238932572e01, 4.92184563216946036703e01)


def _bessel_j(b: TileMath, x: SSAValue, order: int) -> SSAValue:
    """torch's `bessel_j0_forward`/`bessel_j1_forward` (Cephes j0, j1): up to 5 a
    rational function of x^2 times the factors of the first two zeros; beyond, the
    Hankel asymptotic form sqrt(2 / (pi x)) (P cos(x - phase) - 5 / x Q sin(x -
    phase)) with P, Q rational in 25 / x^2."""
    rp, rq, zeros = (
        (J0_RP, J0_RQ, J0_ZEROS_SQUARED)
        if order == 0
        else (J1_RP, J1_RQ, J1_ZEROS_SQUARED)
    )
    pp, pq, qp, qq = (
        (J0_PP, J0_PQ, J0_QP, J0_QQ) if order == 0 else (J1_PP, J1_PQ, J1_QP, J1_QQ)
    )
    phase = pymath.pi / 4 if order == 0 else 3 * pymath.pi / 4
    a = b.abs(x)
    near_x = b.select(b.cmp("ole", a, 5.0), a, 5.0)  # each branch on its own range
    far_x = b.select(b.cmp("ole", a, 5.0), 5.0, a)
    z = b.mul(near_x, near_x)
    near = b.div(b.horner(z, rp), b.horner(z, rq))
    near = b.mul(b.mul(near, b.sub(z, zeros[0])), b.sub(z, zeros[1]))
    if order == 1:
        near = b.mul(near, b.select(b.cmp("ole", a, 5.0), x, 5.0))
    else:  # below 1e-5: 1 - x^2 / 4
        near = b.select(b.cmp("olt", a, 1e-5), b.sub(1.0, b.div(z, 4.0)), near)
    w = b.div(25.0, b.mul(far_x, far_x))
    p = b.div(b.horner(w, pp), b.horner(w, pq))
    q = b.div(b.horner(w, qp), b.horner(w, qq))
    shifted = b.sub(far_x, phase)
    far = b.sub(
        b.mul(p, b.unary(math.CosOp, shifted)),
        b.mul(b.mul(b.div(5.0, far_x), q), b.unary(math.SinOp, shifted)),
    )
    far = b.div(b.mul(far, pymath.sqrt(2 / pymath.pi)), b.sqrt(far_x))
    value = b.select(b.cmp("ole", a, 5.0), near, far)
    if order == 1:  # odd, and near 0 x carries its sign already
        value = b.select(b.cmp("olt", x, -5.0), b.neg(value), value)
    return value


def bessel_j0(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_j(b, x, 0)


def bessel_j1(b: TileMath, x: SSAValue) -> SSAValue:
    """Odd: J1(-x) = -J1(x)."""
    return _bessel_j(b, x, 1)


Y0_P = (
    1.55924367855235737965e04, -1.46639295903971606143e07, 5.43526477051876500413e09,
    -9.82136065717911466409e11, 8.75906394395366999549e13, -3.46628303384729719441e15,
    4.42733268572569800351e16, -1.84950800436986690637e16,
)  # fmt: skip
Y0_Q = (
    1.04128353664259848412e03, 6.26107330137134956842e05, 2.68919633393814121987e08,
    8.64002487103935000337e10, 2.02979612750105546709e13, 3.17157752842975028269e15,
    2.50596256172653059228e17,
)  # fmt: skip
Y1_P = (
    1.26320474790178026440e09, -6.47355876379160291031e11, 1.14509511541823727583e14,
    -8.12770255501325109621e15, 2.02439475713594898196e17, -7.78877196265950026825e17,
)  # fmt: skip
Y1_Q = (
    5.94301592346128195359e02, 2.35564092943068577943e05, 7.34811944459721705660e07,
    1.87601316108706159478e10, 3.88231277496238566008e12, 6.20557727146953693363e14,
    6.87141087355300489866e16, 3.97270608116560655612e18,
)  # fmt: skip
TWO_OVER_PI = 2 / pymath.pi


def _bessel_y(b: TileMath, x: SSAValue, order: int) -> SSAValue:
    """torch's `bessel_y0_forward`/`bessel_y1_forward` (Cephes y0, y1): up to 5 a
    rational function of x^2 (times x for Y1) plus 2/pi log(x) J(x) (and - 2/pi / x for
    Y1); beyond, J's Hankel form with sin and cos exchanged. -inf at 0, NaN below 0 and
    at inf (whose sine is NaN)."""
    yp, yq = (Y0_P, Y0_Q) if order == 0 else (Y1_P, Y1_Q)
    pp, pq, qp, qq = (
        (J0_PP, J0_PQ, J0_QP, J0_QQ) if order == 0 else (J1_PP, J1_PQ, J1_QP, J1_QQ)
    )
    phase = pymath.pi / 4 if order == 0 else 3 * pymath.pi / 4
    is_near = b.cmp("ole", x, 5.0)
    positive = b.cmp("ogt", x, 0.0)
    near_x = b.select(b.both(is_near, positive), x, 1.0)  # each branch on its range
    far_x = b.select(is_near, 5.0, x)
    z = b.mul(near_x, near_x)
    rational = b.div(b.horner(z, yp), b.horner(z, yq))
    log_x = b.log(near_x)
    if order == 0:
        bessel = b.mul(b.mul(log_x, TWO_OVER_PI), bessel_j0(b, near_x))
        near = b.add(rational, bessel)
    else:
        bessel = b.sub(b.mul(bessel_j1(b, near_x), log_x), b.div(1.0, near_x))
        near = b.add(b.mul(near_x, rational), b.mul(bessel, TWO_OVER_PI))
    if order == 0:
        w = b.div(25.0, b.mul(far_x, far_x))
    else:
        ratio = b.div(5.0, far_x)
        w = b.mul(ratio, ratio)
    p = b.div(b.horner(w, pp), b.horner(w, pq))
    q = b.div(b.horner(w, qp), b.horner(w, qq))
    shifted = b.sub(far_x, phase)
    far = b.add(
        b.mul(p, b.unary(math.SinOp, shifted)),
        b.mul(b.mul(b.div(5.0, far_x), q), b.unary(math.CosOp, shifted)),
    )
    far = b.div(b.mul(far, pymath.sqrt(2 / pymath.pi)), b.sqrt(far_x))
    near = b.select(positive, near, pymath.nan)
    near = b.select(b.cmp("oeq", x, 0.0), -pymath.inf, near)
    return b.select(is_near, near, far)


def bessel_y0(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_y(b, x, 0)


def bessel_y1(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_y(b, x, 1)


# Cephes' k0 and k1 (torch's modified_bessel_k0_forward, ...): Chebyshev series in
# x^2 - 2 up to 2, in 8 / x - 2 beyond.
K0_A = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
    1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
    -5.35327393233902768720e-01,
)  # fmt: skip
K0_B = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16,
    -1.84859337734377901440e-15, 6.34007647740507060557e-15,
    -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12,
    -4.51459788337394416547e-12, 1.85594911495471785253e-11,
    -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09,
    -4.66048989768794782956e-08, 2.76681363944501510342e-07,
    -1.83175552271911948767e-06, 1.39498137188764993662e-05,
    -1.28495495816278026384e-04, 1.56988388573005337491e-03,
    -3.14481013119645005427e-02, 2.44030308206595545468e00,
)  # fmt: skip
K1_A = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15,
    -6.66690169419932900609e-13, -1.41148839263352776110e-10,
    -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03,
    -1.22611180822657148235e-01, -3.53155960776544875667e-01, 1.52530022733894777053e00,
)  # fmt: skip
K1_B = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17,
    -5.68946255844285935196e-17, 1.83809354436663880070e-16,
    -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14,
    -8.97670518232499435011e-14, 3.34841966607842919884e-13,
    -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11,
    -4.19035475934189648750e-10, 2.01504975519703286596e-09,
    -1.03457624656780970260e-08, 5.74108412545004946722e-08,
    -3.50196060308781257119e-07, 2.40648494783721712015e-06,
    -1.93619797416608296024e-05, 1.95215518471351631108e-04,
    -2.85781685962277938680e-03, 1.03923736576817238437e-01, 2.72062619048444266945e00,
)  # fmt: skip


def _bessel_k(b: TileMath, x: SSAValue, order: int, scaled: bool) -> SSAValue:
    """torch's `modified_bessel_k0_forward` (`k1`, `scaled_modified_bessel_k0`,
    `k1`): up to 2, the series in x^2 - 2 minus log(x / 2) I0(x) (K1: the series / x
    plus log(x / 2) I1(x)); beyond, exp(-x) times the series in 8 / x - 2 over
    sqrt(x). Scaled: times exp(x) (beyond 2 the exp(-x) left out). inf at 0, NaN below
    0."""
    near_coefficients, far_coefficients = (K0_A, K0_B) if order == 0 else (K1_A, K1_B)
    is_near = b.cmp("ole", x, 2.0)
    positive = b.cmp("ogt", x, 0.0)
    near_x = b.select(b.both(is_near, positive), x, 1.0)  # each branch on its range
    far_x = b.select(is_near, 2.0, x)
    series = b.chebyshev(b.sub(b.mul(near_x, near_x), 2.0), near_coefficients)
    log_half = b.log(b.mul(near_x, 0.5))
    exp_x = b.exp(near_x)
    if order == 0:
        bessel_i = b.mul(i0e(b, near_x), exp_x)
        near = b.sub(series, b.mul(log_half, bessel_i))
    else:
        bessel_i = b.mul(i1e(b, near_x), exp_x)
        near = b.add(b.mul(log_half, bessel_i), b.div(series, near_x))
    far = b.chebyshev(b.sub(b.div(8.0, far_x), 2.0), far_coefficients)
    if scaled:
        near = b.mul(near, exp_x)
    else:
        far = b.mul(b.exp(b.neg(far_x)), far)
    far = b.div(far, b.sqrt(far_x))
    near = b.select(positive, near, pymath.nan)
    near = b.select(b.cmp("oeq", x, 0.0), pymath.inf, near)
    return b.select(is_near, near, far)


def bessel_k0(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_k(b, x, 0, scaled=False)


def bessel_k1(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_k(b, x, 1, scaled=False)


def bessel_k0e(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_k(b, x, 0, scaled=True)


def bessel_k1e(b: TileMath, x: SSAValue) -> SSAValue:
    return _bessel_k(b, x, 1, scaled=True)


# Cephes' airy (torch's airy_ai_forward): rational functions in 1 / zeta beyond 2.09,
# in 1 / zeta^2 below -2.09, zeta = 2/3 |x|^(3/2).
AIRY_AN = (
    3.46538101525629032477e-01, 1.20075952739645805542e01, 7.62796053615234516538e01,
    1.68089224934630576269e02, 1.59756391350164413639e02, 7.05360906840444183113e01,
    1.40264691163389668864e01, 9.99999999999999995305e-01,
)  # fmt: skip
AIRY_AD = (
    5.67594532638770212846e-01, 1.47562562584847203173e01, 8.45138970141474626562e01,
    1.77318088145400459522e02, 1.64234692871529701831e02, 7.14778400825575695274e01,
    1.40959135607834029598e01, 1.00000000000000000470e00,
)  # fmt: skip
AIRY_AFN = (
    -1.31696323418331795333e-01, -6.26456544431912369773e-01,
    -6.93158036036933542233e-01, -2.79779981545119124951e-01,
    -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06,
    -1.67787698489114633780e-08,
)  # fmt: skip
AIRY_AFD = (
    1.33560420706553243746e01, 3.26825032795224613948e01, 2.67367040941499554804e01,
    9.18707402907259625840e00, 1.47529146771666414581e00, 1.15687173795188044134e-01,
    4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07,
)  # fmt: skip
AIRY_AGN = (
    1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
    5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
    8.11789239554389293311e-08, 3.41551784765923618484e-10,
)  # fmt: skip
AIRY_AGD = (
    9.30892908077441974853e00, 1.98352928718312140417e01, 1.55646628932864612953e01,
    5.47686069422975497931e00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
    4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
    4.91834570062930015649e-09,
)  # fmt: skip
AIRY_EDGE = 2.09
AIRY_SERIES_STEPS = 12
"""Steps of the power series below AIRY_EDGE: torch stops where a step adds less than
float32's epsilon to it, after at most 11 steps on [-2.09, 2.09] (a 12th adds below
1e-30)."""
AIRY_C1 = 0.355028053887817239260
AIRY_C2 = 0.258819403792806798405
INV_SQRT_PI = 5.64189583547756286948e-01


def airy_ai(b: TileMath, x: SSAValue) -> SSAValue:
    """torch's `airy_ai_forward`: the Maclaurin series c1 f(x) - c2 g(x) on (-2.09,
    2.09), its steps masked as torch's loop stops; beyond 2.09 the asymptotic form
    exp(-zeta) AN/AD(1 / zeta) / (2 sqrt(pi) x^(1/4)) (0 beyond 103.892); below -2.09
    the oscillating form (sin(t) (1 + z^2 AFN/AFD(z^2)) - cos(t) z AGN/AGD(z^2)) /
    (sqrt(pi) |x|^(1/4)), z = 1 / zeta and t = zeta + pi / 4. NaN at +-inf."""
    a = b.abs(x)
    # above: x >= 2.09 (its form); below: x < -2.09; between: the series
    above = b.cmp("oge", x, AIRY_EDGE)
    below = b.cmp("olt", x, -AIRY_EDGE)
    up_x = b.select(above, x, AIRY_EDGE)
    zeta = b.div(b.mul(b.mul(up_x, 2.0), b.sqrt(up_x)), 3.0)
    r = b.div(1.0, zeta)
    ratio = b.div(b.horner(r, AIRY_AN), b.horner(r, AIRY_AD))
    up = b.div(
        b.mul(ratio, INV_SQRT_PI),
        b.mul(b.mul(b.sqrt(b.sqrt(up_x)), 2.0), b.exp(zeta)),
    )
    down_x = b.select(below, x, -AIRY_EDGE)
    root = b.sqrt(b.neg(down_x))
    scaled = b.div(b.mul(b.mul(down_x, -2.0), root), 3.0)
    z = b.div(1.0, scaled)
    zz = b.mul(z, z)
    f_part = b.div(b.mul(zz, b.horner(zz, AIRY_AFN)), b.horner(zz, AIRY_AFD))
    g_part = b.div(b.mul(z, b.horner(zz, AIRY_AGN)), b.horner(zz, AIRY_AGD))
    t = b.add(scaled, 0.25 * pymath.pi)
    down = b.sub(
        b.mul(b.unary(math.SinOp, t), b.add(f_part, 1.0)),
        b.mul(b.unary(math.CosOp, t), g_part),
    )
    down = b.mul(b.div(INV_SQRT_PI, b.sqrt(root)), down)
    mid_x = b.select(b.either(above, below), 0.0, x)
    f: Operand = 1.0
    g: Operand = mid_x
    k = 1.0
    m: Operand = 1.0
    n: Operand = mid_x
    cube = b.mul(b.mul(mid_x, mid_x), mid_x)
    live: SSAValue | None = None  # the series not yet stopped (None: everywhere)
    for _ in range(AIRY_SERIES_STEPS):
        m2 = b.div(b.mul(m, cube), k + 1.0)
        n2 = b.div(b.mul(n, cube), k + 2.0)
        m2 = b.div(m2, k + 2.0)
        f2 = b.add(f, m2)
        n2 = b.div(n2, k + 3.0)
        g2 = b.add(g, n2)
        k += 3.0
        if live is None:
            m, n, f, g = m2, n2, f2, g2
        else:
            m, n = b.select(live, m2, m), b.select(live, n2, n)
            f, g = b.select(live, f2, f), b.select(live, g2, g)
        going_on = b.cmp("ogt", b.abs(b.div(m2, f2)), 2.0**-23)
        live = going_on if live is None else b.both(live, going_on)
    middle = b.sub(b.mul(f, AIRY_C1), b.mul(g, AIRY_C2))
    value = b.select(above, up, b.select(below, down, middle))
    value = b.select(b.cmp("ogt", x, 103.892), 0.0, value)
    return b.select(b.cmp("oeq", a, pymath.inf), pymath.nan, value)


EXPANSIONS: dict[type[Operation], Callable[..., SSAValue]] = {
    math.AsinhOp: asinh,
    math.AcoshOp: acosh,
    math.AtanhOp: atanh,
    special.ErfcOp: erfc,
    special.ErfcxOp: erfcx,
    special.LgammaOp: lgamma,
    special.DigammaOp: digamma,
    special.ZetaOp: zeta,
    special.I0eOp: i0e,
    special.I1eOp: i1e,
    special.NdtriOp: ndtri,
    special.BesselJ0Op: bessel_j0,
    special.BesselJ1Op: bessel_j1,
    special.BesselY0Op: bessel_y0,
    special.BesselY1Op: bessel_y1,
    special.BesselK0Op: bessel_k0,
    special.BesselK1Op: bessel_k1,
    special.BesselK0eOp: bessel_k0e,
    special.BesselK1eOp: bessel_k1e,
    special.AiryAiOp: airy_ai,
}
"""The expansion of each op Mosaic has no lowering for, on the op's operands."""

XLA_EXPANSIONS = {t: f for t, f in EXPANSIONS.items() if t.name.startswith("special.")}
"""The expansions XLA functions use too (XLA's asinh, acosh and atanh are torch's)."""
