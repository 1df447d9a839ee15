"""Fused reductions (`kernel_builder.fused_reduction`): a reduction over a tensor's
last dims is computed in the kernel that needs it, so a softmax, a log_softmax, a
layer or RMS norm is one kernel that reads each row once. Each program is checked
against eager, its ta module against the reference interpreter, and its kernels
against the TPU compiler; the launch counts are the fusion the frontend promises.
Outputs that share statistics (`var_mean`, a layer norm's output with its mean and
rstd) are one kernel with several outputs. A reduction no kernel can compute in its
loop (read along the reduced dim, over other dims, longer rows) is stored by a kernel
of its own, with the same results."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from support.programs import aot_failures, compile_programs, flat, ta_reference

import pallas_ir
from pallas_ir.frontend.kernel_builder import EPILOGUE_REDUCTION_MAX
from pallas_ir.frontend.lowerings.reductions import FUSED_REDUCTION_MAX

NAN, INF = float("nan"), float("inf")


def _hostile_rows() -> torch.Tensor:
    """Rows with an inf, a -inf, a NaN, all -inf, and ordinary ones."""
    x = torch.randn(6, 384)
    x[0, 3] = INF
    x[1, 5] = -INF
    x[2, 7] = NAN
    x[3, :] = -INF
    return x


def _rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def _layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def _logsumexp_and_mean(x):
    lse = torch.logsumexp(x, -1)
    return lse, lse.mean()


# name → (function, inputs, pallas_calls): the launches each compiles to
PROGRAMS = {
    "softmax": (lambda x: torch.softmax(x, -1), lambda: [torch.randn(64, 512)], 1),
    "softmax_hostile_rows": (
        lambda x: torch.softmax(x, -1),
        lambda: [_hostile_rows()],
        1,
    ),
    "log_softmax_3d": (
        lambda x: F.log_softmax(x * 2, -1),
        lambda: [torch.randn(2, 24, 256)],
        1,
    ),
    "layer_norm": (
        _layer_norm,
        lambda: [torch.randn(4, 32, 256), torch.randn(256), torch.randn(256)],
        1,
    ),
    "rms_norm": (_rms_norm, lambda: [torch.randn(48, 512), torch.randn(512)], 1),
    "layer_norm_bfloat16": (
        _layer_norm,
        lambda: [
            torch.randn(16, 256).bfloat16(),
            torch.randn(256).bfloat16(),
            torch.randn(256).bfloat16(),
        ],
        1,
    ),
    # an epilogue: the reduction's result shape, the reduced dims added to the loop
    "sum_epilogue": (
        lambda x: torch.tanh(x.sum(-1) * 0.1),
        lambda: [torch.randn(40, 300)],
        1,
    ),
    "amax_minus_amin": (
        lambda x: x.amax((-2, -1)) - x.amin((-2, -1)),
        lambda: [torch.randn(8, 16, 128)],
        1,
    ),
    # results that share statistics share a kernel with several outputs
    "var_mean": (lambda x: torch.var_mean(x, -1), lambda: [torch.randn(32, 256)], 1),
    "layer_norm_training_outputs": (  # (out, mean, rstd): what a backward keeps
        lambda x, w, b: torch.ops.aten.native_layer_norm(x, [256], w, b, 1e-5),
        lambda: [torch.randn(2, 16, 256), torch.randn(256), torch.randn(256)],
        1,
    ),
    "softmax_and_row_max": (
        lambda x: (torch.softmax(x, -1), x.amax(-1), x.sum(0)),
        lambda: [torch.randn(32, 384)],
        2,
    ),
    # reductions over the first dim: the max and the sum in one kernel (fuse-epilogues:
    # columns of 64 are never split), then the normalisation
    "softmax_dim0": (lambda x: torch.softmax(x, 0), lambda: [torch.randn(64, 128)], 2),
    # the row sums read along the reduced dim (as columns): stored first
    "row_sums_as_columns": (
        lambda x: x + x.sum(-1)[None, :],
        lambda: [torch.randn(128, 128)],
        2,
    ),
    # a reduction that is an output and fuses nowhere: its kernel stores the output
    "row_sums_longer_than_an_epilogue": (
        lambda x: x.sum(-1),
        lambda: [torch.randn(4, 2 * EPILOGUE_REDUCTION_MAX)],
        1,
    ),
    "full_sum": (lambda x: x.sum(), lambda: [torch.randn(40, 300)], 1),
    # the row statistics and the logit each row picks (a one-hot sum over the row,
    # indirect-load-to-one-hot-sum: no gather on XLA), the labels' range checks, the
    # count of kept labels and the mean loss are one kernel: fuse-epilogues nests the
    # rows' reductions under the mean's (`ta.reduce ... over`)
    "cross_entropy": (
        lambda x, y: F.cross_entropy(x, y),
        lambda: [torch.randn(64, 512), torch.randint(0, 512, (64,))],
        1,
    ),
    "cross_entropy_ignored_labels_summed": (
        lambda x, y: F.cross_entropy(x, y, ignore_index=3, reduction="sum"),
        lambda: [torch.randn(64, 512), torch.randint(0, 8, (64,))],
        1,
    ),
    "cross_entropy_label_smoothing": (
        lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1),
        lambda: [torch.randn(64, 512), torch.randint(0, 512, (64,))],
        1,
    ),
    "cross_entropy_of_tokens": (  # a language model's loss over (batch, time)
        lambda x, y: F.cross_entropy(x.view(-1, x.shape[-1]), y.view(-1)),
        lambda: [torch.randn(4, 16, 512), torch.randint(0, 512, (4, 16))],
        1,
    ),
    "cross_entropy_bfloat16": (
        lambda x, y: F.cross_entropy(x, y),
        lambda: [torch.randn(64, 512).bfloat16(), torch.randint(0, 512, (64,))],
        1,
    ),
    "cross_entropy_hostile_rows": (
        lambda x, y: F.cross_entropy(x, y),
        lambda: [_hostile_rows(), torch.tensor([3, 5, 7, 0, 1, 2])],
        1,
    ),
    "nll_of_log_softmax": (
        lambda x, y: F.nll_loss(F.log_softmax(x, -1), y),
        lambda: [torch.randn(64, 512), torch.randint(0, 512, (64,))],
        1,
    ),
    "mean_of_logsumexp": (
        lambda x: torch.logsumexp(x, -1).mean(),
        lambda: [torch.randn(64, 512)],
        1,
    ),
    "batch_means_of_row_maxima": (  # the mean keeps a parallel dim
        lambda x: x.amax(-1).mean(-1),
        lambda: [torch.randn(4, 32, 256)],
        1,
    ),
    # 3000 rows: no legal block of the labels divides them, so the last step's padded
    # rows are masked out of the mean (`Emitter.masked`)
    "cross_entropy_rows_no_block_divides": (
        lambda x, y: F.cross_entropy(x, y),
        lambda: [torch.randn(3000, 384), torch.randint(0, 384, (3000,))],
        1,
    ),
    "row_statistics_returned_with_their_mean": (  # stored with their rows' block
        _logsumexp_and_mean,
        lambda: [torch.randn(3001, 256)],
        1,
    ),
    # not nested: read at a place of two loop dims (a view of the row values), an
    # argmax (a position over all of a loop's reductions), a sum over the rows and
    # columns of a softmax (a value per element beside the row statistics)
    "row_maxima_viewed_then_summed": (
        lambda x: x.amax(-1).view(8, 8).sum(1),
        lambda: [torch.randn(64, 512)],
        2,
    ),
    "argmax_counted": (
        lambda x: (x.argmax(-1) == 3).sum(),
        lambda: [torch.randn(64, 512)],
        2,
    ),
    "squared_softmax_summed": (
        lambda x: (torch.softmax(x, -1) ** 2).sum(),
        lambda: [torch.randn(64, 512)],
        2,
    ),
    # reductions along a block's leading dims are summed in place, not transposed onto
    # the lanes (`Emitter.value_order`): transposed, the first asked 16.96 MB of VMEM
    # on a v5e (limit 16) and the TPU compiler refused it
    "leading_dim_sum_of_a_broadcast": (
        lambda x, y: (x.expand(8, 128, 128).relu() + y).abs().sum(0, keepdim=True),
        lambda: [torch.randn(128, 128), torch.randn(8, 128, 128)],
        1,
    ),
    "column_sums_split_over_steps": (  # a bias gradient
        lambda g: g.sum(0),
        lambda: [torch.randn(4096, 256) / 64],  # sums near 1: f32 rounding under 1e-5
        1,
    ),
    "column_sums_bfloat16": (
        lambda g: g.sum(0),
        lambda: [torch.randn(512, 256).bfloat16()],
        1,
    ),
    "middle_dim_mean_and_max": (
        lambda x: x.mean(1) + x.amax(1),
        lambda: [torch.randn(4, 64, 256)],
        1,
    ),
    "column_standardized": (
        lambda x: (x - x.mean(0)) / (x.std(0) + 1e-5),
        lambda: [torch.randn(96, 256)],
        2,
    ),
    "argmax_dim0": (lambda x: x.argmax(0), lambda: [torch.randn(64, 256)], 1),
    # matrix-vector products summed along the matrix's rows: a unit parallel dim the
    # matrix does not walk would have been the tiles' lane dim (a first version of
    # the order ran out of VMEM on a v5e here)
    "vector_times_matrix": (  # the product as a bmm's (1, n, 1), then its copy
        lambda x, v: torch.einsum("kn,k->n", x, v),
        lambda: [torch.randn(256, 512) / 16, torch.randn(256)],  # sums near 1
        2,
    ),
    "batched_vector_times_matrix": (
        lambda x, v: torch.einsum("bkn,bk->bn", x, v),
        lambda: [torch.randn(4, 64, 256), torch.randn(4, 64)],
        1,
    ),
    # Rows too long for a block whole, which no legal part (a multiple of 128)
    # divides: split over a sequential grid dim, the last part's padding set to each
    # reduction's identity in the kernel. The sums are near 1 (f32 rounding under 1e-5).
    "sum_rows_no_part_divides": (
        lambda x: x.sum(-1),
        lambda: [torch.randn(8, 300007) / 512],
        1,
    ),
    "logsumexp_rows_no_part_divides": (  # the max, then the sum of exponentials
        lambda x: torch.logsumexp(x, -1),
        lambda: [torch.randn(8, 300007)],
        2,
    ),
    # A vocabulary no legal part divides (GPT-2's 50257 is one), over rows whose
    # labels' 1-D blocks would need 128 of them: one kernel, its labels read as the
    # column (136, 1), 8 rows a block (two kernels on XLA before).
    "cross_entropy_vocabulary_no_part_divides": (
        lambda x, y: F.cross_entropy(x, y),
        lambda: [torch.randn(136, 16411), torch.randint(0, 16411, (136,))],
        1,
    ),
    "argmax_stored_as_a_column": (
        lambda x: x.argmax(-1),
        lambda: [torch.randn(136, 16411)],
        1,
    ),
    # rows longer than FUSED_REDUCTION_MAX: the reductions are kernels of their own
    "softmax_long_rows": (
        lambda x: torch.softmax(x, -1),
        lambda: [torch.randn(2, FUSED_REDUCTION_MAX + 128)],
        3,
    ),
}


@pytest.fixture(scope="module")
def compiled():
    return compile_programs({n: (fn, make) for n, (fn, make, _) in PROGRAMS.items()})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got, want = flat(k(*inputs)), flat(fn(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        low = g.dtype == torch.bfloat16
        tolerance = {"rtol": 2e-2, "atol": 2e-2} if low else {"rtol": 1e-5, "atol": 1e-5}
        torch.testing.assert_close(g, w, equal_nan=True, **tolerance)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_launches_as_fused(name: str, compiled) -> None:
    """A softmax or norm is one pallas_call; what cannot fuse is one more a reduction."""
    k = compiled[name][0]
    assert k.source.count("pl.pallas_call(") == PROGRAMS[name][2]


@pytest.mark.parametrize(
    "name",
    ["softmax_hostile_rows", "layer_norm", "sum_epilogue", "layer_norm_training_outputs"],
)
def test_fused_ta_means_eager(name: str, compiled) -> None:
    """The fused ta module, run by the reference interpreter, gives eager's results:
    a reduction computed in a loop that stores at every point of the row means the
    same as the stored one."""
    k, fn, inputs = compiled[name]
    got = ta_reference(k, [t.numpy() for t in inputs])
    for g, w in zip(got, flat(fn(*inputs)), strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)


def test_fused_kernels_compile_for_tpu(compiled) -> None:
    assert not aot_failures(compiled)


def test_cross_entropy_over_more_rows_than_a_block_is_one_kernel() -> None:
    """Cross-entropy over rows that do not fit one block: the fused kernel's row dim
    is a sequential grid dim, each step adds its rows' losses into a running total,
    and the mean is taken on the last step. One kernel, eager's loss."""
    torch.manual_seed(0)
    x, y = torch.randn(2048, 512), torch.randint(0, 512, (2048,))
    k = pallas_ir.compile(lambda x, y: F.cross_entropy(x, y), [x, y])
    assert k.source.count("pl.pallas_call(") == 1 and not k.cost_report().xla_calls
    assert "tl.accumulate <sum>" in k.ir["tile"] and "tl.on_last_step" in k.ir["tile"]
    torch.testing.assert_close(k(x, y), F.cross_entropy(x, y), rtol=1e-5, atol=1e-5)


