// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p xla-outline,tile,tl-to-pallas
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile,tl-to-pallas | pallas-opt --split-input-file -t python | filecheck %s --check-prefix=PY

// ta-to-xla (called by tl-to-pallas where it makes a `pallas.xla_call`): a
// `ta.kernel {target = #ta<target xla>}` becomes an `xla.func` and no ta op is left.
// An XLA gather before a Pallas kernel (part `gather`): the flipped rows no Pallas idiom
// reads are gathered into a dense buffer the matrix product then tiles.
// Inputs from tests/filecheck/lowering/tile/xla-fallback.mlir.

// out = x.flip(0) @ w for x: f32[64, 128], w: f32[128, 128]: the flipped read (a
// negative row step) has no Pallas idiom, but the matrix product wants the MXU: an XLA
// gather writes the flipped rows to a dense buffer, and the Pallas kernel multiplies.
ta.kernel @flip_matmul(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (63 - d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @flip_matmul(%x, %w, %out) : memref<64x128xf32>, memref<128x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}

// CHECK-LABEL: xla.func @flip_matmul_0(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {part = #xla<part gather>} {
// CHECK-NEXT:  %x_1 = xla.buffer %x : tensor<64x128xf32> to tensor<64x128xf32>
// CHECK-NEXT:  %xla = xla.zeros : tensor<64x128xf32>
// CHECK-NEXT:  %x0 = xla.iota 0 : tensor<64x128xindex>
// CHECK-NEXT:  %x1 = xla.iota 1 : tensor<64x128xindex>
// CHECK-NEXT:  %0 = xla.flat_index affine_map<(d0, d1) -> (((d0 * -1) + 63), d1)>(%x0, %x1) [] in [64, 128] : tensor<64x128xindex>
// CHECK-NEXT:  %a = xla.take %x_1[%0] : tensor<64x128xf32>, tensor<64x128xindex> -> tensor<64x128xf32>
// CHECK-NEXT:  %xla_1 = xla.update_window %a, %xla affine_map<(d0, d1) -> (d0, d1)> in [64, 128] : tensor<64x128xf32>, tensor<64x128xf32>
// CHECK-NEXT:  xla.return %xla_1 : tensor<64x128xf32>
// CHECK-NEXT:  }
// CHECK:       %xla = pallas.xla_call @flip_matmul_0(%x) : (tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-NOT:   ta.

// PY-LABEL: def flip_matmul_0_xla(x):
// PY-NEXT:      x = jnp.ravel(jnp.asarray(x))
// PY-NEXT:      xla = jnp.zeros((8192,), jnp.float32)
// PY-NEXT:      x0 = jnp.arange(64, dtype=jnp.int32).reshape((64, 1))
// PY-NEXT:      x1 = jnp.arange(128, dtype=jnp.int32).reshape((1, 128))
// PY-NEXT:      a = x[(x0 * -1 + 63) * 128 + x1]
// PY-NEXT:      xla = xla.reshape((64, 128)).at[0:64, 0:128].set(jnp.broadcast_to(a, (64, 128))).reshape(-1)
// PY-NEXT:      return jnp.reshape(xla, (64, 128))
