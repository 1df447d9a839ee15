"""tl.scatter, the KV-cache update idiom, lowered by tl-to-pallas to row DMA writes
into a dest left in HBM and aliased to the kernel's output: hand-written tl modules
(a 2-D cache, a 4-D cache with its leading indices from the grid and a ragged last
step, repeated positions, an accumulating scatter), each run by the tl reference, the
pallas reference and the emitted Python in interpret mode, all against numpy; the cost
model counts exactly the rows moved; every emitted module compiles for v5e and v6e."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import pallas_ir
from pallas_ir.analysis.cost_model import cost_report
from pallas_ir.check import arg_specs
from pallas_ir.reference import run_forward as run_tl
from pallas_ir.reference.pallas import run_forward as run_pallas
from pallas_ir.tpu_check import aot_compile_many, exec_source

# cache[pos[j]] = x[j]: 16 positions, 8 rows a grid step.
UPDATE_2D = """
tl.kernel @update(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %cache: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    tl.scatter %v, %cache[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}
func.func @forward(%pos: memref<16xi32>, %x: memref<16x128xf32>, %cache: memref<64x128xf32>) -> memref<64x128xf32> {
  ta.launch @update(%pos, %x, %cache) : memref<16xi32>, memref<16x128xf32>, memref<64x128xf32>
  func.return %cache : memref<64x128xf32>
}
"""

# cache[b, h, pos[j]] = k[b, h, j] * 2: 12 positions, 8 rows a step (the second step
# has 4), b and h from the grid.
UPDATE_4D = """
tl.kernel @kv_update(%pos: memref<12xi32> {role = "prefetch"}, %k: memref<2x4x12x128xf32> {role = "in"}, %cache: memref<2x4x64x128xf32> {role = "inout"}) {
  tl.grid [2, 4, 2] (parallel, parallel, sequential) (%b, %h, %s) {
    %t = tl.load %k[affine_map<(d0, d1, d2) -> (d0, d1, d2 * 8, 0)>](%b, %h, %s) : memref<2x4x12x128xf32> -> tensor<1x1x8x128xf32>
    %v = tl.reshape %t : tensor<1x1x8x128xf32> to tensor<8x128xf32>
    %two = arith.constant dense<2.0> : tensor<8x128xf32>
    %w = arith.mulf %v, %two : tensor<8x128xf32>
    tl.scatter %w, %cache[affine_map<(d0, d1, d2) -> (d0, d1)>], %pos[affine_map<(d0, d1, d2) -> (d2 * 8)>](%b, %h, %s) : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<12xi32>
  }
}
func.func @forward(%pos: memref<12xi32>, %k: memref<2x4x12x128xf32>, %cache: memref<2x4x64x128xf32>) -> memref<2x4x64x128xf32> {
  ta.launch @kv_update(%pos, %k, %cache) : memref<12xi32>, memref<2x4x12x128xf32>, memref<2x4x64x128xf32>
  func.return %cache : memref<2x4x64x128xf32>
}
"""

# index_add: table[pos[j]] += x[j], 12 positions, 8 rows a step.
ACCUMULATE = """
tl.kernel @index_add(%pos: memref<12xi32> {role = "prefetch"}, %x: memref<12x128xf32> {role = "in"}, %table: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<12x128xf32> -> tensor<8x128xf32>
    tl.scatter %v, %table[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) accumulate <sum> : tensor<8x128xf32>, memref<64x128xf32>, memref<12xi32>
  }
}
func.func @forward(%pos: memref<12xi32>, %x: memref<12x128xf32>, %table: memref<64x128xf32>) -> memref<64x128xf32> {
  ta.launch @index_add(%pos, %x, %table) : memref<12xi32>, memref<12x128xf32>, memref<64x128xf32>
  func.return %table : memref<64x128xf32>
}
"""

MODULES = {"update_2d": UPDATE_2D, "update_4d": UPDATE_4D, "accumulate": ACCUMULATE}

RNG = np.random.default_rng(0)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _positions(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int32)


def _put(pos, x, cache):
    """Eager `cache[pos] = x` row by row, in order (a later row wins)."""
    out = cache.copy()
    for j, p in enumerate(pos):
        out[..., p, :] = x[..., j, :]
    return out


def _add(pos, x, table):
    out = table.astype(np.float64)
    for j, p in enumerate(pos):
        out[p] += x[j]
    return out


# name: (module, inputs, numpy meaning)
CASES = {
    "update_2d": (
        "update_2d",
        [_positions(*range(40, 56)), _floats(16, 128), _floats(64, 128)],
        _put,
    ),
    "update_4d_ragged": (
        "update_4d",
        [_positions(3, 60, 0, 17, 2, 33, 8, 9, 63, 1, 40, 41), _floats(2, 4, 12, 128)]
        + [_floats(2, 4, 64, 128)],
        lambda pos, k, cache: _put(pos, 2 * k, cache),
    ),
    # Repeats within a step and across steps: the last write wins.
    "repeated_last_wins": (
        "update_2d",
        [_positions(5, 5, 9, 5, 1, 2, 9, 3, 5, 7, 7, 9, 0, 0, 5, 63), _floats(16, 128)]
        + [_floats(64, 128)],
        _put,
    ),
    # Repeats within a step and across steps, over a ragged last step: they sum.
    "accumulate_repeated": (
        "accumulate",
        [_positions(4, 4, 7, 4, 0, 63, 7, 4, 4, 63, 0, 4), _floats(12, 128)]
        + [_floats(64, 128)],
        _add,
    ),
}


def _lower(text: str):
    tiled = pallas_ir.parse(text)
    pallas_ir.verify(tiled)
    lowered = pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, "tl-to-pallas,pallas-legalize-mosaic")
    return tiled, lowered


LOWERED = {name: _lower(text) for name, text in MODULES.items()}
SOURCES = {name: pallas_ir.emit_python(lowered) for name, (_, lowered) in LOWERED.items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_scatter_computes_the_eager_update(case: str) -> None:
    module, inputs, meaning = CASES[case]
    tiled, lowered = LOWERED[module]
    want = meaning(*inputs)
    (tl_result,) = run_tl(tiled, *[a.copy() for a in inputs])
    np.testing.assert_allclose(tl_result, want, rtol=1e-6, atol=1e-6)
    (ref,) = run_pallas(lowered, *inputs)
    np.testing.assert_array_equal(ref, tl_result)
    # Interpret mode: the aliased `any` output keeps the rows no position names.
    arrays = [jnp.asarray(a) for a in inputs]
    got = exec_source(SOURCES[module])["forward"](*arrays, interpret=True)
    np.testing.assert_array_equal(np.asarray(got), tl_result)
    np.testing.assert_array_equal(np.asarray(arrays[-1]), inputs[-1])  # not donated


@pytest.mark.parametrize(
    ("module", "rows_written", "rows_read_back"),
    [("update_2d", 16, 0), ("update_4d", 2 * 4 * 12, 0), ("accumulate", 12, 12)],
)
def test_cost_counts_only_the_rows(module: str, rows_written: int, rows_read_back: int):
    """The dest moves only its rows (512 B each), never the whole aliased array."""
    (call,) = cost_report(LOWERED[module][1]).calls
    dest = [o for o in call.operands if o.role == "out"]
    aliased = [o for o in call.operands if o.name.endswith("_in")]
    assert [o.bytes for o in dest] == [rows_written * 512]
    assert [o.read_back for o in dest] == [rows_read_back * 512]
    assert [o.bytes for o in aliased] == [0]
    assert call.modelled == call.minimum


def test_scatter_modules_compile_for_tpu() -> None:
    items = [(SOURCES[n], arg_specs(lowered)) for n, (_, lowered) in LOWERED.items()]
    for chip in ("v5e", "v6e"):
        results = aot_compile_many(items, chip=chip)
        bad = {n: r.message for n, r in zip(LOWERED, results, strict=True) if not r.ok}
        assert not bad, (chip, bad)
