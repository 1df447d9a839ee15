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
