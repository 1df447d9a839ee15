"""The rest of the ATen surface (issue 14): pairwise distances, `bilinear` and the
chunked `linear_cross_entropy` decomposed into ops that run in Pallas; histograms,
`grid_sample`, antialiased resampling, `geqrf`/`ormqr` and the CTC loss as library
calls on XLA. Each against eager PyTorch (edge cases included), the library calls
against the ta reference too, and every module through the TPU compiler (one
deviceless AOT batch for v5e)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from support.programs import (
    aot_failures,
    assert_like_eager,
    compile_programs,
    flat,
    library_call_reference,
)
from torch.nn.modules.linear_cross_entropy import (
    _linear_cross_entropy_batch_chunked as lce_chunked,
)

import pallas_ir


def _lce(x, w, t, b, cw):
    """The chunked op with every gradient asked for (mean, class weights, an ignored
    target): the loss and the gradients its forward precomputes."""
    return lce_chunked(
        x,
        w,
        t,
        b,
        cw,
        "mean",
        2,
        0.0,
        2,
        "compact",
        torch.float32,
        True,
        True,
        True,
        True,
    )


def _ctc_inputs(batch=3, steps=12, classes=6, longest=4):
    log_probs = torch.randn(steps, batch, classes).log_softmax(2)
    targets = torch.randint(1, classes, (batch, longest))
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank between
    return log_probs, targets


PROGRAMS = {
    # Pallas: decompositions
    "cdist_p_norms": (
        lambda a, b: [torch.cdist(a, b, p=p) for p in (0.0, 1.5, float("inf"))],
        lambda: [torch.randn(2, 5, 3), torch.randn(1, 4, 3)],
    ),
    "cdist_euclid_mm_and_direct": (
        lambda a, b: (
            torch.cdist(a, b),  # more than 25 rows: eager's matmul form
            torch.cdist(a[:7], b[:5], compute_mode="donot_use_mm_for_euclid_dist"),
        ),
        lambda: [torch.randn(30, 4), torch.randn(6, 4)],
    ),
    "pdist": (
        lambda x: (F.pdist(x), F.pdist(x[:1])),
        lambda: [torch.randn(9, 3)],
    ),
    "bilinear": (
        lambda a, b, w, bias: F.bilinear(a, b, w, bias),
        lambda: [
            torch.randn(2, 3, 4),
            torch.randn(2, 3, 5),
            torch.randn(6, 4, 5),
            torch.randn(6),
        ],
    ),
    "linear_cross_entropy_chunked": (
        _lce,
        lambda: [
            torch.randn(6, 5),
            torch.randn(7, 5),
            torch.tensor([1, 3, 2, 6, 0, 3]),
            torch.randn(7),
            torch.rand(7),
        ],
    ),
    # XLA: library calls
    "histogram_bins": (
        lambda x, w: (
            *torch.histogram(x, 7),
            *torch.histogram(x, 4, range=(-1.0, 1.0), weight=w, density=True),
            *torch.histogram(x[:1], 3),  # one value: its range widened by 0.5
        ),
        lambda: [torch.randn(40), torch.rand(40)],
    ),
    "histogram_edges_tensor": (
        lambda x, edges: torch.histogram(x, edges),
        lambda: [
            torch.tensor([0.0, 0.5, 1.0, 2.0, 3.0, -1.0, float("nan"), 2.5]),
            torch.tensor([0.0, 0.5, 2.0, 3.0]),
        ],
    ),
    "histogramdd": (
        lambda x, w: (  # (hist, [edges]) each: results nested in the result
            torch.histogramdd(x, [3, 4], weight=w),
            torch.histogramdd(x, [2, 2], density=True),
        ),
        lambda: [torch.randn(30, 2), torch.rand(30)],
    ),
    "grid_sample_2d": (
        lambda x, g: [
            F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=a)
            for m, p, a in [
                ("bilinear", "zeros", False),
                ("nearest", "border", True),
                ("bicubic", "reflection", False),
                ("bilinear", "reflection", True),
            ]
        ],
        lambda: [torch.randn(2, 3, 5, 6), torch.rand(2, 4, 3, 2) * 2.6 - 1.3],
    ),
    "grid_sample_3d": (
        lambda x, g: (
            F.grid_sample(x, g, align_corners=False),
            F.grid_sample(x, g, mode="nearest", padding_mode="reflection"),
        ),
        lambda: [torch.randn(1, 2, 3, 4, 5), torch.rand(1, 2, 3, 2, 3) * 2.4 - 1.2],
    ),
    "upsample_bilinear_antialias": (
        lambda x: (
            F.interpolate(x, size=(3, 7), mode="bilinear", antialias=True),
            F.interpolate(x, scale_factor=(1.7, 0.45), mode="bilinear", antialias=True),
            F.interpolate(
                x, size=(4, 4), mode="bilinear", antialias=True, align_corners=True
            ),
        ),
        lambda: [torch.randn(2, 2, 9, 11)],
    ),
    "geqrf_ormqr": (
        lambda a, c: (
            *torch.geqrf(a),
            torch.ormqr(*torch.geqrf(a), c),
            torch.ormqr(*torch.geqrf(a), c.mT, left=False, transpose=True),
        ),
        lambda: [torch.randn(2, 5, 3), torch.randn(2, 5, 4)],
    ),
    "ctc_loss": (
        lambda lp, t: (
            F.ctc_loss(lp, t, [12, 12, 9], [4, 2, 0], reduction="none"),
            F.ctc_loss(
                lp, t, [12, 3, 9], [4, 4, 1], reduction="mean", zero_infinity=True
            ),
        ),
        _ctc_inputs,
    ),
    "ctc_loss_length_tensors": (
        lambda lp, t, il, tl: F.ctc_loss(lp, t, il, tl, reduction="sum"),
        lambda: [*_ctc_inputs(), torch.tensor([12, 10, 7]), torch.tensor([3, 4, 2])],
    ),
}

LIBRARY_CALLS = [
    "histogram_bins",
    "histogram_edges_tensor",
    "histogramdd",
    "grid_sample_2d",
    "grid_sample_3d",
    "upsample_bilinear_antialias",
    "geqrf_ormqr",
    "ctc_loss_length_tensors",
]


@pytest.fixture(scope="module")
def compiled():
    return compile_programs(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    assert_like_eager(k(*inputs), fn(*inputs), atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("name", LIBRARY_CALLS)
def test_ta_reference_matches_eager(name: str, compiled) -> None:
    """The ta module's meaning (the reference interpreter runs each library call on
    numpy arrays) is eager's."""
    k, fn, inputs = compiled[name]
    want = flat(fn(*inputs))
    # the results, then the flags of the run-time checks (a data range not finite)
    got = library_call_reference(k, inputs)[: len(want)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=2e-5)


