"""The element-wise ops of issue 14 against eager PyTorch: tensor-bounded clamps,
copysign, fmax/fmin, hypot, log2/log10/exp2, ldexp, nextafter, round(decimals), shifts,
gcd/lcm, integer powers, and the special functions (erfc, erfinv, lgamma, digamma,
polygamma, zeta, Bessel, ndtri, ...), on values that include 0, -0, +-inf, NaN and
large ones, in float32 (and bfloat16 for a few); every emitted module AOT-compiles for
v5e, and the special functions Mosaic lacks are expanded in the Pallas kernels."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.reference.ta import run_forward
from pallas_ir.tpu_check import aot_compile_many

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-3, -1e-3, 10.0, -10.0]
EDGES += [100.0, -100.0, 1e30, -1e30, math.inf, -math.inf, math.nan, 3.0, 0.99, 50.0]


def _values(lo: float, hi: float, seed: int, edges=EDGES, shape=(8, 128)) -> torch.Tensor:
    """Uniform in [lo, hi), the first elements `edges`."""
    n = math.prod(shape)
    t = torch.rand(n, generator=torch.Generator().manual_seed(seed)) * (hi - lo) + lo
    t[: len(edges)] = torch.tensor(edges, dtype=torch.float32)
    return t.reshape(shape)


def _ints(lo: int, hi: int, seed: int, dtype=torch.int64) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, (8, 128), generator=g, dtype=dtype)


X, Y, Z = _values(-4, 4, 0), _values(-4, 4, 1), _values(-4, 4, 2)
UNIT = _values(-1, 1, 3, edges=EDGES + [1.0, -1.0, 0.9999, -0.99999, 1.5])
PROBABILITY = _values(0, 1, 4, edges=EDGES + [1e-30, 1e-10, 1 - 1e-7, 0.5])
A, B = _ints(-50, 50, 6), _ints(-40, 40, 7)
SHIFT = _ints(-3, 40, 8)

# name: (function, inputs, (rtol, atol)); OpInfo's float32 tolerances by default.
OPINFO = (1.3e-6, 1e-5)
CASES = {
    "clamp_tensor": (lambda x, lo, hi: torch.clamp(x, lo, hi), [X, Y, Z]),
    "clamp_min_max_tensor": (
        lambda x, b: (torch.clamp_min(x, b), torch.clamp_max(x, b), x.clamp(max=b)),
        [X, Y],
    ),
    "clamp_int_tensor": (torch.clamp, [A, B, B + 20]),
    "copysign_fmax_fmin": (
        lambda x, y: (
            torch.copysign(x, y),
            torch.copysign(x, -0.0),
            x.fmax(y),
            x.fmin(y),
        ),
        [X, Y],
    ),
    "hypot_signbit": (lambda x, y: (torch.hypot(x, y), torch.signbit(x)), [X, Y]),
    "log2_log10_exp2": (
        lambda x, y: (
            torch.log2(x),
            torch.log10(x),
            torch.exp2(x * 20),
            torch.logaddexp2(x, y),
        ),
        [X, Y],
    ),
    "ldexp": (
        lambda x, n, y: (torch.ldexp(x, n), torch.ldexp(x, y)),
        [X, SHIFT * 8 - 150, Y],
    ),
    "nextafter": (torch.nextafter, [X, Y]),
    "round_decimals": (
        lambda x: (torch.round(x, decimals=2), torch.round(x * 100, decimals=-1)),
        [X],
    ),
    "inverse_hyperbolic": (
        lambda x, u: (
            torch.asinh(x * 1e3),
            torch.acosh(x.abs() + 1),
            torch.acosh(x),
            torch.atanh(u),
        ),
        [X, UNIT],
    ),
    "shifts": (
        lambda a, n: (
            torch.bitwise_left_shift(a.int(), n.int()),
            a.int() >> n.int(),
            torch.bitwise_right_shift(a, n),
            torch.bitwise_left_shift(a, n.clamp(max=20)),
        ),
        [A, SHIFT],
    ),
    "gcd_lcm_integer_powers": (
        lambda a, b: (torch.gcd(a, b), torch.lcm(a, b), torch.square(a), a**3),
        [A, B],
    ),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3, training=False), [X]),
    "erfc_erfcx_erfinv": (
        lambda x, u: (torch.erfc(x), torch.special.erfcx(x), torch.erfinv(u)),
        [X, UNIT],
    ),
    "ndtri_log_ndtr": (
        lambda p, x: (torch.special.ndtri(p), torch.special.log_ndtr(x)),
        [PROBABILITY, X],
    ),
    "lgamma_digamma": (
        lambda x: (torch.lgamma(x), torch.special.gammaln(x * 10), torch.digamma(x)),
        [X],
    ),
    "polygamma": (
        lambda x: (
            torch.polygamma(1, x),
            torch.polygamma(2, x),
            torch.special.polygamma(3, x),
        ),
        [X],
    ),
    "zeta_multigammaln": (
        lambda s, q, y: (torch.special.zeta(s, q), torch.special.multigammaln(y, 3)),
        [
            _values(1, 8, 9, edges=[1.0, 2.0, 0.5, math.inf, math.nan, 3.0, 2.0, 4.0]),
            _values(0, 10, 10, edges=[1.0, 0.0, 1.0, 1.0, 1.0, -2.0, -1.5, 1e-3]),
            _values(1.5, 20, 11, edges=[]),
        ],
    ),
    "bessel": (
        lambda x: (
            torch.i0(x),
            torch.special.i0e(x),
            torch.special.i1(x),
            torch.special.i1e(x * 100),
            torch.special.modified_bessel_i0(x),
            torch.special.spherical_bessel_j0(x * 10),
            torch.special.bessel_j0(x * 5),
            torch.special.bessel_j1(x * 5),
        ),
        [X],
    ),
    # On XLA (a series of up to 2000 terms, no Pallas kernel), for a <= 20.
    "igamma_on_xla": (
        lambda a, x: (torch.igamma(a, x), torch.igammac(a, x)),
        [
            _values(0, 20, 5, edges=[0.0, 0.0, math.inf, math.inf, 1.0, 5.0, math.nan]),
            _values(0, 40, 12, edges=[0.0, 1.0, 1.0, math.inf, math.inf, math.nan, 2.0]),
        ],
    ),
    # Already lowered through decompositions; here with the edge values.
    "decomposed_family": (
        lambda x, y, z: (
            torch.logaddexp(x, y),
            torch.special.sinc(x),
            torch.special.entr(x),
            torch.logit(x.abs() / 5, 1e-3),
            torch.frac(x),
            torch.heaviside(x, y),
            torch.lerp(x, y, z),
            torch.addcdiv(x, y, z, value=0.5),
            torch.nan_to_num(x),
            torch.isfinite(x) & torch.isposinf(y) | torch.isneginf(z),
            torch.deg2rad(x) + torch.rad2deg(y),
            torch.xlogy(x, y.abs()),
        ),
        [X, Y, Z],
    ),
    "activations": (
        lambda x: (
            F.celu(x, 0.7),
            F.selu(x),
            F.softshrink(x, 0.3),
            F.hardshrink(x),
            F.tanhshrink(x),
            F.threshold(x, 0.1, 20.0),
            F.logsigmoid(x),
            F.glu(x, -1),
            F.softsign(x),
            F.mish(x),
        ),
        [X],
    ),
}

BF16_CASES = {
    "bf16_special": (
        lambda x, y: (
            torch.erfc(x),
            torch.lgamma(x),
            torch.hypot(x, y),
            torch.copysign(x, y),
        ),
        [X, Y],
    ),
    "bf16_clamp_tensor": (lambda x, lo, hi: torch.clamp(x, lo, hi), [X, Y, Z]),
}


def _outputs(o) -> tuple[torch.Tensor, ...]:
    return o if isinstance(o, tuple) else (o,)


@pytest.fixture(scope="module")
def compiled() -> dict[str, pallas_ir.compiler.CompiledFunction]:
    import pallas_ir.compiler

    out = {}
    for name, (fn, inputs, *_) in CASES.items():
        out[name] = pallas_ir.compile(fn, inputs)
    for name, (fn, inputs) in BF16_CASES.items():
        out[name] = pallas_ir.compile(fn, [t.bfloat16() for t in inputs])
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_eager(name: str, compiled) -> None:
    fn, inputs, *tolerance = CASES[name]
    rtol, atol = tolerance[0] if tolerance else OPINFO
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _outputs(fn(*inputs))
    got = _outputs(compiled[name](*inputs))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(BF16_CASES))
def test_bfloat16_matches_eager_in_float32(name: str, compiled) -> None:
    """bfloat16 is computed in f32 and rounded where stored: eager on the same values in
    float32, rounded, is the reference (as in test_frontend)."""
    fn, inputs = BF16_CASES[name]
    rounded = [t.bfloat16() for t in inputs]
    got = _outputs(compiled[name](*rounded))
    want = _outputs(fn(*[t.float() for t in rounded]))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == torch.bfloat16
        torch.testing.assert_close(
            g, w.bfloat16(), rtol=1.6e-2, atol=1e-5, equal_nan=True
        )


def test_pallas_kernels_and_aot_compile_for_v5e(compiled) -> None:
    """Each op is a Pallas kernel (igamma an XLA function in the same program), and
    every module, the special functions' expansions with it, compiles for v5e."""
    for name, k in compiled.items():
        assert "pl.pallas_call(" in k.source or name == "igamma_on_xla", name
        on_xla = "_xla(" in k.source
        assert on_xla == (name == "igamma_on_xla"), name
    items = [(k.source, arg_specs(k.module)) for k in compiled.values()]
    results = aot_compile_many(items, chip="v5e")
    assert all(r.ok for r in results), {
        n: r.message for n, r in zip(compiled, results) if not r.ok
    }


