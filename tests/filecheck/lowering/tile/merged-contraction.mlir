// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// An attention layer's output projection: the attention's output, stored (b, h, t, d),
// times the weight read as (n, h, d), summed over h and d (canonicalize-permutation
// splits the one k of `y.transpose(1, 2).reshape(b, t, h * d) @ w.t()` in two). Both
// factors walk both reduction dims, so they are one k of h * d = 256: each factor's
// tile merges its last two dims in registers and the step is one (128, 256) x (256,
// 256) dot on the MXU, not the (1, 128, 256, 8, 32) product multiplied out on the VPU.
// CHECK-LABEL: tl.kernel @out_projection
// CHECK:         tl.reshape %{{.*}} : tensor<1x128x8x32xf32> to tensor<128x256xf32>
// CHECK:         tl.reshape %{{.*}} : tensor<256x8x32xf32> to tensor<256x256xf32>
// CHECK:         tl.dot %{{.*}}, %{{.*}} precision <highest> : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
// CHECK-NOT:     tl.reduce
// PY-LABEL:      def out_projection_kernel(
// PY:              jnp.dot({{.*}}, preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)
ta.kernel @out_projection(%y: memref<2x8x128x32xf32> {role = "in"}, %w: memref<256x8x32xf32> {role = "in"}, %o: memref<2x128x256xf32> {role = "out"}) {
  ta.loop [2, 128, 256] reduce [8, 32] (%b, %t, %n, %h, %d) {
    %a = ta.load %y[affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>](%b, %t, %n, %h, %d) : memref<2x8x128x32xf32>
    %x = ta.load %w[affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>](%b, %t, %n, %h, %d) : memref<256x8x32xf32>
    %p = arith.mulf %a, %x : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %o[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %t, %n) : memref<2x128x256xf32>
  }
}
func.func @forward(%y: memref<2x8x128x32xf32>, %w: memref<256x8x32xf32>) -> memref<2x128x256xf32> {
  %o = ta.alloc : memref<2x128x256xf32>
  ta.launch @out_projection(%y, %w, %o) : memref<2x8x128x32xf32>, memref<256x8x32xf32>, memref<2x128x256xf32>
  func.return %o : memref<2x128x256xf32>
}