def test_nested_results_keep_their_structure(compiled) -> None:
    k, fn, inputs = compiled["histogramdd"]
    got, want = k(*inputs), fn(*inputs)
    assert [type(g) for g in got] == [tuple, tuple]
    assert [type(g[1]) for g in got] == [type(w[1]) for w in want]


def test_decompositions_run_in_pallas(compiled) -> None:
    """The distances, `bilinear` and the chunked cross entropy need no library call."""
    for name in ["cdist_p_norms", "pdist", "bilinear", "linear_cross_entropy_chunked"]:
        assert "library_call" not in compiled[name][0].ir["ta"], name


def test_chunked_cross_entropy_compiles_in_a_process_that_never_imported_it() -> None:
    """torch registers the chunked ops only when `F.linear_cross_entropy` first takes
    its chunked path, after the frontend may have built its decomposition table (this
    module imports the op at its top, so the check runs in a fresh interpreter)."""
    program = textwrap.dedent(
        """
        import torch, torch.nn.functional as F, pallas_ir
        from torch.nn.modules.linear_cross_entropy_options import (
            LinearCrossEntropyOptions,
        )
        torch.manual_seed(0)
        pallas_ir.compile(torch.neg, [torch.ones(2)])  # builds the table first
        opts = LinearCrossEntropyOptions(batch_chunk_size=2)
        x, w, y = torch.randn(8, 4), torch.randn(3, 4), torch.randint(0, 3, (8,))
        for reduction in ("none", "mean"):
            def fn(x, w, y):
                return F.linear_cross_entropy(
                    x, w, y, reduction=reduction, options=opts
                )
            k = pallas_ir.compile(fn, [x, w, y])
            torch.testing.assert_close(k(x, w, y), fn(x, w, y))
            assert "library_call" not in k.ir["ta"]
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_histogram_edge_bucketing_matches_eager() -> None:
    """Values on and next to the linspace edges land where eager's local search
    puts them (float32 interpolation alone misplaces some)."""
    edges = torch.linspace(-1.3, 2.9, 8)
    near = torch.cat(
        [edges, edges.nextafter(torch.tensor(-9.0)), edges.nextafter(torch.tensor(9.0))]
    )

    def fn(x):
        return torch.histogram(x, 7, range=(-1.3, 2.9))

    k = pallas_ir.compile(fn, [near])
    for g, w in zip(k(near), fn(near)):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_ldl_factor_is_refused() -> None:
    a = torch.randn(4, 4)
    with pytest.raises(pallas_ir.UnsupportedError, match="Bunch-Kaufman"):
        pallas_ir.compile(lambda a: torch.linalg.ldl_factor(a + a.mT), [a])


def test_modules_aot_compile_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)
