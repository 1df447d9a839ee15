// RUN: pallas-opt %s -p xla-outline,tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p xla-outline,tile,tl-to-pallas -o /dev/null
// RUN: pallas-opt %s -p xla-outline,tile,tl-to-pallas -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s -p xla-outline,tile,tl-to-pallas | pallas-opt -t python | filecheck %s --check-prefix=PY

// ta-to-xla of a scatter-add (an embedding's backward): the accumulating store becomes
// an accumulating `xla.scatter` into the buffer the function takes in, printed as jnp's
// `.at[...].add`, under which repeated rows add up.

// dw[idx[i], :] += grad[i, :] for dw: f32[1000, 128] (inout), idx: i32[64].
ta.kernel @scatter_add(%idx: memref<64xi32> {role = "in"}, %grad: memref<64x128xf32> {role = "in"}, %dw: memref<1000x128xf32> {role = "inout"}) {
  ta.loop [64, 128] (%i, %d) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %d) : memref<64xi32>
    %row = arith.index_cast %r : i32 to index
    %g = ta.load %grad[affine_map<(d0, d1) -> (d0, d1)>](%i, %d) : memref<64x128xf32>
    ta.store %g, %dw[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %d)[%row] accumulate <sum> : memref<1000x128xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %grad: memref<64x128xf32>, %dw: memref<1000x128xf32>) -> memref<1000x128xf32> {
  ta.launch @scatter_add(%idx, %grad, %dw) : memref<64xi32>, memref<64x128xf32>, memref<1000x128xf32>
  func.return %dw : memref<1000x128xf32>
}

// CHECK-LABEL: xla.func @scatter_add(%idx: tensor<64xi32>, %grad: tensor<64x128xf32>, %dw: tensor<1000x128xf32>) -> tensor<1000x128xf32> attributes {part = #xla<part kernel>} {
// CHECK:         %dw_1 = xla.buffer %dw : tensor<1000x128xf32> to tensor<1000x128xf32>
// CHECK:         %row = xla.convert %r : tensor<64x128xi32> to tensor<64x128xindex>
// CHECK:         %[[AT:.*]] = xla.flat_index affine_map<(d0, d1)[s0] -> (s0, d1)>(%i, %d) [%row] in [1000, 128] : tensor<64x128xindex>
// CHECK-NEXT:    %dw_2 = xla.scatter %g, %dw_1[%[[AT]]] accumulate <sum> : tensor<64x128xf32>, tensor<1000x128xf32>, tensor<64x128xindex>
// CHECK-NEXT:    xla.return %dw_2 : tensor<1000x128xf32>
// CHECK:       %dw_1 = pallas.xla_call @scatter_add(%idx, %grad, %dw)
// CHECK-NOT:   ta.

// PY-LABEL: def scatter_add_xla(idx, grad, dw):
// PY:           dw = dw.at[jnp.broadcast_to(row.astype(jnp.int32) * 128 + d, (64, 128)).reshape(-1)].add(jnp.broadcast_to(g, (64, 128)).reshape(-1))
// PY-NEXT:      return jnp.reshape(dw, (1000, 128))
