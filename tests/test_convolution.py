"""Convolution, pooling, resampling and padding: library functions on XLA
(`pallas_ir.library.convolution`) and the decompositions the frontend lowers, each
against eager PyTorch, the ta reference on the same module for two of them, and the
TPU compiler (deviceless AOT for v5e); and a CNN's training step under
`torch.compile`, with nothing left to eager PyTorch."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from support.programs import aot_failures, library_call_reference
from torch import nn

import pallas_ir

aten = torch.ops.aten
NAN, INF = float("nan"), float("inf")


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _specials(*shape: int) -> torch.Tensor:
    """Random values with NaN and -inf sprinkled in, and ties (rounded values): a max
    pool's value and index follow eager's loop (NaN wins, the last NaN's index; the
    first of equal maxima; -inf windows keep their first element)."""
    x = torch.randn(*shape).mul(2).round()
    flat = x.view(-1)
    flat[::7] = NAN
    flat[3::11] = -INF
    return x


def _convolutions(x, w, b, x1, w1, x3, w3, w_even):
    return (
        F.conv2d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
        F.conv1d(x1, w1, padding="same", dilation=2),
        F.conv3d(x3, w3, stride=(1, 2, 1), padding=1),
        F.conv2d(x[:, :2], w_even, padding="same"),  # a constant_pad_nd, then a conv
    )


def _transposed(x, w, b, x3, w3):
    return (
        F.conv_transpose2d(
            x, w, b, stride=(2, 3), padding=(1, 2), output_padding=(1, 2), groups=2
        ),
        F.conv_transpose2d(x, w, dilation=2, groups=2, padding=3),
        # padding beyond the kernel's reach: a negative padding of the dilated input
        F.conv_transpose2d(x, w, stride=3, groups=2, padding=(4, 1)),
        F.conv_transpose3d(x3, w3, stride=2),
    )


def _max_pools(x, x1, x3):
    return (
        *F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
        *F.max_pool2d(x, (3, 2), (2, 1), 1, dilation=(2, 3), return_indices=True),
        *F.max_pool1d(x1, 4, 3, 2, ceil_mode=True, return_indices=True),
        *F.max_pool3d(x3, 2, 2, 1, ceil_mode=True, return_indices=True),
        F.max_pool2d(x[0], 2),  # without a batch dim
    )


def _avg_pools(x, x1, x3, ints):
    return (
        F.avg_pool2d(ints, 3, 2, 1, ceil_mode=True),  # eager divides ints, truncating
        *F.max_pool2d(ints, 3, 2, 1, return_indices=True),
        F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
        F.avg_pool2d(x, (2, 3), (1, 2), (1, 1), divisor_override=5),
        F.avg_pool1d(x1, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        F.avg_pool3d(x3, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        F.lp_pool2d(x.abs(), 2, 2),
    )


def _adaptive_pools(x, x1, x3):
    return (
        F.adaptive_avg_pool2d(x, (4, 3)),
        F.adaptive_avg_pool2d(x, (13, 8)),  # more outputs than inputs
        F.adaptive_avg_pool1d(x1, 5),
        F.adaptive_avg_pool3d(x3, (2, 3, 4)),
        *F.adaptive_max_pool2d(x, (4, 3), return_indices=True),
        *F.adaptive_max_pool1d(x1, 3, return_indices=True),
        *F.adaptive_max_pool3d(x3, (2, 3, 2), return_indices=True),
        F.interpolate(x, size=(5, 4), mode="area"),
    )


def _unpadded_pools(x, specials, x3, x1):
    """Pools with every window inside the input: Pallas element-wise kernels."""
    return (
        *F.max_pool2d(F.relu(x), 2, return_indices=True),
        F.avg_pool2d(x, 2),
        *F.max_pool2d(specials, (2, 3), 2, return_indices=True),  # NaN, -inf, ties
        F.avg_pool2d(specials, 3, 2, ceil_mode=True, divisor_override=4),
        *F.max_pool2d(specials, 3, 1, return_indices=True),  # overlapping windows
        *F.max_pool3d(x3, 2, return_indices=True),
        F.avg_pool3d(x3, (2, 2, 3), (2, 1, 3)),
        *F.max_pool1d(x1, 2, return_indices=True),
        F.avg_pool1d(x1, 4, 2),
    )


def _special_adaptive_max(x):
    return F.adaptive_max_pool2d(x, (4, 3), return_indices=True)


def _resampling(x, x3):
    return (
        F.interpolate(x, scale_factor=(1.7, 0.6), mode="bilinear"),
        F.interpolate(x, size=(4, 13), mode="bilinear", align_corners=True),
        F.interpolate(x, scale_factor=2.3, mode="bicubic"),
        F.interpolate(x, size=(9, 4), mode="bicubic", align_corners=True),
        F.interpolate(
            x3, scale_factor=(2, 1.5, 0.5), mode="trilinear", align_corners=True
        ),
        F.interpolate(x, scale_factor=(1.5, 0.7)),  # nearest
        F.interpolate(x, size=(5, 7), mode="nearest-exact"),
    )


def _padding(x, ints, mask):
    return (
        F.pad(x, (-1, 2, 3, -2), value=-1.5),
        F.pad(x, (1, 2, 2, 1), mode="reflect"),
        F.pad(x, (1, 2, 2, 1), mode="replicate"),
        F.pad(x, (1, 2, 2, 1), mode="circular"),
        F.pad(ints, (1, 1), value=7),
        F.pad(mask, (1, 1, 2, 0), value=True),
    )


def _windows(x, cols):
    return (
        F.unfold(x, (2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2)),
        F.fold(cols, (5, 6), (2, 3), padding=(1, 0)),
        F.pixel_shuffle(x[:, :4], 2),
        F.pixel_unshuffle(x[:, :, :8, :6], 2),
        x.unfold(3, 3, 2) * 2,  # Tensor.unfold: a view
    )


def _backwards(x, g_pool, g_avg, g_adaptive, g_conv, w, g_convt, wt):
    """The backward ops a training graph holds, called as AOTAutograd calls them."""
    _, indices = aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], True)
    _, where = aten.adaptive_max_pool2d(x, [4, 3])
    return (
        aten.max_pool2d_with_indices_backward(
            g_pool, x, [3, 3], [2, 2], [1, 1], [1, 1], True, indices
        ),
        aten.avg_pool2d_backward(g_avg, x, [3, 2], [2, 1], [1, 1], True, False, None),
        aten._adaptive_avg_pool2d_backward(g_adaptive, x),
        aten.adaptive_max_pool2d_backward(g_adaptive, x, where),
        *aten.convolution_backward(
            g_conv, x, w, [4], [2, 2], [1, 1], [2, 2], False, [0, 0], 2, [True] * 3
        ),
        *aten.convolution_backward(
            g_convt,
            x,
            wt,
            None,
            [2, 2],
            [1, 0],
            [1, 1],
            True,
            [1, 0],
            2,
            [True, True, False],
        )[:2],
    )


def _backward_inputs() -> list[torch.Tensor]:
    """`_backwards`' input and weights, and gradients of the shapes of its ops'
    results (from eager)."""
    x, w, wt = _randn(2, 4, 9, 10), _randn(6, 2, 3, 3), _randn(4, 3, 3, 4)
    results = [
        F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
        F.avg_pool2d(x, (3, 2), (2, 1), 1, ceil_mode=True),
        F.adaptive_avg_pool2d(x, (4, 3)),
        F.conv2d(x, w, stride=2, padding=1, dilation=2, groups=2),
        F.conv_transpose2d(
            x, wt, stride=2, padding=(1, 0), output_padding=(1, 0), groups=2
        ),
    ]
    grads = [_randn(*r.shape) for r in results]
    return [x, *grads[:4], w, grads[4], wt]


PROGRAMS = {
    "convolutions": (
        _convolutions,
        lambda: [
            _randn(2, 4, 11, 10),
            _randn(6, 2, 3, 3),
            _randn(6),
            _randn(2, 3, 10),
            _randn(5, 3, 4),
            _randn(2, 3, 6, 7, 5),
            _randn(4, 3, 2, 3, 2),  # not 3x3x3: slow to compile for TPU in f32
            _randn(5, 2, 4, 2),
        ],
    ),
    "transposed_convolutions": (
        _transposed,
        lambda: [
            _randn(2, 4, 5, 6),
            _randn(4, 3, 3, 4),
            _randn(6),
            _randn(1, 2, 3, 3, 3),
            _randn(2, 3, 2, 2, 2),
        ],
    ),
    "max_pools": (
        _max_pools,
        lambda: [_specials(2, 3, 11, 12), _specials(2, 3, 14), _specials(1, 2, 5, 6, 7)],
    ),
    "avg_pools": (
        _avg_pools,
        lambda: [
            _randn(2, 3, 10, 9),
            _randn(2, 3, 10),
            _randn(1, 2, 5, 6, 7),
            torch.randint(-20, 20, (2, 3, 7, 8)),
        ],
    ),
    "unpadded_pools": (
        _unpadded_pools,
        lambda: [
            _randn(2, 4, 16, 256),
            _specials(2, 3, 9, 11),
            _randn(2, 3, 6, 8, 10),
            _randn(2, 3, 130),
        ],
    ),
    "adaptive_pools": (
        _adaptive_pools,
        lambda: [_randn(2, 3, 11, 7), _randn(2, 3, 10), _specials(1, 2, 5, 7, 5)],
    ),
    "adaptive_max_pool_specials": (
        _special_adaptive_max,
        lambda: [_specials(2, 3, 11, 7)],
    ),
    "resampling": (
        _resampling,
        lambda: [_randn(2, 3, 9, 10), _randn(1, 2, 3, 4, 6)],
    ),
    "padding": (
        _padding,
        lambda: [
            _randn(2, 3, 5, 6),
            torch.randint(0, 5, (3, 4)),
            torch.rand(3, 4) > 0.5,
        ],
    ),
    "unfold_fold_pixel_shuffle": (
        _windows,
        lambda: [_randn(2, 4, 9, 8), _randn(2, 12, 24)],
    ),
    "backwards": (_backwards, _backward_inputs),
}

BF16_PROGRAMS = {
    "bf16_convolution_pools": (
        lambda x, w: (
            F.max_pool2d(F.conv2d(x, w, padding=1), 2),
            F.avg_pool2d(x, 3, 1, 1),
            F.interpolate(x, scale_factor=2, mode="bilinear"),
        ),
        lambda: [_randn(2, 3, 8, 8).bfloat16(), _randn(4, 3, 3, 3).bfloat16()],
    ),
}


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    return {
        name: (pallas_ir.compile(fn, inputs), fn, inputs)
        for name, (fn, make) in {**PROGRAMS, **BF16_PROGRAMS}.items()
        for inputs in [make()]
    }


def _flat(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got, want = _flat(k(*inputs)), _flat(fn(*inputs))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, i
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5, equal_nan=True, msg=i)


@pytest.mark.parametrize("name", sorted(BF16_PROGRAMS))
def test_bfloat16_matches_eager_in_float32(name: str, compiled) -> None:
    """bfloat16 is computed in float32 and rounded where stored: eager's float32
    result on the same values, rounded."""
    k, fn, inputs = compiled[name]
    got, eager = _flat(k(*inputs)), _flat(fn(*inputs))
    f32 = _flat(fn(*[t.float() for t in inputs]))
    for g, e, w in zip(got, eager, f32):
        assert g.dtype == e.dtype == torch.bfloat16
        torch.testing.assert_close(g, w.to(e.dtype), rtol=1.6e-2, atol=1e-5)


def test_an_unpadded_pool_is_a_pallas_kernel_and_a_padded_one_a_library_call() -> None:
    """A pool whose windows all lie inside the input reads them in a Pallas kernel,
    fused with the `relu` before it; a padded one is `reduce_window` on XLA (a window
    element outside the input has no block to read it from)."""
    x = _randn(2, 4, 16, 256)
    unpadded = pallas_ir.compile(lambda a: F.max_pool2d(F.relu(a), 2), [x])
    padded = pallas_ir.compile(lambda a: F.max_pool2d(F.relu(a), 3, 2, 1), [x])
    assert unpadded.source.count("pl.pallas_call(") == 1
    assert "library_call" not in unpadded.ir["ta"]
    assert "library_call" in padded.ir["ta"]
    torch.testing.assert_close(unpadded(x), F.max_pool2d(F.relu(x), 2))


@pytest.mark.parametrize(
    "name", ["adaptive_max_pool_specials", "transposed_convolutions"]
)
def test_ta_reference_matches_eager(name: str, compiled) -> None:
    """The ta module's meaning (the reference interpreter runs the library calls on
    numpy arrays) is eager's."""
    k, fn, inputs = compiled[name]
    got = library_call_reference(k, inputs)
    for g, w in zip(got, _flat(fn(*inputs))):
        np.testing.assert_allclose(g, w.numpy().astype(g.dtype), rtol=1e-5, atol=1e-5)


def test_convolution_aot_compiles_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        y = F.max_pool2d(F.relu(self.conv(x)), 2)
        y = F.avg_pool2d(self.down(y), 2, 1, 1)
        y = self.up(F.adaptive_max_pool2d(y, 2) + F.adaptive_avg_pool2d(y, 2))
        return self.head(y.mean((2, 3)))


def test_cnn_training_step_compiles_whole_and_matches_eager() -> None:
    """A training step of a CNN (convolutions plain, strided, grouped and transposed,
    max, average and adaptive pools) under `torch.compile`: the forward and backward
    graphs compile with no op left to eager PyTorch (`convolution_backward` and the
    pools' backward ops are library calls), and the loss and every gradient, the
    input's too, match eager."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = SmallCNN()
    reference = copy.deepcopy(model)
    x = torch.randn(2, 3, 12, 12, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = torch.compile(model, backend="pallas_ir")(x).pow(2).mean()
        loss.backward()
    assert not [str(w.message) for w in caught if "pallas_ir:" in str(w.message)]
    want = reference(x_ref).pow(2).mean()
    want.backward()
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-4, atol=1e-6)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        assert p.grad is not None, f"{name} got no gradient"
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6, msg=name)
