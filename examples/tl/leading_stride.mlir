// out = x[1::3] for x: f32[12, 16, 256]: the step is on the leading (untiled) dim, so
// the index map does it (block index 3 * i + 1) and only the needed rows move.
tl.kernel @leading_stride(%x: memref<12x16x256xf32> {role = "in"}, %out: memref<4x16x256xf32> {role = "out"}) {
  tl.grid [4] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 3 + 1, 0, 0)>](%i) : memref<12x16x256xf32> -> tensor<1x16x256xf32>
    tl.store %v, %out[affine_map<(d0) -> (d0, 0, 0)>](%i) : tensor<1x16x256xf32>, memref<4x16x256xf32>
  }
}
func.func @forward(%x: memref<12x16x256xf32>) -> memref<4x16x256xf32> {
  %out = ta.alloc : memref<4x16x256xf32>
  ta.launch @leading_stride(%x, %out) : memref<12x16x256xf32>, memref<4x16x256xf32>
  func.return %out : memref<4x16x256xf32>
}
