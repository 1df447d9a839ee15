"""ta-to-xla keeps a kernel's meaning: the xla reference on the `xla.func` gives what the
ta reference gives on the `ta.kernel`; it checks indices as the ta reference does, and
bounds index arguments the same way."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, TensorType

import pallas_ir
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import READABLE_ROLES, WRITABLE_ROLES
from pallas_ir.lowering.ta_to_xla import xla_function
from pallas_ir.reference import ReferenceError, random_buffers, run_kernel
from pallas_ir.reference import ta as ta_reference
from pallas_ir.reference import xla as xla_reference

GATHER = """
// out[i, j] = emb[perm[idx[i]], j] * 2: a double indirection
ta.kernel @gather(%idx: memref<16xi64> {role = "in"}, %perm: memref<50xi32> {role = "in"}, %emb: memref<50x64xf32> {role = "in"}, %out: memref<16x64xf32> {role = "out"}) attributes {target = #ta<target xla>} {
  ta.loop [16, 64] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi64>
    %s = arith.index_cast %iv : i64 to index
    %pv = ta.load %perm[affine_map<(d0, d1)[s0] -> (s0)>](%i, %j)[%s] : memref<50xi32>
    %ps = arith.index_cast %pv : i32 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ps] : memref<50x64xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<16x64xf32>
  }
}
"""

ROW_STATS = """
// out[i] = max_k |x[i, k]| + argmax_k x[i, k], and x[i, 0] := -1 after reading the row
ta.kernel @stats(%x: memref<8x32xf32> {role = "inout"}, %out: memref<8xf32> {role = "out"}, %arg: memref<8xi32> {role = "out"}) attributes {target = #ta<target xla>} {
  ta.loop [8] reduce [32] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x32xf32>
    %a = math.absf %v : f32
    %m = ta.reduce <max> %a : f32
    %w = ta.reduce <argmax> %v : f32
    %wf = arith.sitofp %w : i32 to f32
    %r = arith.addf %m, %wf : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<8xf32>
    ta.store %w, %arg[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<8xi32>
    %neg = arith.constant -1.0 : f32
    ta.store %neg, %x[affine_map<(d0, d1) -> (d0, 0)>](%i, %k) : memref<8x32xf32>
  }
}
"""


def _kernel(text: str) -> ta.KernelOp:
    module = pallas_ir.parse(text)
    pallas_ir.verify(module)
    (k,) = [op for op in module.ops if isinstance(op, ta.KernelOp)]
    return k


def _tensor(t: MemRefType) -> TensorType:
    return TensorType(t.element_type, t.get_shape())


def _convert(kernel: ta.KernelOp):
    args = kernel.body.block.args
    ins = [_tensor(a.type) for a in args if kernel.role_of(a) in READABLE_ROLES]  # type: ignore[arg-type]
    outs = [_tensor(a.type) for a in args if kernel.role_of(a) in WRITABLE_ROLES]  # type: ignore[arg-type]
    function = xla_function(kernel, kernel.sym_name.data, ins, outs)
    function.verify()
    return function


@pytest.mark.parametrize("text", [GATHER, ROW_STATS], ids=["gather", "row_stats"])
def test_xla_reference_matches_the_ta_reference(text: str) -> None:
    kernel = _kernel(text)
    function = _convert(kernel)
    buffers = random_buffers(kernel, np.random.default_rng(0))
    args = kernel.body.block.args
    ins = [b.copy() for a, b in zip(args, buffers) if kernel.role_of(a) in READABLE_ROLES]
    run_kernel(kernel, buffers)
    want = [b for a, b in zip(args, buffers) if kernel.role_of(a) in WRITABLE_ROLES]
    got = xla_reference.run_function(function, ins)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_index_limits_match_the_ta_reference() -> None:
    kernel = _kernel(GATHER)
    readable = [
        a.index for a in kernel.body.block.args if kernel.role_of(a) in READABLE_ROLES
    ]
    want = {readable.index(i): n for i, n in ta_reference.index_limits(kernel).items()}
    assert xla_reference.index_limits(_convert(kernel)) == want == {0: 50, 1: 50}


def test_an_out_of_range_index_is_an_error() -> None:
    function = _convert(_kernel(GATHER))
    idx = np.full(16, 50, np.int64)  # perm has 50 entries
    perm = np.zeros(50, np.int32)
    emb = np.zeros((50, 64), np.float32)
    with pytest.raises(
        ReferenceError, match="index 50 is out of range for dim 0 of size 50"
    ):
        xla_reference.run_function(function, [idx, perm, emb])
