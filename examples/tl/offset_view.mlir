// out = x[3:, 5:] + 1 for x: f32[16, 32] (a view with a storage offset): the tile sits
// at a constant, unaligned offset, so its block is the whole array and the kernel
// slices the view out of it.
tl.kernel @offset_view(%x: memref<16x32xf32> {role = "in"}, %out: memref<13x27xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (3, 5)>](%i) : memref<16x32xf32> -> tensor<13x27xf32>
    %one = arith.constant dense<1.0> : tensor<13x27xf32>
    %r = arith.addf %v, %one : tensor<13x27xf32>
    tl.store %r, %out[affine_map<(d0) -> (0, 0)>](%i) : tensor<13x27xf32>, memref<13x27xf32>
  }
}
func.func @forward(%x: memref<16x32xf32>) -> memref<13x27xf32> {
  %out = ta.alloc : memref<13x27xf32>
  ta.launch @offset_view(%x, %out) : memref<16x32xf32>, memref<13x27xf32>
  func.return %out : memref<13x27xf32>
}