def test_special_functions_are_expanded_in_kernels(compiled) -> None:
    """The ta module keeps one `special` op per function; the Pallas kernels have the
    ones Mosaic lacks expanded (erf_inv and nextafter Mosaic lowers)."""
    k = compiled["lgamma_digamma"]
    assert "special.lgamma" in k.ir["ta"] and "special.digamma" in k.ir["ta"]
    assert "special." not in k.ir["pallas-legalize-mosaic"]
    assert "jax.lax.lgamma" not in k.source
    k = compiled["erfc_erfcx_erfinv"]
    assert "jax.lax.erf_inv(" in k.source and "jax.lax.erfc(" not in k.source
    assert "jax.lax.nextafter(" in compiled["nextafter"].source


def test_the_reference_interpreter_computes_special_functions_as_eager() -> None:
    """The ta reference's meanings of the `special` ops (scipy's, in float64) agree
    with eager on the frontend's module."""
    x = _values(-4, 4, 13, shape=(256,))
    u = _values(-1, 1, 14, shape=(256,))

    def fn(x, u):
        return (
            torch.erfc(x),
            torch.special.erfcx(x),
            torch.erfinv(u),
            torch.lgamma(x),
            torch.digamma(x),
            torch.special.i0e(x),
            torch.special.i1e(x),
            torch.special.ndtri(u.abs()),
            torch.special.zeta(x.abs().clamp(max=50) + 1, x.abs().clamp(max=50) + 0.5),
            torch.nextafter(x, u),
        )

    k = pallas_ir.compile(fn, [x, u])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run_forward(pallas_ir.parse(k.ir["ta"]), x.numpy(), u.numpy())
        want = fn(x, u)
    # (after the results, the flags of zeta's run-time check)
    for g, w in zip(got[: len(want)], want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=2e-6, atol=1e-6, equal_nan=True)


