"""Differential testing: random chains of views, element-wise ops, gathers and
reductions (pallas_ir.frontend.fuzz) through `pallas_ir.compile`, against eager PyTorch.
Bounded and derandomized here (the `ci` hypothesis profile); `benchmarks/fuzz.py` runs
the same generator for as long as it is asked."""

from __future__ import annotations

import torch
from hypothesis import given, settings

import pallas_ir
from pallas_ir.frontend.fuzz import Program, build, programs


@settings(max_examples=25)
@given(programs())
def test_random_programs_match_eager(p: Program) -> None:
    fn, inputs = build(p)
    want = fn(*inputs)
    got = pallas_ir.compile(fn, inputs)(*inputs)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=p.describe)
