// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// Attention's probabilities by its values, the softmax in the product's prologue: the
// row statistics are (heads, rows) buffers, whose head dim is their sublane dim, so a
// block takes all 8 heads. Each step's product is one batched dot (a product per head),
// not the whole (8, 128, 64, 128) outer product multiplied out in VMEM.
// CHECK-LABEL: tl.kernel @probs_by_values
// CHECK:         tl.dot %{{.*}}, %{{.*}} precision <highest> : tensor<8x128x128xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
// PY-LABEL:      def probs_by_values_kernel(
// PY:              jax.lax.dot_general({{.*}}, (((2,), (1,)), ((0,), (0,))), preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)
ta.kernel @probs_by_values(%s: memref<8x256x256xf32> {role = "in"}, %m: memref<8x256xf32> {role = "in"}, %z: memref<8x256xf32> {role = "in"}, %v: memref<8x256x64xf32> {role = "in"}, %o: memref<8x256x64xf32> {role = "out"}) {
  ta.loop [8, 256, 64] reduce [256] (%h, %i, %j, %k) attributes {tile_sizes = array<i64: 8, 128, 64, 128>} {
    %x = ta.load %s[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>](%h, %i, %j, %k) : memref<8x256x256xf32>
    %mx = ta.load %m[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%h, %i, %j, %k) : memref<8x256xf32>
    %sum = ta.load %z[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%h, %i, %j, %k) : memref<8x256xf32>
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %sum : f32
    %y = ta.load %v[affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>](%h, %i, %j, %k) : memref<8x256x64xf32>
    %py = arith.mulf %p, %y : f32
    %t = ta.reduce <sum> %py : f32
    ta.store %t, %o[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%h, %i, %j) : memref<8x256x64xf32>
  }
}
func.func @forward(%s: memref<8x256x256xf32>, %m: memref<8x256xf32>, %z: memref<8x256xf32>, %v: memref<8x256x64xf32>) -> memref<8x256x64xf32> {
  %o = ta.alloc : memref<8x256x64xf32>
  ta.launch @probs_by_values(%s, %m, %z, %v, %o) : memref<8x256x256xf32>, memref<8x256xf32>, memref<8x256xf32>, memref<8x256x64xf32>, memref<8x256x64xf32>
  func.return %o : memref<8x256x64xf32>
}
