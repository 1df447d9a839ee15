// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic has no expm1: near 0 it becomes 2t / (1 - t) with t = tanh(x / 2), which
// keeps the relative precision exp(x) - 1 loses; elsewhere exp(x) - 1.
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @expm1(%x) grid [1]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %y = math.expm1 %a : tensor<8x128xf32>
    pallas.store %y, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<8x128xf32>
}

// CHECK:       %y_half = arith.constant dense<5.000000e-01> : tensor<8x128xf32>
// CHECK-NEXT:  %y_one = arith.constant dense<1.000000e+00> : tensor<8x128xf32>
// CHECK-NEXT:  %y_two = arith.constant dense<2.000000e+00> : tensor<8x128xf32>
// CHECK-NEXT:  %y_halved = arith.mulf %a, %y_half : tensor<8x128xf32>
// CHECK-NEXT:  %y_t = math.tanh %y_halved : tensor<8x128xf32>
// CHECK-NEXT:  %y_twice_t = arith.mulf %y_two, %y_t : tensor<8x128xf32>
// CHECK-NEXT:  %y_one_minus_t = arith.subf %y_one, %y_t : tensor<8x128xf32>
// CHECK-NEXT:  %y_near_form = arith.divf %y_twice_t, %y_one_minus_t : tensor<8x128xf32>
// CHECK-NEXT:  %y_exp = math.exp %a : tensor<8x128xf32>
// CHECK-NEXT:  %y_far_form = arith.subf %y_exp, %y_one : tensor<8x128xf32>
// CHECK-NEXT:  %y_abs = math.absf %a : tensor<8x128xf32>
// CHECK-NEXT:  %y_near = arith.cmpf olt, %y_abs, %y_one : tensor<8x128xf32>
// CHECK-NEXT:  %y = arith.select %y_near, %y_near_form, %y_far_form : tensor<8x128xf32>
// CHECK-NOT:   math.expm1
