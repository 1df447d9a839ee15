"""`tl.when`: a grid step's body that runs only where an affine condition of the grid
indices is >= 0. A causal flash attention (grid: batch, query blocks, key blocks)
skips the key blocks its mask hides wholly; the tl reference interpreter, the
emitted Pallas kernel (interpret mode) and numpy agree, and Mosaic lowers the kernel
for TPU. Where the body does not run, its results are the accumulators' totals so
far."""

from __future__ import annotations

import re

import jax.numpy as jnp
import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.dialects import pallas
from pallas_ir.reference import run_forward as run_tl_forward
from pallas_ir.reference.pallas import run_forward as run_pallas_forward
from pallas_ir.tpu_check import exec_source, lower_for_tpu

B, T, D, BLOCK = 2, 512, 128, 128

# q, v: f32[B * T, D] (batch b's rows at b * T), kt = k^T: f32[D, B * T]. Grid (b, i, k):
# query block i sees key block k only if k * 128 <= i * 128 + 127, i.e. the body runs
# where `i * 128 + 127 - k * 128 >= 0`. With CAUSAL_MASK, the block on the diagonal
# masks the keys after each query to -1e30 (key 0 is always seen, so the running max
# is finite after the first step); without it, a query block sees its whole key
# blocks (block-causal attention), so a key block wrongly computed would show.
CAUSAL_MASK = """
      %s0 = tl.dot %qb, %kb precision <highest> : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
      %r0 = tl.iota dim 0 offset affine_map<(d0, d1, d2) -> (d1 * 128)> (%b, %i, %k) : tensor<128x128xi32>
      %c0 = tl.iota dim 1 offset affine_map<(d0, d1, d2) -> (d2 * 128)> (%b, %i, %k) : tensor<128x128xi32>
      %hidden = tl.compare <sgt> %c0, %r0 : tensor<128x128xi32>
      %low = arith.constant dense<-1.0e+30> : tensor<128x128xf32>
      %s = tl.select %hidden, %low, %s0 : tensor<128x128xi1>, tensor<128x128xf32>"""
NO_MASK = """
      %s = tl.dot %qb, %kb precision <highest> : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>"""

ATTENTION = """
tl.kernel @causal(%q: memref<1024x128xf32> {role = "in"}, %kt: memref<128x1024xf32> {role = "in"}, %v: memref<1024x128xf32> {role = "in"}, %o: memref<1024x128xf32> {role = "out"}) {
  tl.grid [2, 4, 4] (parallel, parallel, sequential) (%b, %i, %k) {
    %qb = tl.load %q[affine_map<(d0, d1, d2) -> (d0 * 512 + d1 * 128, 0)>](%b, %i, %k) : memref<1024x128xf32> -> tensor<128x128xf32>
    %m, %l, %acc = tl.when affine_map<(d0, d1, d2) -> (d1 * 128 + 127 - d2 * 128)> (%b, %i, %k) {
      %kb = tl.load %kt[affine_map<(d0, d1, d2) -> (0, d0 * 512 + d2 * 128)>](%b, %i, %k) : memref<128x1024xf32> -> tensor<128x128xf32>
      %vb = tl.load %v[affine_map<(d0, d1, d2) -> (d0 * 512 + d2 * 128, 0)>](%b, %i, %k) : memref<1024x128xf32> -> tensor<128x128xf32>
      SCORES
      %rmax = tl.reduce <max> %s [1] : tensor<128x128xf32> -> tensor<128x1xf32>
      %m1 = tl.accumulate <max> %rmax : tensor<128x1xf32>
      %mp = tl.previous %m1 : tensor<128x1xf32>
      %d = arith.subf %mp, %m1 : tensor<128x1xf32>
      %alpha = math.exp %d : tensor<128x1xf32>
      %mb = tl.broadcast %m1 : tensor<128x1xf32> to tensor<128x128xf32>
      %xs = arith.subf %s, %mb : tensor<128x128xf32>
      %p = math.exp %xs : tensor<128x128xf32>
      %ps = tl.reduce <sum> %p [1] : tensor<128x128xf32> -> tensor<128x1xf32>
      %l1 = tl.accumulate <sum> %ps rescaled %alpha : tensor<128x1xf32>
      %pv = tl.dot %p, %vb precision <highest> : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
      %ab = tl.broadcast %alpha : tensor<128x1xf32> to tensor<128x128xf32>
      %a1 = tl.accumulate <sum> %pv rescaled %ab : tensor<128x128xf32>
      tl.yield %m1, %l1, %a1 : tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>
    } : tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>
    tl.on_last_step {
      %lb = tl.broadcast %l : tensor<128x1xf32> to tensor<128x128xf32>
      %y = arith.divf %acc, %lb : tensor<128x128xf32>
      tl.store %y, %o[affine_map<(d0, d1, d2) -> (d0 * 512 + d1 * 128, 0)>](%b, %i, %k) : tensor<128x128xf32>, memref<1024x128xf32>
    }
  }
}
func.func @forward(%q: memref<1024x128xf32>, %kt: memref<128x1024xf32>, %v: memref<1024x128xf32>) -> memref<1024x128xf32> {
  %o = ta.alloc : memref<1024x128xf32>
  ta.launch @causal(%q, %kt, %v, %o) : memref<1024x128xf32>, memref<128x1024xf32>, memref<1024x128xf32>, memref<1024x128xf32>
  func.return %o : memref<1024x128xf32>
}
"""


