// RUN: pallas-opt %s --split-input-file -p fuse-epilogues | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues,fuse-epilogues | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// bf16 x @ w as the frontend writes it: the product summed in f32 into %t, then cast by
// a second kernel. Fused: one loop, the cast on the sum, %t gone.
ta.kernel @mm(%a: memref<2048xbf16> {role = "in"}, %b: memref<4096xbf16> {role = "in"}, %t: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [128] (%i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2) -> (d0 * 128 + d2)>](%i, %j, %k) : memref<2048xbf16>
    %y = ta.load %b[affine_map<(d0, d1, d2) -> (d2 * 32 + d1 floordiv 4)>](%i, %j, %k) : memref<4096xbf16>
    %xw = arith.extf %x : bf16 to f32
    %yw = arith.extf %y : bf16 to f32
    %p = arith.mulf %xw, %yw : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<2048xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @mm and its reader @cast into @mm_cast}}
ta.kernel @cast(%t: memref<2048xf32> {role = "in"}, %o: memref<2048xbf16> {role = "out"}) {
  ta.loop [16, 128] (%i, %j) {
    %v = ta.load %t[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<2048xf32>
    %c = arith.truncf %v : f32 to bf16
    ta.store %c, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<2048xbf16>
  }
}
func.func @forward(%a: memref<16x128xbf16>, %b: memref<128x32xbf16>) -> memref<16x128xbf16> {
  %af = ta.reshape %a : memref<16x128xbf16> to memref<2048xbf16>
  %bf = ta.reshape %b : memref<128x32xbf16> to memref<4096xbf16>
  %t = ta.alloc : memref<16x128xf32>
  %tf = ta.reshape %t : memref<16x128xf32> to memref<2048xf32>
  %o = ta.alloc : memref<16x128xbf16>
  %of = ta.reshape %o : memref<16x128xbf16> to memref<2048xbf16>
  ta.launch @mm(%af, %bf, %tf) : memref<2048xbf16>, memref<4096xbf16>, memref<2048xf32>
  ta.launch @cast(%tf, %of) : memref<2048xf32>, memref<2048xbf16>
  func.return %o : memref<16x128xbf16>
}

// CHECK-LABEL: ta.kernel @mm_cast(%a: memref<2048xbf16> {role = "in"}, %b: memref<4096xbf16> {role = "in"}, %o: memref<2048xbf16> {role = "out"}) {
// CHECK-NEXT:    ta.loop [16, 128] reduce [128] (%i, %j, %k) {
// CHECK:           %s = ta.reduce <sum> %p : f32
// CHECK-NEXT:      %c = arith.truncf %s : f32 to bf16
// CHECK-NEXT:      ta.store %c, %o
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   ta.kernel @mm(
// CHECK:       func.func @forward
// CHECK-NOT:     ta.alloc : memref<16x128xf32>
// CHECK:         ta.launch @mm_cast(%af, %bf, %of)
// CHECK-NOT:     ta.launch
// CHECK:         func.return %o

// -----

// gelu-like epilogue with a bias: a launch between the two writes a buffer the
// reducing kernel does not read, so the reduction may move to the reader's launch.
ta.kernel @rowsum(%x: memref<8x256xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x256xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @fill(%z: memref<8xf32> {role = "out"}) {
  ta.loop [8] (%i) {
    %one = arith.constant 1.0 : f32
    ta.store %one, %z[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @rowsum and its reader @scale into @rowsum_scale}}
ta.kernel @scale(%t: memref<8xf32> {role = "in"}, %z: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
  ta.loop [8] (%i) {
    %v = ta.load %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %b = ta.load %z[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %a = arith.addf %v, %b : f32
    %m = arith.maximumf %a, %b : f32
    ta.store %m, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x256xf32>) -> memref<8xf32> {
  %t = ta.alloc : memref<8xf32>
  %z = ta.alloc : memref<8xf32>
  %o = ta.alloc : memref<8xf32>
  ta.launch @rowsum(%x, %t) : memref<8x256xf32>, memref<8xf32>
  ta.launch @fill(%z) : memref<8xf32>
  ta.launch @scale(%t, %z, %o) : memref<8xf32>, memref<8xf32>, memref<8xf32>
  func.return %o : memref<8xf32>
}

// CHECK-LABEL: ta.kernel @fill
// CHECK-LABEL: ta.kernel @rowsum_scale(%x: memref<8x256xf32> {role = "in"}, %z: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [8] reduce [256] (%i, %k) {
// CHECK:           %s = ta.reduce <sum> %v : f32
// CHECK-NEXT:      %b = ta.load %z
// CHECK-NEXT:      %a = arith.addf %s, %b : f32
// CHECK:         ta.launch @fill(%z)
// CHECK-NEXT:    ta.launch @rowsum_scale(%x, %z, %o)

// -----

// Not fused: the reader reads the sums transposed (not where each was written).
ta.kernel @colsum(%x: memref<8x8x128xf32> {role = "in"}, %t: memref<8x8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @twice reads the result elsewhere than where it was written}}
  ta.loop [8, 8] reduce [128] (%i, %j, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%i, %j, %k) : memref<8x8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x8xf32>
  }
}
ta.kernel @twice(%t: memref<8x8xf32> {role = "in"}, %o: memref<8x8xf32> {role = "out"}) {
  ta.loop [8, 8] (%i, %j) {
    %v = ta.load %t[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<8x8xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %o[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x8xf32>
  }
}
func.func @forward(%x: memref<8x8x128xf32>) -> memref<8x8xf32> {
  %t = ta.alloc : memref<8x8xf32>
  %o = ta.alloc : memref<8x8xf32>
  ta.launch @colsum(%x, %t) : memref<8x8x128xf32>, memref<8x8xf32>
  ta.launch @twice(%t, %o) : memref<8x8xf32>, memref<8x8xf32>
  func.return %o : memref<8x8xf32>
}

// CHECK-LABEL: ta.kernel @colsum
// CHECK-LABEL: ta.kernel @twice
// CHECK:         ta.launch @colsum(%x, %t)
// CHECK-NEXT:    ta.launch @twice(%t, %o)

// -----

// Not fused: a launch in between writes the reducing kernel's input (the sum must be
// of the old values), and the result is also returned in the next case.
ta.kernel @sum(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @clobber writes an input of @sum in between}}
  ta.loop [8] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @clobber(%x: memref<8x128xf32> {role = "out"}) {
  ta.loop [8, 128] (%i, %j) {
    %z = arith.constant 0.0 : f32
    ta.store %z, %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x128xf32>
  }
}
ta.kernel @neg(%t: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
  ta.loop [8] (%i) {
    %v = ta.load %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %n = arith.negf %v : f32
    ta.store %n, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x128xf32>) -> memref<8xf32> {
  %t = ta.alloc : memref<8xf32>
  %o = ta.alloc : memref<8xf32>
  ta.launch @sum(%x, %t) : memref<8x128xf32>, memref<8xf32>
  ta.launch @clobber(%x) : memref<8x128xf32>
  ta.launch @neg(%t, %o) : memref<8xf32>, memref<8xf32>
  func.return %o : memref<8xf32>
}

// CHECK-LABEL: ta.kernel @sum
// CHECK:         ta.launch @sum(%x, %t)
// CHECK-NEXT:    ta.launch @clobber(%x)
// CHECK-NEXT:    ta.launch @neg(%t, %o)

// -----

// A result @forward also returns (a training graph keeps a product for the backward):
// fused with its reader all the same, the fused kernel storing it as well. What fusing
// saves is the reader's read of it, and a launch.
ta.kernel @sum(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @sum and its reader @neg into @sum_neg, which still stores the result read later}}
ta.kernel @neg(%t: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
  ta.loop [8] (%i) {
    %v = ta.load %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %n = arith.negf %v : f32
    ta.store %n, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x128xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %t = ta.alloc : memref<8xf32>
  %o = ta.alloc : memref<8xf32>
  ta.launch @sum(%x, %t) : memref<8x128xf32>, memref<8xf32>
  ta.launch @neg(%t, %o) : memref<8xf32>, memref<8xf32>
  func.return %t, %o : memref<8xf32>, memref<8xf32>
}

// CHECK-LABEL: ta.kernel @sum_neg(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}, %o: memref<8xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [8] reduce [128] (%i, %k) {
// CHECK-NEXT:      %v = ta.load %x
// CHECK-NEXT:      %s = ta.reduce <sum> %v : f32
// CHECK-NEXT:      ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
// CHECK-NEXT:      %n = arith.negf %s : f32
// CHECK-NEXT:      ta.store %n, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
// CHECK:         %t = ta.alloc : memref<8xf32>
// CHECK-NEXT:    %o = ta.alloc : memref<8xf32>
// CHECK-NEXT:    ta.launch @sum_neg(%x, %t, %o)
// CHECK-NEXT:    func.return %t, %o

// -----

// A product read by two kernels: fused with the first reader, the fused kernel storing
// the product for the second.
ta.kernel @sum(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @sum and its reader @neg into @sum_neg, which still stores the result read later}}
ta.kernel @neg(%t: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
  ta.loop [8] (%i) {
    %v = ta.load %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %n = arith.negf %v : f32
    ta.store %n, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @twice(%t: memref<8xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}) {
  ta.loop [8] (%i) {
    %v = ta.load %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %n = arith.addf %v, %v : f32
    ta.store %n, %o[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x128xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %t = ta.alloc : memref<8xf32>
  %o = ta.alloc : memref<8xf32>
  %p = ta.alloc : memref<8xf32>
  ta.launch @sum(%x, %t) : memref<8x128xf32>, memref<8xf32>
  ta.launch @neg(%t, %o) : memref<8xf32>, memref<8xf32>
  ta.launch @twice(%t, %p) : memref<8xf32>, memref<8xf32>
  func.return %o, %p : memref<8xf32>, memref<8xf32>
}

// CHECK-LABEL: ta.kernel @twice
// CHECK:         ta.launch @sum_neg(%x, %t, %o)
// CHECK-NEXT:    ta.launch @twice(%t, %p)
// CHECK-NEXT:    func.return %o, %p

// -----

// A linear on a flattened 3-D input, then a residual add over the 3-D shape: the
// reader's [2, 16, 64] loop is the product's [32, 64] with its first two dims
// collapsed, so it is fused with its maps rewritten in the collapsed dims.
ta.kernel @linear(%x: memref<4096xf32> {role = "in"}, %w: memref<8192xf32> {role = "in"}, %t: memref<2048xf32> {role = "out"}) {
  ta.loop [32, 64] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 128 + d2)>](%i, %j, %k) : memref<4096xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 64 + d1)>](%i, %j, %k) : memref<8192xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<2048xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @linear and its reader @residual into @linear_residual}}
ta.kernel @residual(%t: memref<2048xf32> {role = "in"}, %r: memref<2x16x64xf32> {role = "in"}, %o: memref<2x16x64xf32> {role = "out"}) {
  ta.loop [2, 16, 64] (%b, %i, %j) {
    %v = ta.load %t[affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2)>](%b, %i, %j) : memref<2048xf32>
    %u = ta.load %r[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %i, %j) : memref<2x16x64xf32>
    %y = arith.addf %v, %u : f32
    ta.store %y, %o[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %i, %j) : memref<2x16x64xf32>
  }
}
func.func @forward(%x: memref<32x128xf32>, %w: memref<128x64xf32>, %r: memref<2x16x64xf32>) -> memref<2x16x64xf32> {
  %xf = ta.reshape %x : memref<32x128xf32> to memref<4096xf32>
  %wf = ta.reshape %w : memref<128x64xf32> to memref<8192xf32>
  %t = ta.alloc : memref<32x64xf32>
  %tf = ta.reshape %t : memref<32x64xf32> to memref<2048xf32>
  %o = ta.alloc : memref<2x16x64xf32>
  ta.launch @linear(%xf, %wf, %tf) : memref<4096xf32>, memref<8192xf32>, memref<2048xf32>
  ta.launch @residual(%tf, %r, %o) : memref<2048xf32>, memref<2x16x64xf32>, memref<2x16x64xf32>
  func.return %o : memref<2x16x64xf32>
}

// CHECK-LABEL: ta.kernel @linear_residual(%x: memref<4096xf32> {role = "in"}, %w: memref<8192xf32> {role = "in"}, %r: memref<2x16x64xf32> {role = "in"}, %o: memref<2x16x64xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [32, 64] reduce [128] (%i, %j, %k) {
// CHECK:           %s = ta.reduce <sum> %p : f32
// CHECK-NEXT:      %u = ta.load %r[affine_map<(d0, d1) -> ((d0 floordiv 16), (d0 mod 16), d1)>](%i, %j) : memref<2x16x64xf32>
// CHECK-NEXT:      %y = arith.addf %s, %u : f32
// CHECK-NEXT:      ta.store %y, %o[affine_map<(d0, d1) -> ((d0 floordiv 16), (d0 mod 16), d1)>](%i, %j) : memref<2x16x64xf32>
// CHECK:         ta.launch @linear_residual(%xf, %wf, %r, %o)

// -----

// Not fused: the reader walks the same 2048 elements as [64, 32], which no run of its
// dims collapses into the product's [32, 64].
ta.kernel @linear(%x: memref<4096xf32> {role = "in"}, %w: memref<8192xf32> {role = "in"}, %t: memref<2048xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @halves loops over [64, 32], which does not group row-major into [32, 64]}}
  ta.loop [32, 64] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 128 + d2)>](%i, %j, %k) : memref<4096xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 64 + d1)>](%i, %j, %k) : memref<8192xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<2048xf32>
  }
}
ta.kernel @halves(%t: memref<2048xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [64, 32] (%i, %j) {
    %v = ta.load %t[affine_map<(d0, d1) -> (d0 * 32 + d1)>](%i, %j) : memref<2048xf32>
    %y = arith.negf %v : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 32 + d1)>](%i, %j) : memref<2048xf32>
  }
}
func.func @forward(%x: memref<32x128xf32>, %w: memref<128x64xf32>) -> memref<64x32xf32> {
  %xf = ta.reshape %x : memref<32x128xf32> to memref<4096xf32>
  %wf = ta.reshape %w : memref<128x64xf32> to memref<8192xf32>
  %t = ta.alloc : memref<32x64xf32>
  %tf = ta.reshape %t : memref<32x64xf32> to memref<2048xf32>
  %o = ta.alloc : memref<64x32xf32>
  %of = ta.reshape %o : memref<64x32xf32> to memref<2048xf32>
  ta.launch @linear(%xf, %wf, %tf) : memref<4096xf32>, memref<8192xf32>, memref<2048xf32>
  ta.launch @halves(%tf, %of) : memref<2048xf32>, memref<2048xf32>
  func.return %o : memref<64x32xf32>
}

