"""Linear algebra, FFTs and complex tensors, reducing scatters and embedding_bag:
library functions on XLA (`pallas_ir.library.linalg`, `.fft`, `.indexing`), complex
values as pairs of reals (element-wise ones in Pallas kernels), and accumulating
writes. Each program against eager PyTorch; a few against the ta reference; all
AOT-compiled for v5e."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from support.programs import aot_failures, ta_reference

import pallas_ir
from pallas_ir.frontend import UnsupportedError

torch.manual_seed(0)
A = torch.randn(3, 4, 4)
B = torch.randn(3, 4, 2)
SPD = A @ A.mT + torch.eye(4)
TALL = torch.randn(2, 6, 4)
WIDE = torch.randn(2, 3, 5)
X = torch.randn(8, 6)
Z = torch.randn(4, 6, dtype=torch.complex64)
FREQS = torch.polar(torch.ones(5, 4), torch.randn(5, 4)).reshape(1, 5, 1, 4)
TABLE = torch.randn(10, 3)
BAG_INDICES = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
BAG_OFFSETS = torch.tensor([0, 2, 2, 5])


def _svd_reconstruction(a):
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return (u * s[..., None, :]) @ vh, s


def _eigh_check(a):
    w, v = torch.linalg.eigh(a, UPLO="U")
    return w, (a.triu() + a.triu(1).mT) @ v - v * w[..., None, :]


def _rope(x, freqs):
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * freqs).flatten(3).type_as(x)


def _scatter_reduce(reduce, include_self, dim=0):
    return lambda a, i, s: a.scatter_reduce(dim, i, s, reduce, include_self=include_self)


def _index_reduce(reduce, include_self):
    return lambda a, i, s: a.index_reduce(0, i, s, reduce, include_self=include_self)


def _bag(mode, **kwargs):
    return lambda w, i, o: F.embedding_bag(i, w, o, mode=mode, **kwargs)


PROGRAMS = {
    # linalg
    "solve": (
        lambda a, b: (
            torch.linalg.solve(a, b),
            torch.linalg.solve(a, b[..., 0]),
            torch.linalg.solve(a[0], b),
            torch.linalg.solve(a, b.mT, left=False),
        ),
        [A, B],
    ),
    "inv_and_inv_ex": (lambda a: (torch.linalg.inv(a), *torch.linalg.inv_ex(a)), [A]),
    "cholesky_upper": (lambda a: torch.linalg.cholesky(a, upper=True), [SPD]),
    "cholesky_ex_info": (
        lambda a: torch.linalg.cholesky_ex(a).info,
        [SPD - 4 * torch.eye(4)],
    ),
    "qr_svd_eigh": (
        lambda a, s: (
            *torch.linalg.qr(a),
            *torch.linalg.qr(a, mode="complete"),
            *_svd_reconstruction(a.mT),
            torch.linalg.matrix_norm(a, "nuc"),
            *_eigh_check(s),
        ),
        [TALL, SPD],
    ),
    "lstsq": (
        lambda a, b: (
            *torch.linalg.lstsq(a, b, driver="gelsd"),
            torch.linalg.lstsq(a.mT, b[..., :4, :]).solution,
        ),
        [TALL, TALL],
    ),
    "det_slogdet_logdet": (
        lambda a: (torch.linalg.det(a), *torch.linalg.slogdet(a), torch.logdet(a @ a.mT)),
        [A],
    ),
    "pinv": (
        lambda a, s: (
            torch.linalg.pinv(a),
            torch.linalg.pinv(s, hermitian=True),
            # Python-float tolerances: eager makes float64 0-d tensors of them
            torch.pinverse(a),
            torch.linalg.pinv(a, rtol=0.3),
        ),
        [TALL, SPD],
    ),
    "matrix_power_and_exp": (
        lambda a: (torch.linalg.matrix_power(a, -2), torch.linalg.matrix_exp(a * 0.5)),
        [A],
    ),
    "triangular_solves": (
        lambda a, b: (
            torch.linalg.solve_triangular(
                a, b.mT, upper=False, left=False, unitriangular=True
            ),
            *torch.triangular_solve(b, a + 4 * torch.eye(4), transpose=True),
        ),
        [A, B],
    ),
    "lu": (
        lambda a, b, t: (
            *torch.linalg.lu_factor(a),
            torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True),
            *torch.linalg.lu(t),
            *torch.lu_unpack(*torch.linalg.lu_factor(t)),
        ),
        [A, B, TALL],
    ),
    "tensorinv_householder_cholesky_solve": (
        lambda t, h, tau, b, f: (
            torch.linalg.tensorinv(t, ind=2),
            torch.linalg.householder_product(h, tau),
            torch.cholesky_solve(b, f, upper=True),
            torch.cholesky_inverse(f, upper=True),
        ),
        [
            torch.randn(4, 6, 8, 3),
            torch.randn(5, 3),
            torch.randn(3),
            B,
            torch.linalg.cholesky(SPD, upper=True),
        ],
    ),
    # fft and complex
    "ffts": (
        lambda x: (
            torch.view_as_real(torch.fft.rfft(x, norm="ortho")),
            torch.fft.irfft(torch.fft.rfft(x), n=6),
            torch.fft.fft(x, dim=0),
            torch.fft.ifft(x),
            torch.fft.hfft(x),
            torch.fft.ihfft(x),
            torch.fft.fft2(x, norm="forward"),
            torch.fft.fftn(x, s=(4, 4)),
            torch.fft.irfftn(torch.fft.rfftn(x), s=x.shape),
            torch.fft.fftshift(torch.fft.fft(x)),
            torch.fft.ifftshift(x, dim=1),
        ),
        [X],
    ),
    "complex_input_fft": (
        lambda z, zt: (torch.fft.fft(z), torch.fft.irfft(z), zt * 2),
        [Z, Z.t()],
    ),
    "complex_arithmetic_and_views": (
        lambda z, x: (
            (z * x - z / (x + 1)).conj() * 2j,
            z.abs(),
            z.angle(),
            z.real,
            z.t(),
            z[1:3, ::2],
            torch.cat([z, z.exp()], 1),
            z.sum(0),
            z.mean(),
        ),
        [Z, X[:4]],
    ),
    "rope": (
        lambda x, freqs, c, s: (
            _rope(x, freqs),
            _rope(x, torch.complex(c, s).reshape(freqs.shape)),
        ),
        [torch.randn(2, 5, 3, 8), FREQS, torch.randn(5, 4), torch.randn(5, 4)],
    ),
    # reducing scatters
    "scatter_reduce": (
        lambda a, i, s, ints, j, t: (
            _scatter_reduce("mean", True, dim=1)(ints, j, t),
            _scatter_reduce("sum", True)(a, i, s),
            _scatter_reduce("prod", False)(a, i, s),
            _scatter_reduce("mean", False)(a, i, s),
            _scatter_reduce("amax", True)(a, i, s),
            _scatter_reduce("amin", False)(a, i, s),
            a.scatter(0, i, s, reduce="add"),
            a.scatter(0, i, 2.0, reduce="multiply"),
        ),
        [
            torch.randn(5, 4),
            torch.randint(0, 5, (6, 4)),
            torch.randn(6, 4),
            torch.randint(-9, 9, (4, 5)),
            torch.randint(0, 5, (4, 6)),
            torch.randint(-9, 9, (4, 6)),
        ],
    ),
    "index_reduce": (
        lambda a, i, s: (
            _index_reduce("prod", True)(a, i, s),
            _index_reduce("mean", False)(a, i, s),
            _index_reduce("amax", False)(a, i, s),
        ),
        [torch.randn(5, 4), torch.tensor([0, 2, 0, 4, 2, 2]), torch.randn(6, 4)],
    ),
    # embedding_bag
    "embedding_bag": (
        lambda w, i, o, p, last, rows: (
            F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
            F.embedding_bag(rows, w, mode="mean"),
            F.embedding_bag(i, w, o, mode="max"),
            F.embedding_bag(
                i, w, last, mode="mean", padding_idx=4, include_last_offset=True
            ),
        ),
        [
            TABLE,
            BAG_INDICES,
            BAG_OFFSETS,
            torch.randn(8),
            torch.tensor([0, 2, 2, 5, 8]),
            torch.randint(0, 10, (4, 3)),
        ],
    ),
    "embedding_bag_results_for_backward": (
        lambda w, i, o: (
            *torch.ops.aten._embedding_bag(w, i, o, False, 2, False, None, False, 4),
            *torch.ops.aten._embedding_bag(w, i, o, False, 1),
        ),
        [TABLE, BAG_INDICES, BAG_OFFSETS],
    ),
}

FACTORS = {
    "svd": (torch.linalg.svd, [TALL]),
    "eigh": (torch.linalg.eigh, [SPD]),
}
"""Programs whose results are unique only up to sign: checked as valid factors."""


@pytest.fixture(scope="module")
def compiled():
    return {
        name: (pallas_ir.compile(fn, inputs), fn, inputs)
        for name, (fn, inputs) in {**PROGRAMS, **FACTORS}.items()
    }


def _flat(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got, want = _flat(k(*inputs)), _flat(fn(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, atol=2e-4, rtol=2e-4, equal_nan=True)


def test_svd_and_eigh_give_valid_factors(compiled) -> None:
    """Singular vectors and eigenvectors are unique up to sign (XLA's need not be
    LAPACK's): U and V are orthonormal and factor A, with eager's values."""
    u, s, vh = compiled["svd"][0](TALL)
    torch.testing.assert_close(s, torch.linalg.svdvals(TALL))
    eye = torch.eye(6).expand(2, 6, 6)
    torch.testing.assert_close(u.mT @ u, eye, atol=1e-5, rtol=0)
    torch.testing.assert_close(
        (u[..., :4] * s[..., None, :]) @ vh, TALL, atol=1e-5, rtol=0
    )
    w, v = compiled["eigh"][0](SPD)
    torch.testing.assert_close(w, torch.linalg.eigvalsh(SPD))
    torch.testing.assert_close(SPD @ v, v * w[..., None, :], atol=1e-4, rtol=0)


def test_singular_and_indefinite_inputs_raise_as_eager(compiled) -> None:
    singular = A.clone()
    singular[1, :, 2] = 0
    for name, bad in [
        ("inv_and_inv_ex", [singular]),
        ("solve", [singular, B]),
        ("cholesky_upper", [SPD - 9 * torch.eye(4)]),
    ]:
        k, fn, _ = compiled[name]
        with pytest.raises(torch.linalg.LinAlgError):
            fn(*bad)
        with pytest.raises(torch.linalg.LinAlgError):
            k(*bad)


def test_lstsq_residuals_of_rank_deficient_input_are_refused() -> None:
    """Eager's residuals are empty for a rank-deficient A: the compiled call raises
    rather than give a shape eager does not."""
    k = pallas_ir.compile(
        lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd").residuals, [TALL, TALL]
    )
    deficient = TALL.clone()
    deficient[..., 3] = deficient[..., 2]
    assert torch.linalg.lstsq(deficient, TALL, driver="gelsd").residuals.numel() == 0
    with pytest.raises(UnsupportedError, match="rank-deficient"):
        k(deficient, TALL)


def test_backward_through_inv_rope_and_embedding_bag() -> None:
    """Training: AOTAutograd orders inv's error check with an effect token; RoPE's
    backward multiplies by the conjugate frequencies (a complex input with its
    conjugate bit set); embedding_bag's backward reads its forward's other results."""

    def loss(x, a, freqs, w, i, o, p):
        mean = F.embedding_bag(i, w, o, mode="mean", padding_idx=4)
        largest = F.embedding_bag(i, w, o, mode="max")
        weighted = F.embedding_bag(
            i, w, o, mode="sum", per_sample_weights=p, padding_idx=2
        )
        bags = (mean**2).sum() + (largest * mean).sum() + weighted.sum()
        return (_rope(x, freqs) ** 2).sum() + torch.linalg.inv(a).sum() + bags

    x = torch.randn(2, 5, 3, 8, requires_grad=True)
    a = A.clone().requires_grad_()
    w = TABLE.clone().requires_grad_()
    inputs = [x, a, FREQS, w, BAG_INDICES, BAG_OFFSETS, torch.randn(8)]
    k = pallas_ir.compile(loss, inputs)
    got = torch.autograd.grad(k(*inputs), [x, a, w])
    want = torch.autograd.grad(loss(*inputs), [x, a, w])
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4)


def test_complex_elementwise_runs_in_pallas(compiled) -> None:
    """The RoPE product is one Pallas kernel on pairs of reals, no XLA part."""
    k = compiled["rope"][0]
    assert "pl.pallas_call" in k.source and "library" not in k.source


def _numpy(t: torch.Tensor) -> np.ndarray:
    return (torch.view_as_real(t.resolve_conj()) if t.is_complex() else t).numpy()


@pytest.mark.parametrize(
    "name",
    ["cholesky_ex_info", "ffts", "scatter_reduce", "rope"],
)
def test_ta_reference_matches_eager(name: str, compiled) -> None:
    """The ta module's meaning (library calls and accumulating writes run by the
    reference interpreter, complex values as pairs) is eager's. The inputs are
    contiguous (the host passes them as they are, complex ones as pairs); @forward's
    arguments after them are positions 0..n-1 (iotas)."""
    k, fn, inputs = compiled[name]
    got = ta_reference(k, [_numpy(t) for t in inputs])
    for g, w in zip(got, _flat(fn(*inputs))):
        np.testing.assert_allclose(g, _numpy(w).astype(g.dtype), atol=2e-4, rtol=2e-4)


def test_aot_compile_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)


def test_a_python_float_tolerance_of_float32_data_is_float32(compiled) -> None:
    """`pinverse(a)` passes its rcond to pinv as a float64 0-d tensor. Compared with
    float32 singular values it is float32 (torch's promotion), so the program holds
    no float64: in x64, libtpu aborts compiling the SVD (libtpu 0.0.42.1)."""
    k, _, _ = compiled["pinv"]
    assert "f64" not in k.ir["ta"] and "float64" not in k.source


def test_bfloat16_matrix_exp_is_computed_in_float32() -> None:
    """`expm` takes no bfloat16 (it raised a TypeError at the call): the library
    function computes in float32 and the call rounds to bfloat16. Eager's own bfloat16
    result is no reference (it overflows to inf/NaN on this input); float64's is."""
    a = torch.tensor([[0.5, -1.0, 0.25], [0.75, 0.5, 0.0], [-1.0, 1.0, 0.5]])
    got = pallas_ir.compile(torch.linalg.matrix_exp, [a.bfloat16()])(a.bfloat16())
    want = torch.linalg.matrix_exp(a.bfloat16().double())
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.double(), want, rtol=1.6e-2, atol=1e-2)


def test_bfloat16_embedding_bag_sums_in_float32() -> None:
    """Weighted bags of bfloat16 rows are summed in float32 and rounded once, as
    eager's CPU kernel does (summed in bfloat16 they were up to 15% off)."""
    torch.manual_seed(0)
    table, weights = torch.randn(10, 5).bfloat16(), torch.randn(5).bfloat16()
    indices, offsets = torch.randint(0, 10, (5,)), torch.tensor([0, 2])

    def bags(w, i, o, p):
        return F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p)

    got = pallas_ir.compile(bags, [table, indices, offsets, weights])(
        table, indices, offsets, weights
    )
    want = bags(table.float(), indices, offsets, weights.float()).bfloat16()
    torch.testing.assert_close(got, want, rtol=0, atol=0)
