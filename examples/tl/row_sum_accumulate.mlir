// s = x.sum(dim=1) for x: f32[64, 4096], with the reduction split over a sequential grid
// dim: each step sums a (8, 512) tile into the (8, 1) output block, which stays in VMEM
// across the 8 steps along k (its block index does not depend on k).
tl.kernel @row_sum(%x: memref<64x4096xf32> {role = "in"}, %s: memref<64x1xf32> {role = "out"}) {
  tl.grid [8, 8] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %p = tl.reduce <sum> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    tl.store %p, %s[affine_map<(d0, d1) -> (d0 * 8, 0)>](%i, %k) accumulate <sum> : tensor<8x1xf32>, memref<64x1xf32>
  }
}
func.func @forward(%x: memref<64x4096xf32>) -> memref<64x1xf32> {
  %s = ta.alloc : memref<64x1xf32>
  ta.launch @row_sum(%x, %s) : memref<64x4096xf32>, memref<64x1xf32>
  func.return %s : memref<64x1xf32>
}
