// out = softmax(x, dim=1) for x: f32[64, 512]: a whole row fits a tile, so each grid
// step reduces (8, 512) rows in the kernel (max, exp, sum, divide).
tl.kernel @softmax(%x: memref<64x512xf32> {role = "in"}, %out: memref<64x512xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<64x512xf32> -> tensor<8x512xf32>
    %m = tl.reduce <max> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    %mb = tl.broadcast %m : tensor<8x1xf32> to tensor<8x512xf32>
    %d = arith.subf %v, %mb : tensor<8x512xf32>
    %e = math.exp %d : tensor<8x512xf32>
    %s = tl.reduce <sum> %e [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    %sb = tl.broadcast %s : tensor<8x1xf32> to tensor<8x512xf32>
    %p = arith.divf %e, %sb : tensor<8x512xf32>
    tl.store %p, %out[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x512xf32>, memref<64x512xf32>
  }
}
func.func @forward(%x: memref<64x512xf32>) -> memref<64x512xf32> {
  %out = ta.alloc : memref<64x512xf32>
  ta.launch @softmax(%x, %out) : memref<64x512xf32>, memref<64x512xf32>
  func.return %out : memref<64x512xf32>
}
