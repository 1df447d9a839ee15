// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null
// RUN: pallas-opt %s -p pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY

// out = x[1::2, 130:131]: a sublane-strided load of part of the lanes. Mosaic's strided
// load takes all of the ref's lanes, so the kernel loads them and slices lane 130 out
// of the value.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<32x1xf32> {
  %o = pallas.call @part_lanes(%x) grid [1]
      in [#pallas.block_spec<[64, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[32, 1], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<32x1xf32>
      kernel(%x_ref: !pallas.ref<64x256xf32, vmem>, %o_ref: !pallas.ref<32x1xf32, vmem>) {
    %v = pallas.load %x_ref[ds(1, 32, stride = 2), ds(130, 1)] : !pallas.ref<64x256xf32, vmem> -> tensor<32x1xf32>
    pallas.store %v, %o_ref[...] : tensor<32x1xf32>, !pallas.ref<32x1xf32, vmem>
  }
  func.return %o : tensor<32x1xf32>
}

// CHECK:       %v_lanes = pallas.load %x_ref[ds(1, 32, stride = 2), :] : !pallas.ref<64x256xf32, vmem> -> tensor<32x256xf32>
// CHECK-NEXT:  %v = pallas.slice %v_lanes[:, ds(130, 1)] : tensor<32x256xf32> -> tensor<32x1xf32>
// CHECK-NEXT:  pallas.store %v, %o_ref[...]

// PY:      v_lanes = x_ref[pl.ds(1, 32, stride=2), :]
// PY-NEXT: v = v_lanes[:, 130:131]
