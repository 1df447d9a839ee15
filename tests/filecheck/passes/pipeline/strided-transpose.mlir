// RUN: pallas-opt %s --split-input-file -p stride-to-reshape,canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape,canonicalize-permutation,stride-to-reshape,canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p stride-to-reshape,canonicalize-permutation
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape,canonicalize-permutation --remarks --verify-diagnostics

// The two ta passes in pipeline order on inputs that need both: stride-to-reshape makes
// the linear strided accesses N-D (permuted ones included), canonicalize-permutation
// takes what it leaves (collapsed loop dims, seen as floordiv/mod) and does not touch
// what is already a projected permutation. The remarks say which pass did what.

// out = x.t()[::2] for x: f32[256, 128]  (out[a, b] = x[b, 2a]: permutation + stride)
// stride-to-reshape: x's 128 columns split (64, 2), read at (b, a, 0); nothing left
// for canonicalize-permutation.
// CHECK-LABEL: ta.kernel @strided_transpose
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<32768xf32> to memref<256x64x2xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    ta.loop [64, 256] (%a, %b) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0, 0)>](%a, %b) : memref<256x64x2xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%a, %b) : memref<64x256xf32>
ta.kernel @strided_transpose(%x: memref<32768xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%a, %b) {
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<256x64x2xf32> at [%b, %a, 0]; loop dims (1, 0) reach buffer dims (0, 1)}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 2 + d1 * 128)>](%a, %b) : memref<32768xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<64x256xf32> at [%a, %b]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%a, %b) : memref<16384xf32>
  }
}

// -----

// out = x.t().reshape(-1) for x: f32[64, 256]  (a collapsed-dim permuted read:
// out[i] = x[i % 64, i // 64])
// stride-to-reshape refuses the floordiv/mod read and leaves the 1-D store alone;
// canonicalize-permutation splits i into (256, 64) and reads the transpose.
// CHECK-LABEL: ta.kernel @collapsed_transpose
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<256x64xf32>
// CHECK-NEXT:    ta.loop [256, 64] (%i_outer, %i_inner) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0)>](%i_outer, %i_inner) : memref<64x256xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<256x64xf32>
ta.kernel @collapsed_transpose(%x: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16384] (%i) {
    // expected-remark@+2 {{stride-to-reshape: not applied to %x: the map is not linear in the loop dims}}
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: split loop dim %i (16384) into (256, 64); memref<64x256xf32> at [%i_inner, %i_outer]; loop dims (1, 0) reach buffer dims (0, 1)}}
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 64 + (d0 mod 64) * 256)>](%i) : memref<16384xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: split loop dim %i (16384) into (256, 64); memref<256x64xf32> at [%i_outer, %i_inner]}}
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<16384xf32>
  }
}

// -----

// out = x.t()[::2].reshape(-1) + y.t() for x: f32[256, 128], y: f32[256, 64] and
// out: f32[64 * 256]  (both at once: out[i] = x[i % 256, 2 * (i // 256)] + y[i % 256, i // 256])
// stride-to-reshape refuses both reads (floordiv/mod) and leaves the 1-D store alone;
// canonicalize-permutation splits i into (64, 256): x is read at (b, a, 0) of
// [256, 64, 2] and y at (b, a) of [256, 64].
// CHECK-LABEL: ta.kernel @both
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<32768xf32> to memref<256x64x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = ta.reshape %y : memref<16384xf32> to memref<256x64xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    ta.loop [64, 256] (%i_outer, %i_inner) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0, 0)>](%i_outer, %i_inner) : memref<256x64x2xf32>
// CHECK-NEXT:      %w = ta.load %[[Y]][affine_map<(d0, d1) -> (d1, d0)>](%i_outer, %i_inner) : memref<256x64xf32>
// CHECK-NEXT:      %s = arith.addf %v, %w : f32
// CHECK-NEXT:      ta.store %s, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<64x256xf32>
ta.kernel @both(%x: memref<32768xf32> {role = "in"}, %y: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16384] (%i) {
    // expected-remark@+2 {{stride-to-reshape: not applied to %x: the map is not linear in the loop dims}}
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: split loop dim %i (16384) into (64, 256); memref<256x64x2xf32> at [%i_inner, %i_outer, 0]; loop dims (1, 0) reach buffer dims (0, 1)}}
    %v = ta.load %x[affine_map<(d0) -> ((d0 mod 256) * 128 + (d0 floordiv 256) * 2)>](%i) : memref<32768xf32>
    // expected-remark@+2 {{stride-to-reshape: not applied to %y: the map is not linear in the loop dims}}
    // expected-remark@+1 {{canonicalize-permutation: applied to %y: split loop dim %i (16384) into (64, 256); memref<256x64xf32> at [%i_inner, %i_outer]; loop dims (1, 0) reach buffer dims (0, 1)}}
    %w = ta.load %y[affine_map<(d0) -> ((d0 mod 256) * 64 + d0 floordiv 256)>](%i) : memref<16384xf32>
    %s = arith.addf %v, %w : f32
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: split loop dim %i (16384) into (64, 256); memref<64x256xf32> at [%i_outer, %i_inner]}}
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<16384xf32>
  }
}
