tl.kernel @kv_update(%pos: memref<12xi32> {role = "prefetch"}, %k: memref<2x4x12x128xf32> {role = "in"}, %cache: memref<2x4x64x128xf32> {role = "inout"}) {
  tl.grid [2, 4, 2] (parallel, parallel, sequential) (%b, %h, %s) {
    %t = tl.load %k[affine_map<(d0, d1, d2) -> (d0, d1, d2 * 8, 0)>](%b, %h, %s) : memref<2x4x12x128xf32> -> tensor<1x1x8x128xf32>
    %v = tl.reshape %t : tensor<1x1x8x128xf32> to tensor<8x128xf32>
    tl.scatter %v, %cache[affine_map<(d0, d1, d2) -> (d0, d1)>], %pos[affine_map<(d0, d1, d2) -> (d2 * 8)>](%b, %h, %s) : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<12xi32>
  }
}
func.func @forward(%pos: memref<12xi32>, %k: memref<2x4x12x128xf32>, %cache: memref<2x4x64x128xf32>) -> memref<2x4x64x128xf32> {
  ta.launch @kv_update(%pos, %k, %cache) : memref<12xi32>, memref<2x4x12x128xf32>, memref<2x4x64x128xf32>
  func.return %cache : memref<2x4x64x128xf32>
}
