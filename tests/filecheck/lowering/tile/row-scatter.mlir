// RUN: pallas-opt %s --split-input-file -p xla-outline,tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file --verify-semantics -p xla-outline,tile,tl-to-pallas

// Row scatters as indirect-store-to-row-dma leaves them (prefetch indices, the store on
// the buffer's N-D view with a bare symbol for its second-minor index) become
// `tl.scatter`: the rows of a grid step's lookups, written by row DMA. The lookup dim
// and the whole-row dim after it run sequentially (a later write to a row wins); the
// dims before the row stay parallel, one index each.

// cache[:, :, pos] = 2 * new for cache: f32[2, 4, 64, 128], new: f32[2, 4, 12, 128]:
// 8 rows a step, the last step ragged (4 of its rows past the 12 indices).
ta.kernel @kv_update(%pos: memref<12xi32> {role = "prefetch"}, %new: memref<2x4x12x128xf32> {role = "in"}, %cache: memref<2x4x64x128xf32> {role = "inout"}) {
  // expected-remark@+1 {{tile: @kv_update: tiles [1, 1, 8, 128] over loop [2, 4, 12, 128], grid [2, 4, 2, 1]}}
  ta.loop [2, 4, 12, 128] (%b, %h, %p, %d) {
    %iv = ta.load %pos[affine_map<(d0, d1, d2, d3) -> (d2)>](%b, %h, %p, %d) : memref<12xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %new[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%b, %h, %p, %d) : memref<2x4x12x128xf32>
    %two = arith.constant 2.0 : f32
    %w = arith.mulf %v, %two : f32
    // expected-remark@+1 {{tile: row scatter by row DMA, 8 rows per grid step}}
    ta.store %w, %cache[affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, s0, d3)>](%b, %h, %p, %d)[%s] : memref<2x4x64x128xf32>
  }
}
func.func @forward(%pos: memref<12xi32>, %new: memref<2x4x12x128xf32>, %cache: memref<2x4x64x128xf32>) -> memref<2x4x64x128xf32> {
  ta.launch @kv_update(%pos, %new, %cache) : memref<12xi32>, memref<2x4x12x128xf32>, memref<2x4x64x128xf32>
  func.return %cache : memref<2x4x64x128xf32>
}

// CHECK-LABEL: tl.kernel @kv_update(
// CHECK-SAME:      %pos: memref<12xi32> {role = "prefetch"}, %new: memref<2x4x12x128xf32> {role = "in"}, %cache: memref<2x4x64x128xf32> {role = "inout"}) {
// CHECK-NEXT:    tl.grid [2, 4, 2, 1] (parallel, parallel, sequential, sequential) (%i, %j, %k, %l) {
// CHECK-NEXT:      %v = tl.load %new[affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 * 8), 0)>](%i, %j, %k, %l) : memref<2x4x12x128xf32> -> tensor<1x1x8x128xf32>
// CHECK:           %[[ROWS:.*]] = tl.reshape %{{.*}} : tensor<1x1x8x128xf32> to tensor<8x128xf32>
// CHECK-NEXT:      tl.scatter %[[ROWS]], %cache[affine_map<(d0, d1, d2, d3) -> (d0, d1)>], %pos[affine_map<(d0, d1, d2, d3) -> ((d2 * 8))>](%i, %j, %k, %l) : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<12xi32>

// -----

// x.index_add_(0, idx, src) for x: f32[40, 256], idx: i32[6]: the six rows in one step,
// added to what is there.
ta.kernel @index_add(%idx: memref<6xi32> {role = "prefetch"}, %src: memref<6x256xf32> {role = "in"}, %x: memref<40x256xf32> {role = "inout"}) {
  // expected-remark@+1 {{tile: @index_add: tiles [6, 256] over loop [6, 256], grid [1, 1]}}
  ta.loop [6, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xf32>
    // expected-remark@+1 {{tile: row scatter by row DMA, 6 rows per grid step}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] accumulate <sum> : memref<40x256xf32>
  }
}
func.func @forward(%idx: memref<6xi32>, %src: memref<6x256xf32>, %x: memref<40x256xf32>) -> memref<40x256xf32> {
  ta.launch @index_add(%idx, %src, %x) : memref<6xi32>, memref<6x256xf32>, memref<40x256xf32>
  func.return %x : memref<40x256xf32>
}

// CHECK-LABEL: tl.kernel @index_add(
// CHECK-NEXT:    tl.grid [1, 1] (sequential, sequential) (%i, %j) {
// CHECK-NEXT:      %v = tl.load %src[affine_map<(d0, d1) -> (0, 0)>](%i, %j) : memref<6x256xf32> -> tensor<6x256xf32>
// CHECK-NEXT:      tl.scatter %v, %x[affine_map<(d0, d1) -> ()>], %idx[affine_map<(d0, d1) -> (0)>](%i, %j) accumulate <sum> : tensor<6x256xf32>, memref<40x256xf32>, memref<6xi32>

// -----

// An embedding's backward, wte.grad.index_add_(0, tokens, grad) for tokens: i32[4, 16]
// (flat, viewed as the frontend views it)
// and rows of 32 floats: the index is read along two loop dims (b: stride 16, t: 1), so
// a step takes one b and 8 t; every dim is walked in order.
ta.kernel @embedding_backward(%tokens: memref<64xi32> {role = "prefetch"}, %grad: memref<4x16x32xf32> {role = "in"}, %wte: memref<64x32xf32> {role = "inout"}) {
  %tokens_4x16 = ta.reshape %tokens : memref<64xi32> to memref<4x16xi32>
  // expected-remark@+1 {{tile: @embedding_backward: tiles [1, 8, 32] over loop [4, 16, 32], grid [4, 2, 1]}}
  ta.loop [4, 16, 32] (%b, %t, %d) {
    %iv = ta.load %tokens_4x16[affine_map<(d0, d1, d2) -> (d0, d1)>](%b, %t, %d) : memref<4x16xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %grad[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %t, %d) : memref<4x16x32xf32>
    // expected-remark@+1 {{tile: row scatter by row DMA, 8 rows per grid step}}
    ta.store %v, %wte[affine_map<(d0, d1, d2)[s0] -> (s0, d2)>](%b, %t, %d)[%s] accumulate <sum> : memref<64x32xf32>
  }
}
func.func @forward(%tokens: memref<64xi32>, %grad: memref<4x16x32xf32>, %wte: memref<64x32xf32>) -> memref<64x32xf32> {
  ta.launch @embedding_backward(%tokens, %grad, %wte) : memref<64xi32>, memref<4x16x32xf32>, memref<64x32xf32>
  func.return %wte : memref<64x32xf32>
}

// CHECK-LABEL: tl.kernel @embedding_backward(
// CHECK-NEXT:    tl.grid [4, 2, 1] (sequential, sequential, sequential) (%i, %j, %k) {
// CHECK:           tl.scatter %{{.*}}, %wte[affine_map<(d0, d1, d2) -> ()>], %tokens[affine_map<(d0, d1, d2) -> (((d0 * 16) + (d1 * 8)))>](%i, %j, %k) accumulate <sum> : tensor<8x32xf32>, memref<64x32xf32>, memref<64xi32>
