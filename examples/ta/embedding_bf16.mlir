// out = emb[idx] * 2 for emb: bf16[1000, 256], idx: i64[64], as the frontend writes it:
// flat storage in the kernel, torch shapes on the host. bf16 rows pack two to a 32-bit
// sublane, and a DMA cannot address one of them: each lookup copies the pair that holds
// its row (row 2 * (i / 2) and the next) and the kernel keeps row i mod 2 of the pair,
// so twice the rows move: the floor for 16-bit rows.
ta.kernel @embedding_bf16(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xbf16> {role = "in"}, %out: memref<16384xbf16> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %r : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xbf16>
    %two = arith.constant 2.0 : bf16
    %m = arith.mulf %v, %two : bf16
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xbf16>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<1000x256xbf16>) -> memref<64x256xbf16> {
  %ef = ta.reshape %emb : memref<1000x256xbf16> to memref<256000xbf16>
  %out = ta.alloc : memref<64x256xbf16>
  %of = ta.reshape %out : memref<64x256xbf16> to memref<16384xbf16>
  ta.launch @embedding_bf16(%idx, %ef, %of) : memref<64xi64>, memref<256000xbf16>, memref<16384xbf16>
  func.return %out : memref<64x256xbf16>
}
