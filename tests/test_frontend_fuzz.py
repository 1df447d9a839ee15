"""Differential testing: random chains of views, element-wise ops, gathers and
reductions over random shapes and dtypes (pallas_ir.frontend.fuzz) through
`pallas_ir.compile`, against eager PyTorch; every module the fuzzer emitted then
AOT-compiles for v5e. Bounded and derandomized here (the `ci` hypothesis profile);
`benchmarks/fuzz.py` runs the same generator for as long as it is asked."""

from __future__ import annotations

from hypothesis import given, settings

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.frontend.fuzz import Program, build, check, programs
from pallas_ir.tpu_check import aot_compile_many

_EMITTED: list[tuple[str, str, list]] = []
"""(program, Python module, argument specs) of every program the fuzzer compiled."""


@settings(max_examples=25)
@given(programs())
def test_random_programs_match_eager(p: Program) -> None:
    fn, inputs = build(p)
    compiled = pallas_ir.compile(fn, inputs)
    check(compiled(*inputs), fn, inputs, p.describe())
    _EMITTED.append((p.describe(), compiled.source, arg_specs(compiled.module)))


def test_every_fuzzed_module_aot_compiles_for_v5e() -> None:
    if not _EMITTED:  # run alone: fuzz first
        test_random_programs_match_eager()
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
    Program((32, 8, 16), False, (("binary", "maximum", (32, 1, 16), "f32"),
            ("permute", (0, 2, 1)), ("index_select", 8, 32), ("permute", (2, 1, 0)))),
    # bf16 tables with an odd number of rows: pair DMAs read past the table (wrong
    # values), then the TPU compiler rejected them.
    Program((3, 3), True, (("permute", (1, 0)), ("index_select", 8, 3)), "bf16"),
    Program((3, 128), False, (("index_select", 8, 3),), "bf16"),
    # A rank-3 bf16 table gathered on its leading dim: "broadcast keeps the rank".
    Program((3, 3, 128), False, (("unary", "neg"), ("index_select", 8, 3)), "bf16"),
    # A bf16 reshape across the last two dims: "unsupported shape cast".
    Program((16, 16), False, (("expand", 2), ("reduce", "sum", 0, False),
            ("reduce", "sum", 1, False)), "bf16"),
    # A strided load at a lane offset: "Index on last dim is not 0".
    Program((1, 8, 8), False, (("select", 2, 7), ("slice", 1, 1, 2))),
    Program((32, 8), False, (("select", 1, 1), ("slice", 0, 7, 2),
            ("binary", "mul", (1,), "i32"), ("unary", "sigmoid")), "i32"),
    # Row steps of bf16: "Slice sizes along tiled dimensions must be aligned to tiles",
    # "Strided load with non 32-bit data".
    Program((128, 32), False, (("slice", 0, 120, 3),), "bf16"),
    Program((16, 8), False, (("slice", 0, 2, 3), ("expand", 8), ("select", 2, 2),
            ("binary", "mul", (8, 1), "bf16")), "bf16"),
    # A block of bf16 with 2 lanes: 256 MiB of VMEM once padded ("RESOURCE_EXHAUSTED").
    Program((128, 128, 128), False, (("slice", 2, 51, 2), ("select", 1, 110),
            ("reduce", "amax", 0, True), ("slice", 1, 21, 3)), "bf16"),
    # Every other row, one lane past the first 128: "The last dim size is not 128".
    Program((64, 256), False, (("slice", 0, 1, 2), ("select", 1, 130))),
]  # fmt: skip


def test_fuzzer_regressions_match_eager_and_aot_compile_for_v5e() -> None:
    emitted = []
    for p in REGRESSIONS:
        fn, inputs = build(p)
        compiled = pallas_ir.compile(fn, inputs)
        check(compiled(*inputs), fn, inputs, p.describe())
        emitted.append((compiled.source, arg_specs(compiled.module)))
    results = aot_compile_many(emitted)
    failed = {p.describe(): r.message for p, r in zip(REGRESSIONS, results) if not r.ok}
    assert not failed, failed
