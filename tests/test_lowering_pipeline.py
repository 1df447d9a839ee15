"""ta → tile → tl-to-pallas → Python, end to end: every ta example lowers to kernels
that compute what the ta reference interpreter says, lower for TPU and AOT-compile."""

from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs, example_inputs
from pallas_ir.reference import run_forward
from pallas_ir.tpu_check import aot_compile_many, exec_source, lower_for_tpu

EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "ta").glob("*.mlir"))
PIPELINE = (
    "split-kernel-loops,stride-to-reshape,canonicalize-permutation,"
    "indirect-load-to-scalar-prefetch,tile,tl-to-pallas"
)


def lower(path: Path):
    source = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.verify(source)
    lowered = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.run_passes(lowered, PIPELINE)
    return source, lowered


def assert_interpret_matches(source, lowered, seed: int) -> None:
    """The emitted kernels, in interpret mode, against the ta reference on the same
    random inputs."""
    inputs = example_inputs(lowered, seed=seed)
    want = run_forward(source, *inputs)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = forward(*map(jnp.asarray, inputs), interpret=True)
    got = got if isinstance(got, tuple | list) else (got,)
    for w, g in zip(want, got, strict=True):
        # XLA sums in another order than numpy: 1e-4 absolute covers 1024-term sums.
        np.testing.assert_allclose(
            np.asarray(g), w.reshape(np.shape(g)), rtol=1e-5, atol=1e-4
        )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lowered_kernels_compute_the_ta_meaning(path: Path) -> None:
    assert_interpret_matches(*lower(path), seed=5)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lowered_kernels_lower_for_tpu(path: Path) -> None:
    _, lowered = lower(path)
    result = lower_for_tpu(pallas_ir.emit_python(lowered), arg_specs(lowered))
    assert result.ok, result.message


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_lowered_kernels_compile_for_tpu(chip: str) -> None:
    items = []
    for path in EXAMPLES:
        _, lowered = lower(path)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    results = aot_compile_many(items, chip=chip)
    bad = {p.stem: r.message for p, r in zip(EXAMPLES, results) if not r.ok}
    assert not bad, bad


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lowered_kernels_stay_in_their_vmem_budget(path: Path) -> None:
    _, lowered = lower(path)
    for call in pallas_ir.cost_report(lowered).calls:
        assert call.vmem_bytes <= 16 << 20


SPLIT = ["row_sum", "matmul"]


def lower_with_budget(name: str, budget: int):
    path = Path(__file__).parent.parent / "examples" / "ta" / f"{name}.mlir"
    source = pallas_ir.parse(path.read_text(), str(path))
    lowered = pallas_ir.parse(path.read_text(), str(path))
    pipeline = PIPELINE.replace("tile,", f"tile{{vmem-budget={budget}}},")
    pallas_ir.run_passes(lowered, pipeline)
    return source, lowered


@pytest.mark.parametrize("name", SPLIT)
def test_reductions_over_budget_accumulate_across_a_sequential_dim(name: str) -> None:
    """With 256 KiB of VMEM the reduction no longer fits one tile: it is split over an
    `arbitrary` grid dim and accumulated in the resident output block, and still
    computes the same numbers (and stays within its budget)."""
    source, lowered = lower_with_budget(name, 256 << 10)
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    semantics = [s.data.value for s in call.dimension_semantics.data]  # type: ignore[attr-defined]
    assert semantics[-1] == "arbitrary" and semantics[:-1] == ["parallel"] * (
        len(semantics) - 1
    )
    (cost,) = pallas_ir.cost_report(lowered).calls
    assert cost.vmem_bytes <= 256 << 10
    assert_interpret_matches(source, lowered, seed=7)


def test_split_reductions_compile_for_tpu() -> None:
    items = []
    for name in SPLIT:
        _, lowered = lower_with_budget(name, 256 << 10)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    results = aot_compile_many(items, chip="v5e")
    bad = {n: r.message for n, r in zip(SPLIT, results) if not r.ok}
    assert not bad, bad
