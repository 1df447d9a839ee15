// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics -o /dev/null

// `causal 0` over 1024 queries and keys in blocks of 512: the key block after the
// diagonal of query block 0 is hidden, so each step's work sits in a tl.when that runs
// where the key block starts at or before the query block's last row; the scores of a
// live block with j > i are -inf. The accumulators' totals leave the tl.when for the
// last step's division.

// CHECK:      tl.grid [2, 2, 2] (parallel, parallel, sequential) (%[[B:.*]], %[[QI:.*]], %[[KJ:.*]]) {
// CHECK:        %[[SUM:.*]], %[[ACC:.*]] = tl.when affine_map<(d0, d1, d2) -> ((((d1 * 512) + 511) + (d2 * -512)))>(%[[B]], %[[QI]], %[[KJ]]) {
// CHECK:          %[[I:.*]] = tl.iota dim 0 offset affine_map<(d0, d1, d2) -> ((d1 * 512))>{{.*}} : tensor<512x1xi32>
// CHECK:          %[[J:.*]] = tl.iota dim 1 offset affine_map<(d0, d1, d2) -> ((d2 * 512))>{{.*}} : tensor<1x512xi32>
// CHECK:          tl.compare <sgt>
// CHECK:          tl.accumulate <max>
// CHECK:          %[[S:.*]] = tl.accumulate <sum> %{{.*}} rescaled %{{.*}} : tensor<512x1xf32>
// CHECK:          %[[A:.*]] = tl.accumulate <sum> %{{.*}} rescaled %{{.*}} : tensor<512x32xf32>
// CHECK:          tl.yield %[[S]], %[[A]]
// CHECK:        tl.on_last_step {
// CHECK:          tl.broadcast %[[SUM]]
// CHECK:          arith.divf %[[ACC]]
builtin.module {
  ta.kernel @attn(%q: memref<2x1024x32xf32> {role = "in"}, %k: memref<2x1024x32xf32> {role = "in"}, %v: memref<2x1024x32xf32> {role = "in"}, %o: memref<2x1024x32xf32> {role = "out"}) {
    ta.attention batch [2] sizes [1024, 1024, 32, 32]
        q %q[affine_map<(b, i, j, d, e) -> (b, i, d)>]
        k %k[affine_map<(b, i, j, d, e) -> (b, j, d)>]
        v %v[affine_map<(b, i, j, d, e) -> (b, j, e)>]
        out %o[affine_map<(b, i, j, d, e) -> (b, i, e)>] causal 0
        : memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>
        score {
      ^bb0(%b: index, %i: index, %j: index, %s: f32):
        %c = arith.constant 1.250000e-01 : f32
        %t = arith.mulf %s, %c : f32
        ta.yield %t : f32
    }
  }
  func.func @forward(%q: memref<2x1024x32xf32>, %k: memref<2x1024x32xf32>, %v: memref<2x1024x32xf32>) -> memref<2x1024x32xf32> {
    %o = ta.alloc : memref<2x1024x32xf32>
    ta.launch @attn(%q, %k, %v, %o) : memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>
    func.return %o : memref<2x1024x32xf32>
  }
}
