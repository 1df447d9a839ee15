// out = emb[idx] * 2 for emb: i8[1000, 256], idx: i64[64], as the frontend writes it:
// flat storage in the kernel, torch shapes on the host. int8 rows pack four to a 32-bit
// sublane, which a DMA cannot split: a row DMA per lookup would move four rows (4x), so
// an XLA gather writes the 64 rows to a dense buffer (3x: read, write, read again) and
// the Pallas kernel reads that: the floor for 8-bit rows.
ta.kernel @embedding_int8(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xi8> {role = "in"}, %out: memref<16384xi8> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %r : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xi8>
    %two = arith.constant 2 : i8
    %m = arith.muli %v, %two : i8
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xi8>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<1000x256xi8>) -> memref<64x256xi8> {
  %ef = ta.reshape %emb : memref<1000x256xi8> to memref<256000xi8>
  %out = ta.alloc : memref<64x256xi8>
  %of = ta.reshape %out : memref<64x256xi8> to memref<16384xi8>
  ta.launch @embedding_int8(%idx, %ef, %of) : memref<64xi64>, memref<256000xi8>, memref<16384xi8>
  func.return %out : memref<64x256xi8>
}
