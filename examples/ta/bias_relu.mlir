// out = relu(x + b) for x: f32[200, 384], b: f32[384] (broadcast over rows).
ta.kernel @bias_relu(%x: memref<200x384xf32> {role = "in"}, %b: memref<384xf32> {role = "in"}, %out: memref<200x384xf32> {role = "out"}) {
  ta.loop [200, 384] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<200x384xf32>
    %w = ta.load %b[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<384xf32>
    %s = arith.addf %v, %w : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<200x384xf32>
  }
}
func.func @forward(%x: memref<200x384xf32>, %b: memref<384xf32>) -> memref<200x384xf32> {
  %out = ta.alloc : memref<200x384xf32>
  ta.launch @bias_relu(%x, %b, %out) : memref<200x384xf32>, memref<384xf32>, memref<200x384xf32>
  func.return %out : memref<200x384xf32>
}
