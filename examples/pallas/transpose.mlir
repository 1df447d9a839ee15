// out = x.T for x: f32[256, 384], in (128, 128) tiles. Tile (i, j) of x becomes tile
// (j, i) of out: a transposed output index map plus an in-kernel transpose, so every
// element is read once and written once.
func.func @forward(%x: tensor<256x384xf32>) -> tensor<384x256xf32> {
  %out = pallas.call @transpose(%x) grid [2, 3]
      in [#pallas.block_spec<[128, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[128, 128], (d0, d1) -> (d1, d0)>]
      semantics [parallel, parallel]
      attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 0, bytes_accessed = 786432>}
      : (tensor<256x384xf32>) -> tensor<384x256xf32>
      kernel(%x_ref: !pallas.ref<128x128xf32, vmem>, %o_ref: !pallas.ref<128x128xf32, vmem>) {
    %t = pallas.load %x_ref[...] : !pallas.ref<128x128xf32, vmem> -> tensor<128x128xf32>
    %tt = pallas.transpose %t [1, 0] : tensor<128x128xf32> -> tensor<128x128xf32>
    pallas.store %tt, %o_ref[...] : tensor<128x128xf32>, !pallas.ref<128x128xf32, vmem>
  }
  func.return %out : tensor<384x256xf32>
}
