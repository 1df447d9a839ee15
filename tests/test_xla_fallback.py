"""The tiler's XLA fallback end to end: kernels with an XLA part (a whole kernel with
64-bit data and a reduction; a reversed read, alone (one XLA fusion) and as a matmul
operand (an XLA gather before the Pallas matmul); a wrapped gather index) match the ta
reference in interpret mode, lower for TPU and AOT-compile, and the cost report counts
the XLA part."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs, check_interpret
from pallas_ir.dialects import xla
from pallas_ir.dialects.common import find_forward
from pallas_ir.reference import run_forward
from pallas_ir.reference.verify import forward_inputs
from pallas_ir.registry import default_pipeline
from pallas_ir.tpu_check import aot_compile_many, exec_source, lower_for_tpu

ROW_SUM_I64 = """
// out = x.sum(dim=1) for x: i64[16, 256]: 64-bit data, so the kernel runs on XLA.
ta.kernel @row_sum(%x: memref<16x256xi64> {role = "in"}, %out: memref<16xi64> {role = "out"}) {
  ta.loop [16] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<16x256xi64>
    %s = ta.reduce <sum> %v : i64
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<16xi64>
  }
}
func.func @forward(%x: memref<16x256xi64>) -> memref<16xi64> {
  %out = ta.alloc : memref<16xi64>
  ta.launch @row_sum(%x, %out) : memref<16x256xi64>, memref<16xi64>
  func.return %out : memref<16xi64>
}
"""

REVERSED = """
// out = x.flip(0) + 1 for x: f32[64, 256], flat storage: a negative stride, which
// stride-to-reshape leaves alone; the kernel is element-wise, so it is one XLA fusion.
ta.kernel @flip(%x: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> ((63 - d0) * 256 + d1)>](%i, %j) : memref<16384xf32>
    %one = arith.constant 1.0 : f32
    %r = arith.addf %v, %one : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> memref<64x256xf32> {
  %xf = ta.reshape %x : memref<64x256xf32> to memref<16384xf32>
  %out = ta.alloc : memref<64x256xf32>
  %of = ta.reshape %out : memref<64x256xf32> to memref<16384xf32>
  ta.launch @flip(%xf, %of) : memref<16384xf32>, memref<16384xf32>
  func.return %out : memref<64x256xf32>
}
"""

FLIP_MATMUL = """
// out = x.flip(0) @ w for x: f32[64, 128], w: f32[128, 256]: the flipped rows come from
// an XLA gather; the product is a Pallas matmul.
ta.kernel @flip_matmul(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  ta.loop [64, 256] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (63 - d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x256xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x256xf32>) -> memref<64x256xf32> {
  %out = ta.alloc : memref<64x256xf32>
  ta.launch @flip_matmul(%x, %w, %out) : memref<64x128xf32>, memref<128x256xf32>, memref<64x256xf32>
  func.return %out : memref<64x256xf32>
}
"""

WRAPPED = """
// out = emb[idx] with torch's negative-index wrap, for emb: f32[1000, 256] (held N-D on
// the host), idx: i64[64].
ta.kernel @wrapped(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %c0 = arith.constant 0 : i64
    %cv = arith.constant 1000 : i64
    %neg = arith.cmpi slt, %iv, %c0 : i64
    %up = arith.addi %iv, %cv : i64
    %w = arith.select %neg, %up, %iv : i64
    %s = arith.index_cast %w : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<1000x256xf32>) -> memref<64x256xf32> {
  %e = ta.reshape %emb : memref<1000x256xf32> to memref<256000xf32>
  %out = ta.alloc : memref<64x256xf32>
  %o = ta.reshape %out : memref<64x256xf32> to memref<16384xf32>
  ta.launch @wrapped(%idx, %e, %o) : memref<64xi64>, memref<256000xf32>, memref<16384xf32>
  func.return %out : memref<64x256xf32>
}
"""

WINDOWS_I64 = """
// out[j, i] = x[i + 2, 1, j] * 3 and sums[j] = the sum of x[i + 2, 1, j] over i, for
// x: i64[66, 4, 32]: 64-bit data, so both kernels run on XLA. Every access is a
// window (a projected permutation of the loop's dims plus offsets): a slice and a
// transpose of the buffer's view, not a gather or a scatter.
ta.kernel @window(%x: memref<66x4x32xi64> {role = "in"}, %out: memref<32x64xi64> {role = "out"}) {
  ta.loop [32, 64] (%j, %i) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1 + 2, 1, d0)>](%j, %i) : memref<66x4x32xi64>
    %c = arith.constant 3 : i64
    %m = arith.muli %v, %c : i64
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%j, %i) : memref<32x64xi64>
  }
}
ta.kernel @window_sum(%x: memref<66x4x32xi64> {role = "in"}, %sums: memref<32xi64> {role = "out"}) {
  ta.loop [32] reduce [64] (%j, %i) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1 + 2, 1, d0)>](%j, %i) : memref<66x4x32xi64>
    %s = ta.reduce <sum> %v : i64
    ta.store %s, %sums[affine_map<(d0) -> (d0)>](%j) : memref<32xi64>
  }
}
func.func @forward(%x: memref<66x4x32xi64>) -> (memref<32x64xi64>, memref<32xi64>) {
  %out = ta.alloc : memref<32x64xi64>
  ta.launch @window(%x, %out) : memref<66x4x32xi64>, memref<32x64xi64>
  %sums = ta.alloc : memref<32xi64>
  ta.launch @window_sum(%x, %sums) : memref<66x4x32xi64>, memref<32xi64>
  func.return %out, %sums : memref<32x64xi64>, memref<32xi64>
}
"""


def _lowered(text: str):
    module = pallas_ir.parse(text)
    pallas_ir.run_passes(module, default_pipeline())
    return module


@pytest.mark.parametrize(
    "text",
    [ROW_SUM_I64, REVERSED, FLIP_MATMUL, WRAPPED, WINDOWS_I64],
    ids=["row_sum_i64", "flip", "flip_matmul", "wrapped", "windows_i64"],
)
def test_matches_the_reference_and_lowers(text: str) -> None:
    module = _lowered(text)
    assert any(isinstance(k, xla.FuncOp) for k in module.ops)
    # A matmul sums 128 products in another order than the reference; the rest is exact.
    matmul = text is FLIP_MATMUL
    check = check_interpret(module, seed=3, atol=1e-4 if matmul else None)
    assert check.max_abs_error and max(check.max_abs_error) <= (1e-4 if matmul else 0.0)
    result = lower_for_tpu(pallas_ir.emit_python(module), arg_specs(module))
    assert result.ok, result.message


def test_row_sum_i64_is_one_xla_kernel_with_its_own_minimum() -> None:
    module = _lowered(ROW_SUM_I64)
    report = pallas_ir.cost_report(module)
    assert not report.calls  # no Pallas kernel
    (x,) = report.xla_calls
    assert (x.kind, x.read, x.written) == ("kernel", 16 * 256 * 8, 16 * 8)
    assert report.ratio == 1.0


def test_flip_is_one_xla_fusion_at_its_minimum() -> None:
    module = _lowered(REVERSED)
    report = pallas_ir.cost_report(module)
    assert not report.calls
    (x,) = report.xla_calls
    n = 64 * 256 * 4
    # Every row is read once (whole rows: all their lanes are used) and written once.
    assert (x.kind, x.read, x.written, x.minimum) == ("kernel", n, n, 2 * n)
    assert report.wrapper_copy_bytes == 0  # the host holds x and out as 64 x 256
    assert report.ratio == 1.0


def test_windows_are_slices_not_gathers_and_read_only_the_window() -> None:
    """A projected permutation plus offsets is `xla.window` / `xla.update_window` (on a
    v5e, XLA's gathers over computed positions ran 10 to 20 times slower than its
    slices and transposes); the emitted functions give eager's values, and the cost
    report counts the window's rows, not the whole buffer."""
    module = _lowered(WINDOWS_I64)
    functions = [f for f in module.ops if isinstance(f, xla.FuncOp)]
    ops = [type(op) for f in functions for op in f.walk()]
    assert ops.count(xla.WindowOp) == 2 and ops.count(xla.UpdateWindowOp) == 2
    assert not {xla.TakeOp, xla.ScatterOp, xla.FlatIndexOp} & set(ops)
    forward = exec_source(pallas_ir.emit_python(module))["forward"]
    x = np.arange(66 * 4 * 32, dtype=np.int64).reshape(66, 4, 32) - 4000
    out, sums = (np.asarray(a) for a in forward(x, interpret=True))
    np.testing.assert_array_equal(out, 3 * x[2:, 1, :].T)
    np.testing.assert_array_equal(sums, x[2:, 1, :].sum(0))
    report = pallas_ir.cost_report(module)
    window = 64 * 32 * 8  # 64 rows of the view's 32 lanes
    assert [(c.read, c.written) for c in report.xla_calls] == [
        (window, 32 * 64 * 8),
        (window, 32 * 8),
    ]


