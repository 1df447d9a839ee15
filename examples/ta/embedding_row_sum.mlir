// out = emb[idx].sum(-1) for emb: f32[1000, 256], idx: i64[64]: a gather feeding a row
// reduction. The output is rank 1, so its only legal block along the lookups is all 64
// of them: the tiler takes one grid step of 64 row DMAs instead of its usual 8.
ta.kernel @embedding_row_sum(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%i, %k) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<64xi64>
    %s = arith.index_cast %r : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %k)[%s] : memref<256000xf32>
    %t = ta.reduce <sum> %v : f32
    ta.store %t, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<1000x256xf32>) -> memref<64xf32> {
  %ef = ta.reshape %emb : memref<1000x256xf32> to memref<256000xf32>
  %out = ta.alloc : memref<64xf32>
  ta.launch @embedding_row_sum(%idx, %ef, %out) : memref<64xi64>, memref<256000xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}
