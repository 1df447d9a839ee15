// out = x - x.mean(dim=1, keepdim=True) for x: f32[64, 384], written as two loops in one
// kernel that pass the row means through a scratch buffer (a fused frontend kernel).
// split-kernel-loops makes it two kernels; each then tiles on its own.
ta.kernel @center_rows(%x: memref<64x384xf32> {role = "in"}, %mean: memref<64xf32> {role = "inout"}, %out: memref<64x384xf32> {role = "out"}) {
  ta.loop [64] reduce [384] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x384xf32>
    %s = ta.reduce <sum> %v : f32
    %n = arith.constant 384.0 : f32
    %m = arith.divf %s, %n : f32
    ta.store %m, %mean[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
  ta.loop [64, 384] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x384xf32>
    %m = ta.load %mean[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xf32>
    %c = arith.subf %v, %m : f32
    ta.store %c, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x384xf32>
  }
}
func.func @forward(%x: memref<64x384xf32>) -> memref<64x384xf32> {
  %mean = ta.alloc : memref<64xf32>
  %out = ta.alloc : memref<64x384xf32>
  ta.launch @center_rows(%x, %mean, %out) : memref<64x384xf32>, memref<64xf32>, memref<64x384xf32>
  func.return %out : memref<64x384xf32>
}
