// out = x[:, 1::2, :] * 2 for x: f32[4, 64, 256], as the frontend writes it: the kernel
// reads flat storage, the host holds x as (4, 64, 256). The step is on the sublane dim of
// a 3-D array: each grid step copies 8 rows of one x[b] by row DMA, at the leading index
// b (`x.at[b, pl.ds(row, 1)]`): only the rows used move, no relayout.
ta.kernel @row_stride_3d(%x: memref<65536xf32> {role = "in"}, %out: memref<32768xf32> {role = "out"}) {
  ta.loop [4, 32, 256] (%b, %i, %j) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 16384 + d1 * 512 + d2 + 256)>](%b, %i, %j) : memref<65536xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %out[affine_map<(d0, d1, d2) -> (d0 * 8192 + d1 * 256 + d2)>](%b, %i, %j) : memref<32768xf32>
  }
}
func.func @forward(%x: memref<4x64x256xf32>) -> memref<4x32x256xf32> {
  %xf = ta.reshape %x : memref<4x64x256xf32> to memref<65536xf32>
  %out = ta.alloc : memref<4x32x256xf32>
  %of = ta.reshape %out : memref<4x32x256xf32> to memref<32768xf32>
  ta.launch @row_stride_3d(%xf, %of) : memref<65536xf32>, memref<32768xf32>
  func.return %out : memref<4x32x256xf32>
}