def test_long_rows_stored_once_a_row_are_reduced_by_their_own_kernels() -> None:
    """A variance stores one element a row: fused, its rows stay whole in VMEM. Rows
    longer than EPILOGUE_REDUCTION_MAX are reduced by kernels of their own, which the
    tiler splits over a sequential grid dim: every kernel is Pallas, and the results
    are eager's."""
    torch.manual_seed(0)
    x = torch.randn(8, 2 * EPILOGUE_REDUCTION_MAX)
    k = pallas_ir.compile(lambda x: x.var(-1), [x])
    report = k.cost_report()
    assert len(report.calls) > 1 and not report.xla_calls
    assert "sequential" in k.ir["tile"]
    torch.testing.assert_close(k(x), x.var(-1), rtol=1e-5, atol=1e-5)


def test_a_matmul_does_not_fuse_a_norm_into_its_prologue() -> None:
    """A layer norm before a matmul keeps its statistics out of the product's
    kernel (whose contraction the tiler splits and blocks for the MXU): the product is
    a dot kernel of its own, and the results are eager's."""
    torch.manual_seed(0)
    x, w = torch.randn(64, 1024), torch.randn(256, 1024) / 32

    def norm_then_linear(x, w):
        return F.layer_norm(x, (1024,)) @ w.t()

    k = pallas_ir.compile(norm_then_linear, [x, w])
    tile = k.ir["tile"]
    dots = [line for line in tile.splitlines() if "tl.dot" in line]
    (kernel,) = [part for part in tile.split("tl.kernel") if "tl.dot" in part]
    assert len(dots) == 1 and "tl.reduce" not in kernel
    torch.testing.assert_close(k(x, w), norm_then_linear(x, w), rtol=1e-4, atol=1e-4)
