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
