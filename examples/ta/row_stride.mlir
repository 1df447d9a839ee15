// out = x[1::2, :] + 1 for x: f32[64, 256], as the frontend writes it (flat storage).
ta.kernel @row_stride(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [32, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 512 + d1 + 256)>](%i, %j) : memref<16384xf32>
    %c = arith.constant 1.0 : f32
    %m = arith.addf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<8192xf32>
  }
}
// The host holds x and out in their torch storage shapes, (64, 256) and (32, 256), and
// passes the kernel their flat storage, as the frontend does.
func.func @forward(%x: memref<64x256xf32>) -> memref<32x256xf32> {
  %xf = ta.reshape %x : memref<64x256xf32> to memref<16384xf32>
  %out = ta.alloc : memref<32x256xf32>
  %of = ta.reshape %out : memref<32x256xf32> to memref<8192xf32>
  ta.launch @row_stride(%xf, %of) : memref<16384xf32>, memref<8192xf32>
  func.return %out : memref<32x256xf32>
}
