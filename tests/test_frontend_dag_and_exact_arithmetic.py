"""Hostile and unusual input to the torch frontend, against eager PyTorch:

- values used many times: a kernel emits each value once per index (the program is a
  DAG, not a tree), so the emitted IR grows with the program, not with its paths;
- chains of a thousand ops: a chain is materialised every MAX_FUSED_DEPTH ops; a wide
  DAG, in kernels of at most MAX_FUSED_OPS ops;
- float fmod, remainder and floor division at boundary values, exact as torch's CPU
  kernels compute them (C's fmod and c10's `div_floor_floating`), of scalar dividends
  (`1.4 % x`) and of quotients of 0 and of 0.0 divided again, and their kernels
  AOT-compile for v5e;
- sign of NaN and of -0 (+0, as eager), var/std/mean over dims of length 1 (NaN
  where the divisor N - correction is not positive, as eager).
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import warnings

import numpy as np
import pytest
import torch

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.dialects.tensor_access import KernelOp
from pallas_ir.frontend.lowerings import registry
from pallas_ir.frontend.lowerings.registry import MAX_FUSED_DEPTH
from pallas_ir.reference.ta import run_forward
from pallas_ir.tpu_check import aot_compile_many


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def _kernel_ops(k) -> list[collections.Counter[str]]:
    """The ops of each kernel's loop body in the ta module, counted by name."""
    module = pallas_ir.parse(k.ir["ta"])
    kernels = [op for op in module.ops if isinstance(op, KernelOp)]
    return [
        collections.Counter(
            op.name for op in kernel.walk() if op.name not in ("ta.kernel", "ta.loop")
        )
        for kernel in kernels
    ]


# --- values used many times -----------------------------------------------------------


def test_a_value_used_twice_is_emitted_once() -> None:
    # Expanded as a tree, this chain is 2^14 sigmoids (minutes to compile); as a DAG,
    # each step is its five scalar ops.
    def swish_chain(x):
        for _ in range(14):
            x = x * torch.sigmoid(x)
        return x

    x = _randn(8, 128)
    k = pallas_ir.compile(swish_chain, [x])
    torch.testing.assert_close(k(x), swish_chain(x))
    (ops,) = _kernel_ops(k)
    # sigmoid is 1 / (1 + exp(-x)): negf, exp, addf, divf; then the mulf. One load of
    # x, one constant 1.0 for all of them, one store.
    step = ["arith.negf", "math.exp", "arith.addf", "arith.divf", "arith.mulf"]
    assert ops == collections.Counter(
        {**dict.fromkeys(step, 14), "ta.load": 1, "arith.constant": 1, "ta.store": 1}
    )


def test_forty_doublings_are_forty_adds() -> None:
    def doubled(x):
        for _ in range(40):
            x = x + x
        return x

    x = _randn(8, 128)
    k = pallas_ir.compile(doubled, [x])
    torch.testing.assert_close(k(x), doubled(x), rtol=0, atol=0)
    assert _kernel_ops(k) == [
        collections.Counter({"arith.addf": 40, "ta.load": 1, "ta.store": 1})
    ]


def test_a_value_shared_by_a_fused_reduction_and_its_consumer_is_emitted_once() -> None:
    # The row sum is a fused reduction, computed in the output's kernel: the chain
    # fuses into it once, for both the sum and the division.
    def normalised(x):
        for _ in range(12):
            x = x * torch.sigmoid(x)
        return x / x.sum(-1, keepdim=True)

    x = _randn(8, 128)
    k = pallas_ir.compile(normalised, [x])
    torch.testing.assert_close(k(x), normalised(x))
    assert [ops["math.exp"] for ops in _kernel_ops(k)] == [12]


def test_rolls_compute_each_value_once_per_place() -> None:
    # x_n at column j needs x_(n-1) at j and j - 1: x_(n-m) is needed at the m + 1
    # columns j .. j - m, n(n+1)/2 adds in all. torch.roll reads its operand at a
    # rotation index, `(j + 127) mod 128`; so does the cat of two slices that rotate
    # x (each part's slice at the same rotated place). Without the places being
    # recognised as equal, both grow as 2^n.
    n = 12

    def rolled(x):
        for _ in range(n):
            x = x + x.roll(1, -1)
        return x

    def concatenated(x):
        for _ in range(n):
            x = x + torch.cat([x[:, -1:], x[:, :-1]], 1)
        return x

    x = _randn(8, 128)
    for fn in (rolled, concatenated):
        k = pallas_ir.compile(fn, [x])
        torch.testing.assert_close(k(x), fn(x))
        (ops,) = _kernel_ops(k)
        assert ops["arith.addf"] == n * (n + 1) // 2, fn.__name__


