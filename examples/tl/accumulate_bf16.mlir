// acc += x * 2 in place for acc, x: bf16[64, 256] in (16, 256) tiles (16-bit rows come
// in 16s); acc is inout, so it is passed in and aliased to the output.
tl.kernel @axpy(%x: memref<64x256xbf16> {role = "in"}, %acc: memref<64x256xbf16> {role = "inout"}) {
  tl.grid [4] (parallel) (%i) {
    %a = tl.load %x[affine_map<(d0) -> (d0 * 16, 0)>](%i) : memref<64x256xbf16> -> tensor<16x256xbf16>
    %b = tl.load %acc[affine_map<(d0) -> (d0 * 16, 0)>](%i) : memref<64x256xbf16> -> tensor<16x256xbf16>
    %two = arith.constant dense<2.0> : tensor<16x256xbf16>
    %m = arith.mulf %a, %two : tensor<16x256xbf16>
    %s = arith.addf %b, %m : tensor<16x256xbf16>
    tl.store %s, %acc[affine_map<(d0) -> (d0 * 16, 0)>](%i) : tensor<16x256xbf16>, memref<64x256xbf16>
  }
}
func.func @forward(%x: memref<64x256xbf16>, %acc: memref<64x256xbf16>) -> memref<64x256xbf16> {
  ta.launch @axpy(%x, %acc) : memref<64x256xbf16>, memref<64x256xbf16>
  func.return %acc : memref<64x256xbf16>
}
