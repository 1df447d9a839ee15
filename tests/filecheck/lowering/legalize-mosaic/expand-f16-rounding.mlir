// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic on v5e cannot convert to float16: a value rounded to float16 and widened
// back (how the frontend casts to float16 and computes on in f32) is rounded on
// float32's bits instead. --verify-semantics checks the values on random inputs.
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @round(%x) grid [1]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %h = arith.truncf %a : tensor<8x128xf32> to tensor<8x128xf16>
    %y = arith.extf %h : tensor<8x128xf16> to tensor<8x128xf32>
    pallas.store %y, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<8x128xf32>
}

// CHECK:       %y_r0 = arith.bitcast %a : tensor<8x128xf32> to tensor<8x128xi32>
// CHECK:       %y = arith.bitcast %{{.*}} : tensor<8x128xi32> to tensor<8x128xf32>
// CHECK-NEXT:  pallas.store %y, %o_ref[...]
// CHECK-NOT:   arith.truncf
// CHECK-NOT:   f16
