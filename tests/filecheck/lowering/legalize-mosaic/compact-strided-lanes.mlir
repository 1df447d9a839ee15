// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null
// RUN: pallas-opt %s -p pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY

// out = x[:, 1::2]: every other lane. No TPU load strides lanes, so the kernel loads
// the 256 lanes, reshapes them to (128, 2) pairs and keeps column 1 in registers.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x128xf32> {
  %o = pallas.call @odd_lanes(%x) grid [1]
      in [#pallas.block_spec<[64, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[64, 128], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x128xf32>
      kernel(%x_ref: !pallas.ref<64x256xf32, vmem>, %o_ref: !pallas.ref<64x128xf32, vmem>) {
    %v = pallas.load %x_ref[:, ds(1, 128, stride = 2)] : !pallas.ref<64x256xf32, vmem> -> tensor<64x128xf32>
    pallas.store %v, %o_ref[...] : tensor<64x128xf32>, !pallas.ref<64x128xf32, vmem>
  }
  func.return %o : tensor<64x128xf32>
}

// CHECK:       %v_lanes = pallas.load %x_ref[:, :] : !pallas.ref<64x256xf32, vmem> -> tensor<64x256xf32>
// CHECK-NEXT:  %v_pairs = pallas.reshape %v_lanes : tensor<64x256xf32> to tensor<64x128x2xf32>
// CHECK-NEXT:  %v = pallas.slice %v_pairs[:, :, 1] : tensor<64x128x2xf32> -> tensor<64x128xf32>
// CHECK-NEXT:  pallas.store %v, %o_ref[...]
// CHECK-NOT:   stride

// PY:      v_lanes = x_ref[:, :]
// PY-NEXT: v_pairs = v_lanes.reshape((64, 128, 2))
// PY-NEXT: v = v_pairs[:, :, 1]
