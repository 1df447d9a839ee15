"""int8, uint8, int16 and float16 inputs and results: widened to int32 / float32 at
the program's boundary, each integer op wrapping to its type's range as eager's does,
and a cast to float16 rounding to its precision. Against eager, and lowered for TPU."""

from __future__ import annotations

import pytest
import torch
from support.programs import aot_failures, compile_programs

from pallas_ir.check import arg_specs
from pallas_ir.tpu_check import lower_for_tpu


def _ints(dtype: torch.dtype, *shape: int) -> torch.Tensor:
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max + 1, shape, dtype=dtype)


PROGRAMS = {
    # Sums and products that leave int8's range wrap, as eager's do.
    "int8_wraps": (
        lambda x, y: (x + y * 3 - 1, x * y, -x, x.abs()),
        lambda: [_ints(torch.int8, 8, 128), _ints(torch.int8, 8, 128)],
    ),
    "uint8_wraps": (
        lambda x: (x * 7 + 200, -x, ~x, x // 3, x % 5),
        lambda: [_ints(torch.uint8, 8, 128)],
    ),
    "uint8_promotes": (  # to int64 (sum) and float32 (true division) as eager does
        lambda x: (x.sum(), x.sum(1), x / 2, x.to(torch.float32) * 0.5),
        lambda: [_ints(torch.uint8, 8, 128)],
    ),
    "int16_wraps": (
        lambda x: (x * x, x.abs(), x > 3, torch.where(x > 0, x, x - 30000)),
        lambda: [_ints(torch.int16, 8, 128)],
    ),
    "int8_mixed_with_int32": (
        lambda x, y: (x + y, (x * 100).to(torch.int32) + y),
        lambda: [_ints(torch.int8, 4, 128), torch.randint(-1000, 1000, (4, 128))],
    ),
    # Mosaic's argmax takes float32 only: of ints it is legalized (the first position
    # of the extreme, as eager's); ties are many in a small range.
    "int_argmax_with_ties": (
        lambda x, y: (x.max(1).values, x.max(1).indices, y.argmin(0), y.argmax(1)),
        lambda: [_ints(torch.int16, 8, 128), torch.randint(-3, 3, (16, 128))],
    ),
    "float16_compute": (
        lambda x, w: ((x * 2).exp(), x @ w, x.to(torch.float16) + 1, x.sum(1)),
        lambda: [torch.randn(8, 128).half(), torch.randn(128, 16).half()],
    ),
    # A cast to float16 inside the program rounds exactly as eager's (on TPU through
    # float32's bits: Mosaic on v5e has no float16 conversion).
    "float16_rounding_in_kernel": (
        lambda x: (x.half().float() * 1.0, (x * 3).half().float() - x),
        lambda: [_float16_boundaries()],
    ),
    "casts_to_narrow_types": (
        lambda x: (
            x.half(),
            x.to(torch.int8),
            (x * 3).to(torch.uint8),
            x.to(torch.int16),
        ),
        lambda: [torch.randn(8, 128) * 40],
    ),
}


def _float16_boundaries() -> torch.Tensor:
    """Ties to even (2049 -> 2048, 2051 -> 2052), the largest finite value and the
    overflow to inf, subnormals and their ties (2**-25 -> 0, 3 * 2**-25 -> 2**-23), a
    tiny negative (-0.0), NaN and infinities, then random values of every scale."""
    special = [2049.0, 2051.0, 65504.0, 65519.0, 65520.0, 1e-6, 2.0**-25, 3 * 2.0**-25]
    special += [-1e-8, 6.1e-5, float("nan"), float("inf"), -float("inf"), 0.1, -7.7]
    scales = torch.logspace(-9, 5, 1024 - len(special)) * torch.randn(1024 - len(special))
    return torch.cat([torch.tensor(special), scales]).reshape(8, 128)


@pytest.fixture(scope="module")
def compiled():
    return compile_programs(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got, want = k(*inputs), fn(*inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if name == "float16_rounding_in_kernel":
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
        elif w.dtype == torch.float16:  # computed in f32, rounded once at the end
            torch.testing.assert_close(g, w, rtol=2e-3, atol=1e-2)
        else:
            torch.testing.assert_close(g, w)  # integers exactly


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_lowers_for_tpu(name: str, compiled) -> None:
    k, _, _ = compiled[name]
    result = lower_for_tpu(k.source, arg_specs(k.module))
    assert result.ok, result.message


def test_aot_compiles_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)
