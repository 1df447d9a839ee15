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
// the product for the second; then that kernel, which still reduces, fuses with the
// second reader, and the product is stored no more.
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
// expected-remark@+1 {{fuse-epilogues: fused @sum_neg and its reader @twice into @sum_neg_twice}}
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

// CHECK-LABEL: ta.kernel @sum_neg_twice(%x: memref<8x128xf32> {role = "in"}, %o: memref<8xf32> {role = "out"}, %o_1: memref<8xf32> {role = "out"})
// CHECK-NEXT:    ta.loop [8] reduce [128] (%i, %k) {
// CHECK-NEXT:      %v = ta.load %x
// CHECK-NEXT:      %s = ta.reduce <sum> %v : f32
// CHECK-NEXT:      %n = arith.negf %s : f32
// CHECK-NEXT:      ta.store %n, %o
// CHECK-NEXT:      %n_1 = arith.addf %s, %s : f32
// CHECK-NEXT:      ta.store %n_1, %o_1
// CHECK:         ta.launch @sum_neg_twice(%x, %o, %p)
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

// -----

// A mean over the labels that are not ignored (cross-entropy's): one kernel counts
// them and flags a label out of range, the next sums the masked losses and divides by
// the count. The reader reduces over the same points, so the count is at hand at every
// point of one loop: fused, with the flag still stored (@forward returns it) and the
// count gone. The count's store over [1] and its load at 0 over [1, 64] are one place.
ta.kernel @count(%y: memref<64xi32> {role = "in"}, %n: memref<1xi32> {role = "out"}, %bad: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [64] (%i, %k) {
    %v = ta.load %y[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<64xi32>
    %ignore = arith.constant -100 : i32
    %kept = arith.cmpi ne, %v, %ignore : i32
    %one = arith.extui %kept : i1 to i32
    %c = ta.reduce <sum> %one : i32
    ta.store %c, %n[affine_map<(d0) -> (d0)>](%i) : memref<1xi32>
    %top = arith.constant 32 : i32
    %over = arith.cmpi sge, %v, %top : i32
    %flag = arith.extui %over : i1 to i32
    %f = ta.reduce <max> %flag : i32
    ta.store %f, %bad[affine_map<(d0) -> (d0)>](%i) : memref<1xi32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @count and its reader @mean into @count_mean}}
ta.kernel @mean(%y: memref<64xi32> {role = "in"}, %l: memref<64xf32> {role = "in"}, %n: memref<1xi32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64] (%i, %k) {
    %v = ta.load %y[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<64xi32>
    %ignore = arith.constant -100 : i32
    %kept = arith.cmpi ne, %v, %ignore : i32
    %x = ta.load %l[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<64xf32>
    %zero = arith.constant 0.0 : f32
    %m = arith.select %kept, %x, %zero : f32
    %s = ta.reduce <sum> %m : f32
    %c = ta.load %n[affine_map<(d0, d1) -> (0)>](%i, %k) : memref<1xi32>
    %cf = arith.sitofp %c : i32 to f32
    %r = arith.divf %s, %cf : f32
    ta.store %r, %o[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%y: memref<64xi32>, %l: memref<64xf32>) -> (memref<1xf32>, memref<1xi32>) {
  %n = ta.alloc : memref<1xi32>
  %bad = ta.alloc : memref<1xi32>
  %o = ta.alloc : memref<1xf32>
  ta.launch @count(%y, %n, %bad) : memref<64xi32>, memref<1xi32>, memref<1xi32>
  ta.launch @mean(%y, %l, %n, %o) : memref<64xi32>, memref<64xf32>, memref<1xi32>, memref<1xf32>
  func.return %o, %bad : memref<1xf32>, memref<1xi32>
}

// CHECK-LABEL: ta.kernel @count_mean(%y: memref<64xi32> {role = "in"}, %bad: memref<1xi32> {role = "out"}, %l: memref<64xf32> {role = "in"}, %o: memref<1xf32> {role = "out"})
// CHECK:           %c = ta.reduce <sum> %one : i32
// CHECK-NOT:       ta.store %c
// CHECK:           %f = ta.reduce <max> %flag : i32
// CHECK-NEXT:      ta.store %f, %bad
// CHECK:           %s = ta.reduce <sum> %m : f32
// CHECK-NEXT:      %cf = arith.sitofp %c : i32 to f32
// CHECK-NEXT:      %r = arith.divf %s, %cf : f32
// CHECK-NEXT:      ta.store %r, %o
// CHECK:         %bad = ta.alloc
// CHECK-NEXT:    %o = ta.alloc
// CHECK-NEXT:    ta.launch @count_mean(%y, %bad, %l, %o)

// -----

// Not fused in the first run: the reader reduces over other points (a sum over the rows
// of row sums), which the second run nests (`nested-reductions.mlir`).
ta.kernel @rows(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @total reduces the results over the points they were written at, which the run after raise-attention fuses}}
  ta.loop [8] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
ta.kernel @total(%t: memref<8xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [8] (%i, %k) {
    %v = ta.load %t[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<8xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %o[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%x: memref<8x128xf32>) -> memref<1xf32> {
  %t = ta.alloc : memref<8xf32>
  %o = ta.alloc : memref<1xf32>
  ta.launch @rows(%x, %t) : memref<8x128xf32>, memref<8xf32>
  ta.launch @total(%t, %o) : memref<8xf32>, memref<1xf32>
  func.return %o : memref<1xf32>
}

// CHECK-LABEL: ta.kernel @rows(
// CHECK-LABEL: ta.kernel @total(
// CHECK:         ta.launch @rows(%x, %t)
// CHECK-NEXT:    ta.launch @total(%t, %o)

// STATS: fuse-epilogues
// STATS: 8 epilogues fused

// -----

// A layer norm before a matrix product (a GPT block's first, 256 wide): the statistics
// kernel loops over the rows, the product over rows and columns, and both reduce over
// the 256 features. The product reads the statistics at its row, so the fused loop is
// the product's, which computes them again for each of its columns (in the tile, once
// per block of columns, as an (m, 1) value beside the dot): the reduction is shorter
// than two k parts, which the tiler would never split.
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %mean: memref<16xf32> {role = "out"}, %var: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %s = ta.reduce <sum> %v : f32
    %n = arith.constant 3.906250e-03 : f32
    %mu = arith.mulf %s, %n : f32
    %d = arith.subf %v, %mu : f32
    %d2 = arith.mulf %d, %d : f32
    %ss = ta.reduce <sum> %d2 : f32
    ta.store %s, %mean[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
    ta.store %ss, %var[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
// expected-remark@+1 {{fuse-epilogues: fused @stats and its reader @norm_linear into @stats_norm_linear}}
ta.kernel @norm_linear(%x: memref<4096xf32> {role = "in"}, %mean: memref<16xf32> {role = "in"}, %var: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> ((d0 * 256 + d2) floordiv 256 * 256 + (d0 * 256 + d2) mod 256)>](%r, %c, %k) : memref<4096xf32>
    %s = ta.load %mean[affine_map<(d0, d1, d2) -> ((d0 * 256 + d2) floordiv 256)>](%r, %c, %k) : memref<16xf32>
    %n = arith.constant 3.906250e-03 : f32
    %mu = arith.mulf %s, %n : f32
    %d = arith.subf %v, %mu : f32
    %ss = ta.load %var[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %vr = arith.mulf %ss, %n : f32
    %eps = arith.constant 1.000000e-05 : f32
    %ve = arith.addf %vr, %eps : f32
    %rs = math.rsqrt %ve : f32
    %xh = arith.mulf %d, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
func.func @forward(%x: memref<16x256xf32>, %w: memref<256x128xf32>) -> memref<16x128xf32> {
  %xf = ta.reshape %x : memref<16x256xf32> to memref<4096xf32>
  %wf = ta.reshape %w : memref<256x128xf32> to memref<32768xf32>
  %mean = ta.alloc : memref<16xf32>
  %var = ta.alloc : memref<16xf32>
  %o = ta.alloc : memref<16x128xf32>
  %of = ta.reshape %o : memref<16x128xf32> to memref<2048xf32>
  ta.launch @stats(%xf, %mean, %var) : memref<4096xf32>, memref<16xf32>, memref<16xf32>
  ta.launch @norm_linear(%xf, %mean, %var, %wf, %of) : memref<4096xf32>, memref<16xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  func.return %o : memref<16x128xf32>
}

// The statistics' and the product's loads of %x are one (their maps agree once
// simplified with the loop's ranges).
// CHECK-LABEL: ta.kernel @stats_norm_linear(%x: memref<4096xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"})
// CHECK-NEXT:    ta.loop [16, 128] reduce [256] (%r, %c, %k) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1, d2) -> (((d0 * 256) + d2))>](%r, %c, %k) : memref<4096xf32>
// CHECK-NEXT:      %s = ta.reduce <sum> %v : f32
// CHECK:           %ss = ta.reduce <sum> %d2 : f32
// CHECK-NOT:       ta.load %x
// CHECK:           %y = ta.reduce <sum> %p : f32
// CHECK-NEXT:      ta.store %y, %o
// CHECK:         ta.launch @stats_norm_linear(%xf, %wf, %of)

// -----

// Not fused: the same over 1024 features. The product's contraction is long enough
// for the tiler to split into k parts, which a prologue that needs whole rows would
// forbid.
ta.kernel @stats(%x: memref<16384xf32> {role = "in"}, %mean: memref<16xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @centred_linear reduces values it computes from the result: fused, its reduction could not be split}}
  ta.loop [16] reduce [1024] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 1024 + d1)>](%r, %k) : memref<16384xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %mean[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @centred_linear(%x: memref<16384xf32> {role = "in"}, %mean: memref<16xf32> {role = "in"}, %w: memref<131072xf32> {role = "in"}, %o: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [1024] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 1024 + d2)>](%r, %c, %k) : memref<16384xf32>
    %s = ta.load %mean[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %d = arith.subf %v, %s : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<131072xf32>
    %p = arith.mulf %d, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
func.func @forward(%x: memref<16x1024xf32>, %w: memref<1024x128xf32>) -> memref<16x128xf32> {
  %xf = ta.reshape %x : memref<16x1024xf32> to memref<16384xf32>
  %wf = ta.reshape %w : memref<1024x128xf32> to memref<131072xf32>
  %mean = ta.alloc : memref<16xf32>
  %o = ta.alloc : memref<16x128xf32>
  %of = ta.reshape %o : memref<16x128xf32> to memref<2048xf32>
  ta.launch @stats(%xf, %mean) : memref<16384xf32>, memref<16xf32>
  ta.launch @centred_linear(%xf, %mean, %wf, %of) : memref<16384xf32>, memref<16xf32>, memref<131072xf32>, memref<2048xf32>
  func.return %o : memref<16x128xf32>
}

// CHECK-LABEL: ta.kernel @stats(
// CHECK-LABEL: ta.kernel @centred_linear(
// CHECK:         ta.launch @stats(%xf, %mean)
// CHECK-NEXT:    ta.launch @centred_linear(%xf, %mean, %wf, %of)

// -----

// Not fused: addbmm's batched product summed over its batch. Both reduce over 5
// points, but the sum reads the products along its reduction (one batch a point), so
// the products' own reduction cannot be merged with it; nested under the sum, the
// product would not be an MXU dot.
ta.kernel @bmm(%a: memref<125xf32> {role = "in"}, %b: memref<250xf32> {role = "in"}, %t: memref<250xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @batch_sum reduces the results over the points they were written at, and a matrix product is among the reductions}}
  ta.loop [5, 5, 10] reduce [5] (%n, %i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2, d3) -> (d0 * 25 + d1 * 5 + d3)>](%n, %i, %j, %k) : memref<125xf32>
    %y = ta.load %b[affine_map<(d0, d1, d2, d3) -> (d0 * 50 + d3 * 10 + d2)>](%n, %i, %j, %k) : memref<250xf32>
    %p = arith.mulf %x, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1, d2) -> (d0 * 50 + d1 * 10 + d2)>](%n, %i, %j) : memref<250xf32>
  }
}
ta.kernel @batch_sum(%t: memref<250xf32> {role = "in"}, %o: memref<50xf32> {role = "out"}) {
  ta.loop [5, 10] reduce [5] (%i, %j, %n) {
    %v = ta.load %t[affine_map<(d0, d1, d2) -> (d2 * 50 + d0 * 10 + d1)>](%i, %j, %n) : memref<250xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0 * 10 + d1)>](%i, %j) : memref<50xf32>
  }
}
func.func @forward(%a: memref<125xf32>, %b: memref<250xf32>) -> memref<50xf32> {
  %t = ta.alloc : memref<250xf32>
  %o = ta.alloc : memref<50xf32>
  ta.launch @bmm(%a, %b, %t) : memref<125xf32>, memref<250xf32>, memref<250xf32>
  ta.launch @batch_sum(%t, %o) : memref<250xf32>, memref<50xf32>
  func.return %o : memref<50xf32>
}

