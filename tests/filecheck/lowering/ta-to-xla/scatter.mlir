// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p xla-outline,tile,tl-to-pallas
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | pallas-opt --split-input-file -t python | filecheck %s --check-prefix=PY

// ta-to-xla (called by tl-to-pallas where it makes a `pallas.xla_call`): a
// `ta.kernel {target = #ta<target xla>}` becomes an `xla.func` and no ta op is left.
// An XLA scatter after a Pallas kernel (part `scatter`): the kernel stores densely, and
// the function copies that buffer to the store's real (strided) place in `out`, an
// `inout` argument it takes in and returns.
// Inputs from tests/filecheck/lowering/tile/xla-fallback.mlir.

// out[:, ::2] = x @ w for out: f32[64, 256] (inout), x: f32[64, 128], w: f32[128, 128]:
// the store writes every other lane, part of every block (there are no masked stores).
// The Pallas kernel writes the product to a dense buffer; an XLA scatter puts it in
// place, keeping the other lanes of out.
ta.kernel @strided_store(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128x2xf32> {role = "inout"}) {
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1, 0)>](%i, %j) : memref<64x128x2xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x128xf32>, %out: memref<64x128x2xf32>) -> memref<64x128x2xf32> {
  ta.launch @strided_store(%x, %w, %out) : memref<64x128xf32>, memref<128x128xf32>, memref<64x128x2xf32>
  func.return %out : memref<64x128x2xf32>
}

// CHECK-LABEL: xla.func @strided_store_1(%out: tensor<64x128x2xf32>, %xla: tensor<64x128xf32>) -> tensor<64x128x2xf32> attributes {part = #xla<part scatter>} {
// CHECK-NEXT:  %out_1 = xla.buffer %out : tensor<64x128x2xf32> to tensor<64x128x2xf32>
// CHECK-NEXT:  %xla_1 = xla.buffer %xla : tensor<64x128xf32> to tensor<64x128xf32>
// CHECK-NEXT:  %x0 = xla.iota 0 : tensor<64x128xindex>
// CHECK-NEXT:  %x1 = xla.iota 1 : tensor<64x128xindex>
// CHECK-NEXT:  %s = xla.window %xla_1 affine_map<(d0, d1) -> (d0, d1)> in [64, 128] : tensor<64x128xf32> -> tensor<64x128xf32>
// CHECK-NEXT:  %out_2 = xla.update_window %s, %out_1 affine_map<(d0, d1) -> (d0, d1, 0)> in [64, 128, 2] : tensor<64x128xf32>, tensor<64x128x2xf32>
// CHECK-NEXT:  xla.return %out_2 : tensor<64x128x2xf32>
// CHECK-NEXT:  }
// CHECK:       %out_1 = pallas.xla_call @strided_store_1(%out, %xla) : (tensor<64x128x2xf32>, tensor<64x128xf32>) -> tensor<64x128x2xf32>
// CHECK-NOT:   ta.

// PY-LABEL: def strided_store_1_xla(out, xla):
// PY-NEXT:      out = jnp.ravel(jnp.asarray(out))
// PY-NEXT:      xla = jnp.ravel(jnp.asarray(xla))
// PY-NEXT:      x0 = jnp.arange(64, dtype=jnp.int32).reshape((64, 1))
// PY-NEXT:      x1 = jnp.arange(128, dtype=jnp.int32).reshape((1, 128))
// PY-NEXT:      s = xla.reshape((64, 128))[0:64, 0:128].reshape((64, 128))
// PY-NEXT:      out = out.reshape((64, 128, 2)).at[0:64, 0:128, 0].set(jnp.broadcast_to(s, (64, 128))).reshape(-1)
// PY-NEXT:      return jnp.reshape(out, (64, 128, 2))
