// out = x[1::3] * 2 for x: f32[12, 16, 256], as the frontend writes it: the kernel reads
// flat storage, the host holds x as (12, 16, 256). The step is on the leading dim, so
// the index map takes it (block index 3 * i + 1): only the rows used move.
ta.kernel @leading_stride(%x: memref<49152xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [4, 16, 256] (%a, %b, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 12288 + d1 * 256 + d2 + 4096)>](%a, %b, %c) : memref<49152xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %out[affine_map<(d0, d1, d2) -> (d0 * 4096 + d1 * 256 + d2)>](%a, %b, %c) : memref<16384xf32>
  }
}
func.func @forward(%x: memref<12x16x256xf32>) -> memref<4x16x256xf32> {
  %xf = ta.reshape %x : memref<12x16x256xf32> to memref<49152xf32>
  %out = ta.alloc : memref<4x16x256xf32>
  %of = ta.reshape %out : memref<4x16x256xf32> to memref<16384xf32>
  ta.launch @leading_stride(%xf, %of) : memref<49152xf32>, memref<16384xf32>
  func.return %out : memref<4x16x256xf32>
}
