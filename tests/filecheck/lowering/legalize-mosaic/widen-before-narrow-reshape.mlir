// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic cannot shape-cast packed bf16 data across its last two dims (measured:
// "unsupported shape cast" for vector<16x16xbf16> -> vector<16x16x1xbf16>): the value
// is widened first and the f32 value reshaped. A reshape of 32-bit data, or one not
// followed by a widening, stays.
func.func @forward(%x: tensor<16x16xbf16>) -> tensor<16x16xf32> {
  %o = pallas.call @widen_first(%x) grid [1]
      in [#pallas.block_spec<[16, 16], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[16, 16], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<16x16xbf16>) -> tensor<16x16xf32>
      kernel(%x_ref: !pallas.ref<16x16xbf16, vmem>, %o_ref: !pallas.ref<16x16xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<16x16xbf16, vmem> -> tensor<16x16xbf16>
    %r = pallas.reshape %a : tensor<16x16xbf16> to tensor<16x16x1xbf16>
    %w = arith.extf %r : tensor<16x16x1xbf16> to tensor<16x16x1xf32>
    %t = pallas.reshape %w : tensor<16x16x1xf32> to tensor<16x16xf32>
    pallas.store %t, %o_ref[...] : tensor<16x16xf32>, !pallas.ref<16x16xf32, vmem>
  }
  func.return %o : tensor<16x16xf32>
}

// CHECK:       %a = pallas.load %x_ref[...] : !pallas.ref<16x16xbf16, vmem> -> tensor<16x16xbf16>
// CHECK-NEXT:  %[[W:.*]] = arith.extf %a : tensor<16x16xbf16> to tensor<16x16xf32>
// CHECK-NEXT:  %[[R:.*]] = pallas.reshape %[[W]] : tensor<16x16xf32> to tensor<16x16x1xf32>
// CHECK-NEXT:  %t = pallas.reshape %[[R]] : tensor<16x16x1xf32> to tensor<16x16xf32>
// CHECK-NOT:   tensor<16x16x1xbf16>
