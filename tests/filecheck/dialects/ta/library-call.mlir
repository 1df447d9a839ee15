// RUN: PALLAS_ROUNDTRIP
// RUN: PALLAS_GENERIC_ROUNDTRIP
// RUN: pallas-opt %s -p split-kernel-loops,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics | filecheck %s --check-prefix=XLA
// RUN: pallas-opt %s -p split-kernel-loops,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY

// A sort along rows as a library call: an XLA kernel whose body is one call on its
// buffers, each viewed in its shape; a Pallas kernel adds 1 to the sorted values.
// The passes leave the XLA kernel as it is, ta-to-xla makes it an xla.library_call
// (checked against the ta reference by --verify-semantics), and the Python module
// carries the library function's own source.

ta.kernel @sort(%x: memref<64xf32> {role = "in"}, %v: memref<64xf32> {role = "out"}, %i: memref<64xi32> {role = "out"}) attributes {target = #ta<target xla>} {
  ta.library_call sort(%x) -> (%v, %i) shapes [array<i64: 4, 16>, array<i64: 4, 16>, array<i64: 4, 16>] params {descending = true, dim = 1 : i64, stable = false} : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)
}
ta.kernel @inc(%v: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [4, 16] (%a, %b) {
    %e = ta.load %v[affine_map<(d0, d1) -> (d0 * 16 + d1)>](%a, %b) : memref<64xf32>
    %one = arith.constant 1.0 : f32
    %s = arith.addf %e, %one : f32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0 * 16 + d1)>](%a, %b) : memref<64xf32>
  }
}
func.func @forward(%x: memref<4x16xf32>) -> (memref<4x16xf32>, memref<4x16xi32>) {
  %xf = ta.reshape %x : memref<4x16xf32> to memref<64xf32>
  %v = ta.alloc : memref<4x16xf32>
  %vf = ta.reshape %v : memref<4x16xf32> to memref<64xf32>
  %i = ta.alloc : memref<4x16xi32>
  %if = ta.reshape %i : memref<4x16xi32> to memref<64xi32>
  %o = ta.alloc : memref<4x16xf32>
  %of = ta.reshape %o : memref<4x16xf32> to memref<64xf32>
  ta.launch @sort(%xf, %vf, %if) : memref<64xf32>, memref<64xf32>, memref<64xi32>
  ta.launch @inc(%vf, %of) : memref<64xf32>, memref<64xf32>
  func.return %o, %i : memref<4x16xf32>, memref<4x16xi32>
}

// CHECK:      ta.library_call sort(%x) -> (%v, %i) shapes [array<i64: 4, 16>, array<i64: 4, 16>, array<i64: 4, 16>] params {descending = true, dim = 1 : i64, stable = false} : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)

// XLA:      xla.func @sort(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xi32>)
// XLA:        %{{.*}}, %{{.*}} = xla.library_call sort(%{{.*}}) shapes [array<i64: 4, 16>, array<i64: 4, 16>, array<i64: 4, 16>] params {descending = true, dim = 1 : i64, stable = false} : (tensor<64xf32>) -> (tensor<64xf32>, tensor<64xi32>)
// XLA:      pallas.xla_call @sort(%x)
// XLA:      pallas.call @inc

// PY:       from jax import lax
// PY:       def sort_keys(x, descending):
// PY:       def lib_sort(x, *, dim, descending, stable):
// PY:       def sort_xla(x):
// PY:         = lib_sort(jnp.reshape({{.*}}, (4, 16)), descending=True, dim=1, stable=False)