// CHECK-LABEL: ta.kernel @linear(
// CHECK-LABEL: ta.kernel @halves(
// CHECK:         ta.launch @linear(%xf, %wf, %tf)
// CHECK-NEXT:    ta.launch @halves(%tf, %of)

// -----

// Not fused: the reader adds the sums into rows picked by an index (an index_add): a
// scatter keeps its kernel, where indirect-store-to-row-dma makes it row DMAs.
ta.kernel @sums(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @scatter has an access with a data-dependent index}}
  ta.loop [8] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @scatter(%t: memref<8xf32> {role = "in"}, %idx: memref<8xi32> {role = "in"}, %o: memref<16xf32> {role = "inout"}) {
  ta.loop [8] (%i) {
    %v = ta.load %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    %iv = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<8xi32>
    %r = arith.index_cast %iv : i32 to index
    ta.store %v, %o[affine_map<(d0)[s0] -> (s0)>](%i)[%r] accumulate <sum> : memref<16xf32>
  }
}
func.func @forward(%x: memref<8x128xf32>, %idx: memref<8xi32>, %o: memref<16xf32>) -> memref<16xf32> {
  %t = ta.alloc : memref<8xf32>
  ta.launch @sums(%x, %t) : memref<8x128xf32>, memref<8xf32>
  ta.launch @scatter(%t, %idx, %o) : memref<8xf32>, memref<8xi32>, memref<16xf32>
  func.return %o : memref<16xf32>
}

// CHECK-LABEL: ta.kernel @sums(
// CHECK:         ta.launch @sums(%x, %t)
// CHECK-NEXT:    ta.launch @scatter(%t, %idx, %o)

// STATS: fuse-epilogues
// STATS: 5 epilogues fused
