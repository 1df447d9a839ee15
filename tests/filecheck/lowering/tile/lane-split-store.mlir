// RUN: pallas-opt %s --split-input-file -p tile | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile,tl-to-pallas -o /dev/null

// out = x.permute(0, 3, 1, 2).reshape(2, 8, 16) for x: f32[2, 4, 4, 8] (as
// canonicalize-permutation leaves it: the store sees out through its (2, 8, 4, 4)
// view). The tile holds each 4 x 4 image whole, so the kernel merges it into out's 16
// lanes (tl.reshape) and stores out itself: the view, a host relayout, is gone. (Both
// images are one tile: blocks this small take the leading dim whole.)
ta.kernel @channels_last(%x: memref<2x4x4x8xf32> {role = "in"}, %out: memref<2x8x16xf32> {role = "out"}) {
  %view = ta.reshape %out : memref<2x8x16xf32> to memref<2x8x4x4xf32>
  ta.loop [2, 8, 4, 4] (%n, %c, %h, %w) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>](%n, %c, %h, %w) : memref<2x4x4x8xf32>
    ta.store %v, %view[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%n, %c, %h, %w) : memref<2x8x4x4xf32>
  }
}
func.func @forward(%x: memref<2x4x4x8xf32>) -> memref<2x8x16xf32> {
  %out = ta.alloc : memref<2x8x16xf32>
  ta.launch @channels_last(%x, %out) : memref<2x4x4x8xf32>, memref<2x8x16xf32>
  func.return %out : memref<2x8x16xf32>
}

// CHECK-LABEL: tl.kernel @channels_last(%x: memref<2x4x4x8xf32> {role = "in"}, %out: memref<2x8x16xf32> {role = "out"}) {
// CHECK:         %[[T:.*]] = tl.transpose %{{.*}} [0, 3, 1, 2] : tensor<2x4x4x8xf32> -> tensor<2x8x4x4xf32>
// CHECK-NEXT:    %[[M:.*]] = tl.reshape %[[T]] : tensor<2x8x4x4xf32> to tensor<2x8x16xf32>
// CHECK-NEXT:    tl.store %[[M]], %out[affine_map<(d0, d1, d2, d3) -> (0, 0, 0)>](%i, %j, %k, %l) : tensor<2x8x16xf32>, memref<2x8x16xf32>
// CHECK:       func.func @forward
// CHECK-NOT:     ta.reshape
// CHECK:         ta.launch @channels_last(%x, %out)

// -----

// The same with 8 x 256 images (out: f32[2, 8, 2048]): the 8 channels (out's sublane
// dim, a legal block of 8 rows) of one image, whole, are a 64 KiB tile: merged.
ta.kernel @wide(%x: memref<2x8x256x8xf32> {role = "in"}, %out: memref<2x8x2048xf32> {role = "out"}) {
  %view = ta.reshape %out : memref<2x8x2048xf32> to memref<2x8x8x256xf32>
  ta.loop [2, 8, 8, 256] (%n, %c, %h, %w) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>](%n, %c, %h, %w) : memref<2x8x256x8xf32>
    ta.store %v, %view[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%n, %c, %h, %w) : memref<2x8x8x256xf32>
  }
}
func.func @forward(%x: memref<2x8x256x8xf32>) -> memref<2x8x2048xf32> {
  %out = ta.alloc : memref<2x8x2048xf32>
  ta.launch @wide(%x, %out) : memref<2x8x256x8xf32>, memref<2x8x2048xf32>
  func.return %out : memref<2x8x2048xf32>
}

// CHECK-LABEL: tl.kernel @wide(
// CHECK:         tl.reshape %{{.*}} : tensor<1x8x8x256xf32> to tensor<1x8x2048xf32>
// CHECK-NEXT:    tl.store %{{.*}}, %out

// -----

// With 8 x 4096 images the tile takes 512 of the 4096 lanes of each image row (the
// largest lane tile): the split dims are not whole in the tile, so nothing can be
// merged in the kernel and the store keeps the view (a host relayout of out).
ta.kernel @too_wide(%x: memref<1x8x4096x8xf32> {role = "in"}, %out: memref<1x8x32768xf32> {role = "out"}) {
  %view = ta.reshape %out : memref<1x8x32768xf32> to memref<1x8x8x4096xf32>
  ta.loop [1, 8, 8, 4096] (%n, %c, %h, %w) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>](%n, %c, %h, %w) : memref<1x8x4096x8xf32>
    ta.store %v, %view[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%n, %c, %h, %w) : memref<1x8x8x4096xf32>
  }
}
func.func @forward(%x: memref<1x8x4096x8xf32>) -> memref<1x8x32768xf32> {
  %out = ta.alloc : memref<1x8x32768xf32>
  ta.launch @too_wide(%x, %out) : memref<1x8x4096x8xf32>, memref<1x8x32768xf32>
  func.return %out : memref<1x8x32768xf32>
}

// CHECK-LABEL: tl.kernel @too_wide(
// CHECK-NOT:     tl.reshape %{{.*}} to tensor<1x8x32768xf32>
// CHECK:         tl.store %{{.*}}, %view
// CHECK:       func.func @forward
// CHECK:         ta.reshape %out : memref<1x8x32768xf32> to memref<1x8x8x4096xf32>
