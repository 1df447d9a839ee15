// RUN: pallas-opt %s --split-input-file -p stride-to-reshape | filecheck %s
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape --remarks --verify-diagnostics -o /dev/null
// RUN: pallas-opt %s --split-input-file --verify-semantics -p stride-to-reshape
// RUN: pallas-opt %s --split-input-file --verify-semantics -p stride-to-reshape,canonicalize-permutation,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A diagonal walk of flat storage: the innermost loop dim steps one row of w elements
// and one element more (a stride of w + 1), and every other walk steps whole rows. No
// unit-step view has such a walk; the (..., h, w) view does, with the loop dim on both
// of its last dims (the tiler reads the diagonal of each (t, t) block).

// out = x.diagonal() for x: f32[256, 256] (a stride of 257)
// CHECK-LABEL: ta.kernel @diagonal
// CHECK:         %x_256x256 = ta.reshape %x : memref<65536xf32> to memref<256x256xf32>
// CHECK:         ta.load %x_256x256[affine_map<(d0) -> (d0, d0)>](%i) : memref<256x256xf32>
ta.kernel @diagonal(%x: memref<65536xf32> {role = "in"}, %out: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<256x256xf32> at [%i, %i]}}
    %v = ta.load %x[affine_map<(d0) -> (d0 * 257)>](%i) : memref<65536xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
func.func @forward(%x: memref<256x256xf32>) -> memref<256xf32> {
  %x_flat = ta.reshape %x : memref<256x256xf32> to memref<65536xf32>
  %out = ta.alloc : memref<256xf32>
  ta.launch @diagonal(%x_flat, %out) : memref<65536xf32>, memref<256xf32>
  func.return %out : memref<256xf32>
}

// -----

// out = x.diagonal(2) for x: f32[64, 300] (starts at column 2) and x.diagonal(-3) for
// x: f32[300, 64] (starts at row 3)
// CHECK-LABEL: ta.kernel @off_diagonals
// CHECK:         ta.load %x_64x300[affine_map<(d0) -> (d0, (d0 + 2))>](%i) : memref<64x300xf32>
// CHECK:         ta.load %y_300x64[affine_map<(d0) -> ((d0 + 3), d0)>](%i) : memref<300x64xf32>
ta.kernel @off_diagonals(%x: memref<19200xf32> {role = "in"}, %y: memref<19200xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<64x300xf32> at [%i, %i + 2]}}
    %v = ta.load %x[affine_map<(d0) -> (d0 * 301 + 2)>](%i) : memref<19200xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %y: memref<300x64xf32> at [%i + 3, %i]}}
    %w = ta.load %y[affine_map<(d0) -> (d0 * 65 + 192)>](%i) : memref<19200xf32>
    %s = arith.addf %v, %w : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x300xf32>, %y: memref<300x64xf32>) -> memref<64xf32> {
  %x_flat = ta.reshape %x : memref<64x300xf32> to memref<19200xf32>
  %y_flat = ta.reshape %y : memref<300x64xf32> to memref<19200xf32>
  %out = ta.alloc : memref<64xf32>
  ta.launch @off_diagonals(%x_flat, %y_flat, %out) : memref<19200xf32>, memref<19200xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}

// -----

// out = x.diagonal(dim1=-2, dim2=-1) for x: f32[4, 128, 128]: a batch of diagonals
// CHECK-LABEL: ta.kernel @batched
// CHECK:         ta.load %x_4x128x128[affine_map<(d0, d1) -> (d0, d1, d1)>](%b, %i) : memref<4x128x128xf32>
ta.kernel @batched(%x: memref<65536xf32> {role = "in"}, %out: memref<512xf32> {role = "out"}) {
  ta.loop [4, 128] (%b, %i) {
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<4x128x128xf32> at [%b, %i, %i]}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 16384 + d1 * 129)>](%b, %i) : memref<65536xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<4x128xf32> at [%b, %i]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%b, %i) : memref<512xf32>
  }
}
func.func @forward(%x: memref<4x128x128xf32>) -> memref<512xf32> {
  %x_flat = ta.reshape %x : memref<4x128x128xf32> to memref<65536xf32>
  %out = ta.alloc : memref<512xf32>
  ta.launch @batched(%x_flat, %out) : memref<65536xf32>, memref<512xf32>
  func.return %out : memref<512xf32>
}

// -----

// x[::3] for x: f32[100] is no diagonal: a row of 2 elements cannot hold a walk of 34
// (the remark gives the unit-step view's reason).
// CHECK-LABEL: ta.kernel @not_a_diagonal
// CHECK:         ta.load %x[affine_map<(d0) -> ((d0 * 3))>](%i) : memref<100xf32>
ta.kernel @not_a_diagonal(%x: memref<100xf32> {role = "in"}, %out: memref<34xf32> {role = "out"}) {
  ta.loop [34] (%i) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: extent 100 is not divisible by step 3}}
    %v = ta.load %x[affine_map<(d0) -> (d0 * 3)>](%i) : memref<100xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<34xf32>
  }
}
func.func @forward(%x: memref<100xf32>) -> memref<34xf32> {
  %out = ta.alloc : memref<34xf32>
  ta.launch @not_a_diagonal(%x, %out) : memref<100xf32>, memref<34xf32>
  func.return %out : memref<34xf32>
}

