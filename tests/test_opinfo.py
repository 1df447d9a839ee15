"""A bounded slice of PyTorch's OpInfo database (`op_db`) through `pallas_ir.compile`,
against eager PyTorch (`pallas_ir.frontend.opinfo_sweep`; the whole database runs in
`benchmarks/opinfo.py`). Each op's first SAMPLES samples, drawn seeded, must pass:
results (values, dtypes, shapes) and written inputs as eager's. An op of a family
that is a Pallas idiom must launch a `pallas_call` on every sample.

To add an op, put its `(name, variant)` in FLOAT32 (or with a dtype in
OTHER_DTYPES) once `python benchmarks/opinfo.py --ops NAME` shows it passing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput

import pallas_ir
from pallas_ir.frontend.opinfo_sweep import (
    DTYPES,
    check_op,
    check_sample,
    find_op,
    op_id,
    samples,
    sweep,
)

SAMPLES = 3

FLOAT32: tuple[tuple[str, str], ...] = (
    # elementwise unary
    ("abs", ""),
    ("sin", ""),
    ("tanh", ""),
    ("sqrt", ""),
    ("floor", ""),
    ("nn.functional.relu", ""),
    ("nn.functional.hardtanh", ""),
    # elementwise binary and ternary
    ("add", ""),
    ("div", "floor_rounding"),
    ("atan2", ""),
    ("maximum", ""),
    ("pow", ""),
    ("where", ""),
    ("addcmul", ""),
    ("logical_and", ""),
    # reductions
    ("var_mean", ""),
    ("trace", ""),
    ("norm", "fro"),
    # matmul
    ("addmm", ""),
    ("baddbmm", ""),
    ("matmul", ""),
    ("einsum", ""),
    # nn functional
    ("softmax", ""),
    ("native_layer_norm", ""),
    ("nn.functional.cross_entropy", ""),
    ("nn.functional.gelu", ""),
    # views and shapes
    ("view", ""),
    ("transpose", ""),
    ("cat", ""),
    ("flip", ""),
    ("tril", ""),
    # index reads and writes
    ("gather", ""),
    ("index_add", ""),
    ("select_scatter", ""),
    # creation
    ("zeros", ""),
    ("scalar_tensor", ""),
    # special functions (expanded for Mosaic) and more element-wise math
    ("erfinv", ""),
    ("copysign", ""),
    ("hypot", ""),
    # more matmuls and index writes
    ("addbmm", ""),
    ("diagonal_scatter", ""),
    # library calls on XLA: sorting, convolution and pooling
    ("sort", ""),
    ("msort", ""),
    ("topk", ""),
    ("nn.functional.conv2d", ""),
    ("nn.functional.max_pool2d", ""),
    # resampling and padding through decompositions
    ("nn.functional.interpolate", "bilinear"),
    ("nn.functional.pad", "reflect"),
    # bit-level element-wise ops, index reads and writes, segments
    ("angle", ""),
    ("frexp", ""),
    ("take", ""),
    ("masked_scatter", ""),
    ("combinations", ""),
    ("_segment_reduce", "lengths"),
    # values read back to Python while tracing (the program is specialised on them)
    ("narrow", ""),
    ("equal", ""),
)

OTHER_DTYPES: tuple[tuple[str, str, str], ...] = (
    ("add", "", "bfloat16"),
    ("softmax", "", "bfloat16"),
    ("matmul", "", "bfloat16"),
    ("add", "", "int32"),
    ("floor_divide", "", "int32"),
    ("abs", "", "int32"),
    ("nn.functional.bilinear", "", "int32"),  # its sum stays int32, as eager's
    ("sort", "", "bfloat16"),  # ties of an unstable sort in another order than eager's
    ("nn.functional.embedding_bag", "", "bfloat16"),  # bags summed in float32
    ("softmax", "", "float64"),
    ("sum", "", "float64"),
)

PALLAS_IDIOMS = frozenset(
    {"elementwise unary", "elementwise binary", "reduction", "matmul", "nn functional"}
)
"""Families docs/torch.md lowers to Pallas kernels: their ops must launch one."""

ON_XLA_BY_THE_TILER: dict[str, str] = {}
"""Ops of those families whose one kernel the tiler hands to XLA, with a remark, and
why. (A copy of the result into the output used to be a Pallas kernel, so they
launched one; the result is returned as it is now.)"""


def _check(name: str, variant: str, dtype: str) -> None:
    op = find_op(name, variant)
    result = check_op(op_id(op), dtype, SAMPLES, pallas_ir.compile)
    counted = [s for s in result.samples if s.status != "eager_error"]
    assert counted, f"{op_id(op)}: eager rejects every sample"
    failed = [
        f"{s.status}: {s.description}: {s.message}" for s in counted if s.status != "pass"
    ]
    assert not failed, f"{op_id(op)} {dtype}:\n" + "\n".join(failed)
    pallas = result.family in PALLAS_IDIOMS and op_id(op) not in ON_XLA_BY_THE_TILER
    if pallas and dtype != "float64":  # float64 runs on XLA
        kernelless = [s.description for s in counted if s.computes and not s.pallas]
        assert not kernelless, (
            f"{op_id(op)} ({result.family}) launches no pallas_call on "
            + ", ".join(kernelless)
        )


@pytest.mark.parametrize(("name", "variant"), FLOAT32, ids=lambda v: v or "-")
def test_float32_op_matches_eager(name: str, variant: str) -> None:
    _check(name, variant, "float32")


@pytest.mark.parametrize(
    ("name", "variant", "dtype"), OTHER_DTYPES, ids=lambda v: v or "-"
)
def test_op_matches_eager_in_dtype(name: str, variant: str, dtype: str) -> None:
    _check(name, variant, dtype)


# The classifier itself, with stand-ins for pallas_ir.compile.


def _first_add_sample():
    op = find_op("add")
    return op, samples(op, torch.float32, 2)[1]


def test_a_result_off_by_one_is_wrong() -> None:
    op, sample = _first_add_sample()

    def off(fn, inputs):
        return lambda *t: fn(*t) + 1

    r = check_sample(op, sample, DTYPES["float32"], off)
    assert r.status == "wrong" and "result" in r.message and not r.pallas


def _then_edits(i: int, edit: Callable[[torch.Tensor], object]) -> Callable:
    """A stand-in for pallas_ir.compile: eager, then `edit` applied to input `i` in
    place (a written input unlike eager's)."""

    def compile(fn, inputs):
        def run(*t):
            out = fn(*t)
            edit(t[i])
            return out

        return run

    return compile


def test_a_written_input_unlike_eager_is_wrong() -> None:
    op, sample = _first_add_sample()
    writes = _then_edits(0, lambda t: t.add_(1))
    r = check_sample(op, sample, DTYPES["float32"], writes)
    assert r.status == "wrong" and r.message.startswith("input 0")


def test_another_dtype_is_wrong() -> None:
    op, sample = _first_add_sample()
    r = check_sample(
        op, sample, DTYPES["float32"], lambda fn, i: lambda *t: fn(*t).double()
    )
    assert r.status == "wrong" and "dtype" in r.message


def test_unsupported_and_other_exceptions_are_told_apart() -> None:
    op, sample = _first_add_sample()

    def refuses(fn, inputs):
        raise pallas_ir.UnsupportedError("aten.add.Tensor", "no lowering to ta yet")

    def crashes(fn, inputs):
        raise ZeroDivisionError("integer modulo by zero")

    r = check_sample(op, sample, DTYPES["float32"], refuses)
    assert (r.status, r.missing) == ("unsupported", "aten.add.Tensor")
    r = check_sample(op, sample, DTYPES["float32"], crashes)
    assert r.status == "error" and r.key.startswith("ZeroDivisionError")


def test_eager_errors_are_not_counted() -> None:
    op = find_op("add")
    sample = SampleInput(torch.ones(2, 3), args=(torch.ones(7),))  # no broadcast
    r = check_sample(op, sample, DTYPES["float32"], pallas_ir.compile)
    assert r.status == "eager_error"


def test_the_sweep_runs_ops_in_a_worker() -> None:
    results = list(sweep([("abs", "float32")], pallas_ir.compile, n=1, jobs=1))
    assert [(r.op, r.dtype, r.status, r.pallas) for r in results] == [
        ("abs", "float32", "pass", True)
    ]


def test_a_result_closer_to_float64_than_eager_is_not_wrong() -> None:
    """`matrix_exp` of large entries: eager's float32 is far from the float64 answer;
    a result halfway between them is eager's conditioning, not a wrong answer."""
    op = find_op("matrix_exp")
    (sample,) = [s for s in samples(op, torch.float32, 3) if s.input.shape == (5, 5, 5)]

    def halfway(fn, inputs):
        def run(x):
            eager, exact = fn(x), torch.linalg.matrix_exp(x.double())
            return (exact + (eager.double() - exact) / 2).float()

        return run

    assert check_sample(op, sample, DTYPES["float32"], halfway).status == "pass"
    worse = lambda fn, inputs: lambda x: fn(x) * 1.01
    assert check_sample(op, sample, DTYPES["float32"], worse).status == "wrong"


def test_another_order_of_equal_values_is_not_wrong_where_torch_leaves_it_open() -> None:
    """`sort` without `stable=True` leaves the order of ties to the implementation
    (eager's CPU order is not stable on large inputs): indices that pick the same
    values pass; indices that pick other values are wrong; with `stable=True` the
    order is eager's."""
    op = find_op("sort")
    x = torch.tensor([2.0, 1.0, 2.0, 1.0, 3.0])
    unstable = SampleInput(x, args=(0,))

    def swap_ties(fn, inputs):
        def run(t):
            values, indices = fn(t)
            return values, indices[[1, 0, 2, 3, 4]]  # the two 1.0s swapped

        return run

    def swap_unequal(fn, inputs):
        def run(t):
            values, indices = fn(t)
            return values, indices[[0, 2, 1, 3, 4]]  # a 1.0 and a 2.0 swapped

        return run

    assert check_sample(op, unstable, DTYPES["float32"], swap_ties).status == "pass"
    assert check_sample(op, unstable, DTYPES["float32"], swap_unequal).status == "wrong"
    stable = SampleInput(x, kwargs={"dim": 0, "stable": True})
    assert check_sample(op, stable, DTYPES["float32"], swap_ties).status == "wrong"


def test_a_written_input_rounded_as_eager_at_a_higher_precision_is_not_wrong() -> None:
    """Batch norm's running mean in bfloat16 (OpInfo's sample): eager rounds the
    batch mean to bfloat16 first (-2.171875, so 0.0859375), pallas_ir keeps it in
    float32 (-2.1640625, so 0.08984375, the float32 answer). A written input is judged
    as a result is: against eager in float32, cast back."""
    op = find_op("native_batch_norm")
    bf16 = torch.bfloat16
    x = torch.tensor([[-7.9375], [3.609375]], dtype=bf16)
    weight, bias, mean, var = (
        torch.tensor([v], dtype=bf16) for v in (-8.5, -1.765625, 2.34375, 3.296875)
    )
    sample = SampleInput(x, args=(weight, bias, mean, var, True, 0.5, 1e-5))
    compiled = check_sample(op, sample, bf16, pallas_ir.compile)
    assert compiled.status == "pass", compiled.message

    running_mean_off = _then_edits(3, lambda t: t.mul_(1.05))
    r = check_sample(op, sample, bf16, running_mean_off)
    assert r.status == "wrong" and r.message.startswith("input 3"), r.message
