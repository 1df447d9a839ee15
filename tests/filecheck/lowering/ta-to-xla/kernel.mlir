// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p xla-outline,tile,tl-to-pallas
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | pallas-opt --split-input-file -t python | filecheck %s --check-prefix=PY

// ta-to-xla (called by tl-to-pallas where it makes a `pallas.xla_call`): a
// `ta.kernel {target = #ta<target xla>}` becomes an `xla.func` and no ta op is left.
// A whole kernel on XLA (an access no Pallas idiom covers in an element-wise kernel, or
// 64-bit data) becomes one `xla.func` of part `kernel`: each readable buffer is an
// argument taken in as its buffer (an `inout` one is returned too), an `out` buffer
// starts as zeros, the loop variables are iotas over the loop's domain, a load whose
// index is a projected permutation plus offsets an `xla.window` (a slice of the
// buffer's view), a store of one an `xla.update_window`, any other load an
// `xla.flat_index` then `xla.take` (a gather), constants `xla.constant`s over the
// domain, and the printed function is the vectorized jnp one (a domain value
// broadcasts to its tensor, a buffer is held flat).
// Inputs from tests/filecheck/lowering/tile/xla-fallback.mlir.

// The tiler's fallback: a kernel with an access no Pallas idiom covers runs whole on
// XLA as one fusion when nothing else in it needs Pallas; beside a matrix product or a
// gather's row DMAs, only the access moves to a `ta.kernel {target = #ta<target xla>}` that
// @forward calls (an XLA gather before the Pallas kernel, or an XLA scatter after it)
// and the rest is tiled as usual. A kernel with 64-bit data runs on XLA whole; a
// gather of whole rows at a computed row moves only its row indices to XLA. --verify-semantics runs every case through the ta reference and the
// pallas reference (which runs XLA kernels with the ta reference).

// A diagonal read, out = x.diagonal() * 3, in a kernel marked for XLA (a Pallas kernel
// reads a diagonal too, `tile`): one loop dim walks two buffer dims, a gather at the
// flat index.
ta.kernel @diag(%x: memref<64x64xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) attributes {target = #ta<target xla>} {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0, d0)>](%i) : memref<64x64xf32>
    %c = arith.constant 3.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x64xf32>) -> memref<64xf32> {
  %out = ta.alloc : memref<64xf32>
  ta.launch @diag(%x, %out) : memref<64x64xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}

// CHECK-LABEL: xla.func @diag(%x: tensor<64x64xf32>) -> tensor<64xf32> attributes {part = #xla<part kernel>} {
// CHECK-NEXT:  %x_1 = xla.buffer %x : tensor<64x64xf32> to tensor<64x64xf32>
// CHECK-NEXT:  %out = xla.zeros : tensor<64xf32>
// CHECK-NEXT:  %i = xla.iota 0 : tensor<64xindex>
// CHECK-NEXT:  %0 = xla.flat_index affine_map<(d0) -> (d0, d0)>(%i) [] in [64, 64] : tensor<64xindex>
// CHECK-NEXT:  %v = xla.take %x_1[%0] : tensor<64x64xf32>, tensor<64xindex> -> tensor<64xf32>
// CHECK-NEXT:  %c = xla.constant 3.000000e+00 : f32 : tensor<64xf32>
// CHECK-NEXT:  %m = arith.mulf %v, %c : tensor<64xf32>
// CHECK-NEXT:  %out_1 = xla.update_window %m, %out affine_map<(d0) -> (d0)> in [64] : tensor<64xf32>, tensor<64xf32>
// CHECK-NEXT:  xla.return %out_1 : tensor<64xf32>
// CHECK-NEXT:  }
// CHECK:       %out = pallas.xla_call @diag(%x) : (tensor<64x64xf32>) -> tensor<64xf32>
// CHECK-NOT:   ta.

// PY-LABEL: def diag_xla(x):
// PY-NEXT:      x = jnp.ravel(jnp.asarray(x))
// PY-NEXT:      out = jnp.zeros((64,), jnp.float32)
// PY-NEXT:      i = jnp.arange(64, dtype=jnp.int32).reshape((64,))
// PY-NEXT:      v = x[i * 64 + i]
// PY-NEXT:      c = jnp.float32(3.0)
// PY-NEXT:      m = v * c
// PY-NEXT:      out = out.reshape((64,)).at[0:64].set(jnp.broadcast_to(m, (64,))).reshape(-1)
// PY-NEXT:      return jnp.reshape(out, (64,))

