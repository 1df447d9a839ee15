// RUN: pallas-opt %s | pallas-opt | filecheck %s
// RUN: pallas-opt %s -p tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics -o /dev/null

// A causal ta.attention written by hand (the form raise-attention writes), through the
// whole lowering with the reference checked at every stage.

// CHECK:      ta.attention batch [2] sizes [256, 256, 32, 32]
// CHECK-SAME:   q %q3[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>]
// CHECK:        ^bb0(%b: index, %i: index, %j: index, %s: f32):
// CHECK:        ta.yield %m : f32
builtin.module {
  ta.kernel @attn(%q: memref<16384xf32> {role = "in"}, %k: memref<16384xf32> {role = "in"}, %v: memref<16384xf32> {role = "in"}, %o: memref<16384xf32> {role = "out"}, %iota: memref<256xi32> {role = "in"}) {
    %q3 = ta.reshape %q : memref<16384xf32> to memref<2x256x32xf32>
    %k3 = ta.reshape %k : memref<16384xf32> to memref<2x256x32xf32>
    %v3 = ta.reshape %v : memref<16384xf32> to memref<2x256x32xf32>
    %o3 = ta.reshape %o : memref<16384xf32> to memref<2x256x32xf32>
    ta.attention batch [2] sizes [256, 256, 32, 32]
        q %q3[affine_map<(b, i, j, d, e) -> (b, i, d)>]
        k %k3[affine_map<(b, i, j, d, e) -> (b, j, d)>]
        v %v3[affine_map<(b, i, j, d, e) -> (b, j, e)>]
        out %o3[affine_map<(b, i, j, d, e) -> (b, i, e)>]
        : memref<2x256x32xf32>, memref<2x256x32xf32>, memref<2x256x32xf32>, memref<2x256x32xf32>
        score {
      ^bb0(%b: index, %i: index, %j: index, %s: f32):
        %c = arith.constant 1.250000e-01 : f32
        %t = arith.mulf %s, %c : f32
        %ii = ta.load %iota[affine_map<(d0, d1, d2) -> (d1)>](%b, %i, %j) : memref<256xi32>
        %jj = ta.load %iota[affine_map<(d0, d1, d2) -> (d2)>](%b, %i, %j) : memref<256xi32>
        %later = arith.cmpi sgt, %jj, %ii : i32
        %ninf = arith.constant 0xff800000 : f32
        %m = arith.select %later, %ninf, %t : f32
        ta.yield %m : f32
    }
  }
  func.func @forward(%q: memref<2x256x32xf32>, %k: memref<2x256x32xf32>, %v: memref<2x256x32xf32>, %iota: memref<256xi32>) -> memref<2x256x32xf32> {
    %qf = ta.reshape %q : memref<2x256x32xf32> to memref<16384xf32>
    %kf = ta.reshape %k : memref<2x256x32xf32> to memref<16384xf32>
    %vf = ta.reshape %v : memref<2x256x32xf32> to memref<16384xf32>
    %o = ta.alloc : memref<2x256x32xf32>
    %of = ta.reshape %o : memref<2x256x32xf32> to memref<16384xf32>
    ta.launch @attn(%qf, %kf, %vf, %of, %iota) : memref<16384xf32>, memref<16384xf32>, memref<16384xf32>, memref<16384xf32>, memref<256xi32>
    func.return %o : memref<2x256x32xf32>
  }
}