def test_a_chain_of_a_thousand_ops_compiles_and_matches() -> None:
    # Emitting recurses through a fused chain, so a chain is materialised every
    # MAX_FUSED_DEPTH ops: 1000 ops are 16 kernels of at most 64 ops each.
    def chain(x):
        for i in range(1000):
            x = x * 1.0001 if i % 2 else x + 0.5
        return x

    x = _randn(8, 128)
    k = pallas_ir.compile(chain, [x])
    torch.testing.assert_close(k(x), chain(x))
    kernels = _kernel_ops(k)
    computed = [ops["arith.addf"] + ops["arith.mulf"] for ops in kernels]
    assert sum(computed) == 1000
    assert max(computed) == MAX_FUSED_DEPTH
    assert len(kernels) == math.ceil(1000 / MAX_FUSED_DEPTH)


def test_a_wide_dag_is_split_into_bounded_kernels(monkeypatch) -> None:
    # A sum of 60 terms, added pairwise: no chain is longer than 9 ops, but one kernel
    # of all 239 would hold every term live in its body; each op that would fuse more
    # than MAX_FUSED_OPS reads its largest operands from buffers instead. The bound is
    # lowered here so that the test traces few ops (tracing costs about 40 ms an op).
    bound = 40
    monkeypatch.setattr(registry, "MAX_FUSED_OPS", bound)

    def wide(x):
        terms = [torch.sin(x * (i + 1)) + i for i in range(60)]
        while len(terms) > 1:
            pairs = zip(terms[::2], terms[1::2])
            terms = [a + b for a, b in pairs] + terms[len(terms) // 2 * 2 :]
        return terms[0]

    x = _randn(8, 128)
    k = pallas_ir.compile(wide, [x], runtime_checks=False)
    torch.testing.assert_close(k(x), wide(x), rtol=1e-5, atol=1e-3)
    computed = [
        ops["math.sin"] + ops["arith.mulf"] + ops["arith.addf"] for ops in _kernel_ops(k)
    ]
    assert sum(computed) == 60 * 3 + 59  # each op in one kernel only
    assert max(computed) <= bound
    assert len(computed) <= 2 * math.ceil(sum(computed) / bound)


# --- fmod, remainder, floor division --------------------------------------------------

# Boundary values: near multiples (2.0999999 % 0.7 is 0.6999999), negative operands,
# large ratios (1e30 % 3, 3.4e38 % 0.1), tiny divisors, zeros, infinities, NaN. No
# subnormals: XLA on CPU and the TPU flush them to zero (and so eager differs there
# for a reason of the platform); with divisors from 1e-30 up, results are normal too.
_DIVIDENDS = [2.0999999, 2.1, -2.1, 0.7, -0.7, 1e30, -1e30, 3.4e38, -3.4e38, 5.0, -5.0]
_DIVIDENDS += [0.0, -0.0, 1e-30, 7.0, 6.9999995, 1.0, -1.0, 0.3, 100.0, 16777217.0]
_DIVIDENDS += [3.0, -3.0, 1.2e-38, math.inf, -math.inf, math.nan]
_DIVISORS = [0.7, -0.7, 3.0, -3.0, 1e-30, -1e-30, 0.1, 1e30, 2.0, 0.3, -1.0, 3.4e38]
_DIVISORS += [math.inf, -math.inf, 0.0, -0.0, math.nan]


def _operands() -> tuple[torch.Tensor, torch.Tensor]:
    """Every boundary pair, and dividends within an ulp of a multiple of the divisor
    (k * b and its neighbours) for random divisors of either sign and size."""
    pairs = list(itertools.product(_DIVIDENDS, _DIVISORS))
    a = torch.tensor([p[0] for p in pairs])
    b = torch.tensor([p[1] for p in pairs])
    g = torch.Generator().manual_seed(0)
    divisors = torch.exp(torch.empty(300).uniform_(-20, 20, generator=g))
    divisors = divisors * torch.where(torch.rand(300, generator=g) < 0.5, -1.0, 1.0)
    multiples = torch.randint(-(10**6), 10**6, (300,), generator=g) * divisors
    near = torch.cat(
        [
            torch.nextafter(multiples, torch.tensor(math.inf)),
            multiples,
            torch.nextafter(multiples, torch.tensor(-math.inf)),
        ]
    )
    return torch.cat([a, near]), torch.cat([b, divisors.repeat(3)])


def _one_at_a_time(fn, *tensors: torch.Tensor) -> torch.Tensor:
    """Eager `fn` element by element. A one-element tensor runs torch's scalar CPU
    kernel (C's fmod); its vectorized kernel, on longer tensors, computes fmod as NaN
    where a / b overflows float32 (1e30 % 1e-30)."""
    return torch.cat(
        [fn(*(t[i : i + 1] for t in tensors)) for i in range(len(tensors[0]))]
    )


def _assert_identical(got: torch.Tensor, want: torch.Tensor) -> None:
    """Equal bit for bit up to NaN payloads: values, NaNs and the sign of zeros."""
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    same_sign = torch.signbit(got) == torch.signbit(want)
    assert bool((same_sign | want.isnan()).all())


_ROUNDED_DIVISIONS = {
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "floor_divide": torch.floor_divide,
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
}
_BY_SCALAR = {
    "fmod_scalar": lambda a: torch.fmod(a, -0.7),
    "remainder_scalar": lambda a: torch.remainder(a, 0.7),
    "remainder_large_ratio": lambda a: torch.remainder(a * 1e30, 3.0),
    "floor_divide_scalar": lambda a: a // 0.7,
    "div_trunc_scalar": lambda a: torch.div(a, 0.7, rounding_mode="trunc"),
}


def test_fmod_remainder_and_floor_division_are_exact() -> None:
    a, b = _operands()
    sources = []
    for name, fn in _ROUNDED_DIVISIONS.items():
        k = pallas_ir.compile(fn, [a, b])
        _assert_identical(k(a, b), _one_at_a_time(fn, a, b))
        sources.append((k.source, arg_specs(k.module)))
    for name, fn in _BY_SCALAR.items():
        x = a
        if name in ("floor_divide_scalar", "div_trunc_scalar"):
            # XLA divides by a constant as it multiplies by the constant's reciprocal,
            # one rounding more (`x / 0.7` differs from eager by an ulp at times, as
            # anywhere in a program): beyond 2^22 the quotient's rounding is the result,
            # below it floor division's adjustments make it whole as eager's.
            x = a[~((a / 0.7).abs() >= 2**22)]
        k = pallas_ir.compile(fn, [x])
        _assert_identical(k(x), _one_at_a_time(fn, x))
        sources.append((k.source, arg_specs(k.module)))
    # The example of the issue: eager's 0.6999999, not -6e-8.
    k = pallas_ir.compile(lambda x: torch.remainder(x, 0.7), [torch.tensor([2.0999999])])
    assert k(torch.tensor([2.0999999])).item() == np.float32(0.6999999)
    results = aot_compile_many(sources, chip="v5e")
    assert all(r.ok for r in results), [r.message for r in results if not r.ok]


def _each_at_a_time(fn, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`_one_at_a_time` for a function of several results."""
    parts = [fn(*(t[i : i + 1] for t in tensors)) for i in range(len(tensors[0]))]
    return tuple(torch.cat(results) for results in zip(*parts, strict=True))


def _scalar_dividends(x):
    # aten.remainder.Scalar_Tensor, and div.Tensor_mode of a scalar dividend.
    return 1.4 % x, 0.0 % x, -0.0 % x, -1 % x, -0.1 // x, 5 // x


def _through_zero_and_infinite_quotients(a, b):
    # The fuzzer's findings: quotients of 0 and of 0.0 divided again (+-0, +-inf, NaN).
    q = torch.div(a, b, rounding_mode="floor")
    by_zero = torch.tanh(torch.div(a, 0.0, rounding_mode="floor"))
    return -0.1 // q, torch.div(by_zero, b, rounding_mode="trunc"), 0.7 % q


def test_scalar_dividends_and_divisions_of_zero_and_infinite_quotients_are_exact() -> (
    None
):
    pairs = list(itertools.product(_DIVIDENDS, _DIVISORS))
    a = torch.tensor([p[0] for p in pairs])
    b = torch.tensor([p[1] for p in pairs])
    # (Not 1.2e-38 as a divisor: remainders of it are subnormal.)
    x = torch.tensor([v for v in _DIVIDENDS if v != 1.2e-38] + _DIVISORS)
    ints = torch.tensor([1, -1, 3, -3, 7, -7, 2**30, 1 - 2**31])
    # Near multiples of 0.7 by -0.35: XLA multiplies by the reciprocal, which rounds
    # some quotients up to the next whole number where eager's division does not.
    multiples = torch.arange(-20, 21) * torch.tensor(0.7)
    near = [torch.nextafter(multiples, torch.tensor(s * math.inf)) for s in (1, -1)]
    near = torch.cat([multiples, *near])
    sources = []
    for fn, inputs in [
        (_scalar_dividends, [x]),
        (_scalar_dividends, [ints]),
        (_through_zero_and_infinite_quotients, [a, b]),
        (lambda t: (torch.div(t, -0.35, rounding_mode="trunc"),), [near]),
    ]:
        k = pallas_ir.compile(fn, inputs)
        for got, want in zip(k(*inputs), _each_at_a_time(fn, *inputs), strict=True):
            _assert_identical(got, want)
        sources.append((k.source, arg_specs(k.module)))
    # An integer divisor of 0 raises, as eager.
    k = pallas_ir.compile(lambda t: -1 % t, [ints])
    with pytest.raises(ZeroDivisionError, match="remainder.Scalar_Tensor: integer"):
        k(torch.tensor([3, 0] * 4))
    results = aot_compile_many(sources, chip="v5e")
    assert all(r.ok for r in results), [r.message for r in results if not r.ok]


def test_the_reference_interpreter_computes_fmod_as_the_kernels() -> None:
    a, b = _operands()
    scalar_dividends = (lambda a, b: -1 % b, lambda a, b: -0.1 // b)
    for fn in (torch.fmod, torch.remainder, torch.floor_divide, *scalar_dividends):
        k = pallas_ir.compile(fn, [a, b])
        (got,) = run_forward(pallas_ir.parse(k.ir["ta"]), a.numpy(), b.numpy())
        with warnings.catch_warnings():  # numpy's warnings on 0 / 0 and inf % b
            warnings.simplefilter("ignore", RuntimeWarning)
            _assert_identical(torch.from_numpy(got), _one_at_a_time(fn, a, b))


# --- sign, and statistics over dims of length 1 ---------------------------------------


def test_sign_of_nan_and_of_negative_zero_is_positive_zero() -> None:
    x = torch.tensor([math.nan, -math.nan, -0.0, 0.0, 1e-30, -1e-30, 2.0, -3.0])
    x = torch.cat([x, torch.tensor([math.inf, -math.inf])])
    for fn in (torch.sign, torch.sgn, lambda t: torch.sign(t.bfloat16())):
        k = pallas_ir.compile(fn, [x])
        _assert_identical(k(x), fn(x))
    ints = torch.tensor([3, -2, 0], dtype=torch.int32)
    torch.testing.assert_close(pallas_ir.compile(torch.sign, [ints])(ints), ints.sign())


def test_var_std_and_mean_over_dims_of_length_one() -> None:
    def statistics(x, dim):
        return (
            x.var(dim),
            x.std(dim, keepdim=True),
            x.var(dim, correction=0),
            *torch.var_mean(x, dim),
            x.mean(dim),
            x.var(dim, correction=3),
            x.std(dim, correction=0),
        )

    with warnings.catch_warnings():  # torch: "degrees of freedom is <= 0"
        warnings.simplefilter("ignore", UserWarning)
        for shape, dim in [
            ((8, 1), -1),
            ((1, 8), 0),
            ((3, 1, 5), (1,)),
            ((2, 1, 1), (1, 2)),
        ]:
            x = _randn(*shape)
            fn = functools.partial(statistics, dim=dim)
            for got, want in zip(pallas_ir.compile(fn, [x])(x), fn(x), strict=True):
                torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
