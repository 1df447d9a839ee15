// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic cannot shape-cast packed bf16 data across its last two dims (measured:
// "unsupported shape cast" for vector<8xbf16> -> vector<8x1xbf16>, a bf16 column
// stored from a row of f32 results, found by the differential fuzzer): the f32 value
// is reshaped first and narrowed after. bf16 -> f32 -> bf16 is exact, so nothing
// changes but the order.
func.func @forward(%x: tensor<8xf32>) -> tensor<8x1xbf16> {
  %o = pallas.call @narrow_column(%x) grid [1]
      in [#pallas.block_spec<[8], (d0) -> (0)>]
      out [#pallas.block_spec<[8, 1], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8xf32>) -> tensor<8x1xbf16>
      kernel(%x_ref: !pallas.ref<8xf32, vmem>, %o_ref: !pallas.ref<8x1xbf16, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<8xf32, vmem> -> tensor<8xf32>
    %n = arith.truncf %v : tensor<8xf32> to tensor<8xbf16>
    %r = pallas.reshape %n : tensor<8xbf16> to tensor<8x1xbf16>
    pallas.store %r, %o_ref[...] : tensor<8x1xbf16>, !pallas.ref<8x1xbf16, vmem>
  }
  func.return %o : tensor<8x1xbf16>
}

// CHECK:       %v = pallas.load %x_ref[...] : !pallas.ref<8xf32, vmem> -> tensor<8xf32>
// CHECK-NEXT:  %[[R:.*]] = pallas.reshape %v : tensor<8xf32> to tensor<8x1xf32>
// CHECK-NEXT:  %[[N:.*]] = arith.truncf %[[R]] : tensor<8x1xf32> to tensor<8x1xbf16>
// CHECK-NEXT:  pallas.store %[[N]], %o_ref[...]
// CHECK-NOT:   tensor<8xbf16>
