"""The ta reference interpreter against numpy, and --verify-semantics catching a change."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import AffineMap

import pallas_ir
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.reference import ReferenceError, random_buffers, run_forward, run_kernel
from pallas_ir.reference.verify import compare, snapshot


def kernel(text: str) -> ta.KernelOp:
    module = pallas_ir.parse(text)
    pallas_ir.verify(module)
    (k,) = [op for op in module.ops if isinstance(op, ta.KernelOp)]
    return k


STRIDED = """
// out = x[:, ::2] * 2 for x: f32[64, 256]
ta.kernel @mul(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}
"""

STRIDED_PROGRAM = (
    STRIDED
    + """
func.func @forward(%x: memref<16384xf32>) -> memref<8192xf32> {
  %t = ta.alloc : memref<8192xf32>
  ta.launch @mul(%x, %t) : memref<16384xf32>, memref<8192xf32>
  func.return %t : memref<8192xf32>
}
"""
)
"""STRIDED launched by a host program."""


def test_strided_view() -> None:
    x = np.random.default_rng(0).uniform(-2, 2, (64, 256)).astype(np.float32)
    out = np.zeros(8192, np.float32)
    run_kernel(kernel(STRIDED), [x.reshape(-1), out])
    np.testing.assert_array_equal(out.reshape(64, 128), x[:, ::2] * 2)


SOFTMAX = """
// out = softmax(x, dim=1), am = argmax(x, dim=1), s = x.sum(1) for x: f32[8, 32]
ta.kernel @softmax(%x: memref<8x32xf32> {role = "in"}, %out: memref<8x32xf32> {role = "out"},
                   %am: memref<8xi32> {role = "out"}, %s: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [32] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x32xf32>
    %m = ta.reduce <max> %v : f32
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %z = ta.reduce <sum> %e : f32
    %p = arith.divf %e, %z : f32
    ta.store %p, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x32xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    ta.store %a, %am[affine_map<(d0) -> (d0)>](%i) : memref<8xi32>
    %t = ta.reduce <sum> %v : f32
    ta.store %t, %s[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
"""


def test_reductions_in_one_loop() -> None:
    x = np.random.default_rng(1).uniform(-2, 2, (8, 32)).astype(np.float32)
    out, am, s = (
        np.zeros((8, 32), np.float32),
        np.zeros(8, np.int32),
        np.zeros(8, np.float32),
    )
    run_kernel(kernel(SOFTMAX), [x, out, am, s])
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(am, x.argmax(1))
    np.testing.assert_allclose(s, x.sum(1), rtol=1e-5)


GATHER = """
// out = emb[idx] for emb: f32[100, 16], idx: i64[12]
ta.kernel @emb(%idx: memref<12xi64> {role = "in"}, %emb: memref<1600xf32> {role = "in"},
               %out: memref<192xf32> {role = "out"}) {
  ta.loop [12, 16] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<12xi64>
    %s = arith.index_cast %r : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 16 + d1)>](%i, %j)[%s] : memref<1600xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 16 + d1)>](%i, %j) : memref<192xf32>
  }
}
"""


def test_gather_and_its_random_indices() -> None:
    k = kernel(GATHER)
    idx, emb, out = random_buffers(k, np.random.default_rng(0))
    # Indices stay inside the table's 100 rows, and spread over it.
    assert idx.min() >= 0 and idx.max() < 100 and len(set(idx.tolist())) > 6
    run_kernel(k, [idx, emb, out])
    np.testing.assert_array_equal(out.reshape(12, 16), emb.reshape(100, 16)[idx])


def test_out_of_range_index_raises() -> None:
    k = kernel(GATHER)
    idx = np.full(12, 100, np.int64)
    with pytest.raises(ReferenceError, match="index 1600 is out of range"):
        run_kernel(k, [idx, np.zeros(1600, np.float32), np.zeros(192, np.float32)])


def test_forward_launches_on_host_buffers() -> None:
    module = pallas_ir.parse(STRIDED_PROGRAM)
    x = np.arange(16384, dtype=np.float32)
    (out,) = run_forward(module, x)
    np.testing.assert_array_equal(out.reshape(64, 128), x.reshape(64, 256)[:, ::2] * 2)


def test_verify_semantics_names_the_first_difference() -> None:
    module = pallas_ir.parse(STRIDED)
    runs, problems = snapshot(module)
    assert not problems
    assert compare(module, runs, "cse") == []
    # A "pass" that reads the odd columns instead of the even ones changes the meaning.
    load = next(op for op in module.walk() if isinstance(op, ta.LoadOp))
    load.properties["map"] = AffineMapAttr(
        AffineMap.from_callable(lambda i, j: (i * 256 + j * 2 + 1,))
    )
    (d,) = compare(module, runs, "broken-pass")
    assert (
        "'broken-pass' changed what @mul computes: output %out first differs at [0]"
        in d.message
    )
    assert d.location is not None and d.location.line == 3


TWO_INDICES = """
// out = x[i0, i1] for x: f32[100, 50, 8] in flat storage, i0, i1: i64[16]
ta.kernel @two(%i0: memref<16xi64> {role = "in"}, %i1: memref<16xi64> {role = "in"},
               %x: memref<40000xf32> {role = "in"}, %out: memref<128xf32> {role = "out"}) {
  ta.loop [16, 8] (%i, %j) {
    %a = ta.load %i0[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi64>
    %sa = arith.index_cast %a : i64 to index
    %b = ta.load %i1[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi64>
    %sb = arith.index_cast %b : i64 to index
    %v = ta.load %x[affine_map<(d0, d1)[s0, s1] -> (s0 * 400 + s1 * 8 + d1)>](%i, %j)[%sa, %sb] : memref<40000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 8 + d1)>](%i, %j) : memref<128xf32>
  }
}
"""


def test_random_indices_respect_the_dims_their_strides_imply() -> None:
    """Each index stays below its own torch dim (i0 < 100, i1 < 50), not merely inside
    the flat buffer with the other index at 0."""
    k = kernel(TWO_INDICES)
    i0, i1, x, out = random_buffers(k, np.random.default_rng(0))
    assert 0 <= i0.min() and i0.max() < 100 and i0.max() > 50
    assert 0 <= i1.min() and i1.max() < 50 and i1.max() > 25
    run_kernel(k, [i0, i1, x, out])
    np.testing.assert_array_equal(out.reshape(16, 8), x.reshape(100, 50, 8)[i0, i1])


def test_verify_semantics_checks_the_whole_program_through_lowering() -> None:
    """With a @forward, --verify-semantics follows the program into tl and pallas; a
    lowering that changed the numbers would be caught at the result it changed."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import FloatAttr, f32

    from pallas_ir.reference.verify import compare_forward, snapshot_forward

    module = pallas_ir.parse(STRIDED_PROGRAM)
    run, problems = snapshot_forward(module)
    assert run is not None and not problems
    pallas_ir.run_passes(module, "stride-to-reshape,tile,tl-to-pallas")
    assert compare_forward(module, run, "tl-to-pallas") == []
    # Now break the lowered kernel: multiply by 3 instead of 2.
    const = next(
        op
        for op in module.walk()
        if isinstance(op, arith.ConstantOp) and op.name == "arith.constant"
    )
    const.properties["value"] = (
        type(const.value).from_list(  # type: ignore[attr-defined]
            const.result.type, [3.0]
        )
        if not isinstance(const.value, FloatAttr)
        else FloatAttr(3.0, f32)
    )
    (d,) = compare_forward(module, run, "broken")
    assert (
        "'broken' changed what @forward computes: result #0 first differs at ["
        in d.message
    )
