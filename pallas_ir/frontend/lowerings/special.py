"""Special functions (`torch.special`, `lgamma`, `polygamma`, `i0`, ...) made of the
`special` ops (see `dialects/special.py`) and `arith`/`math` ops, element-wise like
the ops of `elementwise` (the one-op functions, `erfc`, `lgamma`, ..., are there, in
`_FLOAT_MATH`)."""

from __future__ import annotations

import math

import torch
from xdsl.ir import SSAValue

from pallas_ir.frontend.kernel_builder import Kernel, Value
from pallas_ir.frontend.lowerings.elementwise import SPECIAL_IN_F32, float_op
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def _scaled_bessel(k: Kernel, x: SSAValue, scaled: str) -> SSAValue:
    """I(x) = exp(|x|) * (exp(-|x|) I(x)), as torch computes it."""
    return k.op("arith.mulf", k.op(scaled, x), k.op("math.exp", k.op("math.absf", x)))


_BESSEL = {
    aten.i0.default: "special.i0e",
    aten.special_modified_bessel_i0.default: "special.i0e",
    aten.special_i1.default: "special.i1e",
    aten.special_modified_bessel_i1.default: "special.i1e",
}


@lowers(*_BESSEL)
def bessel_i(c: Lowering, args) -> Value:
    scaled = _BESSEL[c.target]
    return float_op(
        c, args[:1], lambda k, x: _scaled_bessel(k, x, scaled), SPECIAL_IN_F32
    )


@lowers(aten.special_spherical_bessel_j0.default)
def spherical_bessel_j0(c: Lowering, args) -> Value:
    """sin(x) / x, its Taylor polynomial below 1/2 and 0 at +-inf (torch's)."""

    def body(k: Kernel, x: SSAValue) -> SSAValue:
        x2 = k.op("arith.mulf", x, x)
        series = k.constant(1 / 6227020800)
        for c_ in (-1 / 39916800, 1 / 362880, -1 / 5040, 1 / 120, -1 / 6, 1.0):
            series = k.op("arith.addf", k.op("arith.mulf", series, x2), k.constant(c_))
        a = k.op("math.absf", x)
        ratio = k.op("arith.divf", k.op("math.sin", x), x)
        value = k.op("arith.select", k.cmp("olt", a, k.constant(0.5)), series, ratio)
        infinite = k.cmp("oeq", a, k.constant(math.inf))
        return k.op("arith.select", infinite, k.constant(0.0), value)

    return float_op(c, args[:1], body)


@lowers(
    aten.special_zeta.default,
    aten.special_zeta.self_scalar,
    aten.special_zeta.other_scalar,
)
def zeta(c: Lowering, args) -> Value:
    """The Hurwitz zeta function zeta(x, q)."""
    return float_op(
        c, args[:2], lambda k, x, q: k.op("special.zeta", x, q), SPECIAL_IN_F32
    )


@lowers(aten.igamma.default, aten.igammac.default, runs_on=RunsOn.XLA)
def igamma(c: Lowering, args) -> Value:
    """The regularized incomplete gamma functions P(a, x) and Q(a, x). They run on XLA
    (the tile policy's `NOT_IN_MOSAIC`), whose functions are NaN at a = inf: there
    torch's (SciPy's) 0 for P and 1 for Q (NaN at x = inf too) are selected."""
    lower = c.target is aten.igamma.default
    name = "special.igamma" if lower else "special.igammac"

    def body(k: Kernel, a: SSAValue, x: SSAValue) -> SSAValue:
        inf = k.constant(math.inf)
        at_inf = k.op(
            "arith.select",
            k.cmp("oeq", x, inf),
            k.constant(math.nan),
            k.constant(0.0 if lower else 1.0),
        )
        return k.op("arith.select", k.cmp("oeq", a, inf), at_inf, k.op(name, a, x))

    return float_op(c, args[:2], body, SPECIAL_IN_F32)


def _trigamma(k: Kernel, x: SSAValue) -> SSAValue:
    """torch's `trigamma(float)`: below 1/2 the reflection pi^2 / sin^2(pi x) -
    trigamma(1 - x); six steps of the recurrence, then the asymptotic series."""

    def c(v: float) -> SSAValue:
        return k.constant(v)

    def add(a, b):
        return k.op("arith.addf", a, b)

    def mul(a, b):
        return k.op("arith.mulf", a, b)

    def div(a, b):
        return k.op("arith.divf", a, b)

    reflect = k.cmp("olt", x, c(0.5))
    s = k.op("math.sin", mul(x, c(math.pi)))
    total = k.op(
        "arith.select",
        reflect,
        k.op("arith.negf", div(c(math.pi * math.pi), mul(s, s))),
        c(0.0),
    )
    y = k.op("arith.select", reflect, k.op("arith.subf", c(1.0), x), x)
    for _ in range(6):
        total = add(total, div(c(1.0), mul(y, y)))
        y = add(y, c(1.0))
    ixx = div(c(1.0), mul(y, y))
    inner = k.op("arith.subf", c(1 / 30), mul(ixx, c(1 / 42)))
    inner = k.op("arith.subf", c(1 / 6), mul(ixx, inner))
    tail = add(add(c(1.0), div(c(1.0), mul(y, c(2.0)))), mul(ixx, inner))
    total = add(total, div(tail, y))
    return k.op("arith.select", reflect, k.op("arith.negf", total), total)


@lowers(aten.polygamma.default, aten.special_polygamma.default)
def polygamma(c: Lowering, args) -> Value:
    """The n-th derivative of digamma, as torch: digamma for n = 0, trigamma for 1,
    (-1)^(n+1) n! zeta(n + 1, x) beyond."""
    n, x = args[0], args[1]
    if not isinstance(n, int) or n < 0:
        raise c.unsupported(f"order {n!r}: a whole number >= 0 is compiled")

    def body(k: Kernel, v: SSAValue) -> SSAValue:
        if n == 0:
            return k.op("special.digamma", v)
        if n == 1:
            return _trigamma(k, v)
        factor = float(math.factorial(n)) * (1.0 if n % 2 else -1.0)
        z = k.op("special.zeta", k.constant(float(n + 1)), v)
        return k.op("arith.mulf", z, k.constant(factor))

    return float_op(c, [x], body, SPECIAL_IN_F32)


_POLYNOMIALS = (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
)
_POLYNOMIAL_KIND = {
    getattr(getattr(aten, f"special_{name}"), overload): name.replace("_polynomial", "")
    for name in _POLYNOMIALS
    for overload in ("default", "x_scalar", "n_scalar")
}
"""Each overload of an orthogonal polynomial (x and n tensors, or one a number) and
its `kind` for `lib_orthogonal_polynomial` ("chebyshev_t", ..., "legendre_p")."""


@lowers(*_POLYNOMIAL_KIND, runs_on=RunsOn.XLA)
def orthogonal_polynomial(c: Lowering, args) -> Value:
    """The polynomial of degree n (per element, truncated to a whole number, as torch)
    at x: torch's recurrence runs n - 1 steps, a loop no Pallas kernel body has yet, so
    it is the library function `orthogonal_polynomial` on XLA, on x and n broadcast to
    the result's shape as float32."""
    x, n = args[0], args[1]
    if c.element == "f64":
        raise c.unsupported("not in float64: the polynomials are computed in float32")
    broadcast = [float_op(c, [v], lambda k, a: a) for v in (x, n)]
    (value,) = library_call(
        c,
        LibraryFn.ORTHOGONAL_POLYNOMIAL,
        broadcast,
        [(c.shape, "f32")],
        kind=_POLYNOMIAL_KIND[c.target],
    )
    return value
