// out = x[:, ::2] * 2 for x: f32[64, 256], as the frontend writes it (flat storage).
ta.kernel @lane_stride(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}
// The host holds x and out in their torch storage shapes, (64, 256) and (64, 128), and
// passes the kernel their flat storage, as the frontend does.
func.func @forward(%x: memref<64x256xf32>) -> memref<64x128xf32> {
  %xf = ta.reshape %x : memref<64x256xf32> to memref<16384xf32>
  %out = ta.alloc : memref<64x128xf32>
  %of = ta.reshape %out : memref<64x128xf32> to memref<8192xf32>
  ta.launch @lane_stride(%xf, %of) : memref<16384xf32>, memref<8192xf32>
  func.return %out : memref<64x128xf32>
}
