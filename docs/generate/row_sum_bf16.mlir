// out = x.sum(dim=1) for x: bf16[64, 8192] (out bf16).
ta.kernel @row_sum(%x: memref<64x8192xbf16> {role = "in"}, %out: memref<64xbf16> {role = "out"}) {
  ta.loop [64] reduce [8192] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x8192xbf16>
    %s = ta.reduce <sum> %v : bf16
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xbf16>
  }
}
func.func @forward(%x: memref<64x8192xbf16>) -> memref<64xbf16> {
  %out = ta.alloc : memref<64xbf16>
  ta.launch @row_sum(%x, %out) : memref<64x8192xbf16>, memref<64xbf16>
  func.return %out : memref<64xbf16>
}
