// RUN: pallas-opt %s --split-input-file -p fuse-epilogues | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues --remarks --verify-diagnostics

// An rms norm's statistics read by two matrix products (a llama layer's q and k
// projections): each product computes them again from the rows it reads anyway, and
// the statistics kernel stays for the later reader until the last one fuses it away.
// Neither product reads the statistics from HBM any more.
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %v2 = arith.mulf %v, %v : f32
    %s = ta.reduce <sum> %v2 : f32
    ta.store %s, %ss[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @stats and its reader @q into @stats_q, which computes the result again; @stats stays for the later readers}}
ta.kernel @q(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %n = arith.constant 3.906250e-03 : f32
    %ms = arith.mulf %s, %n : f32
    %eps = arith.constant 1.000000e-06 : f32
    %me = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %me : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @stats and its reader @k into @stats_k}}
ta.kernel @k(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<16384xf32> {role = "in"}, %o: memref<1024xf32> {role = "out"}) {
  ta.loop [16, 64] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %n = arith.constant 3.906250e-03 : f32
    %ms = arith.mulf %s, %n : f32
    %eps = arith.constant 1.000000e-06 : f32
    %me = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %me : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 64 + d1)>](%r, %c, %k) : memref<16384xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%r, %c) : memref<1024xf32>
  }
}
func.func @forward(%x: memref<4096xf32>, %wq: memref<32768xf32>, %wk: memref<16384xf32>) -> (memref<2048xf32>, memref<1024xf32>) {
  %ss = ta.alloc : memref<16xf32>
  %q = ta.alloc : memref<2048xf32>
  %k = ta.alloc : memref<1024xf32>
  ta.launch @stats(%x, %ss) : memref<4096xf32>, memref<16xf32>
  ta.launch @q(%x, %ss, %wq, %q) : memref<4096xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  ta.launch @k(%x, %ss, %wk, %k) : memref<4096xf32>, memref<16xf32>, memref<16384xf32>, memref<1024xf32>
  func.return %q, %k : memref<2048xf32>, memref<1024xf32>
}

// CHECK-NOT:     ta.kernel @stats(
// CHECK-LABEL:   ta.kernel @stats_q(%x: memref<4096xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"})
// CHECK-NEXT:      ta.loop [16, 128] reduce [256] (%r, %c, %k) {
// CHECK-NEXT:        %v = ta.load %x
// CHECK-NEXT:        %v2 = arith.mulf %v, %v : f32
// CHECK-NEXT:        %s = ta.reduce <sum> %v2 : f32
// CHECK-NOT:         ta.load %x
// CHECK:             %y = ta.reduce <sum> %p : f32
// CHECK-LABEL:   ta.kernel @stats_k(%x: memref<4096xf32> {role = "in"}, %w: memref<16384xf32> {role = "in"}, %o: memref<1024xf32> {role = "out"})
// CHECK:         func.func @forward
// CHECK-NOT:       ta.alloc : memref<16xf32>
// CHECK:           ta.launch @stats_q(%x, %wq, %q)
// CHECK-NEXT:      ta.launch @stats_k(%x, %wk, %k)
// CHECK-NEXT:      func.return

// -----

// A later reader that does not fuse (element-wise over more points): the first reader
// fuses, computing the statistics again, and the statistics kernel stays for the
// second. The statistics are stored through a view of their buffer, as
// stride-to-reshape leaves them: their place is the view's index taken row-major, and
// the reducing body's load of x moves to the reader's view of x, so the two are one
// load.
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "out"}) {
  %x3 = ta.reshape %x : memref<4096xf32> to memref<2x8x256xf32>
  %ss2 = ta.reshape %ss : memref<16xf32> to memref<2x8xf32>
  // expected-remark@+1 {{fuse-epilogues: not fused: @scale loops over [16, 128], which does not group row-major into [16]}}
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x3[affine_map<(d0, d1) -> (d0 floordiv 8, d0 mod 8, d1)>](%r, %k) : memref<2x8x256xf32>
    %v2 = arith.mulf %v, %v : f32
    %s = ta.reduce <sum> %v2 : f32
    ta.store %s, %ss2[affine_map<(d0) -> (d0 floordiv 8, d0 mod 8)>](%r) : memref<2x8xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @stats and its reader @q into @stats_q, which computes the result again; @stats stays for the later readers}}
