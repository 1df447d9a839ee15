// out = relu(x + y) for x, y: f32[200, 300], tiled in (64, 256) tiles: the last tile
// of each dim runs past the array (padded reads, clipped writes).
tl.kernel @add_relu(%x: memref<200x300xf32> {role = "in"}, %y: memref<200x300xf32> {role = "in"}, %out: memref<200x300xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    %a = tl.load %x[affine_map<(d0, d1) -> (d0 * 64, d1 * 256)>](%i, %j) : memref<200x300xf32> -> tensor<64x256xf32>
    %b = tl.load %y[affine_map<(d0, d1) -> (d0 * 64, d1 * 256)>](%i, %j) : memref<200x300xf32> -> tensor<64x256xf32>
    %s = arith.addf %a, %b : tensor<64x256xf32>
    %z = arith.constant dense<0.0> : tensor<64x256xf32>
    %r = arith.maximumf %s, %z : tensor<64x256xf32>
    tl.store %r, %out[affine_map<(d0, d1) -> (d0 * 64, d1 * 256)>](%i, %j) : tensor<64x256xf32>, memref<200x300xf32>
  }
}
func.func @forward(%x: memref<200x300xf32>, %y: memref<200x300xf32>) -> memref<200x300xf32> {
  %out = ta.alloc : memref<200x300xf32>
  ta.launch @add_relu(%x, %y, %out) : memref<200x300xf32>, memref<200x300xf32>, memref<200x300xf32>
  func.return %out : memref<200x300xf32>
}