def test_flipped_matmul_operand_costs_one_extra_pass() -> None:
    module = _lowered(FLIP_MATMUL)
    report = pallas_ir.cost_report(module)
    (x,) = report.xla_calls
    n = 64 * 128 * 4
    assert (x.kind, x.read, x.written, x.minimum) == ("gather", n, n, 0)
    (call,) = report.calls  # the matmul stays a Pallas kernel: x, w in, out
    assert call.minimum == n + 128 * 256 * 4 + 64 * 256 * 4
    assert report.modelled == call.modelled + 2 * n


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_aot_compiles(chip: str) -> None:
    items = []
    for text in (ROW_SUM_I64, REVERSED, FLIP_MATMUL, WRAPPED, WINDOWS_I64):
        module = _lowered(text)
        items.append((pallas_ir.emit_python(module), arg_specs(module)))
    results = aot_compile_many(items, chip=chip)
    assert all(r.ok for r in results), [r.message for r in results]


def test_emitted_gather_reads_the_reversed_rows() -> None:
    module = _lowered(REVERSED)
    forward = exec_source(pallas_ir.emit_python(module))["forward"]
    x = np.arange(64 * 256, dtype=np.float32).reshape(64, 256)
    got = np.asarray(forward(x, interpret=True))
    np.testing.assert_array_equal(got, x[::-1] + 1)


