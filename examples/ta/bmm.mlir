// c = torch.bmm(a, b) for a: f32[4, 128, 256], b: f32[4, 256, 128]: one batch per grid
// step (a leading dim), a dot per step.
ta.kernel @bmm(%a: memref<4x128x256xf32> {role = "in"}, %b: memref<4x256x128xf32> {role = "in"}, %c: memref<4x128x128xf32> {role = "out"}) {
  ta.loop [4, 128, 128] reduce [256] (%n, %i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>](%n, %i, %j, %k) : memref<4x128x256xf32>
    %y = ta.load %b[affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>](%n, %i, %j, %k) : memref<4x256x128xf32>
    %p = arith.mulf %x, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%n, %i, %j) : memref<4x128x128xf32>
  }
}
func.func @forward(%a: memref<4x128x256xf32>, %b: memref<4x256x128xf32>) -> memref<4x128x128xf32> {
  %c = ta.alloc : memref<4x128x128xf32>
  ta.launch @bmm(%a, %b, %c) : memref<4x128x256xf32>, memref<4x256x128xf32>, memref<4x128x128xf32>
  func.return %c : memref<4x128x128xf32>
}