ta.kernel @q(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  %x2 = ta.reshape %x : memref<4096xf32> to memref<16x256xf32>
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %x2[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %k) : memref<16x256xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %rs = math.rsqrt %s : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
ta.kernel @scale(%ss: memref<16xf32> {role = "in"}, %g: memref<16x128xf32> {role = "in"}, %o: memref<16x128xf32> {role = "out"}) {
  ta.loop [16, 128] (%r, %c) {
    %s = ta.load %ss[affine_map<(d0, d1) -> (d0)>](%r, %c) : memref<16xf32>
    %v = ta.load %g[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<16x128xf32>
    %y = arith.mulf %s, %v : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<16x128xf32>
  }
}
func.func @forward(%x: memref<4096xf32>, %wq: memref<32768xf32>, %g: memref<16x128xf32>) -> (memref<2048xf32>, memref<16x128xf32>) {
  %ss = ta.alloc : memref<16xf32>
  %q = ta.alloc : memref<2048xf32>
  %o = ta.alloc : memref<16x128xf32>
  ta.launch @stats(%x, %ss) : memref<4096xf32>, memref<16xf32>
  ta.launch @q(%x, %ss, %wq, %q) : memref<4096xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  ta.launch @scale(%ss, %g, %o) : memref<16xf32>, memref<16x128xf32>, memref<16x128xf32>
  func.return %q, %o : memref<2048xf32>, memref<16x128xf32>
}

// CHECK-LABEL:   ta.kernel @stats(
// CHECK-LABEL:   ta.kernel @stats_q(
// CHECK-NEXT:      %x2 = ta.reshape %x : memref<4096xf32> to memref<16x256xf32>
// CHECK-NEXT:      ta.loop [16, 128] reduce [256] (%r, %c, %k) {
// CHECK-NEXT:        %v = ta.load %x2[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %k) : memref<16x256xf32>
// CHECK-NEXT:        %v2 = arith.mulf %v, %v : f32
// CHECK-NOT:         ta.load %x
// CHECK:             %y = ta.reduce <sum> %p : f32
// CHECK:           ta.launch @stats(%x, %ss)
// CHECK-NEXT:      ta.launch @stats_q(%x, %wq, %q)
// CHECK-NEXT:      ta.launch @scale(%ss, %g, %o)

// -----

// A first reader that does not read every input of the statistics kernel (its rows
// come from another buffer): computing them again there would read x once more, so
// the pair stays apart while a later reader reads them.
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @q loops over more points than the reducing loop, the result is read again after it, and it does not read every input of @stats (to compute the result again at no more traffic)}}
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %v2 = arith.mulf %v, %v : f32
    %s = ta.reduce <sum> %v2 : f32
    ta.store %s, %ss[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @q(%y: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %y[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %xh = arith.mulf %v, %s : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %xh, %wk : f32
    %t = ta.reduce <sum> %p : f32
    ta.store %t, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
func.func @forward(%x: memref<4096xf32>, %y: memref<4096xf32>, %wq: memref<32768xf32>) -> (memref<2048xf32>, memref<16xf32>) {
  %ss = ta.alloc : memref<16xf32>
  %q = ta.alloc : memref<2048xf32>
  ta.launch @stats(%x, %ss) : memref<4096xf32>, memref<16xf32>
  ta.launch @q(%y, %ss, %wq, %q) : memref<4096xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  func.return %q, %ss : memref<2048xf32>, memref<16xf32>
}

// CHECK-LABEL:   ta.kernel @stats(
// CHECK-LABEL:   ta.kernel @q(
// CHECK:           ta.launch @stats(%x, %ss)
// CHECK-NEXT:      ta.launch @q(%y, %ss, %wq, %q)

// -----

// A launch between the two readers writes the statistics' input (x negated in place):
// the first reader fuses, computing them again from x as it was, and the statistics
// kernel stays where it was, for the second reader, which it cannot move down to.
ta.kernel @copy(%x0: memref<4096xf32> {role = "in"}, %x: memref<4096xf32> {role = "out"}) {
  ta.loop [4096] (%i) {
    %v = ta.load %x0[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    ta.store %v, %x[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
  }
}
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @neg writes an input of @stats in between}}
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %v2 = arith.mulf %v, %v : f32
    %s = ta.reduce <sum> %v2 : f32
    ta.store %s, %ss[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @stats and its reader @q into @stats_q, which computes the result again; @stats stays for the later readers}}
ta.kernel @q(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %rs = math.rsqrt %s : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
ta.kernel @neg(%x: memref<4096xf32> {role = "inout"}) {
  ta.loop [4096] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    %n = arith.negf %v : f32
    ta.store %n, %x[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
  }
}
ta.kernel @k(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %rs = math.rsqrt %s : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
func.func @forward(%x0: memref<4096xf32>, %wq: memref<32768xf32>, %wk: memref<32768xf32>) -> (memref<2048xf32>, memref<2048xf32>) {
  %x = ta.alloc : memref<4096xf32>
  %ss = ta.alloc : memref<16xf32>
  %q = ta.alloc : memref<2048xf32>
  %k = ta.alloc : memref<2048xf32>
  ta.launch @copy(%x0, %x) : memref<4096xf32>, memref<4096xf32>
  ta.launch @stats(%x, %ss) : memref<4096xf32>, memref<16xf32>
  ta.launch @q(%x, %ss, %wq, %q) : memref<4096xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  ta.launch @neg(%x) : memref<4096xf32>
  ta.launch @k(%x, %ss, %wk, %k) : memref<4096xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  func.return %q, %k : memref<2048xf32>, memref<2048xf32>
}

// CHECK-LABEL:   ta.kernel @stats(
// CHECK-LABEL:   ta.kernel @stats_q(
// CHECK-LABEL:   ta.kernel @k(
// CHECK:           ta.launch @copy(%x0, %x)
// CHECK-NEXT:      ta.launch @stats(%x, %ss)
// CHECK-NEXT:      ta.launch @stats_q(%x, %wq, %q)
// CHECK-NEXT:      ta.launch @neg(%x)
// CHECK-NEXT:      ta.launch @k(%x, %ss, %wk, %k)

// -----

// The first reader writes (not reads) an input of the statistics kernel, y: computing
// the statistics again in it would read y once more, so the pair stays apart (its
// outputs are not reads).
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %y: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @q loops over more points than the reducing loop, the result is read again after it, and it does not read every input of @stats (to compute the result again at no more traffic)}}
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %u = ta.load %y[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %h = arith.addf %v, %u : f32
    %v2 = arith.mulf %h, %h : f32
    %s = ta.reduce <sum> %v2 : f32
    ta.store %s, %ss[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @q(%x: memref<4096xf32> {role = "in"}, %ss: memref<16xf32> {role = "in"}, %w: memref<65536xf32> {role = "in"}, %o: memref<4096xf32> {role = "out"}) {
  ta.loop [16, 256] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %one = arith.constant 1.0 : f32
    %s1 = arith.addf %s, %one : f32
    %rs = math.rsqrt %s1 : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 256 + d1)>](%r, %c, %k) : memref<65536xf32>
    %p = arith.mulf %xh, %wk : f32
    %t = ta.reduce <sum> %p : f32
    ta.store %t, %o[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %c) : memref<4096xf32>
  }
}
ta.kernel @scale(%ss: memref<16xf32> {role = "in"}, %o: memref<16xf32> {role = "out"}) {
  ta.loop [16] (%r) {
    %s = ta.load %ss[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
    %y = arith.mulf %s, %s : f32
    ta.store %y, %o[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @init(%x: memref<4096xf32> {role = "in"}, %y: memref<4096xf32> {role = "out"}) {
  ta.loop [4096] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    %t = arith.mulf %v, %v : f32
    ta.store %t, %y[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
  }
}
func.func @forward(%x: memref<4096xf32>, %w: memref<65536xf32>) -> (memref<4096xf32>, memref<16xf32>) {
  %y = ta.alloc : memref<4096xf32>
  %ss = ta.alloc : memref<16xf32>
  %o = ta.alloc : memref<16xf32>
  ta.launch @init(%x, %y) : memref<4096xf32>, memref<4096xf32>
  ta.launch @stats(%x, %y, %ss) : memref<4096xf32>, memref<4096xf32>, memref<16xf32>
  ta.launch @q(%x, %ss, %w, %y) : memref<4096xf32>, memref<16xf32>, memref<65536xf32>, memref<4096xf32>
  ta.launch @scale(%ss, %o) : memref<16xf32>, memref<16xf32>
  func.return %y, %o : memref<4096xf32>, memref<16xf32>
}

// CHECK-LABEL:   ta.kernel @stats(
// CHECK-LABEL:   ta.kernel @q(
// CHECK:           ta.launch @stats(%x, %y, %ss)
// CHECK-NEXT:      ta.launch @q(%x, %ss, %w, %y)