def test_float_power_is_float64() -> None:
    """torch computes float_power in float64: so do the kernels (on XLA; TPU kernels
    have no 64-bit types), nothing narrowed."""
    k = pallas_ir.compile(torch.float_power, [X, Y])
    got, want = k(X, Y), torch.float_power(X, Y)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, want, rtol=1e-12, atol=0, equal_nan=True)


def test_an_int64_left_shift_outside_int32_raises() -> None:
    k = pallas_ir.compile(torch.bitwise_left_shift, [A, SHIFT.clamp(0, 20)])
    torch.testing.assert_close(
        k(A, SHIFT.clamp(0, 20)), torch.bitwise_left_shift(A, SHIFT.clamp(0, 20))
    )
    with pytest.raises(pallas_ir.UnsupportedError, match=r"left_shift.*int32"):
        k(A, SHIFT.clamp(0, 20) + 20)


def test_igamma_beyond_where_xla_is_accurate_raises(compiled) -> None:
    a, x = CASES["igamma_on_xla"][1]
    a = a.clone()
    a[3, 7] = 50.0
    with pytest.raises(pallas_ir.UnsupportedError, match=r"igamma.*a = 50"):
        compiled["igamma_on_xla"](a, x)


def test_what_is_refused() -> None:
    with pytest.raises(pallas_ir.UnsupportedError, match=r"rrelu.*training"):
        pallas_ir.compile(lambda x: F.rrelu(x, training=True), [X])
    with pytest.raises(pallas_ir.UnsupportedError, match=r"integer power"):
        pallas_ir.compile(lambda a: a**-1, [A])
