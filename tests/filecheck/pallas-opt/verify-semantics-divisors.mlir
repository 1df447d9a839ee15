// RUN: pallas-opt %s --verify-semantics -p "split-kernel-loops,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,tile-policy,xla-outline,tile" \
// RUN:   | pallas-opt --verify-semantics -p tl-to-pallas,pallas-legalize-mosaic \
// RUN:   | pallas-opt --verify-semantics -p cse | filecheck %s

// Integer division and remainder by a buffer (torch's a // b, a % b and
// div(rounding_mode="trunc"), as the frontend emits them) have no meaning for a zero
// divisor, so the random inputs of --verify-semantics draw a buffer that divides
// without 0, at each level: in a ta kernel, a tl kernel and a pallas kernel.

// CHECK:     pallas.call @div
// CHECK:       arith.floordivsi
// CHECK:       arith.remsi
// CHECK:       arith.divsi
// CHECK-NOT: error
ta.kernel @div(%a: memref<1024xi32> {role = "in"}, %b: memref<1024xi32> {role = "in"}, %q: memref<1024xi32> {role = "out"}, %r: memref<1024xi32> {role = "out"}, %t: memref<1024xi32> {role = "out"}) {
  ta.loop [8, 128] (%i, %j) {
    %x = ta.load %a[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<1024xi32>
    %y = ta.load %b[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<1024xi32>
    %fq = arith.floordivsi %x, %y : i32
    %rem = arith.remsi %x, %y : i32
    %tq = arith.divsi %x, %y : i32
    ta.store %fq, %q[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<1024xi32>
    ta.store %rem, %r[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<1024xi32>
    ta.store %tq, %t[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<1024xi32>
  }
}
func.func @forward(%a: memref<8x128xi32>, %b: memref<8x128xi32>) -> (memref<8x128xi32>, memref<8x128xi32>, memref<8x128xi32>) {
  %a_flat = ta.reshape %a : memref<8x128xi32> to memref<1024xi32>
  %b_flat = ta.reshape %b : memref<8x128xi32> to memref<1024xi32>
  %q = ta.alloc : memref<8x128xi32>
  %q_flat = ta.reshape %q : memref<8x128xi32> to memref<1024xi32>
  %r = ta.alloc : memref<8x128xi32>
  %r_flat = ta.reshape %r : memref<8x128xi32> to memref<1024xi32>
  %t = ta.alloc : memref<8x128xi32>
  %t_flat = ta.reshape %t : memref<8x128xi32> to memref<1024xi32>
  ta.launch @div(%a_flat, %b_flat, %q_flat, %r_flat, %t_flat) : memref<1024xi32>, memref<1024xi32>, memref<1024xi32>, memref<1024xi32>, memref<1024xi32>
  func.return %q, %r, %t : memref<8x128xi32>, memref<8x128xi32>, memref<8x128xi32>
}
