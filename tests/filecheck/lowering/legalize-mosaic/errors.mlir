// RUN: pallas-opt %s -p pallas-legalize-mosaic --verify-diagnostics

// A lane-strided load Mosaic cannot be given: the ref holds 255 lanes, not n * k = 256,
// so no full-width load and (n, k) reshape reproduces it; a located error, not a
// kernel that fails to compile on the TPU.
func.func @forward(%x: tensor<8x255xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @odd_width(%x) grid [1]
      in [#pallas.block_spec<[8, 255], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x255xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x255xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    // expected-error@+1 {{pallas-legalize-mosaic: no TPU load strides lanes; a lane-strided load must span its ref's lanes, with unit strides on the other dims}}
    %v = pallas.load %x_ref[:, ds(0, 128, stride = 2)] : !pallas.ref<8x255xf32, vmem> -> tensor<8x128xf32>
    pallas.store %v, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<8x128xf32>
}
