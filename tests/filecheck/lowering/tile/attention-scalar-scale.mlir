// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics -o /dev/null

// A scale read from a rank-0 buffer in the score region: its block is the whole
// buffer, with no unit-dim view (a minor-dim view needs a minor dim).

// CHECK:      tl.kernel @attn({{.*}} %sc: memref<f32> {role = "in"})
// CHECK:        tl.load %sc[affine_map<(d0, d1, d2) -> ()>](%{{.*}}) : memref<f32> -> tensor<f32>


builtin.module {
  ta.kernel @attn(%q: memref<2x1024x32xf32> {role = "in"}, %k: memref<2x1024x32xf32> {role = "in"}, %v: memref<2x1024x32xf32> {role = "in"}, %o: memref<2x1024x32xf32> {role = "out"}, %sc: memref<f32> {role = "in"}) {
    ta.attention batch [2] sizes [1024, 1024, 32, 32]
        q %q[affine_map<(b, i, j, d, e) -> (b, i, d)>]
        k %k[affine_map<(b, i, j, d, e) -> (b, j, d)>]
        v %v[affine_map<(b, i, j, d, e) -> (b, j, e)>]
        out %o[affine_map<(b, i, j, d, e) -> (b, i, e)>]
        : memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>
        score {
      ^bb0(%b: index, %i: index, %j: index, %s: f32):
        %c = ta.load %sc[affine_map<(b, i, j) -> ()>](%b, %i, %j) : memref<f32>
        %t = arith.mulf %s, %c : f32
        ta.yield %t : f32
    }
  }
  func.func @forward(%q: memref<2x1024x32xf32>, %k: memref<2x1024x32xf32>, %v: memref<2x1024x32xf32>, %sc: memref<f32>) -> memref<2x1024x32xf32> {
    %o = ta.alloc : memref<2x1024x32xf32>
    ta.launch @attn(%q, %k, %v, %o, %sc) : memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<2x1024x32xf32>, memref<f32>
    func.return %o : memref<2x1024x32xf32>
  }
}
