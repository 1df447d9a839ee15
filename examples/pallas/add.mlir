// A tiled elementwise add of two (512, 1024) f32 arrays in (128, 512) blocks.
// Each block is read once and written once: 2 x 2 MiB in, 2 MiB out.
func.func @forward(%x: tensor<512x1024xf32>, %y: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %out = pallas.call @add(%x, %y) grid [4, 2]
      in [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>,
          #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      attributes {cost_estimate = #pallas.cost_estimate<flops = 524288, transcendentals = 0, bytes_accessed = 6291456>}
      : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>
      kernel(%x_ref: !pallas.ref<128x512xf32, vmem>, %y_ref: !pallas.ref<128x512xf32, vmem>, %o_ref: !pallas.ref<128x512xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
    %b = pallas.load %y_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
    %c = arith.addf %a, %b : tensor<128x512xf32>
    pallas.store %c, %o_ref[...] : tensor<128x512xf32>, !pallas.ref<128x512xf32, vmem>
  }
  func.return %out : tensor<512x1024xf32>
}
