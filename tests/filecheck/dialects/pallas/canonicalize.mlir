// RUN: pallas-opt %s -p canonicalize | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p canonicalize -o /dev/null

// Reshapes of reshapes fold into one and identity reshapes and transposes go; a
// transpose of a transpose is one transpose (result dim i is dim p[q[i]] of the source).
func.func @forward(%x: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>) {
  %o, %p = pallas.call @folds(%x) grid [1]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>,
           #pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>)
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>, %p_ref: !pallas.ref<8x128xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %r1 = pallas.reshape %a : tensor<8x128xf32> to tensor<8x1x128xf32>
    %r2 = pallas.reshape %r1 : tensor<8x1x128xf32> to tensor<1x8x128xf32>
    %r3 = pallas.reshape %r2 : tensor<1x8x128xf32> to tensor<8x128xf32>
    %same = pallas.reshape %r3 : tensor<8x128xf32> to tensor<8x128xf32>
    %t1 = pallas.transpose %same [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
    %t2 = pallas.transpose %t1 [1, 0] : tensor<128x8xf32> -> tensor<8x128xf32>
    %id = pallas.transpose %t2 [0, 1] : tensor<8x128xf32> -> tensor<8x128xf32>
    pallas.store %id, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    %c = pallas.reshape %a : tensor<8x128xf32> to tensor<2x4x128xf32>
    %u1 = pallas.transpose %c [1, 2, 0] : tensor<2x4x128xf32> -> tensor<4x128x2xf32>
    %u2 = pallas.transpose %u1 [2, 0, 1] : tensor<4x128x2xf32> -> tensor<2x4x128xf32>
    %v1 = pallas.transpose %c [2, 0, 1] : tensor<2x4x128xf32> -> tensor<128x2x4xf32>
    %v2 = pallas.transpose %v1 [0, 2, 1] : tensor<128x2x4xf32> -> tensor<128x4x2xf32>
    %v3 = pallas.transpose %v2 [1, 2, 0] : tensor<128x4x2xf32> -> tensor<4x2x128xf32>
    %v4 = pallas.transpose %v3 [1, 0, 2] : tensor<4x2x128xf32> -> tensor<2x4x128xf32>
    %s = arith.addf %u2, %v4 : tensor<2x4x128xf32>
    %back = pallas.reshape %s : tensor<2x4x128xf32> to tensor<8x128xf32>
    pallas.store %back, %p_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o, %p : tensor<8x128xf32>, tensor<8x128xf32>
}

// CHECK:       %a = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
// CHECK-NEXT:  pallas.store %a, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:  %c = pallas.reshape %a : tensor<8x128xf32> to tensor<2x4x128xf32>
// CHECK-NEXT:  %s = arith.addf %c, %c : tensor<2x4x128xf32>
// CHECK-NEXT:  %back = pallas.reshape %s : tensor<2x4x128xf32> to tensor<8x128xf32>
// CHECK-NEXT:  pallas.store %back, %p_ref[...]