// CHECK-LABEL: ta.kernel @bmm(
// CHECK-LABEL: ta.kernel @batch_sum(
// CHECK:         ta.launch @bmm(%a, %b, %t)
// CHECK-NEXT:    ta.launch @batch_sum(%t, %o)

// -----

// Not fused: the reader reduces over as many points, split otherwise between parallel
// and reduction dims ([1] reduce [1, 1] against [1, 1] reduce [1]; multilabel_margin_loss
// of a 0-dim input): it is a reader over other points, not the reducing loop's.
ta.kernel @count(%y: memref<1xi32> {role = "in"}, %t: memref<1xi32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: @total reduces over [1, 1], not the [1] of the reducing loop}}
  ta.loop [1, 1] reduce [1] (%i, %j, %k) {
    %v = ta.load %y[affine_map<(d0, d1, d2) -> (d2)>](%i, %j, %k) : memref<1xi32>
    %s = ta.reduce <sum> %v : i32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 + d1)>](%i, %j) : memref<1xi32>
  }
}
ta.kernel @total(%t: memref<1xi32> {role = "in"}, %x: memref<1xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [1, 1] (%i, %a, %b) {
    %c = ta.load %t[affine_map<(d0, d1, d2) -> (d0)>](%i, %a, %b) : memref<1xi32>
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1 + d2)>](%i, %a, %b) : memref<1xf32>
    %cf = arith.sitofp %c : i32 to f32
    %m = arith.mulf %v, %cf : f32
    %s = ta.reduce <sum> %m : f32
    ta.store %s, %o[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%y: memref<1xi32>, %x: memref<1xf32>) -> memref<1xf32> {
  %t = ta.alloc : memref<1xi32>
  %o = ta.alloc : memref<1xf32>
  ta.launch @count(%y, %t) : memref<1xi32>, memref<1xi32>
  ta.launch @total(%t, %x, %o) : memref<1xi32>, memref<1xf32>, memref<1xf32>
  func.return %o : memref<1xf32>
}

// CHECK-LABEL: ta.kernel @count(
// CHECK-LABEL: ta.kernel @total(
// CHECK:         ta.launch @count(%y, %t)
// CHECK-NEXT:    ta.launch @total(%t, %x, %o)
