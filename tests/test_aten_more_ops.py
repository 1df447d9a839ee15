"""More ATen ops of issue 14 against eager PyTorch: `angle` of real data and `frexp`
(from the float32 bits: subnormals, 0, -0, inf, NaN), the flat-position reads and
writes (`take`, `put` with repeated indices and `accumulate`, `as_strided_scatter`,
`masked_scatter`, `masked_select` by a mask made of constants, `nonzero_static`),
`segment_reduce` by lengths and by offsets, and library calls and random draws of
zero-size values. The run-time checks raise as eager does; every module AOT-compiles
for v5e."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from support.programs import (
    aot_failures,
    assert_like_eager,
    compile_programs,
    flat,
    library_call_reference,
)

import pallas_ir
from pallas_ir.frontend.kernel_builder import UnsupportedError

NAN, INF = math.nan, math.inf
SUBNORMALS = [1e-40, -3e-45, 1.1754942e-38, -1.1754942e-38, 1.4e-45]
EDGES = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.75, -5.0, 3.4e38, 1.17549435e-38]


def _edges(n: int = 64) -> torch.Tensor:
    t = torch.randn(n) * 100
    edges = torch.tensor(EDGES + SUBNORMALS, dtype=torch.float32)
    t[: len(edges)] = edges
    return t.reshape(8, n // 8)


def _segment_data() -> list[torch.Tensor]:
    data = torch.randn(7, 3)
    data[5, 1] = NAN
    return [data, torch.tensor([2, 0, 4, 1, 0]), torch.tensor([0, 2, 2, 6, 7, 7])]


def _segments(data: torch.Tensor, lengths: torch.Tensor, offsets: torch.Tensor):
    return (
        *(torch.segment_reduce(data, r, lengths=lengths) for r in ["mean", "max"]),
        *(
            torch.segment_reduce(data, r, offsets=offsets, initial=0.5)
            for r in ["prod", "mean"]
        ),
    )


PROGRAMS = {
    "angle_real": (
        lambda x, i: (torch.angle(x), torch.angle(i)),
        lambda: [_edges(), torch.tensor([-3, 0, 2])],
    ),
    "frexp": (lambda x: torch.frexp(x), lambda: [_edges()]),
    "take": (
        lambda x, i, s, j: (torch.take(x, i), torch.take(s, j)),
        lambda: [
            torch.randn(3, 4),
            torch.tensor([[0, -1, 5], [11, -12, 3]]),
            torch.tensor(2.5),
            torch.tensor(-1),
        ],
    ),
    # 24 points, repeated and negative: the scatter on XLA; 3: element-wise
    "put": (
        lambda x, i, v, j, w: (
            x.put(i, v, accumulate=True),
            x.put(j, w),
            x.put(j[:2], w[:2] * 2, accumulate=True),
        ),
        lambda: [
            torch.randn(4, 5),
            torch.randint(-20, 20, (4, 6)),
            torch.randn(4, 6),
            torch.tensor([7, -1, 0]),
            torch.randn(3),
        ],
    ),
    "as_strided_scatter": (
        lambda x, s, y, t: (
            torch.as_strided_scatter(x, s, (2, 2), (1, 2)),
            torch.as_strided_scatter(y, t, (4, 8), (16, 2), 1),
        ),
        lambda: [
            torch.randn(3, 3),
            torch.randn(2, 2),
            torch.randn(8, 16),
            torch.randn(4, 8),
        ],
    ),
    "masked_scatter": (
        lambda x, m, s, r, e: (
            x.masked_scatter(m, s),
            x.masked_scatter(r, s[:12]),
            x.masked_scatter(m & False, e),
        ),
        lambda: [
            torch.randn(5, 6),
            torch.rand(5, 6) > 0.5,
            torch.randn(40),
            torch.tensor([True, False, False, False, True, False]),
            torch.randn(0),
        ],
    ),
    "masked_select_constant_mask": (
        lambda x: (
            torch.combinations(x, r=2),
            torch.combinations(x[:4], r=2, with_replacement=True),
            x.masked_select(torch.zeros(6, dtype=torch.bool)),
        ),
        lambda: [torch.randn(6)],
    ),
    "nonzero_static": (
        lambda x: (
            torch.nonzero_static(x, size=20),
            torch.nonzero_static(x > 0, size=3, fill_value=7),
        ),
        lambda: [torch.tensor([[0.0, 1.5, 0.0, -2.0], [NAN, 0.0, 3.0, -0.0]])],
    ),
    "segment_reduce": (_segments, _segment_data),
    "zero_size_library_calls": (
        lambda x, e: (
            torch.randn_like(e),
            torch.rand_like(e),
            torch.bernoulli(e.abs().clamp(max=1)),
            torch.sort(e, dim=1).values,
            torch.cumsum(e, 0),
            torch.linalg.det(x[:0, :0]),
            torch.histc(e.flatten(), bins=4, min=0, max=1),
            x + 1,
        ),
        lambda: [torch.randn(3, 3), torch.randn(0, 5, 0)],
    ),
}


@pytest.fixture(scope="module")
def compiled():
    return compile_programs(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    assert_like_eager(k(*inputs), fn(*inputs))


def test_nonzero_static_ta_reference_matches_eager(compiled) -> None:
    """The ta module's meaning (the reference interpreter runs the library call on
    numpy arrays) is eager's."""
    k, fn, inputs = compiled["nonzero_static"]
    for g, w in zip(library_call_reference(k, inputs), flat(fn(*inputs))):
        np.testing.assert_array_equal(g, w.numpy())


def test_aot_compile_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)


def test_run_time_checks_raise_as_eager(compiled) -> None:
    k, _, inputs = compiled["take"]
    x, i, s, j = inputs
    with pytest.raises(IndexError):
        k(x, i + 1, s, j)
    k, _, (x, m, s, _, e) = compiled["masked_scatter"]
    with pytest.raises(RuntimeError, match="source has 12"):
        k(x, m, s, torch.ones(6, dtype=torch.bool), e)
    k, _, (data, lengths, offsets) = compiled["segment_reduce"]
    with pytest.raises(RuntimeError, match="do not cover"):
        k(data, lengths + 1, offsets)
    with pytest.raises(RuntimeError, match="do not cover"):
        k(data, lengths, offsets + 1)
    k, _, (x, i, v, j, w) = compiled["put"]
    with pytest.raises(IndexError):
        k(x, i, v, j + 20, w)


def test_masked_select_by_data_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="data-dependent output shape"):
        pallas_ir.compile(lambda x: x.masked_select(x > 0), [torch.randn(4)])


def test_overlapping_strided_scatter_beyond_selects_is_refused() -> None:
    # 16 points on 7 places: XLA's scatter would pick any of the colliding writes.
    fn = lambda x, s: torch.as_strided_scatter(x, s, (4, 4), (1, 1))
    with pytest.raises(UnsupportedError, match="more than once"):
        pallas_ir.compile(fn, [torch.zeros(20), torch.randn(4, 4)])
