// RUN: pallas-opt %s --split-input-file -p tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tile --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile,tl-to-pallas -o /dev/null

// out = x * 2 for x: f32[1024, 2048]. The lane dim (j) gets the largest multiple of 128
// up to 512, the sublane dim (i) the largest multiple of 8 up to 256; a block is then
// 256 x 512 x 4 B = 512 KiB (under 1 MiB), so the grid is (1024/256, 2048/512) = (4, 4).
// REMARK: remark: tile: @scale: tiles [256, 512] over loop [1024, 2048], grid [4, 4]
// CHECK-LABEL: tl.kernel @scale
// CHECK:         tl.grid [4, 4] (parallel, parallel) (%i, %j)
// CHECK:         tl.load %x[affine_map<(d0, d1) -> ((d0 * 256), (d1 * 512))>](%i, %j) : memref<1024x2048xf32> -> tensor<256x512xf32>
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : tensor<256x512xf32>
// CHECK:         tl.store %{{.*}}, %out[affine_map<(d0, d1) -> ((d0 * 256), (d1 * 512))>](%i, %j) : tensor<256x512xf32>, memref<1024x2048xf32>
ta.kernel @scale(%x: memref<1024x2048xf32> {role = "in"}, %out: memref<1024x2048xf32> {role = "out"}) {
  ta.loop [1024, 2048] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<1024x2048xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<1024x2048xf32>
  }
}
func.func @forward(%x: memref<1024x2048xf32>) -> memref<1024x2048xf32> {
  %out = ta.alloc : memref<1024x2048xf32>
  ta.launch @scale(%x, %out) : memref<1024x2048xf32>, memref<1024x2048xf32>
  func.return %out : memref<1024x2048xf32>
}
// -----

// out = x.t() for x: f32[256, 384]: loop dim j is the lane dim of out and the sublane dim
// of x, so its tile is a multiple of 128 (and of 8); the transpose happens in the kernel.
// REMARK: remark: tile: @transpose: tiles [384, 256] over loop [384, 256], grid [1, 1]
// CHECK-LABEL: tl.kernel @transpose
// CHECK:         %[[T:.*]] = tl.load %x{{.*}} : memref<256x384xf32> -> tensor<256x384xf32>
// CHECK:         tl.transpose %[[T]] [1, 0] : tensor<256x384xf32> -> tensor<384x256xf32>
ta.kernel @transpose(%x: memref<256x384xf32> {role = "in"}, %out: memref<384x256xf32> {role = "out"}) {
  ta.loop [384, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<256x384xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<384x256xf32>
  }
}
func.func @forward(%x: memref<256x384xf32>) -> memref<384x256xf32> {
  %out = ta.alloc : memref<384x256xf32>
  ta.launch @transpose(%x, %out) : memref<256x384xf32>, memref<384x256xf32>
  func.return %out : memref<384x256xf32>
}
// -----

// s = x.sum(1) for x: f32[64, 512]: the reduction fits one tile, so it stays whole and is
// reduced in the kernel; the (8, 1)-shaped partial sums are stored to the 1-D output.
// REMARK: remark: tile: @rowsum: tiles [64, 512] over loop [64, 512], grid [1]
// CHECK-LABEL: tl.kernel @rowsum
// CHECK:         tl.grid [1] (parallel)
// CHECK:         tl.reduce <sum> %{{.*}} [1] : tensor<64x512xf32> -> tensor<64x1xf32>
// CHECK:         tl.store %{{.*}}, %s{{.*}} : tensor<64xf32>, memref<64xf32>
ta.kernel @rowsum(%x: memref<64x512xf32> {role = "in"}, %s: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [512] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x512xf32>
    %t = ta.reduce <sum> %v : f32
    ta.store %t, %s[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x512xf32>) -> memref<64xf32> {
  %s = ta.alloc : memref<64xf32>
  ta.launch @rowsum(%x, %s) : memref<64x512xf32>, memref<64xf32>
  func.return %s : memref<64xf32>
}
