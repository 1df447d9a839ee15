"""The online softmax (flash attention) in `tl`: a running row maximum (`tl.accumulate
<max>`), the maximum before this step (`tl.previous`), and the running sums rescaled by
`exp(m_prev - m)` (`tl.accumulate <sum> ... rescaled`) across a sequential grid dim over
the keys. The tl reference interpreter, the emitted Pallas kernel (interpret mode) and
numpy's `softmax(s) @ v` agree, and Mosaic lowers the kernel for TPU."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.reference import run_forward as run_tl_forward
from pallas_ir.reference.pallas import run_forward as run_pallas_forward
from pallas_ir.tpu_check import exec_source, lower_for_tpu

# Scores s: f32[128, 512], values v: f32[512, 128]; (64, 128) blocks of s, so 2 parallel
# row blocks and 4 sequential steps along the keys. A row whose blocks so far are all
# -inf has m == -inf: the kernel (not tl.accumulate / tl.previous) guards it, shifting
# by 0 instead (`ms`), so that exp gives 0 rather than exp(-inf - -inf) = NaN.
ONLINE_SOFTMAX = """
tl.kernel @attn(%s: memref<128x512xf32> {role = "in"}, %v: memref<512x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    %x = tl.load %s[affine_map<(d0, d1) -> (d0 * 64, d1 * 128)>](%i, %k) : memref<128x512xf32> -> tensor<64x128xf32>
    %vb = tl.load %v[affine_map<(d0, d1) -> (d1 * 128, 0)>](%i, %k) : memref<512x128xf32> -> tensor<128x128xf32>
    %r = tl.reduce <max> %x [1] : tensor<64x128xf32> -> tensor<64x1xf32>
    %m = tl.accumulate <max> %r : tensor<64x1xf32>
    %mp = tl.previous %m : tensor<64x1xf32>
    %low = arith.constant dense<-3.0e+38> : tensor<64x1xf32>
    %zero = arith.constant dense<0.0> : tensor<64x1xf32>
    %empty = tl.compare <olt> %m, %low : tensor<64x1xf32>
    %ms = tl.select %empty, %zero, %m : tensor<64x1xi1>, tensor<64x1xf32>
    %d = arith.subf %mp, %ms : tensor<64x1xf32>
    %alpha = math.exp %d : tensor<64x1xf32>
    %mb = tl.broadcast %ms : tensor<64x1xf32> to tensor<64x128xf32>
    %xs = arith.subf %x, %mb : tensor<64x128xf32>
    %p = math.exp %xs : tensor<64x128xf32>
    %ps = tl.reduce <sum> %p [1] : tensor<64x128xf32> -> tensor<64x1xf32>
    %l = tl.accumulate <sum> %ps rescaled %alpha : tensor<64x1xf32>
    %pv = tl.dot %p, %vb precision <highest> : tensor<64x128xf32>, tensor<128x128xf32> -> tensor<64x128xf32>
    %ab = tl.broadcast %alpha : tensor<64x1xf32> to tensor<64x128xf32>
    %acc = tl.accumulate <sum> %pv rescaled %ab : tensor<64x128xf32>
    tl.on_last_step {
      %lb = tl.broadcast %l : tensor<64x1xf32> to tensor<64x128xf32>
      %y = arith.divf %acc, %lb : tensor<64x128xf32>
      tl.store %y, %o[affine_map<(d0, d1) -> (d0 * 64, 0)>](%i, %k) : tensor<64x128xf32>, memref<128x128xf32>
    }
  }
}
func.func @forward(%s: memref<128x512xf32>, %v: memref<512x128xf32>) -> memref<128x128xf32> {
  %o = ta.alloc : memref<128x128xf32>
  ta.launch @attn(%s, %v, %o) : memref<128x512xf32>, memref<512x128xf32>, memref<128x128xf32>
  func.return %o : memref<128x128xf32>
}
"""


def _modules():
    tiled = pallas_ir.parse(ONLINE_SOFTMAX, "online_softmax.mlir")
    pallas_ir.verify(tiled)
    lowered = pallas_ir.parse(ONLINE_SOFTMAX, "online_softmax.mlir")
    pallas_ir.run_passes(lowered, "tl-to-pallas,pallas-legalize-mosaic")
    return tiled, lowered


def _inputs(masked: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    s = (3 * rng.standard_normal((128, 512))).astype(np.float32)
    v = rng.standard_normal((512, 128)).astype(np.float32)
    if masked:
        # Rows whose first key block (step 0) is wholly masked, in both row blocks;
        # row 70 also its second one; row 5 only its first 100 keys.
        s[3, :128] = s[64, :128] = s[127, :128] = -np.inf
        s[70, :256] = -np.inf
        s[5, :100] = -np.inf
    return s, v


def _softmax_v(s: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = s.astype(np.float64)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize("masked", [False, True], ids=["dense", "masked_first_block"])
def test_online_softmax_computes_softmax_times_v(masked: bool) -> None:
    tiled, lowered = _modules()
    s, v = _inputs(masked)
    want = _softmax_v(s, v)
    (tl_out,) = run_tl_forward(tiled, s, v)
    assert np.isfinite(tl_out).all()
    np.testing.assert_allclose(tl_out, want, rtol=1e-5, atol=1e-5)
    # The pallas reference runs the converted kernel block by block, as the tl one.
    (pallas_out,) = run_pallas_forward(lowered, s, v)
    np.testing.assert_allclose(pallas_out, want, rtol=1e-5, atol=1e-5)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = np.asarray(forward(jnp.asarray(s), jnp.asarray(v), interpret=True))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_online_softmax_lowers_for_tpu() -> None:
    _, lowered = _modules()
    result = lower_for_tpu(pallas_ir.emit_python(lowered), arg_specs(lowered))
    assert result.ok, result.message


# tl.previous at the first step is the identity of the accumulate's kind, whatever the
# partial (NaN and inf included), and a rescaled sum's first total is its partial even
# when the factor is inf or NaN there.
FIRST_STEP = """
tl.kernel @first(%x: memref<8x512xf32> {role = "in"}, %f: memref<8x512xf32> {role = "in"}, %o: memref<8x512xf32> {role = "out"}, %p: memref<8x512xf32> {role = "out"}, %q: memref<8x512xf32> {role = "out"}, %r: memref<8x512xf32> {role = "out"}) {
  tl.grid [1, 4] (parallel, sequential) (%i, %k) {
    %a = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<8x512xf32> -> tensor<8x128xf32>
    %b = tl.load %f[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<8x512xf32> -> tensor<8x128xf32>
    %m = tl.accumulate <max> %a : tensor<8x128xf32>
    %mp = tl.previous %m : tensor<8x128xf32>
    %n = tl.accumulate <min> %a : tensor<8x128xf32>
    %np = tl.previous %n : tensor<8x128xf32>
    %t = tl.accumulate <sum> %a rescaled %b : tensor<8x128xf32>
    %tp = tl.previous %t : tensor<8x128xf32>
    tl.store %mp, %o[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : tensor<8x128xf32>, memref<8x512xf32>
    tl.store %np, %p[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : tensor<8x128xf32>, memref<8x512xf32>
    tl.store %t, %q[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : tensor<8x128xf32>, memref<8x512xf32>
    tl.store %tp, %r[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : tensor<8x128xf32>, memref<8x512xf32>
  }
}
func.func @forward(%x: memref<8x512xf32>, %f: memref<8x512xf32>) -> (memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>) {
  %o = ta.alloc : memref<8x512xf32>
  %p = ta.alloc : memref<8x512xf32>
  %q = ta.alloc : memref<8x512xf32>
  %r = ta.alloc : memref<8x512xf32>
  ta.launch @first(%x, %f, %o, %p, %q, %r) : memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>
  func.return %o, %p, %q, %r : memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>, memref<8x512xf32>
}
"""


def _first_step_want(x: np.ndarray, f: np.ndarray) -> list[np.ndarray]:
    blocks = [slice(128 * k, 128 * (k + 1)) for k in range(4)]
    mp, np_, t, tp = (np.zeros_like(x) for _ in range(4))
    m = n = total = None
    for k, b in enumerate(blocks):
        a = x[:, b]
        mp[:, b] = -np.inf if k == 0 else m
        np_[:, b] = np.inf if k == 0 else n
        tp[:, b] = 0 if k == 0 else total
        m = a if k == 0 else np.maximum(m, a)
        n = a if k == 0 else np.minimum(n, a)
        total = a if k == 0 else total * f[:, b] + a
        t[:, b] = total
    return [mp, np_, t, tp]


def test_previous_and_rescale_at_the_first_step() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 512)).astype(np.float32)
    f = rng.uniform(0.5, 1.0, (8, 512)).astype(np.float32)
    f[:, :64] = np.inf  # the factor at the first step is never used
    f[:, 64:128] = np.nan
    x[0, 0] = np.nan  # a NaN partial is the first total; the previous is still -inf
    want = _first_step_want(x, f)
    tiled = pallas_ir.parse(FIRST_STEP, "first_step.mlir")
    pallas_ir.verify(tiled)
    lowered = pallas_ir.parse(FIRST_STEP, "first_step.mlir")
    pallas_ir.run_passes(lowered, "tl-to-pallas,pallas-legalize-mosaic")
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = forward(jnp.asarray(x), jnp.asarray(f), interpret=True)
    for outs in (
        run_tl_forward(tiled, x, f),
        run_pallas_forward(lowered, x, f),
        [np.asarray(g) for g in got],
    ):
        for w, g in zip(want, outs, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    assert (want[0][:, :128] == -np.inf).all() and (want[1][:, :128] == np.inf).all()
    # (only x's NaN reaches the sums; the inf and NaN factors at the first step do not)
    assert np.isfinite(want[2][1:]).all() and np.isnan(want[0][0, 128])
