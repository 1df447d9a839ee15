// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p xla-outline,tile,tl-to-pallas
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | pallas-opt --split-input-file -t python | filecheck %s --check-prefix=PY

// ta-to-xla (called by tl-to-pallas where it makes a `pallas.xla_call`): a
// `ta.kernel {target = #ta<target xla>}` becomes an `xla.func` and no ta op is left.
// The row indices of a gather of whole rows, computed on XLA (part `index`): a double
// indirection (`x[perm[idx]]`, the inner read a symbol of the outer flat index) and a
// wrapped negative index (comparisons and selects, `xla.compare` and `xla.select`); the
// casts are `xla.convert`s.
// Inputs from tests/filecheck/lowering/tile/xla-fallback.mlir.

// out = x[perm[idx]] * 2 for x: f32[1000, 128], perm: i32[1000], idx: i32[64], as a
// double indirection that indirect-load-to-scalar-prefetch leaves alone. The rows of x
// are whole, so only the row index perm[idx] (both loads) goes to XLA, in one step, and
// the kernel gathers the rows by row DMA.
ta.kernel @double_indirect(%idx: memref<64xi32> {role = "in"}, %perm: memref<1000xi32> {role = "in"}, %x: memref<1000x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi32>
    %s = arith.index_cast %iv : i32 to index
    %pv = ta.load %perm[affine_map<(d0, d1)[s0] -> (s0)>](%i, %j)[%s] : memref<1000xi32>
    %ps = arith.index_cast %pv : i32 to index
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ps] : memref<1000x128xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %perm: memref<1000xi32>, %x: memref<1000x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @double_indirect(%idx, %perm, %x, %out) : memref<64xi32>, memref<1000xi32>, memref<1000x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}

// CHECK-LABEL: xla.func @double_indirect_0(%idx: tensor<64xi32>, %perm: tensor<1000xi32>) -> tensor<64xi32> attributes {part = #xla<part index>} {
// CHECK-NEXT:  %idx_1 = xla.buffer %idx : tensor<64xi32> to tensor<64xi32>
// CHECK-NEXT:  %perm_1 = xla.buffer %perm : tensor<1000xi32> to tensor<1000xi32>
// CHECK-NEXT:  %rows = xla.zeros : tensor<64xi32>
// CHECK-NEXT:  %x0 = xla.iota 0 : tensor<64xindex>
// CHECK-NEXT:  %iv = xla.window %idx_1 affine_map<(d0) -> (d0)> in [64] : tensor<64xi32> -> tensor<64xi32>
// CHECK-NEXT:  %s = xla.convert %iv : tensor<64xi32> to tensor<64xindex>
// CHECK-NEXT:  %0 = xla.flat_index affine_map<(d0)[s0] -> (s0)>(%x0) [%s] in [1000] : tensor<64xindex>
// CHECK-NEXT:  %pv = xla.take %perm_1[%0] : tensor<1000xi32>, tensor<64xindex> -> tensor<64xi32>
// CHECK-NEXT:  %ps = xla.convert %pv : tensor<64xi32> to tensor<64xindex>
// CHECK-NEXT:  %1 = xla.convert %ps : tensor<64xindex> to tensor<64xi32>
// CHECK-NEXT:  %rows_1 = xla.update_window %1, %rows affine_map<(d0) -> (d0)> in [64] : tensor<64xi32>, tensor<64xi32>
// CHECK-NEXT:  xla.return %rows_1 : tensor<64xi32>
// CHECK-NEXT:  }
// CHECK:       %xla = pallas.xla_call @double_indirect_0(%idx, %perm) : (tensor<64xi32>, tensor<1000xi32>) -> tensor<64xi32>
// CHECK-NOT:   ta.

