// out = x.t() * 2 for x: f32[256, 384].
ta.kernel @transpose(%x: memref<256x384xf32> {role = "in"}, %out: memref<384x256xf32> {role = "out"}) {
  ta.loop [384, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<256x384xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<384x256xf32>
  }
}
func.func @forward(%x: memref<256x384xf32>) -> memref<384x256xf32> {
  %out = ta.alloc : memref<384x256xf32>
  ta.launch @transpose(%x, %out) : memref<256x384xf32>, memref<384x256xf32>
  func.return %out : memref<384x256xf32>
}
