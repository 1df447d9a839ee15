"""Differential testing: random programs of every kind of pallas_ir.frontend.fuzz
(chains of views, element-wise ops, gathers and reductions; DAGs that reuse values;
int64 and bool inputs held as views; gathers, and gathers called again with an index
out of range, int64 ones outside int32 too; programs that write their inputs;
fmod / remainder / floor division at their boundaries; calls unlike the compiled one)
through `pallas_ir.compile` (or `torch.compile(backend="pallas_ir")`), against eager
PyTorch; every module the fuzzer emitted then AOT-compiles for v5e. Bounded and
derandomized here (the `ci` hypothesis profile); `benchmarks/fuzz.py` runs the same
generator for as long as it is asked."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.dynamo import EAGER_NOTICE
from pallas_ir.frontend.fuzz import (
    KINDS,
    Arg,
    Mismatch,
    Program,
    check_program,
    compare,
    programs,
)
from pallas_ir.tpu_check import aot_compile_many

CI_EXAMPLES = {
    "chain": 16,
    "dag": 10,
    "views": 14,
    "index": 10,
    "index_oob": 8,
    "mutation": 8,
    "guard": 8,
    "recompile": 6,
    "divmod": 10,
}
"""Programs drawn of each kind in CI: every kind the fuzzer has."""

assert set(CI_EXAMPLES) == set(KINDS)

_EMITTED: list[tuple[str, str, list]] = []
"""(program, Python module, argument specs) of every module the fuzzer compiled."""


def _check(p: Program) -> None:
    for compiled in check_program(p, pallas_ir.compile, eager_notice=EAGER_NOTICE):
        if compiled.computes:  # (a program of views only runs no module)
            _EMITTED.append((p.describe(), compiled.source, arg_specs(compiled.module)))


@pytest.mark.parametrize("kind", list(CI_EXAMPLES))
def test_random_programs_match_eager(kind: str) -> None:
    @settings(max_examples=CI_EXAMPLES[kind])
    @given(programs(kinds=[kind]))
    def program_of_this_kind_matches_eager(p: Program) -> None:
        _check(p)

    program_of_this_kind_matches_eager()


def _eager(fn, inputs):  # a "compiler" that runs the program as it is
    return fn


@settings(max_examples=30)
@given(programs(kinds=["chain", "views", "index", "mutation"]))
def test_the_check_takes_eager_itself(p: Program) -> None:
    check_program(p, _eager)


_WRITE_ROW = Program(
    Arg((4, 8), layout=(("sliced", 1, 1, 2),)), (("mul_", 2.0),), "mutation"
)
_GATHER = Program(Arg((4, 8)), (("index", 0, Arg((3,), "i64", values=("index", 4, True))),),
                  "index_oob", ("oob", 1, 0, 4))  # fmt: skip


@pytest.mark.parametrize(
    "program, wrong, said",
    [
        # A wrong value.
        (_WRITE_ROW, lambda fn: lambda x: fn(x.clone()) + 1, "result 0"),
        # The result right, the input not written.
        (_WRITE_ROW, lambda fn: lambda x: fn(x.clone()), "input 0 after the call"),
        # The view written right, and the storage next to it too.
        (
            _WRITE_ROW,
            lambda fn: lambda x: (x._base.mul_(2), x.div_(2), fn(x))[2],
            "outside the view",
        ),
        # A new tensor where eager returns the input.
        (_WRITE_ROW, lambda fn: lambda x: fn(x).clone(), "is a view of input 0"),
        # An index out of range read (clamped) instead of raising IndexError.
        (_GATHER, lambda fn: lambda x, i: fn(x, i.clamp(-4, 3)), "expected IndexError"),
    ],
)
def test_the_check_rejects_what_eager_does_not_do(
    program: Program, wrong, said: str
) -> None:
    with pytest.raises(Mismatch, match=said):
        check_program(program, lambda fn, inputs: wrong(fn))


def test_every_fuzzed_module_aot_compiles_for_v5e() -> None:
    if not _EMITTED:  # run alone: fuzz first
        for kind in CI_EXAMPLES:
            test_random_programs_match_eager(kind)
    programs_and_sources = list(
        {source: (d, source, specs) for d, source, specs in _EMITTED}.values()
    )
    results = aot_compile_many([(src, specs) for _, src, specs in programs_and_sources])
    failed = {
        d: r.message for (d, _, _), r in zip(programs_and_sources, results) if not r.ok
    }
    assert not failed, failed


REGRESSIONS = [
    # Programs the fuzzer (benchmarks/fuzz.py --aot) once failed on, each with what was
    # wrong: numerics in interpret mode, or the TPU compiler rejecting the module.
    # A prefetched gather beside a DMA gather of the same lookups: x's block was
    # broadcast over 8 lookups (wrong values).
    Program(Arg((32, 8, 16)), (("binary", "maximum", Arg((32, 1, 16))),
            ("permute", (0, 2, 1)), ("index_select", 0, Arg((8,), "i64", values=("index", 32, False))),
            ("permute", (2, 1, 0)))),
    # bf16 tables with an odd number of rows: pair DMAs read past the table (wrong
    # values), then the TPU compiler rejected them.
    Program(Arg((3, 3), "bf16", (("transposed", (1, 0)),)), (("permute", (1, 0)),
            ("index_select", 0, Arg((8,), "i64", values=("index", 3, False))))),
    Program(Arg((3, 128), "bf16"), (("index_select", 0, Arg((8,), "i64", values=("index", 3, False))),)),
    # A rank-3 bf16 table gathered on its leading dim: "broadcast keeps the rank".
    Program(Arg((3, 3, 128), "bf16"), (("unary", "neg"),
            ("index_select", 0, Arg((8,), "i64", values=("index", 3, False))))),
    # A bf16 reshape across the last two dims: "unsupported shape cast".
    Program(Arg((16, 16), "bf16"), (("expand", 2), ("reduce", "sum", 0, False),
            ("reduce", "sum", 1, False))),
    # A strided load at a lane offset: "Index on last dim is not 0". (A view of the
    # input alone is returned as a view now, so a negation makes the kernel load it.)
    Program(Arg((1, 8, 8)), (("select", 2, 7), ("slice", 1, 1, 2), ("unary", "neg"))),
    Program(Arg((32, 8), "i32"), (("select", 1, 1), ("slice", 0, 7, 2),
            ("binary", "mul", Arg((1,), "i32")), ("unary", "sigmoid"))),
    # Row steps of bf16: "Slice sizes along tiled dimensions must be aligned to tiles",
    # "Strided load with non 32-bit data".
    Program(Arg((128, 32), "bf16"), (("slice", 0, 120, 3), ("unary", "neg"))),
    Program(Arg((16, 8), "bf16"), (("slice", 0, 2, 3), ("expand", 8), ("select", 2, 2),
            ("binary", "mul", Arg((8, 1), "bf16")))),
    # A block of bf16 with 2 lanes: 256 MiB of VMEM once padded ("RESOURCE_EXHAUSTED").
    Program(Arg((128, 128, 128), "bf16"), (("slice", 2, 51, 2), ("select", 1, 110),
            ("reduce", "amax", 0, True), ("slice", 1, 21, 3))),
    # Every other row, one lane past the first 128: "The last dim size is not 128".
    Program(Arg((64, 256)), (("slice", 0, 1, 2), ("select", 1, 130), ("unary", "neg"))),
    # An int64 input held expanded, summed along the expanded dim (in 28-bit words, a
    # sum over a broadcast): that dim on the lanes made every value (1, 128, 128, 1),
    # 16.2 MiB of scoped VMEM on v5e ("CompileTimeScopedVmemOom"; seed 507).
    Program(Arg((128, 3, 128), "i64", (("expanded", 1),)), (("reduce", "sum", 1, True),
            ("select", 2, 48), ("index_select", 0, Arg((5,), "i32", values=("index", 128, False))),
            ("expand", 2)), kind="index"),
]  # fmt: skip


def test_fuzzer_regressions_match_eager_and_aot_compile_for_v5e() -> None:
    emitted = []
    for p in REGRESSIONS:
        for compiled in check_program(p, pallas_ir.compile):
            assert compiled.computes, p.describe()  # a module to AOT-compile
            emitted.append((p.describe(), compiled.source, arg_specs(compiled.module)))
    results = aot_compile_many([(src, specs) for _, src, specs in emitted])
    failed = {d: r.message for (d, _, _), r in zip(emitted, results) if not r.ok}
    assert not failed, failed


def test_a_bf16_input_written_in_place_and_summed_matches_eager_bit_for_bit() -> None:
    """x.index_put_(i, a, accumulate=True).sum(0) on bf16 x: x is written in place and
    stored as bf16, as eager stores it, so the sum is eager's own bit for bit, which
    the fuzzer's comparison accepts although it differs from eager in float32 by more
    than bf16's tolerance where the sum nearly cancels (the fuzzer's seed 131)."""
    p = Program(Arg((16, 32, 128), "bf16"), (
        ("index_put_", Arg((2,), "i64", values=("index", 16, True)),
         Arg((2, 32, 128), "bf16"), True),
        ("reduce", "sum", 0, False)), kind="mutation")  # fmt: skip
    (compiled,) = check_program(p, pallas_ir.compile, 131)
    assert compiled.donated == (0,)
    want = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    compare(want.clone(), want, want.float() + 0.5, "result", bf16=True)
    with pytest.raises(Mismatch):  # neither eager's nor close to float32's
        compare(want + 1, want, want.float(), "result", bf16=True)
