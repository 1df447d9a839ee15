// y = layer_norm(x, [512], w, b, eps=1e-5) for x: f32[64, 512], w, b: f32[512]: mean and
// variance over each row (kept whole in a tile), then scale and shift.
ta.kernel @layernorm(%x: memref<64x512xf32> {role = "in"}, %w: memref<512xf32> {role = "in"}, %b: memref<512xf32> {role = "in"}, %y: memref<64x512xf32> {role = "out"}) {
  ta.loop [64] reduce [512] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x512xf32>
    %s = ta.reduce <sum> %v : f32
    %n = arith.constant 512.0 : f32
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %v, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %ss = ta.reduce <sum> %d2 : f32
    %var = arith.divf %ss, %n : f32
    %eps = arith.constant 1.0e-5 : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %xn = arith.mulf %d, %r : f32
    %wv = ta.load %w[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<512xf32>
    %bv = ta.load %b[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<512xf32>
    %sc = arith.mulf %xn, %wv : f32
    %out = arith.addf %sc, %bv : f32
    ta.store %out, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x512xf32>
  }
}
func.func @forward(%x: memref<64x512xf32>, %w: memref<512xf32>, %b: memref<512xf32>) -> memref<64x512xf32> {
  %y = ta.alloc : memref<64x512xf32>
  ta.launch @layernorm(%x, %w, %b, %y) : memref<64x512xf32>, memref<512xf32>, memref<512xf32>, memref<64x512xf32>
  func.return %y : memref<64x512xf32>
}
