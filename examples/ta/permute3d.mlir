// out = x.permute(2, 0, 1) + 1 for x: f32[16, 128, 256].
ta.kernel @permute(%x: memref<16x128x256xf32> {role = "in"}, %out: memref<256x16x128xf32> {role = "out"}) {
  ta.loop [256, 16, 128] (%a, %b, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2, d0)>](%a, %b, %c) : memref<16x128x256xf32>
    %one = arith.constant 1.0 : f32
    %r = arith.addf %v, %one : f32
    ta.store %r, %out[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%a, %b, %c) : memref<256x16x128xf32>
  }
}
func.func @forward(%x: memref<16x128x256xf32>) -> memref<256x16x128xf32> {
  %out = ta.alloc : memref<256x16x128xf32>
  ta.launch @permute(%x, %out) : memref<16x128x256xf32>, memref<256x16x128xf32>
  func.return %out : memref<256x16x128xf32>
}
