// RUN: pallas-opt %s --split-input-file -p indirect-load-to-one-hot-sum --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-one-hot-sum --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-one-hot-sum,fuse-epilogues,fuse-siblings --verify-semantics | filecheck %s --check-prefix=FUSED
// RUN: pallas-opt %s --split-input-file -p fold-iota-indices,split-kernel-loops,indirect-load-to-one-hot-sum,fuse-epilogues,fuse-siblings,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,indirect-store-to-row-dma,raise-attention,fuse-epilogues{attention-raised=true},share-identical-kernels,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics | filecheck %s --check-prefix=PALLAS

// A cross-entropy over 16 rows of 128 logits, as the frontend writes it: the row
// statistics (max, then the sum of exponentials), then the mean of lse - x[r, y[r]].
// The logit each row picks is a gather of single elements, which XLA would run; the
// statistics read those rows whole, so the pick becomes a one-hot sum over the row in a
// kernel of the same shape, which fuse-siblings fuses with them. No XLA.
ta.kernel @rowmax(%x: memref<2048xf32> {role = "in"}, %m: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [128] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
    %mx = ta.reduce <max> %v : f32
    ta.store %mx, %m[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @rowsum(%x: memref<2048xf32> {role = "in"}, %m: memref<16xf32> {role = "in"}, %s: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [128] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
    %mx = ta.load %m[affine_map<(d0, d1) -> (d0)>](%r, %c) : memref<16xf32>
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %sum = ta.reduce <sum> %e : f32
    ta.store %sum, %s[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @loss(%y: memref<16xi32> {role = "in"}, %x: memref<2048xf32> {role = "in"}, %m: memref<16xf32> {role = "in"}, %s: memref<16xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [16] (%i, %r) {
    %label = ta.load %y[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<16xi32>
    %col = arith.index_cast %label : i32 to index
    // expected-remark@+1 {{indirect-load-to-one-hot-sum: the element picked from each row of %x is a one-hot sum over the row, in @loss_pick}}
    %xy = ta.load %x[affine_map<(d0, d1)[s0] -> (d1 * 128 + s0)>](%i, %r)[%col] : memref<2048xf32>
    %mx = ta.load %m[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<16xf32>
    %sum = ta.load %s[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<16xf32>
    %lg = math.log %sum : f32
    %lse = arith.addf %mx, %lg : f32
    %l = arith.subf %lse, %xy : f32
    %t = ta.reduce <sum> %l : f32
    %n = arith.constant 1.600000e+01 : f32
    %mean = arith.divf %t, %n : f32
    ta.store %mean, %o[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%x: memref<16x128xf32>, %y: memref<16xi32>) -> memref<1xf32> {
  %xf = ta.reshape %x : memref<16x128xf32> to memref<2048xf32>
  %m = ta.alloc : memref<16xf32>
  %s = ta.alloc : memref<16xf32>
  %o = ta.alloc : memref<1xf32>
  ta.launch @rowmax(%xf, %m) : memref<2048xf32>, memref<16xf32>
  ta.launch @rowsum(%xf, %m, %s) : memref<2048xf32>, memref<16xf32>, memref<16xf32>
  ta.launch @loss(%y, %xf, %m, %s, %o) : memref<16xi32>, memref<2048xf32>, memref<16xf32>, memref<16xf32>, memref<1xf32>
  func.return %o : memref<1xf32>
}

// CHECK-LABEL: ta.kernel @loss_pick(%x: memref<2048xf32> {role = "in"}, %y: memref<16xi32> {role = "in"}, %picked: memref<16xf32> {role = "out"})
// CHECK-NEXT:    ta.loop [16] reduce [128] (%r, %column) {
// CHECK-NEXT:      %label = ta.load %y[affine_map<(d0, d1) -> (d0)>](%r, %column) : memref<16xi32>
// CHECK-NEXT:      %xy = ta.load %x[affine_map<(d0, d1) -> (((d0 * 128) + d1))>](%r, %column) : memref<2048xf32>
// CHECK-NEXT:      %0 = arith.index_cast %column : index to i32
// CHECK-NEXT:      %1 = arith.cmpi eq, %0, %label : i32
// CHECK-NEXT:      %2 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %3 = arith.select %1, %xy, %2 : f32
// CHECK-NEXT:      %4 = ta.reduce <sum> %3 : f32
// CHECK-NEXT:      ta.store %4, %picked[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
// CHECK:       ta.kernel @loss_picked(%m: memref<16xf32> {role = "in"}, %s: memref<16xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}, %picked: memref<16xf32> {role = "in"})
// CHECK-NEXT:    ta.loop [1] reduce [16] (%i, %r) {
// CHECK-NEXT:      %xy = ta.load %picked[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
// CHECK:         ta.launch @rowsum(%xf, %m, %s)
// CHECK-NEXT:    %picked = ta.alloc : memref<16xf32>
// CHECK-NEXT:    ta.launch @loss_pick(%xf, %y, %picked)
// CHECK-NEXT:    ta.launch @loss_picked(%m, %s, %o, %picked)

// FUSED:         ta.launch @rowmax_rowsum_loss_pick(%xf, %m, %s, %y, %picked)
// FUSED-NEXT:    ta.launch @loss_picked(

// The whole pipeline: fuse-epilogues' second run nests the rows' statistics under the
// mean loss (`ta.reduce ... over`), so cross-entropy is one Pallas call.
// PALLAS-NOT:     xla
// PALLAS-COUNT-1: pallas.call @
// PALLAS-NOT:     {{pallas.call|xla}}
// PALLAS:         // -----

// -----

// Not rewritten: nothing else reads the rows, so a one-hot sum would read 128 elements
// where the gather reads one.
ta.kernel @pick(%y: memref<16xi32> {role = "in"}, %x: memref<2048xf32> {role = "in"}, %o: memref<16xf32> {role = "out"}) {
  ta.loop [16] (%r) {
    %label = ta.load %y[affine_map<(d0) -> (d0)>](%r) : memref<16xi32>
    %col = arith.index_cast %label : i32 to index
    // expected-remark@+1 {{indirect-load-to-one-hot-sum: not rewritten: no earlier kernel reads these rows whole, and a one-hot sum would read 128 elements for each one picked}}
    %xy = ta.load %x[affine_map<(d0)[s0] -> (d0 * 128 + s0)>](%r)[%col] : memref<2048xf32>
    ta.store %xy, %o[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
func.func @forward(%x: memref<16x128xf32>, %y: memref<16xi32>) -> memref<16xf32> {
  %xf = ta.reshape %x : memref<16x128xf32> to memref<2048xf32>
  %o = ta.alloc : memref<16xf32>
  ta.launch @pick(%y, %xf, %o) : memref<16xi32>, memref<2048xf32>, memref<16xf32>
  func.return %o : memref<16xf32>
}

// CHECK-LABEL: ta.kernel @pick(
// CHECK:         %xy = ta.load %x[affine_map<(d0)[s0] -> (((d0 * 128) + s0))>](%r)[%col]
// CHECK:         ta.launch @pick(%y, %xf, %o)

// -----

// Not rewritten: the index is not a row start plus the symbol (the symbol picks a row,
// an embedding lookup, which indirect-load-to-scalar-prefetch makes row DMAs).
ta.kernel @lookup(%ids: memref<16xi32> {role = "in"}, %table: memref<2048xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] (%r, %c) {
    %id = ta.load %ids[affine_map<(d0, d1) -> (d0)>](%r, %c) : memref<16xi32>
    %row = arith.index_cast %id : i32 to index
    // expected-remark@+1 {{indirect-load-to-one-hot-sum: not rewritten: the flat index is not a linear row start plus the symbol}}
    %e = ta.load %table[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%r, %c)[%row] : memref<2048xf32>
    ta.store %e, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
func.func @forward(%ids: memref<16xi32>, %table: memref<16x128xf32>) -> memref<16x128xf32> {
  %tf = ta.reshape %table : memref<16x128xf32> to memref<2048xf32>
  %o = ta.alloc : memref<16x128xf32>
  %of = ta.reshape %o : memref<16x128xf32> to memref<2048xf32>
  ta.launch @lookup(%ids, %tf, %of) : memref<16xi32>, memref<2048xf32>, memref<2048xf32>
  func.return %o : memref<16x128xf32>
}

// CHECK-LABEL: ta.kernel @lookup(
// CHECK:         ta.load %table[affine_map<(d0, d1)[s0] -> (((s0 * 128) + d1))>](%r, %c)[%row]
