// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic has no 8-bit integer vector arithmetic: the i8 product runs on sign-extended
// i32 and is narrowed back; its low 8 bits are the i8 wrapping product.
func.func @forward(%x: tensor<32x256xi8>, %y: tensor<32x256xi8>) -> tensor<32x256xi8> {
  %o = pallas.call @mul(%x, %y) grid [1]
      in [#pallas.block_spec<[32, 256], (d0) -> (0, 0)>,
          #pallas.block_spec<[32, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[32, 256], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<32x256xi8>, tensor<32x256xi8>) -> tensor<32x256xi8>
      kernel(%x_ref: !pallas.ref<32x256xi8, vmem>, %y_ref: !pallas.ref<32x256xi8, vmem>, %o_ref: !pallas.ref<32x256xi8, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<32x256xi8, vmem> -> tensor<32x256xi8>
    %b = pallas.load %y_ref[...] : !pallas.ref<32x256xi8, vmem> -> tensor<32x256xi8>
    %p = arith.muli %a, %b : tensor<32x256xi8>
    pallas.store %p, %o_ref[...] : tensor<32x256xi8>, !pallas.ref<32x256xi8, vmem>
  }
  func.return %o : tensor<32x256xi8>
}

// CHECK:       %[[A:.*]] = pallas.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
// CHECK-NEXT:  %[[B:.*]] = pallas.convert %b : tensor<32x256xi8> to tensor<32x256xi32>
// CHECK-NEXT:  %[[P:.*]] = arith.muli %[[A]], %[[B]] : tensor<32x256xi32>
// CHECK-NEXT:  %p = pallas.convert %[[P]] : tensor<32x256xi32> to tensor<32x256xi8>
// CHECK-NOT:   : tensor<32x256xi8>{{$}}
// CHECK:       pallas.store %p, %o_ref[...]
