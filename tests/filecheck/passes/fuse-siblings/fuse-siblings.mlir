// RUN: pallas-opt %s --split-input-file -p fuse-siblings | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-siblings,fuse-siblings | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-siblings --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-siblings --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p fuse-siblings --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// A layer norm's statistics as the frontend writes them when a matrix product reads
// them: the mean, the variance (which sums the mean again) and a row max, each a kernel
// reading %x. Fused: one loop that loads %x once, sums it once (the variance's own
// sum of %x is the mean's), and stores all three at the end.
ta.kernel @mean(%x: memref<8x256xf32> {role = "in"}, %m: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %m[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
// expected-remark@+1 {{fuse-siblings: fused @mean and @var into @mean_var}}
ta.kernel @var(%x: memref<8x256xf32> {role = "in"}, %w: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    %n = arith.constant 2.560000e+02 : f32
    %mu = arith.divf %s, %n : f32
    %d = arith.subf %v, %mu : f32
    %d2 = arith.mulf %d, %d : f32
    %ss = ta.reduce <sum> %d2 : f32
    %var = arith.divf %ss, %n : f32
    ta.store %var, %w[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
// expected-remark@+1 {{fuse-siblings: fused @mean_var and @max into @mean_var_max}}
ta.kernel @max(%x: memref<8x256xf32> {role = "in"}, %r: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <max> %v : f32
    ta.store %s, %r[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x256xf32>) -> (memref<8xf32>, memref<8xf32>, memref<8xf32>) {
  %m = ta.alloc : memref<8xf32>
  %w = ta.alloc : memref<8xf32>
  %r = ta.alloc : memref<8xf32>
  ta.launch @mean(%x, %m) : memref<8x256xf32>, memref<8xf32>
  ta.launch @var(%x, %w) : memref<8x256xf32>, memref<8xf32>
  ta.launch @max(%x, %r) : memref<8x256xf32>, memref<8xf32>
  func.return %m, %w, %r : memref<8xf32>, memref<8xf32>, memref<8xf32>
}

// CHECK-LABEL: ta.kernel @mean_var_max(%x: memref<8x256xf32> {role = "in"}, %m: memref<8xf32> {role = "out"}, %w: memref<8xf32> {role = "out"}, %r: memref<8xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [8] reduce [256] (%i, %k) {
// CHECK-NEXT:      %v = ta.load %x
// CHECK-NEXT:      %s = ta.reduce <sum> %v : f32
// CHECK-NOT:       ta.load
// CHECK:           %ss = ta.reduce <sum> %d2 : f32
// CHECK:           %var = arith.divf %ss, %n : f32
// CHECK-NEXT:      %[[MAX:.*]] = ta.reduce <max> %v : f32
// CHECK-NEXT:      ta.store %s, %m
// CHECK-NEXT:      ta.store %var, %w
// CHECK-NEXT:      ta.store %[[MAX]], %r
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK:       func.func @forward
// CHECK:         ta.launch @mean_var_max(%x, %m, %w, %r)
// CHECK-NOT:     ta.launch
// CHECK:         func.return %m, %w, %r

// -----

// The second kernel reads what the first writes (a row sum, then rows centred by it):
// its points need the first's whole sums, so the two stay apart.
ta.kernel @sum(%x: memref<8x256xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @centred(%x: memref<8x256xf32> {role = "in"}, %t: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @sum: one writes a buffer the other reads or writes}}
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %mu = ta.load %t[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<8xf32>
    %d = arith.subf %v, %mu : f32
    %s = ta.reduce <max> %d : f32
    ta.store %s, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x256xf32>) -> memref<8xf32> {
  %t = ta.alloc : memref<8xf32>
  %o = ta.alloc : memref<8xf32>
  ta.launch @sum(%x, %t) : memref<8x256xf32>, memref<8xf32>
  ta.launch @centred(%x, %t, %o) : memref<8x256xf32>, memref<8xf32>, memref<8xf32>
  func.return %o : memref<8xf32>
}

// CHECK-LABEL: ta.kernel @sum(
// CHECK-LABEL: ta.kernel @centred(
// CHECK:         ta.launch @sum(%x, %t)
// CHECK-NEXT:    ta.launch @centred(%x, %t, %o)

// -----

// A matrix product beside a row sum of x * b over the same points: the product fuses
// only with another product that reads one of its factors at the same places (see
// sibling-products.mlir); here the tiler sizes its blocks for it alone.
ta.kernel @q(%x: memref<16x128xf32> {role = "in"}, %a: memref<128x128xf32> {role = "in"}, %o: memref<16x128xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [128] (%i, %j, %k) {
    %u = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<16x128xf32>
    %w = ta.load %a[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %u, %w : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<16x128xf32>
  }
}
ta.kernel @k(%x: memref<16x128xf32> {role = "in"}, %b: memref<16x128xf32> {role = "in"}, %o: memref<16x128xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @q: a matrix product fuses only with another that reads one of its factors at the same places (x @ w1 beside x @ w2); otherwise the tiler sizes its blocks for it alone}}
  ta.loop [16, 128] reduce [128] (%i, %j, %k) {
    %u = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<16x128xf32>
    %w = ta.load %b[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<16x128xf32>
    %p = arith.mulf %u, %w : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<16x128xf32>
  }
}
func.func @forward(%x: memref<16x128xf32>, %a: memref<128x128xf32>, %b: memref<16x128xf32>) -> (memref<16x128xf32>, memref<16x128xf32>) {
  %qo = ta.alloc : memref<16x128xf32>
  %ko = ta.alloc : memref<16x128xf32>
  ta.launch @q(%x, %a, %qo) : memref<16x128xf32>, memref<128x128xf32>, memref<16x128xf32>
  ta.launch @k(%x, %b, %ko) : memref<16x128xf32>, memref<16x128xf32>, memref<16x128xf32>
  func.return %qo, %ko : memref<16x128xf32>, memref<16x128xf32>
}

// CHECK-LABEL: ta.kernel @q(
// CHECK-LABEL: ta.kernel @k(
// CHECK:         ta.launch @q(%x, %a, %qo)
// CHECK-NEXT:    ta.launch @k(%x, %b, %ko)

// -----

// No candidates, nothing said: loops of different extents over one input, and loops of
// the same extents over different inputs.
ta.kernel @rows(%x: memref<8x256xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @cols(%x: memref<8x256xf32> {role = "in"}, %t: memref<256xf32> {role = "out"}) {
  ta.loop [256] reduce [8] (%j, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%j, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%j) : memref<256xf32>
  }
}
ta.kernel @other(%y: memref<256x8xf32> {role = "in"}, %t: memref<256xf32> {role = "out"}) {
  ta.loop [256] reduce [8] (%j, %k) {
    %v = ta.load %y[affine_map<(d0, d1) -> (d0, d1)>](%j, %k) : memref<256x8xf32>
    %s = ta.reduce <max> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%j) : memref<256xf32>
  }
}
func.func @forward(%x: memref<8x256xf32>, %y: memref<256x8xf32>) -> (memref<8xf32>, memref<256xf32>, memref<256xf32>) {
  %r = ta.alloc : memref<8xf32>
  %c = ta.alloc : memref<256xf32>
  %o = ta.alloc : memref<256xf32>
  ta.launch @rows(%x, %r) : memref<8x256xf32>, memref<8xf32>
  ta.launch @cols(%x, %c) : memref<8x256xf32>, memref<256xf32>
  ta.launch @other(%y, %o) : memref<256x8xf32>, memref<256xf32>
  func.return %r, %c, %o : memref<8xf32>, memref<256xf32>, memref<256xf32>
}

// CHECK-LABEL: ta.kernel @rows(
// CHECK-LABEL: ta.kernel @cols(
// CHECK-LABEL: ta.kernel @other(
// CHECK:         ta.launch @rows(%x, %r)
// CHECK-NEXT:    ta.launch @cols(%x, %c)
// CHECK-NEXT:    ta.launch @other(%y, %o)

// -----

// A kernel launched twice keeps its kernel: fusing would change the other launch too.
ta.kernel @once(%x: memref<8x256xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @twice(%x: memref<8x256xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @once: a kernel launched more than once}}
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <max> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x256xf32>, %y: memref<8x256xf32>) -> (memref<8xf32>, memref<8xf32>, memref<8xf32>) {
  %a = ta.alloc : memref<8xf32>
  %b = ta.alloc : memref<8xf32>
  %c = ta.alloc : memref<8xf32>
  ta.launch @once(%x, %a) : memref<8x256xf32>, memref<8xf32>
  ta.launch @twice(%x, %b) : memref<8x256xf32>, memref<8xf32>
  ta.launch @twice(%y, %c) : memref<8x256xf32>, memref<8xf32>
  func.return %a, %b, %c : memref<8xf32>, memref<8xf32>, memref<8xf32>
}

// CHECK-LABEL: ta.kernel @once(
// CHECK:         ta.launch @once(%x, %a)
// CHECK-NEXT:    ta.launch @twice(%x, %b)
// CHECK-NEXT:    ta.launch @twice(%y, %c)

// -----

// Two checks over every (i, j) pair of an iota (a causal mask's overflow checks): each
// reads the iota along one dim only, so the bodies are 2048 x 2048 outer products of
// broadcasts, which the tiler's VMEM count leaves out. Fused they asked 32 MiB of a
// v5e's 16, so they stay apart.
ta.kernel @overflows(%n: memref<2048xi32> {role = "in"}, %f: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [2048, 2048] (%z, %i, %j) {
    %a = ta.load %n[affine_map<(d0, d1, d2) -> (d2)>](%z, %i, %j) : memref<2048xi32>
    %b = ta.load %n[affine_map<(d0, d1, d2) -> (d1)>](%z, %i, %j) : memref<2048xi32>
    %d = arith.subi %a, %b : i32
    %m = ta.reduce <max> %d : i32
    ta.store %m, %f[affine_map<(d0) -> (d0)>](%z) : memref<1xi32>
  }
}
ta.kernel @worst(%n: memref<2048xi32> {role = "in"}, %w: memref<1xi32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @overflows: no load varies along every loop dim, so the bodies' values (an outer product of broadcasts) outgrow every block, and the tiler's VMEM count leaves them out}}
  ta.loop [1] reduce [2048, 2048] (%z, %i, %j) {
    %a = ta.load %n[affine_map<(d0, d1, d2) -> (d2)>](%z, %i, %j) : memref<2048xi32>
    %b = ta.load %n[affine_map<(d0, d1, d2) -> (d1)>](%z, %i, %j) : memref<2048xi32>
    %d = arith.addi %a, %b : i32
    %m = ta.reduce <max> %d : i32
    ta.store %m, %w[affine_map<(d0) -> (d0)>](%z) : memref<1xi32>
  }
}
func.func @forward(%n: memref<2048xi32>) -> (memref<1xi32>, memref<1xi32>) {
  %f = ta.alloc : memref<1xi32>
  %w = ta.alloc : memref<1xi32>
  ta.launch @overflows(%n, %f) : memref<2048xi32>, memref<1xi32>
  ta.launch @worst(%n, %w) : memref<2048xi32>, memref<1xi32>
  func.return %f, %w : memref<1xi32>, memref<1xi32>
}

// CHECK-LABEL: ta.kernel @overflows(
// CHECK-LABEL: ta.kernel @worst(
// CHECK:         ta.launch @overflows(%n, %f)
// CHECK-NEXT:    ta.launch @worst(%n, %w)

// -----

// Loops whose innermost dim is a unit dim: every value of their bodies takes a lane
// tile an element. Two such (128, 128, 1) checks fused asked 17.7 MiB of a v5e's 16.
ta.kernel @low(%t: memref<128x128xi32> {role = "in"}, %f: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [128, 128, 1] (%z, %i, %j, %u) {
    %a = ta.load %t[affine_map<(d0, d1, d2, d3) -> (d1, d2)>](%z, %i, %j, %u) : memref<128x128xi32>
    %m = ta.reduce <min> %a : i32
    ta.store %m, %f[affine_map<(d0) -> (d0)>](%z) : memref<1xi32>
  }
}
ta.kernel @high(%t: memref<128x128xi32> {role = "in"}, %w: memref<1xi32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @low: the loops' innermost dim has extent 1}}
  ta.loop [1] reduce [128, 128, 1] (%z, %i, %j, %u) {
    %a = ta.load %t[affine_map<(d0, d1, d2, d3) -> (d1, d2)>](%z, %i, %j, %u) : memref<128x128xi32>
    %m = ta.reduce <max> %a : i32
    ta.store %m, %w[affine_map<(d0) -> (d0)>](%z) : memref<1xi32>
  }
}
func.func @forward(%t: memref<128x128xi32>) -> (memref<1xi32>, memref<1xi32>) {
  %f = ta.alloc : memref<1xi32>
  %w = ta.alloc : memref<1xi32>
  ta.launch @low(%t, %f) : memref<128x128xi32>, memref<1xi32>
  ta.launch @high(%t, %w) : memref<128x128xi32>, memref<1xi32>
  func.return %f, %w : memref<1xi32>, memref<1xi32>
}

// CHECK-LABEL: ta.kernel @low(
// CHECK-LABEL: ta.kernel @high(
// CHECK:         ta.launch @low(%t, %f)
// CHECK-NEXT:    ta.launch @high(%t, %w)

// STATS: fuse-siblings
// STATS: 2 siblings fused

// -----

// Two matrix products whose left factors gather rows of one table by different index
// buffers: a data-dependent index has no place to compare, so the factors are not
// known to be the same blocks, and the pair stays apart.
ta.kernel @p1(%idx: memref<256xi32> {role = "in"}, %e: memref<1024x256xf32> {role = "in"}, %w: memref<256x256xf32> {role = "in"}, %o: memref<256x256xf32> {role = "out"}) {
  ta.loop [256, 256] reduce [256] (%r, %c, %k) {
    %i = ta.load %idx[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<256xi32>
    %ii = arith.index_cast %i : i32 to index
    %a = ta.load %e[affine_map<(d0, d1, d2)[s0] -> (s0, d2)>](%r, %c, %k)[%ii] : memref<1024x256xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %k) : memref<256x256xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<256x256xf32>
  }
}
ta.kernel @p2(%idx: memref<256xi32> {role = "in"}, %e: memref<1024x256xf32> {role = "in"}, %w: memref<256x256xf32> {role = "in"}, %o: memref<256x256xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-siblings: not fused with @p1: a matrix product fuses only with another that reads one of its factors at the same places (x @ w1 beside x @ w2); otherwise the tiler sizes its blocks for it alone}}
  ta.loop [256, 256] reduce [256] (%r, %c, %k) {
    %i = ta.load %idx[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<256xi32>
    %ii = arith.index_cast %i : i32 to index
    %a = ta.load %e[affine_map<(d0, d1, d2)[s0] -> (s0, d2)>](%r, %c, %k)[%ii] : memref<1024x256xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %k) : memref<256x256xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<256x256xf32>
  }
}
func.func @forward(%i1: memref<256xi32>, %i2: memref<256xi32>, %e: memref<1024x256xf32>, %w1: memref<256x256xf32>, %w2: memref<256x256xf32>) -> (memref<256x256xf32>, memref<256x256xf32>) {
  %o1 = ta.alloc : memref<256x256xf32>
  %o2 = ta.alloc : memref<256x256xf32>
  ta.launch @p1(%i1, %e, %w1, %o1) : memref<256xi32>, memref<1024x256xf32>, memref<256x256xf32>, memref<256x256xf32>
  ta.launch @p2(%i2, %e, %w2, %o2) : memref<256xi32>, memref<1024x256xf32>, memref<256x256xf32>, memref<256x256xf32>
  func.return %o1, %o2 : memref<256x256xf32>, memref<256x256xf32>
}

// CHECK-LABEL: ta.kernel @p1(
// CHECK-LABEL: ta.kernel @p2(
// CHECK:         ta.launch @p1(%i1, %e, %w1, %o1)
// CHECK-NEXT:    ta.launch @p2(%i2, %e, %w2, %o2)
