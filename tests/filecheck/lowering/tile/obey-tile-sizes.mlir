// RUN: pallas-opt %s --split-input-file --verify-diagnostics -p tile | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-diagnostics --verify-semantics -p tile,tl-to-pallas -o /dev/null

// tile obeys the sizes on the loop: out = x * 2 for x: f32[1024, 2048], where the policy
// would pick [256, 512] (see policy.mlir), takes blocks of 8 x 128, a grid of (128, 16).
// CHECK-LABEL: tl.kernel @scale
// CHECK:         tl.grid [128, 16] (parallel, parallel) (%i, %j)
// CHECK:         tl.load %x[affine_map<(d0, d1) -> ((d0 * 8), (d1 * 128))>](%i, %j) : memref<1024x2048xf32> -> tensor<8x128xf32>
// CHECK:         tl.store %{{.*}}, %out[affine_map<(d0, d1) -> ((d0 * 8), (d1 * 128))>](%i, %j) : tensor<8x128xf32>, memref<1024x2048xf32>
ta.kernel @scale(%x: memref<1024x2048xf32> {role = "in"}, %out: memref<1024x2048xf32> {role = "out"}) {
  ta.loop [1024, 2048] (%i, %j) attributes {tile_sizes = array<i64: 8, 128>} {
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

// A split reduction written in the IR: row sums of f32[64, 4096] over tiles of 1024
// along the reduction (the policy keeps it whole under the default budget): the
// reduction becomes a sequential grid dim and the stores accumulate.
// CHECK-LABEL: tl.kernel @row_sum
// CHECK:         tl.grid [1, 4] (parallel, sequential) (%i, %j)
// CHECK:         tl.load %x[affine_map<(d0, d1) -> (0, (d1 * 1024))>](%i, %j) : memref<64x4096xf32> -> tensor<64x1024xf32>
// CHECK:         tl.store %{{.*}} accumulate <sum>
ta.kernel @row_sum(%x: memref<64x4096xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [4096] (%i, %k) attributes {tile_sizes = array<i64: 64, 1024>} {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x4096xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x4096xf32>) -> memref<64xf32> {
  %out = ta.alloc : memref<64xf32>
  ta.launch @row_sum(%x, %out) : memref<64x4096xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}
// -----

// An illegal hand-written size is an error at the loop, not a silent change: a lane
// tile must be a multiple of 128 (or the whole dim).
ta.kernel @bad_lane(%x: memref<1024x2048xf32> {role = "in"}, %out: memref<1024x2048xf32> {role = "out"}) {
  // expected-error@+1 {{tile: tile_sizes [8, 100] give loop dim 1 a tile of 100: not a legal block of dim 1 of ta.load (shape [1024, 2048], 32-bit)}}
  ta.loop [1024, 2048] (%i, %j) attributes {tile_sizes = array<i64: 8, 100>} {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<1024x2048xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<1024x2048xf32>
  }
}
func.func @forward(%x: memref<1024x2048xf32>) -> memref<1024x2048xf32> {
  %out = ta.alloc : memref<1024x2048xf32>
  ta.launch @bad_lane(%x, %out) : memref<1024x2048xf32>, memref<1024x2048xf32>
  func.return %out : memref<1024x2048xf32>
}
