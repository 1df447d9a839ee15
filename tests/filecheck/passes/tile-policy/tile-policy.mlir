// RUN: pallas-opt %s --split-input-file -p tile-policy | filecheck %s
// RUN: pallas-opt %s --split-input-file -p "tile-policy{vmem-budget=262144}" | filecheck %s --check-prefix=SMALL
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile-policy,xla-outline,tile,tl-to-pallas -o /dev/null

// tile-policy writes its choice on the loop and changes nothing else; tile then obeys
// it. An element-wise f32[1024, 2048] loop: 256 rows (sublanes) by 512 lanes.
// CHECK-LABEL: ta.kernel @scale
// CHECK:         ta.loop [1024, 2048] (%i, %j) attributes {tile_sizes = array<i64: 256, 512>}
// SMALL-LABEL: ta.kernel @scale
// SMALL:         ta.loop [1024, 2048] (%i, %j) attributes {tile_sizes = array<i64: 128, 128>}
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

// Row sums of f32[64, 8192]: the reduction stays whole; under a 256 KiB budget it is
// split (its tiles divide it, and its sums are only stored).
// CHECK-LABEL: ta.kernel @row_sum
// CHECK:         ta.loop [64] reduce [8192] (%i, %k) attributes {tile_sizes = array<i64: 64, 8192>}
// SMALL-LABEL: ta.kernel @row_sum
// SMALL:         ta.loop [64] reduce [8192] (%i, %k) attributes {tile_sizes = array<i64: 64, 256>}
ta.kernel @row_sum(%x: memref<64x8192xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [8192] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x8192xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x8192xf32>) -> memref<64xf32> {
  %out = ta.alloc : memref<64xf32>
  ta.launch @row_sum(%x, %out) : memref<64x8192xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}
// -----

// A diagonal read (out[i] = x[i, i]): each step loads a (t, t) block and keeps its
// diagonal, t elements read per one kept, so t is the smallest legal block dim: 128
// lanes (128 rows).
// CHECK-LABEL: ta.kernel @diagonal
// CHECK:         ta.loop [256] (%i) attributes {tile_sizes = array<i64: 128>}
// SMALL-LABEL: ta.kernel @diagonal
// SMALL:         ta.loop [256] (%i) attributes {tile_sizes = array<i64: 128>}
ta.kernel @diagonal(%x: memref<256x256xf32> {role = "in"}, %out: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0, d0)>](%i) : memref<256x256xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
func.func @forward(%x: memref<256x256xf32>) -> memref<256xf32> {
  %out = ta.alloc : memref<256xf32>
  ta.launch @diagonal(%x, %out) : memref<256x256xf32>, memref<256xf32>
  func.return %out : memref<256xf32>
}
// -----

// The anti-diagonal (out[i] = x[i, 255 - i]) has no tiling: its lanes run backwards.
// The loop gets no sizes, and is left for xla-outline.
// CHECK-LABEL: ta.kernel @anti_diagonal
// CHECK:         ta.loop [256] (%i) {
// SMALL-LABEL: ta.kernel @anti_diagonal
ta.kernel @anti_diagonal(%x: memref<256x256xf32> {role = "in"}, %out: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0, 255 - d0)>](%i) : memref<256x256xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
func.func @forward(%x: memref<256x256xf32>) -> memref<256xf32> {
  %out = ta.alloc : memref<256xf32>
  ta.launch @anti_diagonal(%x, %out) : memref<256x256xf32>, memref<256xf32>
  func.return %out : memref<256xf32>
}
