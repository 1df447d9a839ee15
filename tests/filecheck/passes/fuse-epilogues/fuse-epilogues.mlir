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

ta.kernel @sum(%x: memref<8x128xf32> {role = "in"}, %t: memref<8xf32> {role = "out"}) {
  // expected-remark@+1 {{fuse-epilogues: not fused: the result is also used by 'func.return'}}
  ta.loop [8] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x128xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %t[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
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

// CHECK-LABEL: ta.kernel @sum
// CHECK:         ta.launch @sum(%x, %t)
// CHECK-NEXT:    ta.launch @neg(%t, %o)

// STATS: fuse-epilogues
// STATS: 2 epilogues fused
