"""Random ops (dropout, rand, randn, bernoulli, normal, uniform, exponential, randint,
randperm, multinomial): drawn from a seed torch's generator gives at every call, so a
compiled program repeats its draws after `torch.manual_seed`, draws anew at every
call, and keeps eager's shapes, dtypes, support and distribution. The numbers are
not eager's (another generator): the tests check those properties, not values."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support.programs import aot_failures

import pallas_ir

N = (64, 128)

PROGRAMS = {
    # name: (fn, inputs, expected mean, expected std) of the result's values
    "dropout": (lambda x: F.dropout(x, 0.25, training=True), [torch.ones(N)], 1.0, 0.577),
    "rand_like_plus_randn": (
        lambda x: torch.rand_like(x) + torch.randn(N),
        [torch.zeros(N)],
        0.5,
        (1 + 1 / 12) ** 0.5,
    ),
    "bernoulli": (lambda p: torch.bernoulli(p), [torch.full(N, 0.3)], 0.3, 0.458),
    "normal": (lambda m: torch.normal(m, 2.0), [torch.full(N, -1.0)], -1.0, 2.0),
    "uniform_": (lambda x: x.uniform_(-2, 3), [torch.zeros(N)], 0.5, 5 / 12**0.5),
    "exponential_": (lambda x: x.exponential_(2.0), [torch.zeros(N)], 0.5, 0.5),
    "randint": (lambda x: torch.randint(3, 10, (4096,)) + x, [torch.zeros(1)], 6.0, 2.0),
}


@pytest.fixture(scope="module")
def compiled():
    return {
        name: pallas_ir.compile(fn, [t.clone() for t in inputs])
        for name, (fn, inputs, _, _) in PROGRAMS.items()
    }


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_draws_repeat_after_manual_seed_and_change_between_calls(name, compiled) -> None:
    fn, inputs, mean, std = PROGRAMS[name]
    k = compiled[name]
    torch.manual_seed(7)
    first = k(*[t.clone() for t in inputs])
    torch.manual_seed(7)
    again = k(*[t.clone() for t in inputs])
    other = k(*[t.clone() for t in inputs])
    eager = fn(*[t.clone() for t in inputs])
    assert first.shape == eager.shape and first.dtype == eager.dtype
    assert torch.equal(first, again)
    assert not torch.equal(first, other)
    values = first.double()
    n = values.numel()
    # Five standard errors of the mean; the spread within 5%.
    assert abs(values.mean().item() - mean) < 5 * std / n**0.5
    assert abs(values.std().item() - std) < 0.05 * std


def test_dropout_keeps_or_scales_and_its_gradient_uses_the_same_mask() -> None:
    x = torch.randn(N, requires_grad=True)
    step = torch.compile(lambda x: F.dropout(x, 0.5, training=True), backend="pallas_ir")
    out = step(x)
    kept = out != 0
    torch.testing.assert_close(out[kept], x[kept] * 2)
    assert 0.45 < kept.float().mean().item() < 0.55
    out.sum().backward()
    torch.testing.assert_close(x.grad, kept.float() * 2)


def test_randperm_is_a_permutation_and_multinomial_draws_distinct_indices() -> None:
    perm = pallas_ir.compile(
        lambda x: torch.randperm(300) + x, [torch.zeros(1, dtype=torch.int64)]
    )
    p = perm(torch.zeros(1, dtype=torch.int64))
    assert p.dtype == torch.int64 and torch.equal(p.sort().values, torch.arange(300))
    weights = torch.rand(16, 40) + 0.05
    draw = pallas_ir.compile(lambda w: torch.multinomial(w, 10), [weights])
    picked = draw(weights)
    assert picked.shape == (16, 10) and picked.dtype == torch.int64
    assert all(len(set(row.tolist())) == 10 for row in picked)
    assert int(picked.min()) >= 0 and int(picked.max()) < 40


def test_random_programs_aot_compile_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)
