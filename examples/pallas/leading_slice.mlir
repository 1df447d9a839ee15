// out = x[:, 1:4] * 2 for x: f32[2, 4, 16, 128], one image a step: rows 1 to 3 of dim 1
// (a leading dim) start at element 1, which no block of 3 rows starts at. An
// element-indexed spec (`pl.Element` dims) gives the window's element offsets, so each
// step fetches exactly the 3 x 16 x 128 floats it uses.
func.func @forward(%x: tensor<2x4x16x128xf32>) -> tensor<2x3x16x128xf32> {
  %out = pallas.call @leading_slice(%x) grid [2]
      in [#pallas.block_spec<[1, 3, 16, 128], (d0) -> (d0, 1, 0, 0), element>]
      out [#pallas.block_spec<[1, 3, 16, 128], (d0) -> (d0, 0, 0, 0)>]
      semantics [parallel]
      attributes {cost_estimate = #pallas.cost_estimate<flops = 12288, transcendentals = 0, bytes_accessed = 98304>}
      : (tensor<2x4x16x128xf32>) -> tensor<2x3x16x128xf32>
      kernel(%x_ref: !pallas.ref<1x3x16x128xf32, vmem>, %o_ref: !pallas.ref<1x3x16x128xf32, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<1x3x16x128xf32, vmem> -> tensor<1x3x16x128xf32>
    %two = arith.constant dense<2.0> : tensor<1x3x16x128xf32>
    %m = arith.mulf %v, %two : tensor<1x3x16x128xf32>
    pallas.store %m, %o_ref[...] : tensor<1x3x16x128xf32>, !pallas.ref<1x3x16x128xf32, vmem>
  }
  func.return %out : tensor<2x3x16x128xf32>
}
