"""The Bessel functions of the second kind (Y0, Y1, K0, K1 and the scaled K0, K1), the
Airy function Ai and the orthogonal polynomials of `torch.special` against eager
PyTorch, on values that include 0, -0, negative ones, +-inf, NaN and large ones, and
degrees that are negative, fractional, NaN, infinite and large (up to 50 where the
trigonometric form of a Chebyshev polynomial applies: its cos(n acos(x)) is as
ill-conditioned as n, and XLA's acos is not torch's to the ulp). The Bessel and Airy
functions are `special` ops expanded in the Pallas kernels; the polynomials (torch's
recurrence of n - 1 steps) the library function `orthogonal_polynomial` on XLA. The
ta reference interpreter agrees with eager, and every module AOT-compiles for v5e (one
batch)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from support.programs import aot_failures, compile_programs, flat, library_call_reference

import pallas_ir
from pallas_ir.reference.ta import run_forward

S = torch.special
NAN, INF = math.nan, math.inf
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-3, 1e-30, 5.0, 4.999, 5.001]
EDGES += [1.9999, 2.0001, 2.09, -2.09, -2.0899, -2.1, 8.0, 8.33, 30.0, -30.0, 90.0]
EDGES += [103.0, 104.0, 1e4, 1e30, INF, -INF, NAN]
X_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.3, 0.99, -0.999, 1 - 2**-24, 1e-10, 2.0]
X_EDGES += [-2.0, 3.5, -7.0, 100.0, INF, -INF, NAN, 0.75, 0.25, 1e-4]
N_EDGES = [-3.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
N_EDGES += [20.0, 30.0, 50.0, NAN, INF, -INF, 1e30]


def _values(lo: float, hi: float, seed: int, edges, shape=(8, 128)) -> torch.Tensor:
    """Uniform in [lo, hi), the first elements `edges`."""
    n = math.prod(shape)
    t = torch.rand(n, generator=torch.Generator().manual_seed(seed)) * (hi - lo) + lo
    t[: len(edges)] = torch.tensor(edges, dtype=torch.float32)
    return t.reshape(shape)


def _degrees(seed: int, shape=(8, 128)) -> torch.Tensor:
    """Whole degrees in [-2, 12)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-2, 12, shape, generator=g).float()


def _pairs() -> tuple[torch.Tensor, torch.Tensor]:
    """x and n of shape (8, 128): every pair of X_EDGES and N_EDGES first, then random
    x in [-1.5, 1.5) (the oscillating range and beyond) and degrees in [-2, 12)."""
    x, n = _values(-1.5, 1.5, 3, []).flatten(), _degrees(4).flatten()
    pairs = torch.tensor([(a, b) for a in X_EDGES for b in N_EDGES])
    x[: len(pairs)], n[: len(pairs)] = pairs[:, 0], pairs[:, 1]
    return x.reshape(8, 128), n.reshape(8, 128)


def _bessel(x):
    return (
        S.bessel_y0(x),
        S.bessel_y1(x),
        S.modified_bessel_k0(x),
        S.modified_bessel_k1(x),
        S.scaled_modified_bessel_k0(x),
        S.scaled_modified_bessel_k1(x),
        S.airy_ai(x),
    )


POLYNOMIALS = [
    S.chebyshev_polynomial_t,
    S.chebyshev_polynomial_u,
    S.chebyshev_polynomial_v,
    S.chebyshev_polynomial_w,
    S.shifted_chebyshev_polynomial_t,
    S.shifted_chebyshev_polynomial_u,
    S.shifted_chebyshev_polynomial_v,
    S.shifted_chebyshev_polynomial_w,
    S.hermite_polynomial_h,
    S.hermite_polynomial_he,
    S.laguerre_polynomial_l,
    S.legendre_polynomial_p,
]


def _polynomials(x, n):
    """Each polynomial, then n a number (x_scalar: x one) and broadcast operands."""
    return (
        *(f(x, n) for f in POLYNOMIALS),
        S.chebyshev_polynomial_t(x, 9),
        S.legendre_polynomial_p(x, 4),
        S.hermite_polynomial_h(0.5, n),
        S.hermite_polynomial_he(x, 129),  # NaN beyond 128, as torch
        S.laguerre_polynomial_l(x[:1], n[:, :1]),
    )


PROGRAMS = {
    "bessel_y_k_airy": (_bessel, lambda: [_values(-40, 40, 0, EDGES)]),
    "polynomials": (_polynomials, lambda: list(_pairs())),
}

OPINFO = (1.3e-6, 1e-5)
TOLERANCE = {"polynomials": (4e-6, 1e-5)}
"""The polynomials' recurrences grow their rounding with the degree (to 1.9e-6 of eager
at degree 9, measured where XLA:CPU compiles without LLVM's optimisations, as the test
suite does); the special functions' expansions keep OpInfo's float32 tolerance."""


@pytest.fixture(scope="module")
def compiled() -> dict[str, tuple]:
    return compile_programs(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    rtol, atol = TOLERANCE.get(name, OPINFO)
    for g, w in zip(flat(k(*inputs)), flat(fn(*inputs)), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)


def test_bessel_and_airy_are_expanded_in_a_pallas_kernel(compiled) -> None:
    k = compiled["bessel_y_k_airy"][0]
    for name in ("bessel_y0", "bessel_k1e", "airy_ai"):
        assert f"special.{name}" in k.ir["ta"]
    assert "special." not in k.ir["pallas-legalize-mosaic"]
    assert "pl.pallas_call(" in k.source and "_xla(" not in k.source


def test_polynomials_are_one_library_call_each(compiled) -> None:
    k = compiled["polynomials"][0]
    assert k.source.count("lib_orthogonal_polynomial(") == len(POLYNOMIALS) + 6
    assert "lax.while_loop(" in k.source


def test_ta_reference_matches_eager(compiled) -> None:
    """The ta reference's meanings: scipy's functions (in float64) for the `special`
    ops, the library function on numpy for the polynomials."""
    k, fn, inputs = compiled["bessel_y_k_airy"]
    got = run_forward(pallas_ir.parse(k.ir["ta"]), *[t.numpy() for t in inputs])
    for g, w in zip(got, fn(*inputs), strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=2e-5, atol=1e-5, equal_nan=True)
    k, fn, inputs = compiled["polynomials"]
    got = library_call_reference(k, inputs)
    for g, w in zip(got, flat(fn(*inputs)), strict=True):
        torch.testing.assert_close(
            torch.from_numpy(np.asarray(g)),
            w,
            rtol=TOLERANCE["polynomials"][0],
            atol=TOLERANCE["polynomials"][1],
            equal_nan=True,
        )


def test_aot_compile_for_v5e(compiled) -> None:
    assert aot_failures(compiled) == {}
