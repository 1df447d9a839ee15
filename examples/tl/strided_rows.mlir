// out = x[1::2, :] for x: f32[64, 128]: each grid step reads a (16, 128) block and keeps
// its odd rows with a sublane-strided load (32-bit data, last dim exactly 128).
tl.kernel @odd_rows(%x: memref<64x128xf32> {role = "in"}, %out: memref<32x128xf32> {role = "out"}) {
  tl.grid [4] (parallel) (%i) {
    %r = tl.load %x[affine_map<(d0) -> (d0 * 16 + 1, 0)>](%i) strides [2, 1] : memref<64x128xf32> -> tensor<8x128xf32>
    tl.store %r, %out[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x128xf32>, memref<32x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>) -> memref<32x128xf32> {
  %out = ta.alloc : memref<32x128xf32>
  ta.launch @odd_rows(%x, %out) : memref<64x128xf32>, memref<32x128xf32>
  func.return %out : memref<32x128xf32>
}
