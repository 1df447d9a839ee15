// RUN: pallas-opt %s -p xla-outline,tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p xla-outline,tile,tl-to-pallas -o /dev/null
// RUN: pallas-opt %s -p xla-outline,tile,tl-to-pallas -t python | filecheck %s --check-prefix=PY

// A special function in an XLA kernel is the float32 expansion a Pallas kernel has
// (special_functions.XLA_EXPANSIONS), with `xla.compare`, `xla.select` and
// `xla.constant`: XLA's own functions are other algorithms, and one algorithm gives
// one answer wherever a kernel runs. igamma, which has no expansion (a series of up
// to 2000 terms; the tile policy sends its kernels to XLA), is XLA's.

// out = igamma(d, i0e(d)) of the diagonal d of x (igamma sends the kernel to XLA).
ta.kernel @diag(%x: memref<64x64xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0, d0)>](%i) : memref<64x64xf32>
    %e = special.i0e %v : f32
    %g = special.igamma %v, %e : f32
    ta.store %g, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x64xf32>) -> memref<64xf32> {
  %out = ta.alloc : memref<64xf32>
  ta.launch @diag(%x, %out) : memref<64x64xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}

// CHECK-LABEL: xla.func @diag(%x: tensor<64x64xf32>) -> tensor<64xf32> attributes {part = #xla<part kernel>} {
// CHECK:       %v = xla.take %x_1[%0] : tensor<64x64xf32>, tensor<64xindex> -> tensor<64xf32>
// CHECK-NEXT:  %e_absf = math.absf %v : tensor<64xf32>
// CHECK-NEXT:  %e_c = xla.constant 8.000000e+00 : f32 : tensor<64xf32>
// CHECK-NEXT:  %e_is = xla.compare <ole> %e_absf, %e_c : tensor<64xf32>
// CHECK:       %e = xla.select %e_is, %e_prod_18, %e_quot_1 : tensor<64xi1>, tensor<64xf32>
// CHECK-NEXT:  %g = special.igamma %v, %e : tensor<64xf32>
// CHECK-NOT:   special.i0e

// PY-LABEL: def diag_xla(x):
// PY:           g = jax.lax.igamma(v, e)
