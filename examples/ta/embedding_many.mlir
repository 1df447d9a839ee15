// out = emb[idx] * 2 for emb: f32[100, 128], idx: i64[4096]: many lookups into a small
// table. Row DMAs would move 4096 rows (2 MiB); the table is 50 KiB, so
// indirect-load-to-scalar-prefetch picks `gather = #ta<gather_strategy vmem>` and tile keeps the table whole
// in VMEM (fetched once, its block index never changes), copying 8 rows per grid step
// out of it (the G4 idiom).
ta.kernel @embedding_many(%idx: memref<4096xi64> {role = "in"}, %emb: memref<12800xf32> {role = "in"}, %out: memref<524288xf32> {role = "out"}) {
  ta.loop [4096, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<4096xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<12800xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<524288xf32>
  }
}
func.func @forward(%idx: memref<4096xi64>, %emb: memref<100x128xf32>) -> memref<4096x128xf32> {
  %e = ta.reshape %emb : memref<100x128xf32> to memref<12800xf32>
  %out = ta.alloc : memref<4096x128xf32>
  %o = ta.reshape %out : memref<4096x128xf32> to memref<524288xf32>
  ta.launch @embedding_many(%idx, %e, %o) : memref<4096xi64>, memref<12800xf32>, memref<524288xf32>
  func.return %out : memref<4096x128xf32>
}
