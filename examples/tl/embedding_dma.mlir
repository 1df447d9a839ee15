// out = table[idx] * 2 for table: f32[1000, 256], idx: i32[64], 8 rows per grid step by
// manual row DMA: the table stays in HBM as it is, only the rows used move.
tl.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
    %two = arith.constant dense<2.0> : tensor<8x256xf32>
    %m = arith.mulf %rows, %two : tensor<8x256xf32>
    tl.store %m, %out[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x256xf32>, memref<64x256xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %table: memref<1000x256xf32>) -> memref<64x256xf32> {
  %out = ta.alloc : memref<64x256xf32>
  ta.launch @embedding(%idx, %table, %out) : memref<64xi32>, memref<1000x256xf32>, memref<64x256xf32>
  func.return %out : memref<64x256xf32>
}
