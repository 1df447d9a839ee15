"""tl-to-pallas: each tiled example, converted and emitted, computes what the tl
reference interpreter says it does, and the TPU toolchain accepts it."""

from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs, example_inputs
from pallas_ir.reference import run_forward as run_ta_forward
from pallas_ir.reference.pallas import run_forward as run_pallas_forward
from pallas_ir.tpu_check import aot_compile_many, exec_source, lower_for_tpu

EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "tl").glob("*.mlir"))


def convert(path: Path):
    tiled = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.verify(tiled)
    lowered = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.run_passes(lowered, "tl-to-pallas,pallas-legalize-mosaic")
    return tiled, lowered


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_converted_kernel_computes_the_tiled_meaning(path: Path) -> None:
    tiled, lowered = convert(path)
    inputs = example_inputs(lowered, seed=3)
    want = run_ta_forward(tiled, *inputs)
    ref = run_pallas_forward(lowered, *inputs)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = forward(*map(jnp.asarray, inputs), interpret=True)
    got = got if isinstance(got, tuple | list) else (got,)
    for w, r, g in zip(want, ref, got, strict=True):
        # Both references are numpy on the same blocks: bit-equal.
        np.testing.assert_array_equal(r, w)
        # XLA may order a reduction or an exp differently from numpy.
        g = np.asarray(g)
        if w.dtype.kind == "f":
            # f32: sums of up to 4096 terms differ by about 1e-5 between orders.
            rtol, atol = (1e-5, 1e-4) if w.dtype.itemsize >= 4 else (1e-2, 1e-2)
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol
            )
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_converted_kernel_lowers_for_tpu(path: Path) -> None:
    _, lowered = convert(path)
    result = lower_for_tpu(pallas_ir.emit_python(lowered), arg_specs(lowered))
    assert result.ok, result.message


def test_converted_kernels_compile_for_tpu() -> None:
    items = []
    for path in EXAMPLES:
        _, lowered = convert(path)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    for chip in ("v5e", "v6e"):
        results = aot_compile_many(items, chip=chip)
        bad = {p.stem: r.message for p, r in zip(EXAMPLES, results) if not r.ok}
        assert not bad, (chip, bad)
