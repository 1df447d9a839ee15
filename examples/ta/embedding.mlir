// out = emb[idx] * 2 for emb: f32[1000, 256], idx: i64[64], as the frontend writes it:
// flat storage in the kernel, torch shapes on the host.
ta.kernel @embedding(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %r : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<1000x256xf32>) -> memref<64x256xf32> {
  %ef = ta.reshape %emb : memref<1000x256xf32> to memref<256000xf32>
  %out = ta.alloc : memref<64x256xf32>
  %of = ta.reshape %out : memref<64x256xf32> to memref<16384xf32>
  ta.launch @embedding(%idx, %ef, %of) : memref<64xi64>, memref<256000xf32>, memref<16384xf32>
  func.return %out : memref<64x256xf32>
}
