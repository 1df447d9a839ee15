"""Values a program reads back to Python while traced (`.item()`, a Python `if` on a
tensor, a tensor `narrow` start, `torch.equal`, `torch.allclose`): the compiled
program is specialised on them and checks them at every call, against eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import pallas_ir
from pallas_ir import UnsupportedError


def _program(x, start):
    rows = torch.narrow(x, 0, start, 2)
    if (x > 100).any():  # a Python `if` on data
        rows = rows - 100
    return rows * 2, x.sum().item(), torch.equal(x, x + 0), torch.allclose(x, x * 1.5)


X = torch.randn(5, 3, generator=torch.Generator().manual_seed(0))


@pytest.fixture(scope="module")
def compiled():
    return pallas_ir.compile(_program, [X, torch.tensor(1)])


def test_specialised_program_matches_eager(compiled):
    got, want = compiled(X, torch.tensor(1)), _program(X, torch.tensor(1))
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]


def test_a_changed_value_raises_naming_the_line(compiled):
    with pytest.raises(UnsupportedError, match="specialised on 1; this call's is 3") as e:
        compiled(X, torch.tensor(3))
    assert "torch.narrow(x, 0, start, 2)" in str(e.value)
    with pytest.raises(UnsupportedError, match="specialised on 0; this call's is 1"):
        compiled(X + 200, torch.tensor(1))  # the `if` would take the other branch


def test_a_float_read_back_allows_rounding_not_change(compiled):
    tiny = X.clone()
    tiny[0, 0] += 1e-7  # the sum moves in its last bits: the same program
    assert compiled(tiny, torch.tensor(1))[1] == pytest.approx(X.sum().item())
    with pytest.raises(UnsupportedError, match="compile again"):
        compiled(X + 1, torch.tensor(1))


def test_the_check_stays_on_without_runtime_checks():
    fn = lambda x: x * x.max().item()
    compiled = pallas_ir.compile(fn, [X], runtime_checks=False)
    torch.testing.assert_close(compiled(X), fn(X))
    with pytest.raises(UnsupportedError, match="compile again"):
        compiled(X * 2)


def test_gaussian_nll_loss_checks_its_variances_as_eager():
    fn = lambda a, b, v: F.gaussian_nll_loss(a, b, v, reduction="none")
    g = torch.Generator().manual_seed(1)
    a, b, v = (
        torch.randn(8, generator=g),
        torch.randn(8, generator=g),
        torch.rand(8, generator=g),
    )
    compiled = pallas_ir.compile(fn, [a, b, v])
    torch.testing.assert_close(compiled(a, b, v), fn(a, b, v))
    with pytest.raises(ValueError):
        fn(a, b, -v)  # eager refuses negative variances; the compiled program too
    with pytest.raises(UnsupportedError, match="specialised on 0"):
        compiled(a, b, -v)


def test_the_trace_runs_on_data_only_where_the_program_reads_it():
    """The frontend traces on fake tensors (no eager compute), and again on the example
    inputs where the program reads a value back (`.item()`): both compile and match
    eager."""
    from torch._subclasses.fake_tensor import FakeTensor

    seen: list[bool] = []

    def scaled(x):
        seen.append(isinstance(x, FakeTensor))
        return x * 2

    def by_its_sum(x):
        seen.append(isinstance(x, FakeTensor))
        return x * x.sum().item()

    x = torch.randn(8, 128, generator=torch.Generator().manual_seed(1))
    for fn, traced_on in ((scaled, [True]), (by_its_sum, [True, False])):
        want = fn(x)
        seen.clear()
        compiled = pallas_ir.compile(fn, [x])
        assert seen == traced_on  # fake tensors; then the example inputs, if it reads
        torch.testing.assert_close(compiled(x), want)