// -----

// idx += 1 on int64 indices: TPU kernels have no 64-bit types, so the kernel runs on
// XLA whole (and the program has no Pallas call).
ta.kernel @increment(%idx: memref<64xi64> {role = "inout"}) {
  ta.loop [64] (%i) {
    %iv = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
    %one = arith.constant 1 : i64
    %n = arith.addi %iv, %one : i64
    ta.store %n, %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
  }
}
func.func @forward(%idx: memref<64xi64>) -> memref<64xi64> {
  ta.launch @increment(%idx) : memref<64xi64>
  func.return %idx : memref<64xi64>
}

// CHECK-LABEL: xla.func @increment(%idx: tensor<64xi64>) -> tensor<64xi64> attributes {part = #xla<part kernel>} {
// CHECK-NEXT:  %idx_1 = xla.buffer %idx : tensor<64xi64> to tensor<64xi64>
// CHECK-NEXT:  %i = xla.iota 0 : tensor<64xindex>
// CHECK-NEXT:  %iv = xla.window %idx_1 affine_map<(d0) -> (d0)> in [64] : tensor<64xi64> -> tensor<64xi64>
// CHECK-NEXT:  %one = xla.constant 1 : i64 : tensor<64xi64>
// CHECK-NEXT:  %n = arith.addi %iv, %one : tensor<64xi64>
// CHECK-NEXT:  %idx_2 = xla.update_window %n, %idx_1 affine_map<(d0) -> (d0)> in [64] : tensor<64xi64>, tensor<64xi64>
// CHECK-NEXT:  xla.return %idx_2 : tensor<64xi64>
// CHECK-NEXT:  }
// CHECK:       %idx_1 = pallas.xla_call @increment(%idx) : (tensor<64xi64>) -> tensor<64xi64>
// CHECK-NOT:   ta.

// PY-LABEL: def increment_xla(idx):
// PY-NEXT:      idx = jnp.ravel(jnp.asarray(idx))
// PY-NEXT:      i = jnp.arange(64, dtype=jnp.int32).reshape((64,))
// PY-NEXT:      iv = idx.reshape((64,))[0:64].reshape((64,))
// PY-NEXT:      one = jnp.int64(1)
// PY-NEXT:      n = iv + one
// PY-NEXT:      idx = idx.reshape((64,)).at[0:64].set(jnp.broadcast_to(n, (64,))).reshape(-1)
// PY-NEXT:      return jnp.reshape(idx, (64,))

// -----

// Per-row reductions reduced again (`ta.reduce ... over`) on 64-bit data: on XLA whole,
// each reduction over its own dims of the domain (a row's max over dim 2, the rows'
// sum over dim 1), so a row's value counts once in the sum.
ta.kernel @sum_of_row_maxima(%x: memref<8x16xf64> {role = "in"}, %out: memref<1xf64> {role = "out"}) {
  ta.loop [1] reduce [8, 16] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<8x16xf64>
    %m = ta.reduce <max> %v over [2] : f64
    %s = ta.reduce <sum> %m over [1] : f64
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%p) : memref<1xf64>
  }
}
func.func @forward(%x: memref<8x16xf64>) -> memref<1xf64> {
  %out = ta.alloc : memref<1xf64>
  ta.launch @sum_of_row_maxima(%x, %out) : memref<8x16xf64>, memref<1xf64>
  func.return %out : memref<1xf64>
}

// CHECK-LABEL: xla.func @sum_of_row_maxima
// CHECK:       %m = xla.reduce <max> %v axes [2] : tensor<1x8x16xf64> -> tensor<1x8x16xf64>
// CHECK-NEXT:  %s = xla.reduce <sum> %m axes [1] : tensor<1x8x16xf64> -> tensor<1x8x16xf64>
// CHECK:       pallas.xla_call @sum_of_row_maxima

// PY-LABEL: def sum_of_row_maxima_xla(x):
// PY:           m = jnp.max(jnp.broadcast_to(v, (1, 8, 16)), axis=(2,), keepdims=True).astype(jnp.float64)
// PY-NEXT:      s = jnp.sum(jnp.broadcast_to(m, (1, 8, 16)), axis=(1,), keepdims=True).astype(jnp.float64)