// PY-LABEL: def double_indirect_0_xla(idx, perm):
// PY-NEXT:      idx = jnp.ravel(jnp.asarray(idx))
// PY-NEXT:      perm = jnp.ravel(jnp.asarray(perm))
// PY-NEXT:      rows = jnp.zeros((64,), jnp.int32)
// PY-NEXT:      x0 = jnp.arange(64, dtype=jnp.int32).reshape((64,))
// PY-NEXT:      iv = idx.reshape((64,))[0:64].reshape((64,))
// PY-NEXT:      s = iv.astype(jnp.int32)
// PY-NEXT:      pv = perm[s.astype(jnp.int32)]
// PY-NEXT:      ps = pv.astype(jnp.int32)
// PY-NEXT:      v = ps.astype(jnp.int32)
// PY-NEXT:      rows = rows.reshape((64,)).at[0:64].set(jnp.broadcast_to(v, (64,))).reshape(-1)
// PY-NEXT:      return jnp.reshape(rows, (64,))

// -----

// out = emb[idx] with torch's wrap of negative indices (idx + 1000 where idx < 0), for
// emb: f32[1000, 256] held as rows on the host. The rows are whole: only the row index
// (the wrap) moves to XLA, as i32, and the kernel gathers the rows by row DMA from emb
// left in HBM (G3): the rows move once.
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

// CHECK-LABEL: xla.func @wrapped_0(%idx: tensor<64xi64>) -> tensor<64xi32> attributes {part = #xla<part index>} {
// CHECK-NEXT:  %idx_1 = xla.buffer %idx : tensor<64xi64> to tensor<64xi64>
// CHECK-NEXT:  %rows = xla.zeros : tensor<64xi32>
// CHECK-NEXT:  %x0 = xla.iota 0 : tensor<64xindex>
// CHECK-NEXT:  %iv = xla.window %idx_1 affine_map<(d0) -> (d0)> in [64] : tensor<64xi64> -> tensor<64xi64>
// CHECK-NEXT:  %c0 = xla.constant 0 : i64 : tensor<64xi64>
// CHECK-NEXT:  %cv = xla.constant 1000 : i64 : tensor<64xi64>
// CHECK-NEXT:  %neg = xla.compare <slt> %iv, %c0 : tensor<64xi64>
// CHECK-NEXT:  %up = arith.addi %iv, %cv : tensor<64xi64>
// CHECK-NEXT:  %w = xla.select %neg, %up, %iv : tensor<64xi1>, tensor<64xi64>
// CHECK-NEXT:  %s = xla.convert %w : tensor<64xi64> to tensor<64xindex>
// CHECK-NEXT:  %0 = xla.convert %s : tensor<64xindex> to tensor<64xi32>
// CHECK-NEXT:  %rows_1 = xla.update_window %0, %rows affine_map<(d0) -> (d0)> in [64] : tensor<64xi32>, tensor<64xi32>
// CHECK-NEXT:  xla.return %rows_1 : tensor<64xi32>
// CHECK-NEXT:  }
// CHECK:       %xla = pallas.xla_call @wrapped_0(%idx) : (tensor<64xi64>) -> tensor<64xi32>
// CHECK-NOT:   ta.

// PY-LABEL: def wrapped_0_xla(idx):
// PY-NEXT:      idx = jnp.ravel(jnp.asarray(idx))
// PY-NEXT:      rows = jnp.zeros((64,), jnp.int32)
// PY-NEXT:      x0 = jnp.arange(64, dtype=jnp.int32).reshape((64,))
// PY-NEXT:      iv = idx.reshape((64,))[0:64].reshape((64,))
// PY-NEXT:      c0 = jnp.int64(0)
// PY-NEXT:      cv = jnp.int64(1000)
// PY-NEXT:      neg = iv < c0
// PY-NEXT:      up = iv + cv
// PY-NEXT:      w = jnp.where(neg, up, iv)
// PY-NEXT:      s = w.astype(jnp.int32)
// PY-NEXT:      v = s.astype(jnp.int32)
// PY-NEXT:      rows = rows.reshape((64,)).at[0:64].set(jnp.broadcast_to(v, (64,))).reshape(-1)
// PY-NEXT:      return jnp.reshape(rows, (64,))
