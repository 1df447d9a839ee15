// RUN: pallas-opt %s -p 'tile{vmem-budget=2100000}' | filecheck %s
// RUN: pallas-opt %s -p 'tile{vmem-budget=2100000},tl-to-pallas,pallas-legalize-mosaic' --verify-semantics -o /dev/null

// 200 keys in blocks of 128 (the budget leaves no room for whole rows of 200): the last
// key block is ragged. Its columns past 200 score -inf and its rows of v are 0 (the
// reference reads a tile's padding as NaN, so --verify-semantics sees any leak). The
// per-batch bias %bias[b] is read through a (2, 1, 1) view: a block of one of its 2
// elements is not legal, a block of its unit dims is.

// CHECK:      tl.kernel @attn({{.*}} %bias: memref<2x1x1xf32> {role = "in"})
// CHECK:        tl.grid [2, 1, 2] (parallel, parallel, sequential)
// CHECK:          tl.load %bias[affine_map<(d0, d1, d2) -> (d0, 0, 0)>]
// CHECK:          %[[SCORES:.*]] = arith.addf
// CHECK:          %[[NEG_INF:.*]] = math.log %{{.*}} : tensor<1x1xf32>
// CHECK:          %[[COLS:.*]] = tl.iota dim 1 offset affine_map<(d0, d1, d2) -> ((d2 * 128))>{{.*}} : tensor<1x128xi32>
// CHECK:          %[[KEYS:.*]] = arith.constant dense<200> : tensor<1x128xi32>
// CHECK:          %[[IN:.*]] = tl.compare <slt> %[[COLS]], %[[KEYS]]
// CHECK:          %[[IN_ALL:.*]] = tl.broadcast %[[IN]] : tensor<1x128xi1> to tensor<200x128xi1>
// CHECK:          %[[FILL:.*]] = tl.broadcast %[[NEG_INF]]
// CHECK:          tl.select %[[IN_ALL]], %[[SCORES]], %[[FILL]]
// CHECK:          %[[ROWS:.*]] = tl.iota dim 0 offset affine_map<(d0, d1, d2) -> ((d2 * 128))>{{.*}} : tensor<128x1xi32>
// CHECK:          tl.compare <slt> %[[ROWS]]
// CHECK:          %[[V:.*]] = tl.select
// CHECK:          tl.dot %{{.*}}, %[[V]] precision <highest>
// CHECK:        tl.on_last_step
// CHECK:      func.func @forward
// CHECK:        ta.reshape %bias : memref<2xf32> to memref<2x1x1xf32>
builtin.module {
  ta.kernel @attn(%q: memref<2x200x32xf32> {role = "in"}, %k: memref<2x200x32xf32> {role = "in"}, %v: memref<2x200x32xf32> {role = "in"}, %o: memref<2x200x32xf32> {role = "out"}, %bias: memref<2xf32> {role = "in"}) {
    ta.attention batch [2] sizes [200, 200, 32, 32]
        q %q[affine_map<(b, i, j, d, e) -> (b, i, d)>]
        k %k[affine_map<(b, i, j, d, e) -> (b, j, d)>]
        v %v[affine_map<(b, i, j, d, e) -> (b, j, e)>]
        out %o[affine_map<(b, i, j, d, e) -> (b, i, e)>]
        : memref<2x200x32xf32>, memref<2x200x32xf32>, memref<2x200x32xf32>, memref<2x200x32xf32>
        score {
      ^bb0(%b: index, %i: index, %j: index, %s: f32):
        %c = arith.constant 1.250000e-01 : f32
        %t = arith.mulf %s, %c : f32
        %h = ta.load %bias[affine_map<(d0, d1, d2) -> (d0)>](%b, %i, %j) : memref<2xf32>
        %u = arith.addf %t, %h : f32
        ta.yield %u : f32
    }
  }
  func.func @forward(%q: memref<2x200x32xf32>, %k: memref<2x200x32xf32>, %v: memref<2x200x32xf32>, %bias: memref<2xf32>) -> memref<2x200x32xf32> {
    %o = ta.alloc : memref<2x200x32xf32>
    ta.launch @attn(%q, %k, %v, %o, %bias) : memref<2x200x32xf32>, memref<2x200x32xf32>, memref<2x200x32xf32>, memref<2x200x32xf32>, memref<2xf32>
    func.return %o : memref<2x200x32xf32>
  }
}
