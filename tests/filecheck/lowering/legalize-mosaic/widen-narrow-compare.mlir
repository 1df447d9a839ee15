// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic compares only 32-bit integers: both i16 sides are sign-extended to i32 first,
// which keeps the signed and the unsigned order (here `ult`).
func.func @forward(%x: tensor<32x256xi16>, %y: tensor<32x256xi16>) -> tensor<32x256xi16> {
  %o = pallas.call @below(%x, %y) grid [1]
      in [#pallas.block_spec<[32, 256], (d0) -> (0, 0)>,
          #pallas.block_spec<[32, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[32, 256], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<32x256xi16>, tensor<32x256xi16>) -> tensor<32x256xi16>
      kernel(%x_ref: !pallas.ref<32x256xi16, vmem>, %y_ref: !pallas.ref<32x256xi16, vmem>, %o_ref: !pallas.ref<32x256xi16, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<32x256xi16, vmem> -> tensor<32x256xi16>
    %b = pallas.load %y_ref[...] : !pallas.ref<32x256xi16, vmem> -> tensor<32x256xi16>
    %c = pallas.compare <ult> %a, %b : tensor<32x256xi16>
    %m = pallas.select %c, %a, %b : tensor<32x256xi1>, tensor<32x256xi16>
    pallas.store %m, %o_ref[...] : tensor<32x256xi16>, !pallas.ref<32x256xi16, vmem>
  }
  func.return %o : tensor<32x256xi16>
}

// CHECK:       %[[A:.*]] = pallas.convert %a : tensor<32x256xi16> to tensor<32x256xi32>
// CHECK-NEXT:  %[[B:.*]] = pallas.convert %b : tensor<32x256xi16> to tensor<32x256xi32>
// CHECK-NEXT:  %c = pallas.compare <ult> %[[A]], %[[B]] : tensor<32x256xi32>
// CHECK-NEXT:  %m = pallas.select %c, %a, %b : tensor<32x256xi1>, tensor<32x256xi16>
