// RUN: pallas-opt %s --split-input-file -p fuse-siblings --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-siblings --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p fold-iota-indices,split-kernel-loops,indirect-load-to-one-hot-sum,fuse-epilogues,fuse-siblings,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,indirect-store-to-row-dma,raise-attention,fuse-epilogues{attention-raised=true},share-identical-kernels,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics | filecheck %s --check-prefix=PALLAS

// Saved activations at the end of a training graph's forward: each recomputed from the
// inputs by a kernel of its own, with an unrelated kernel between them. The first moves
// down past it (it neither reads what the first writes nor writes what the first reads
// or writes) and the two fuse. The second nests the same points more finely ([2, 8, 128]
// for [16, 128]): its loop is collapsed to the first's extents, its data-dependent
// lookup keeping its symbol.
ta.kernel @centred(%ids: memref<16xi32> {role = "in"}, %table: memref<2048xf32> {role = "in"}, %m: memref<16xf32> {role = "in"}, %c: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] (%i, %k) {
    %id = ta.load %ids[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<16xi32>
    %s = arith.index_cast %id : i32 to index
    %e = ta.load %table[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %k)[%s] : memref<2048xf32>
    %mu = ta.load %m[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<16xf32>
    %d = arith.subf %e, %mu : f32
    ta.store %d, %c[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
  }
}
ta.kernel @other(%y: memref<256xf32> {role = "in"}, %z: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    %v = ta.load %y[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
    %n = arith.negf %v : f32
    ta.store %n, %z[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
// expected-remark@+1 {{fuse-siblings: fused @centred and @doubled into @centred_doubled}}
ta.kernel @doubled(%ids: memref<16xi32> {role = "in"}, %table: memref<2048xf32> {role = "in"}, %t: memref<2048xf32> {role = "out"}) {
  ta.loop [2, 8, 128] (%b, %i, %k) {
    %id = ta.load %ids[affine_map<(d0, d1, d2) -> (d0 * 8 + d1)>](%b, %i, %k) : memref<16xi32>
    %s = arith.index_cast %id : i32 to index
    %e = ta.load %table[affine_map<(d0, d1, d2)[s0] -> (s0 * 128 + d2)>](%b, %i, %k)[%s] : memref<2048xf32>
    %two = arith.addf %e, %e : f32
    ta.store %two, %t[affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 128 + d2)>](%b, %i, %k) : memref<2048xf32>
  }
}
func.func @forward(%ids: memref<16xi32>, %table: memref<2048xf32>, %m: memref<16xf32>, %y: memref<256xf32>) -> (memref<2048xf32>, memref<256xf32>, memref<2048xf32>) {
  %c = ta.alloc : memref<2048xf32>
  %z = ta.alloc : memref<256xf32>
  %t = ta.alloc : memref<2048xf32>
  ta.launch @centred(%ids, %table, %m, %c) : memref<16xi32>, memref<2048xf32>, memref<16xf32>, memref<2048xf32>
  ta.launch @other(%y, %z) : memref<256xf32>, memref<256xf32>
  ta.launch @doubled(%ids, %table, %t) : memref<16xi32>, memref<2048xf32>, memref<2048xf32>
  func.return %c, %z, %t : memref<2048xf32>, memref<256xf32>, memref<2048xf32>
}

// CHECK-LABEL: ta.kernel @other(
// CHECK-LABEL: ta.kernel @centred_doubled(
// CHECK:         ta.loop [16, 128] (%i, %k) {
// CHECK-COUNT-1:   ta.load %table
// CHECK-NOT:       ta.load %table
// CHECK:           ta.store %{{.*}}, %c[
// CHECK-NEXT:      ta.store %{{.*}}, %t[affine_map<(d0, d1) -> (((d0 * 128) + d1))>](%i, %k)
// CHECK:       func.func @forward(
// CHECK:         ta.launch @other(%y, %z)
// CHECK-NEXT:    ta.launch @centred_doubled(%ids, %table, %m, %c, %t)

// PALLAS-LABEL: func.func @forward(
// PALLAS-COUNT-2: pallas.call
// PALLAS-NOT:   pallas.call
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       func.return

// -----

// The kernel between reads what the first writes: the first cannot run at the second's
// place, so the pair stays apart (not adjacent: nothing is said).
ta.kernel @first(%x: memref<256xf32> {role = "in"}, %a: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
    %n = arith.negf %v : f32
    ta.store %n, %a[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
ta.kernel @reads_first(%a: memref<256xf32> {role = "in"}, %z: memref<128xf32> {role = "out"}) {
  ta.loop [128] (%i) {
    %v = ta.load %a[affine_map<(d0) -> (d0 * 2)>](%i) : memref<256xf32>
    ta.store %v, %z[affine_map<(d0) -> (d0)>](%i) : memref<128xf32>
  }
}
ta.kernel @second(%x: memref<256xf32> {role = "in"}, %b: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
    %n = arith.addf %v, %v : f32
    ta.store %n, %b[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
func.func @forward(%x: memref<256xf32>) -> (memref<128xf32>, memref<256xf32>) {
  %a = ta.alloc : memref<256xf32>
  %z = ta.alloc : memref<128xf32>
  %b = ta.alloc : memref<256xf32>
  ta.launch @first(%x, %a) : memref<256xf32>, memref<256xf32>
  ta.launch @reads_first(%a, %z) : memref<256xf32>, memref<128xf32>
  ta.launch @second(%x, %b) : memref<256xf32>, memref<256xf32>
  func.return %z, %b : memref<128xf32>, memref<256xf32>
}

// CHECK-LABEL: ta.kernel @second(
// CHECK:         ta.launch @first(%x, %a)
// CHECK-NEXT:    ta.launch @reads_first(%a, %z)
// CHECK-NEXT:    ta.launch @second(%x, %b)