def _attention(causal_mask: bool) -> str:
    return ATTENTION.replace("\n      SCORES", CAUSAL_MASK if causal_mask else NO_MASK)


def _modules(source: str):
    tiled = pallas_ir.parse(source, "when.mlir")
    pallas_ir.verify(tiled)
    lowered = pallas_ir.parse(source, "when.mlir")
    pallas_ir.run_passes(lowered, "tl-to-pallas,pallas-legalize-mosaic")
    return tiled, lowered


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    q = (0.3 * rng.standard_normal((B * T, D))).astype(np.float32)
    k = (0.3 * rng.standard_normal((B * T, D))).astype(np.float32)
    v = rng.standard_normal((B * T, D)).astype(np.float32)
    # Large values in every key block after the first: query block 0 never sees them,
    # and a hidden block wrongly computed would weigh them into its rows.
    v[np.arange(B * T) % T >= BLOCK] *= 100
    return q, np.ascontiguousarray(k.T), v


def _softmax_v(
    q: np.ndarray, kt: np.ndarray, v: np.ndarray, seen: np.ndarray
) -> np.ndarray:
    """softmax(q k^T) v per batch, each query seeing the keys `seen` (T, T) marks."""
    out = np.zeros((B * T, D))
    for b in range(B):
        at = slice(b * T, (b + 1) * T)
        s = q[at].astype(np.float64) @ kt[:, at].astype(np.float64)
        s = np.where(seen, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[at] = (e / e.sum(axis=1, keepdims=True)) @ v[at].astype(np.float64)
    return out


ROWS, COLS = np.arange(T)[:, None], np.arange(T)[None, :]
SEEN = {
    "causal": COLS <= ROWS,
    "block_causal": COLS // BLOCK <= ROWS // BLOCK,
    "all": np.ones((T, T), dtype=bool),
}


@pytest.mark.parametrize("mask", ["causal", "block_causal"])
def test_when_skips_the_hidden_key_blocks(mask: str) -> None:
    tiled, lowered = _modules(_attention(mask == "causal"))
    q, kt, v = _inputs()
    want = _softmax_v(q, kt, v, SEEN[mask])
    if mask == "block_causal":
        # Only the skipping hides the later key blocks (no elementwise mask): running
        # them would change query block 0's rows, which would see the large values.
        full = _softmax_v(q, kt, v, SEEN["all"])
        assert np.abs(full - want)[:BLOCK].max() > 1
    # (outputs up to ~100 in size: an absolute tolerance for their f32 sums)
    (tl_out,) = run_tl_forward(tiled, q, kt, v)
    np.testing.assert_allclose(tl_out, want, rtol=1e-5, atol=2e-3)
    # The pallas reference runs the converted kernel block by block, as the tl one.
    (pallas_out,) = run_pallas_forward(lowered, q, kt, v)
    np.testing.assert_allclose(pallas_out, want, rtol=1e-5, atol=2e-3)
    source = pallas_ir.emit_python(lowered)
    # The body (its dots) runs under `pl.when(<i * 128 + 127 - k * 128> >= 0)`.
    (condition,) = re.findall(r"\n    (\w+) = \w+ >= \w+\n", source)
    guarded = source.split(f"    @pl.when({condition})\n")[1].split("\n    m = ")[0]
    assert guarded.count("jnp.dot(") == 2 and "jnp.exp(" in guarded
    assert "jnp.int32(-128)" in source and "jnp.dot(" not in source.split(condition)[0]
    forward = exec_source(source)["forward"]
    got = np.asarray(
        forward(jnp.asarray(q), jnp.asarray(kt), jnp.asarray(v), interpret=True)
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-3)


def test_when_nests_the_accumulators_and_reads_them_outside() -> None:
    """The accumulators' init and combination are inside the condition's
    `pallas.when`; the results read the scratch after it."""
    _, lowered = _modules(_attention(True))
    (call,) = [o for o in lowered.walk() if isinstance(o, pallas.CallOp)]
    top = list(call.body.block.ops)
    (guard,) = [
        o
        for o in top
        if isinstance(o, pallas.WhenOp)
        and any(isinstance(n, pallas.DotOp) for n in o.body.walk())
    ]
    inner_whens = [o for o in guard.body.walk() if isinstance(o, pallas.WhenOp)]
    assert len(inner_whens) >= 6  # first-step init and later combine, per accumulator
    after = top[top.index(guard) + 1 :]
    reads = [o for o in after[:3] if isinstance(o, pallas.LoadOp)]
    assert len(reads) == 3
    assert all(r.ref.name_hint == "acc" for r in reads)  # type: ignore[attr-defined]
    # The cost estimate counts the dots at the 2 * 10 steps that run, not all 32.
    estimate = call.properties["cost_estimate"]
    assert isinstance(estimate, pallas.CostEstimateAttr)
    assert estimate.flops.data >= 2 * 10 * 2 * (2 * 128**3)
    assert estimate.flops.data < 2 * 16 * 2 * (2 * 128**3)


def test_when_attention_lowers_for_tpu() -> None:
    _, lowered = _modules(_attention(True))
    result = lower_for_tpu(pallas_ir.emit_python(lowered), arg_specs(lowered))
    assert result.ok, result.message


# Running sums over two sequential dims (k1, k2). Row block 0 skips the steps with
# k2 > 1, so its body runs again at the next k1 after a skip; row block 1 runs at every
# step. Each step stores the tl.when result: where the body ran, the total after it;
# where it did not, the total so far.
RUNNING = """
tl.kernel @running(%x: memref<16x1536xf32> {role = "in"}, %o: memref<16x1536xf32> {role = "out"}) {
  tl.grid [2, 3, 4] (parallel, sequential, sequential) (%i, %k1, %k2) {
    %t = tl.when affine_map<(d0, d1, d2) -> (d0 * 4 + 1 - d2)> (%i, %k1, %k2) {
      %a = tl.load %x[affine_map<(d0, d1, d2) -> (d0 * 8, d1 * 512 + d2 * 128)>](%i, %k1, %k2) : memref<16x1536xf32> -> tensor<8x128xf32>
      %s = tl.accumulate <sum> %a : tensor<8x128xf32>
      tl.yield %s : tensor<8x128xf32>
    } : tensor<8x128xf32>
    tl.store %t, %o[affine_map<(d0, d1, d2) -> (d0 * 8, d1 * 512 + d2 * 128)>](%i, %k1, %k2) : tensor<8x128xf32>, memref<16x1536xf32>
  }
}
func.func @forward(%x: memref<16x1536xf32>) -> memref<16x1536xf32> {
  %o = ta.alloc : memref<16x1536xf32>
  ta.launch @running(%x, %o) : memref<16x1536xf32>, memref<16x1536xf32>
  func.return %o : memref<16x1536xf32>
}
"""


def _running_want(x: np.ndarray) -> np.ndarray:
    want = np.zeros_like(x)
    for i in range(2):
        rows = slice(8 * i, 8 * (i + 1))
        total = np.zeros((8, 128), np.float32)
        for k1 in range(3):
            for k2 in range(4):
                cols = slice(512 * k1 + 128 * k2, 512 * k1 + 128 * (k2 + 1))
                if i * 4 + 1 - k2 >= 0:
                    total = total + x[rows, cols]
                want[rows, cols] = total
    return want


def test_when_results_keep_the_totals_where_the_body_does_not_run() -> None:
    x = np.random.default_rng(5).standard_normal((16, 1536)).astype(np.float32)
    # A skipped tile holds NaN: computing it would show in every later total.
    for k1 in range(3):
        x[:8, 512 * k1 + 256 : 512 * (k1 + 1)] = np.nan
    want = _running_want(x)
    assert np.isfinite(want).all()
    tiled, lowered = _modules(RUNNING)
    (tl_out,) = run_tl_forward(tiled, x)
    np.testing.assert_allclose(tl_out, want, rtol=1e-6, atol=1e-5)
    (pallas_out,) = run_pallas_forward(lowered, x)
    np.testing.assert_allclose(pallas_out, want, rtol=1e-6, atol=1e-5)
    source = pallas_ir.emit_python(lowered)
    got = exec_source(source)["forward"](jnp.asarray(x), interpret=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)
    result = lower_for_tpu(source, arg_specs(lowered))
    assert result.ok, result.message
