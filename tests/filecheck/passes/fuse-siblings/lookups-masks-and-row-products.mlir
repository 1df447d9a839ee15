// RUN: pallas-opt %s --split-input-file -p fuse-siblings --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-siblings --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p fold-iota-indices,split-kernel-loops,indirect-load-to-one-hot-sum,fuse-epilogues,fuse-siblings,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,indirect-store-to-row-dma,raise-attention,fuse-epilogues{attention-raised=true},share-identical-kernels,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics | filecheck %s --check-prefix=PALLAS

// A layer norm's statistics of a token embedding (a GPT's first layer, as the frontend
// writes them when a matrix product reads the statistics): each kernel looks the rows up
// in %table by the ids (a data-dependent index) and adds the position rows. Fused, the
// lookup is one load: the two lookups read the same rows, so `cse` merges them.
ta.kernel @mean(%ids: memref<16xi32> {role = "in"}, %table: memref<2048xf32> {role = "in"}, %pos: memref<2048xf32> {role = "in"}, %m: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [128] (%i, %k) {
    %id = ta.load %ids[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<16xi32>
    %s = arith.index_cast %id : i32 to index
    %e = ta.load %table[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %k)[%s] : memref<2048xf32>
    %p = ta.load %pos[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
    %x = arith.addf %e, %p : f32
    %sum = ta.reduce <sum> %x : f32
    %n = arith.constant 1.280000e+02 : f32
    %mu = arith.divf %sum, %n : f32
    ta.store %mu, %m[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
  }
}
// expected-remark@+1 {{fuse-siblings: fused @mean and @var into @mean_var}}
ta.kernel @var(%ids: memref<16xi32> {role = "in"}, %table: memref<2048xf32> {role = "in"}, %pos: memref<2048xf32> {role = "in"}, %w: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [128] (%i, %k) {
    %id = ta.load %ids[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<16xi32>
    %s = arith.index_cast %id : i32 to index
    %e = ta.load %table[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %k)[%s] : memref<2048xf32>
    %p = ta.load %pos[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
    %x = arith.addf %e, %p : f32
    %sum = ta.reduce <sum> %x : f32
    %n = arith.constant 1.280000e+02 : f32
    %mu = arith.divf %sum, %n : f32
    %d = arith.subf %x, %mu : f32
    %d2 = arith.mulf %d, %d : f32
    %ss = ta.reduce <sum> %d2 : f32
    %var = arith.divf %ss, %n : f32
    ta.store %var, %w[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
  }
}
func.func @forward(%ids: memref<16xi32>, %table: memref<2048xf32>, %pos: memref<2048xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %m = ta.alloc : memref<16xf32>
  %w = ta.alloc : memref<16xf32>
  ta.launch @mean(%ids, %table, %pos, %m) : memref<16xi32>, memref<2048xf32>, memref<2048xf32>, memref<16xf32>
  ta.launch @var(%ids, %table, %pos, %w) : memref<16xi32>, memref<2048xf32>, memref<2048xf32>, memref<16xf32>
  func.return %m, %w : memref<16xf32>, memref<16xf32>
}

// CHECK-LABEL: ta.kernel @mean_var(
// CHECK:         ta.loop [16] reduce [128]
// CHECK-COUNT-1:   ta.load %table
// CHECK-NOT:       ta.load %table
// CHECK:           ta.store
// CHECK-NEXT:      ta.store
// CHECK:       func.func @forward(
// CHECK-NEXT:    %m = ta.alloc
// CHECK-NEXT:    %w = ta.alloc
// CHECK-NEXT:    ta.launch @mean_var(%ids, %table, %pos, %m, %w)
// CHECK-NEXT:    func.return %m, %w

// PALLAS-LABEL: func.func @forward(%ids: tensor<16xi32>, %table: tensor<2048xf32>, %pos:
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       pallas.call @mean_var(
// PALLAS-NOT:   pallas.call
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       func.return

// -----

// A causal softmax's statistics (a training graph keeps both for the backward): the
// row max and the row sum of exponentials, each masking the scores by comparing two
// iota positions. The positions are read along one loop dim each, but the scores are
// read at every point, so the bodies' values are no larger than the scores' blocks:
// fused, the scores are read once.
ta.kernel @row_max(%iota: memref<128xi32> {role = "in"}, %s: memref<16384xf32> {role = "in"}, %m: memref<128xf32> {role = "out"}) {
  ta.loop [128] reduce [128] (%i, %j) {
    %qi = ta.load %iota[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xi32>
    %kj = ta.load %iota[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<128xi32>
    %hidden = arith.cmpi sgt, %kj, %qi : i32
    %x = ta.load %s[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<16384xf32>
    %ninf = arith.constant 0xff800000 : f32
    %v = arith.select %hidden, %ninf, %x : f32
    %mx = ta.reduce <max> %v : f32
    ta.store %mx, %m[affine_map<(d0) -> (d0)>](%i) : memref<128xf32>
  }
}
// expected-remark@+1 {{fuse-siblings: fused @row_max and @row_sum into @row_max_row_sum}}
ta.kernel @row_sum(%iota: memref<128xi32> {role = "in"}, %s: memref<16384xf32> {role = "in"}, %l: memref<128xf32> {role = "out"}) {
  ta.loop [128] reduce [128] (%i, %j) {
    %qi = ta.load %iota[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xi32>
    %kj = ta.load %iota[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<128xi32>
    %hidden = arith.cmpi sgt, %kj, %qi : i32
    %x = ta.load %s[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<16384xf32>
    %ninf = arith.constant 0xff800000 : f32
    %v = arith.select %hidden, %ninf, %x : f32
    %mx = ta.reduce <max> %v : f32
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %sum = ta.reduce <sum> %e : f32
    ta.store %sum, %l[affine_map<(d0) -> (d0)>](%i) : memref<128xf32>
  }
}
func.func @forward(%iota: memref<128xi32> {ta.iota}, %s: memref<16384xf32>) -> (memref<128xf32>, memref<128xf32>) {
  %m = ta.alloc : memref<128xf32>
  %l = ta.alloc : memref<128xf32>
  ta.launch @row_max(%iota, %s, %m) : memref<128xi32>, memref<16384xf32>, memref<128xf32>
  ta.launch @row_sum(%iota, %s, %l) : memref<128xi32>, memref<16384xf32>, memref<128xf32>
  func.return %m, %l : memref<128xf32>, memref<128xf32>
}

// CHECK-LABEL: ta.kernel @row_max_row_sum(
// CHECK:         ta.loop [128] reduce [128]
// CHECK-COUNT-1:   ta.load %s
// CHECK-NOT:       ta.load %s
// CHECK:           ta.store
// CHECK-NEXT:      ta.store
// CHECK:       ta.launch @row_max_row_sum(%iota, %s, %m, %l)

// PALLAS-LABEL: func.func @forward(%iota: tensor<128xi32>
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       pallas.call @row_max_row_sum(
// PALLAS-NOT:   pallas.call
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       func.return

// -----

// A lookup kernel and one that scatters through the ids (a data-dependent store) stay
// apart: the indirect-access passes rewrite scatters one kernel at a time.
ta.kernel @look(%ids: memref<16xi32> {role = "in"}, %table: memref<2048xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] (%i, %k) {
    %id = ta.load %ids[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<16xi32>
    %s = arith.index_cast %id : i32 to index
    %e = ta.load %table[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %k)[%s] : memref<2048xf32>
    ta.store %e, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
  }
}
ta.kernel @put(%ids: memref<16xi32> {role = "in"}, %x: memref<2048xf32> {role = "in"}, %dst: memref<2048xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @look: a store has a data-dependent index}}
  ta.loop [16, 128] (%i, %k) {
    %id = ta.load %ids[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<16xi32>
    %s = arith.index_cast %id : i32 to index
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
    ta.store %v, %dst[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %k)[%s] : memref<2048xf32>
  }
}
func.func @forward(%ids: memref<16xi32>, %table: memref<2048xf32>, %x: memref<2048xf32>) -> (memref<2048xf32>, memref<2048xf32>) {
  %o = ta.alloc : memref<2048xf32>
  %dst = ta.alloc : memref<2048xf32>
  ta.launch @look(%ids, %table, %o) : memref<16xi32>, memref<2048xf32>, memref<2048xf32>
  ta.launch @put(%ids, %x, %dst) : memref<16xi32>, memref<2048xf32>, memref<2048xf32>
  func.return %o, %dst : memref<2048xf32>, memref<2048xf32>
}

// CHECK-LABEL: ta.kernel @look(
// CHECK-LABEL: ta.kernel @put(
// CHECK:         ta.launch @look(%ids, %table, %o)
// CHECK-NEXT:    ta.launch @put(%ids, %x, %dst)

// -----

// A layer norm's backward sums, per row, the output gradient times the weight, and
// that times the normalized input: each sums a product, but the weight varies along no
// dim of its own (no (m, k) by (k, n) tile pair), so neither is a matrix product the
// tiler makes a `tl.dot`. Fused, %dy and %w are read once.
ta.kernel @dyw(%dy: memref<2048xf32> {role = "in"}, %w: memref<128xf32> {role = "in"}, %a: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [128] (%i, %k) {
    %g = ta.load %dy[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
    %v = ta.load %w[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<128xf32>
    %p = arith.mulf %g, %v : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %a[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
  }
}
// expected-remark@+1 {{fuse-siblings: fused @dyw and @dywx into @dyw_dywx}}
ta.kernel @dywx(%dy: memref<2048xf32> {role = "in"}, %w: memref<128xf32> {role = "in"}, %x: memref<2048xf32> {role = "in"}, %b: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [128] (%i, %k) {
    %g = ta.load %dy[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
    %v = ta.load %w[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<128xf32>
    %h = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %k) : memref<2048xf32>
    %p = arith.mulf %g, %v : f32
    %q = arith.mulf %p, %h : f32
    %s = ta.reduce <sum> %q : f32
    ta.store %s, %b[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
  }
}
func.func @forward(%dy: memref<2048xf32>, %w: memref<128xf32>, %x: memref<2048xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %a = ta.alloc : memref<16xf32>
  %b = ta.alloc : memref<16xf32>
  ta.launch @dyw(%dy, %w, %a) : memref<2048xf32>, memref<128xf32>, memref<16xf32>
  ta.launch @dywx(%dy, %w, %x, %b) : memref<2048xf32>, memref<128xf32>, memref<2048xf32>, memref<16xf32>
  func.return %a, %b : memref<16xf32>, memref<16xf32>
}

// CHECK-LABEL: ta.kernel @dyw_dywx(
// CHECK:         ta.loop [16] reduce [128]
// CHECK-COUNT-1:   ta.load %dy
// CHECK-NOT:       ta.load %dy
// CHECK:       ta.launch @dyw_dywx(%dy, %w, %a, %x, %b)

// PALLAS-LABEL: func.func @forward(%dy:
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       pallas.call @dyw_dywx(
// PALLAS-NOT:   pallas.call
// PALLAS-NOT:   pallas.xla_call
// PALLAS:       func.return
