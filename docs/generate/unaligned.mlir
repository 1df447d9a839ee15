// out = x[3:67, :] for x: f32[72, 128] in (8, 128) tiles: the offsets 8 * i + 3 are not
// multiples of the 8-row block.
tl.kernel @shifted(%x: memref<72x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8 + 3, 0)>](%i) : memref<72x128xf32> -> tensor<8x128xf32>
    tl.store %v, %out[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x128xf32>, memref<64x128xf32>
  }
}
func.func @forward(%x: memref<72x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @shifted(%x, %out) : memref<72x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}
