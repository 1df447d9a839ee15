"""The HBM traffic model against counts worked out by hand from each kernel's meaning."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pallas_ir

EXAMPLES = Path(__file__).parent.parent / "examples" / "pallas"


def load(name: str):
    return pallas_ir.parse((EXAMPLES / f"{name}.mlir").read_text())


def test_add_moves_each_element_once() -> None:
    (call,) = pallas_ir.cost_report(load("add")).calls
    n = 512 * 1024 * 4
    assert (call.read, call.written, call.minimum) == (2 * n, n, 3 * n)
    assert call.ratio == 1.0 and not call.bound
    # Two inputs and one output, (128, 512) f32 blocks, double-buffered.
    assert call.vmem_bytes == 3 * 2 * 128 * 512 * 4


def test_transpose_moves_each_element_once() -> None:
    (call,) = pallas_ir.cost_report(load("transpose")).calls
    assert call.modelled == 2 * 256 * 384 * 4 and call.ratio == 1.0


def test_gather_is_a_bound_without_data_and_exact_with_it() -> None:
    module = load("embedding")
    row = 256 * 4
    (bound,) = pallas_ir.cost_report(module).calls
    assert bound.bound and bound.read == 64 * 4 + 64 * row
    # Sorted indices with repeats: a row is fetched again only when the index changes.
    idx = np.repeat(np.arange(0, 1000, 50, dtype=np.int32), 4)[:64]
    (exact,) = pallas_ir.cost_report(module, {"idx": idx}).calls
    changes = 1 + int(np.count_nonzero(np.diff(idx)))
    assert not exact.bound
    assert exact.read == 64 * 4 + changes * row
    assert exact.minimum == 64 * 4 + len(set(idx.tolist())) * row + 64 * row


STRIDED = """
// out = x[::2, :] for x: f32[64, 128]: (16, 128) blocks and a sublane-strided load.
func.func @forward(%x: tensor<64x128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @rows(%x) grid [4]
      in [#pallas.block_spec<[16, 128], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x128xf32>) -> tensor<32x128xf32>
      kernel(%x_ref: !pallas.ref<16x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    %v = pallas.load %x_ref[ds(0, 8, stride = 2), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
    pallas.store %v, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<32x128xf32>
}
"""


def test_strided_read_costs_twice_its_minimum() -> None:
    (call,) = pallas_ir.cost_report(pallas_ir.parse(STRIDED)).calls
    x, out = 64 * 128 * 4, 32 * 128 * 4
    assert call.read == x and call.written == out
    assert call.minimum == x // 2 + out
    assert abs(call.ratio - (x + out) / (x // 2 + out)) < 1e-12


def test_tile_compute_counts_a_softmax_step_by_hand() -> None:
    """examples/tl/softmax_rows.mlir, one (8, 512) step: subf and divf are one flop an
    element each (2 * 4096), exp one transcendental an element (4096); the reductions,
    broadcasts, loads and stores cost none."""
    from pallas_ir.analysis.cost_model import tile_compute
    from pallas_ir.dialects import tiled_loop as tl

    text = (EXAMPLES.parent / "tl" / "softmax_rows.mlir").read_text()
    (grid,) = [o for o in pallas_ir.parse(text).walk() if isinstance(o, tl.GridOp)]
    assert tile_compute(list(grid.body.block.ops)) == (2 * 8 * 512, 8 * 512)


def test_tile_compute_counts_a_dot_as_two_flops_a_multiply_add() -> None:
    """examples/ta/matmul.mlir (c = a @ b, a: f32[256, 512], b: f32[512, 384]) tiled
    with the sizes tile-policy writes, (tm, tn, tk) over loop dims (i, j, k): one step's
    tl.dot of an (tm, tk) and a (tk, tn) tile is 2 * tm * tk * tn flops (a multiply and
    an add per term)."""
    from pallas_ir.analysis.cost_model import tile_compute
    from pallas_ir.dialects import tensor_access as ta
    from pallas_ir.dialects import tiled_loop as tl
    from pallas_ir.registry import TA_PASSES

    text = (EXAMPLES.parent / "ta" / "matmul.mlir").read_text()
    module = pallas_ir.parse(text)
    pallas_ir.run_passes(module, f"{TA_PASSES},tile-policy")
    (loop,) = [o for o in module.walk() if isinstance(o, ta.LoopOp)]
    tm, tn, tk = loop.attributes["tile_sizes"].get_values()  # type: ignore[attr-defined]
    pallas_ir.run_passes(module, "xla-outline,tile")
    (grid,) = [o for o in module.walk() if isinstance(o, tl.GridOp)]
    assert tile_compute(list(grid.body.block.ops)) == (2 * tm * tk * tn, 0)
