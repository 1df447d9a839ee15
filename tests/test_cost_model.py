"""The HBM traffic model against counts worked out by hand from each kernel's meaning."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType, i32
from xdsl.ir import Block
from xdsl.ir.affine import AffineMap

import pallas_ir
from pallas_ir.analysis.cost_model import body_vmem_bytes
from pallas_ir.dialects import pallas
from pallas_ir.dialects import tiled_loop as tl

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


BIG_ADD = """
ta.kernel @add(%x: memref<65536x65536xf32> {role = "in"}, %y: memref<65536x65536xf32> {role = "in"}, %out: memref<65536x65536xf32> {role = "out"}) {
  ta.loop [65536, 65536] (%i, %j) {
    %a = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<65536x65536xf32>
    %b = ta.load %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<65536x65536xf32>
    %s = arith.addf %a, %b : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<65536x65536xf32>
  }
}
func.func @forward(%x: memref<65536x65536xf32>, %y: memref<65536x65536xf32>) -> memref<65536x65536xf32> {
  %out = ta.alloc : memref<65536x65536xf32>
  ta.launch @add(%x, %y, %out) : memref<65536x65536xf32>, memref<65536x65536xf32>, memref<65536x65536xf32>
  func.return %out : memref<65536x65536xf32>
}
"""


def test_a_16_gib_add_is_modelled_per_block() -> None:
    """x + y on 65536 x 65536 f32 arrays (16 GiB each): lowering (whose tl-to-pallas
    writes each call's cost estimate) and the report count blocks, never elements, so
    they need no 4 GiB bitmap. Each array moves once, all of it needed."""
    from pallas_ir.registry import default_pipeline

    module = pallas_ir.parse(BIG_ADD)
    pallas_ir.run_passes(module, default_pipeline())
    report = pallas_ir.cost_report(module)
    (call,) = report.calls
    array = 65536 * 65536 * 4
    assert [(o.role, o.bytes, o.minimum) for o in call.operands] == [
        ("in", array, array),
        ("in", array, array),
        ("out", array, array),
    ]
    assert report.modelled == report.minimum == 3 * array == 51539607552
    assert all(o.fetches == math.prod(call.grid) for o in call.operands)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_touched_elements_count_the_union_of_the_windows(data) -> None:
    """The closed-form count of the elements the blocks cover (selected within each
    block, clipped to the array), against marking them on a bitmap of the array: blocked
    specs, and element offsets whose windows may overlap."""
    from pallas_ir.analysis.cost_model import _touched_elements

    rank = data.draw(st.integers(0, 3))
    shape = [data.draw(st.integers(1, 10)) for _ in range(rank)]
    element = data.draw(st.booleans())
    full = [data.draw(st.integers(1, 5)) for _ in range(rank)]
    squeezed = [not element and data.draw(st.booleans()) for _ in range(rank)]
    block = [None if s else b for s, b in zip(squeezed, full)]
    full = [1 if s else b for s, b in zip(squeezed, full)]
    n = data.draw(st.integers(1, 8))
    tops = shape if element else [-(-d // b) for d, b in zip(shape, full)]
    blocks = np.array(
        [[data.draw(st.integers(0, t - 1)) for t in tops] for _ in range(n)],
        dtype=np.int64,
    ).reshape(n, rank)
    within = np.array(
        data.draw(
            st.lists(st.booleans(), min_size=math.prod(full), max_size=math.prod(full))
        ),
        dtype=bool,
    ).reshape([b for b in block if b is not None])
    spec = pallas.BlockSpecAttr(block, AffineMap.identity(rank), element=element)

    seen = np.zeros(shape, dtype=bool)
    sel = within.reshape(full)
    for row in blocks:
        starts = row if element else row * full
        for at in np.argwhere(sel):
            p = starts + at
            if all(p < shape):
                seen[tuple(p)] = True
    assert _touched_elements(blocks, spec, shape, within) == int(seen.sum())


def _divided_body(order: list[int], divide: bool) -> list:
    """A tl body: an int32 (16, 128, 128) block transposed by `order`, floor-divided by
    (or added to) a value of the result's type, summed over its last dim."""
    block = Block(arg_types=[TensorType(i32, [16, 128, 128])])
    moved = tl.TransposeOp(block.args[0], order)
    other = Block(arg_types=[moved.result.type])
    combined = (arith.FloorDivSIOp if divide else arith.AddiOp)(
        moved.result, other.args[0]
    )
    return [moved, combined]


def test_only_values_a_relayout_grows_take_vmem_beside_the_blocks() -> None:
    """`body_vmem_bytes`: a transpose putting the 16-wide dim on the lanes grows
    a 1 MiB block to an 8 MiB value (in VMEM tiles), counted once, six times when
    floor-divided; a transpose that keeps the lanes full counts nothing."""
    grown = 128 * 128 * 128 * 4
    assert body_vmem_bytes(_divided_body([2, 1, 0], False)) == grown
    assert body_vmem_bytes(_divided_body([2, 1, 0], True)) == 6 * grown
    assert body_vmem_bytes(_divided_body([1, 0, 2], True)) == 0