def test_wrapped_index_moves_only_the_indices() -> None:
    """Only the row index (the wrap of negative indices) goes to XLA; the rows come by
    row DMA in the Pallas kernel, so the traffic stays within 1 % of the minimum."""
    module = _lowered(WRAPPED)
    report = pallas_ir.cost_report(module)
    (x,) = report.xla_calls
    assert (x.kind, x.read, x.written) == ("index", 64 * 8, 64 * 4)
    assert report.ratio < 1.01


LIT_CASES = (
    Path(__file__).parent / "filecheck" / "lowering" / "tile" / "xla-fallback.mlir"
)


def _lit_chunks() -> list[str]:
    chunks = re.split(r"^// -----\s*$", LIT_CASES.read_text(), flags=re.MULTILINE)
    return [c for c in chunks if "func.func @forward" in c]


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_lit_fallback_cases_match_and_compile(chip: str) -> None:
    """Every program of tests/filecheck/lowering/tile/xla-fallback.mlir (a diagonal, a
    flipped matmul operand, a strided store of a matmul, a store that reads back its
    buffer, a double indirection, a 64-bit kernel, a wrapped index...), through the
    whole pipeline: interpret mode against the ta reference, and the TPU compiler."""
    items = []
    for text in _lit_chunks():
        source, module = pallas_ir.parse(text), _lowered(text)
        inputs = forward_inputs(source, find_forward(source), seed=5)
        shapes = [a.type.get_shape() for a in find_forward(module).body.block.args]  # type: ignore[union-attr, attr-defined]
        inputs = [a.reshape(s) for a, s in zip(inputs, shapes, strict=True)]
        want = run_forward(source, *[a.copy() for a in inputs])
        got = exec_source(pallas_ir.emit_python(module))["forward"](
            *inputs, interpret=True
        )
        got = got if isinstance(got, tuple | list) else (got,)
        for w, g in zip(want, got, strict=True):
            # (a matmul sums in another order than the reference)
            np.testing.assert_allclose(
                np.asarray(g).reshape(w.shape), w, rtol=1e-5, atol=1e-4
            )
        items.append((pallas_ir.emit_python(module), arg_specs(module)))
    assert len(items) == 8
    results = aot_compile_many(items, chip=chip)
    assert all(r.ok for r in results), [r.message for r in results]


def test_two_tables_gathered_at_one_computed_index_match_eager() -> None:
    """(x * w).gather(1, i2).gather(0, i3).index_select(0, i4): one kernel reads x and
    w at one index computed through three index tensors, and each read moves to an XLA
    gather of its own. The plan asks about the loop the accesses planned before it
    leave (it once planned the read of x twice and the rewrite found nothing to move;
    found by benchmarks/fuzz.py). Same as eager, and AOT-compiles for v5e."""
    import torch

    def program(x, w, i2, i3, i4):
        return (x * w).gather(1, i2).gather(0, i3).index_select(0, i4)

    g = torch.Generator().manual_seed(0)
    inputs = [
        torch.randn(8, 16, 16, generator=g),
        torch.randn(8, 16, 16, generator=g),
        torch.randint(0, 16, (8, 1, 16), generator=g),
        torch.randint(0, 8, (8, 1, 16), generator=g),
        torch.randint(0, 8, (5,), generator=g),
    ]
    compiled = pallas_ir.compile(program, inputs)
    torch.testing.assert_close(compiled(*inputs), program(*inputs))
    (result,) = aot_compile_many(
        [(compiled.source, arg_specs(compiled.module))], chip="v5e"
    )
    assert result.ok, result.message
