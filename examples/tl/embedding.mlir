// out = table[idx] for table: f32[1000, 256] viewed as (1000, 1, 256) so the gathered
// dim is leading, and idx: i32[64] prefetched to SMEM.
tl.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x1x256xf32> {role = "in"}, %out: memref<64x1x256xf32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %t = tl.load %table[affine_map<(d0)[s0] -> (s0, 0, 0)>](%i)[%row] : memref<1000x1x256xf32> -> tensor<1x1x256xf32>
    tl.store %t, %out[affine_map<(d0) -> (d0, 0, 0)>](%i) : tensor<1x1x256xf32>, memref<64x1x256xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %table: memref<1000x256xf32>) -> memref<64x256xf32> {
  %t3 = ta.reshape %table : memref<1000x256xf32> to memref<1000x1x256xf32>
  %out = ta.alloc : memref<64x256xf32>
  %o3 = ta.reshape %out : memref<64x256xf32> to memref<64x1x256xf32>
  ta.launch @embedding(%idx, %t3, %o3) : memref<64xi32>, memref<1000x1x256xf32>, memref<64x1x256xf32>
  func.return %out : memref<64x256xf32>
}
