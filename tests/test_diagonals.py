"""Diagonals as Pallas kernels: `stride-to-reshape` reads a stride of w + 1 as one
loop dim on the last two dims of the (..., h, w) view, and the tiler loads the (t, t)
block on the diagonal and keeps its diagonal in the kernel. Each program against eager
(NaN and -0.0 on the diagonal included; 32-, 16- and 8-bit data), with no XLA kernel,
and the TPU compiler for v5e and v6e."""

from __future__ import annotations

import pytest
import torch
from support.programs import aot_failures

import pallas_ir


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


SPECIAL = torch.tensor([[float("nan"), 1.0], [2.0, -0.0]]).repeat(64, 64)
"""(128, 128) with NaN and -0.0 alternating down the diagonal."""

PROGRAMS = {
    "diagonal": (lambda x: x.diagonal() * 2, [_randn(256, 256)]),
    "above": (lambda x: x.diagonal(2) + 1, [_randn(256, 256)]),
    "below": (lambda x: x.diagonal(-3) + 1, [_randn(256, 256)]),
    "wide": (lambda x: x.diagonal() + 1, [_randn(64, 300)]),
    "tall": (lambda x: x.diagonal() + 1, [_randn(300, 200)]),
    "batched": (lambda x: x.diagonal(dim1=-2, dim2=-1) * 3, [_randn(4, 128, 128)]),
    "trace": (torch.trace, [_randn(512, 512)]),
    "large": (lambda x: x.diagonal() * 2, [_randn(1000, 1000)]),
    "int32": (
        lambda x: x.diagonal() + 1,
        [
            torch.randint(
                -5,
                5,
                (256, 256),
                generator=torch.Generator().manual_seed(1),
                dtype=torch.int32,
            )
        ],
    ),
    "nan_and_negative_zero": (lambda x: x.diagonal() * 1.0, [SPECIAL]),
    "bfloat16": (lambda x: x.diagonal() * 2, [_randn(256, 256).bfloat16()]),
    "float16": (lambda x: x.diagonal() * 2, [_randn(256, 256).half()]),
    "int8": (lambda x: x.diagonal() + 1, [(_randn(256, 256) * 50).to(torch.int8)]),
    "scaled_rows": (
        lambda a, d: d.diagonal()[:, None] * a,
        [_randn(128, 256), _randn(128, 128)],
    ),
}


@pytest.fixture(scope="module")
def compiled() -> dict[str, pallas_ir.compiler.CompiledFunction]:
    return {
        name: pallas_ir.compile(fn, inputs, cache=False)
        for name, (fn, inputs) in PROGRAMS.items()
    }


@pytest.mark.parametrize("name", PROGRAMS)
def test_matches_eager(name: str, compiled) -> None:
    fn, inputs = PROGRAMS[name]
    got, want = compiled[name](*inputs), fn(*inputs)
    exact = {} if name == "trace" else {"rtol": 0, "atol": 0}  # trace sums in its order
    torch.testing.assert_close(got, want, equal_nan=True, **exact)
    assert torch.equal(torch.signbit(got), torch.signbit(want))  # -0.0 kept
    report = compiled[name].cost_report()
    assert report.calls and not report.xla_calls


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_diagonal_kernels_compile_for_tpu(chip: str, compiled) -> None:
    assert not aot_failures(compiled, chip)
