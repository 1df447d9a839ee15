// s = x.sum(dim=1), m = x.amax(dim=1) for x: f32[256, 1024]: rows reduced whole in a
// tile, the results stored into 1-D outputs.
ta.kernel @row_stats(%x: memref<256x1024xf32> {role = "in"}, %s: memref<256xf32> {role = "out"}, %m: memref<256xf32> {role = "out"}) {
  ta.loop [256] reduce [1024] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<256x1024xf32>
    %t = ta.reduce <sum> %v : f32
    %u = ta.reduce <max> %v : f32
    ta.store %t, %s[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
    ta.store %u, %m[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
func.func @forward(%x: memref<256x1024xf32>) -> (memref<256xf32>, memref<256xf32>) {
  %s = ta.alloc : memref<256xf32>
  %m = ta.alloc : memref<256xf32>
  ta.launch @row_stats(%x, %s, %m) : memref<256x1024xf32>, memref<256xf32>, memref<256xf32>
  func.return %s, %m : memref<256xf32>, memref<256xf32>
}
