// RUN: pallas-opt %s --split-input-file -p stride-to-reshape --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape,stride-to-reshape --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=TWICE

// What stride-to-reshape says about the accesses it rewrites: the view and the index
// (loop variables by name, constants for the split and sliced dims) and, when the loop
// dims reach the buffer in another order, which reaches which. The statistics count
// the same outcomes; a second run only sees again the two accesses it refused (the
// rewritten ones are N-D now).

// STATS:      stride-to-reshape
// STATS-NEXT:      8 accesses seen
// STATS-NEXT:      6 rewritten
// STATS-NEXT:      1 rejected: data-dependent index
// STATS-NEXT:      1 rejected: extent not divisible by step

// TWICE:      stride-to-reshape
// TWICE-NEXT:     10 accesses seen
// TWICE-NEXT:      6 rewritten
// TWICE-NEXT:      2 rejected: data-dependent index
// TWICE-NEXT:      2 rejected: extent not divisible by step

// out = x[:, 1::2] for x: f32[64, 256]
ta.kernel @lane_step(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<64x128x2xf32> at [%i, %j, 1]}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2 + 1)>](%i, %j) : memref<16384xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<64x128xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// out = x.permute(0, 3, 1, 2)[..., 1:, :] for x: f32[2, 4, 4, 8]  (NHWC read as NCHW, rows from 1)
ta.kernel @channels_last_slice(%x: memref<256xf32> {role = "in"}, %out: memref<192xf32> {role = "out"}) {
  ta.loop [2, 8, 3, 4] (%n, %c, %h, %w) {
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<2x4x4x8xf32> at [%n, %h + 1, %w, %c]; loop dims (0, 2, 3, 1) reach buffer dims (0, 1, 2, 3)}}
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0 * 128 + d1 + d2 * 32 + d3 * 8 + 32)>](%n, %c, %h, %w) : memref<256xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<2x8x3x4xf32> at [%n, %c, %h, %w]}}
    ta.store %v, %out[affine_map<(d0, d1, d2, d3) -> (d0 * 96 + d1 * 12 + d2 * 4 + d3)>](%n, %c, %h, %w) : memref<192xf32>
  }
}

// -----

// One access of each outcome in one kernel: out[i, j] = x[i, 2j] + emb[idx[i], j] + z[3j] for x: f32[16, 128], emb: f32[100, 64],
// z: f32[200] (z[::3] needs 64 steps of 3 in 200 elements: 200 % 3 != 0)
ta.kernel @mixed(%idx: memref<16xi32> {role = "prefetch"}, %x: memref<2048xf32> {role = "in"}, %emb: memref<6400xf32> {role = "in"}, %z: memref<200xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  ta.loop [16, 64] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi32>
    %r = arith.index_cast %iv : i32 to index
    // expected-remark@+1 {{stride-to-reshape: applied to %x: memref<16x64x2xf32> at [%i, %j, 0]}}
    %a = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1 * 2)>](%i, %j) : memref<2048xf32>
    // expected-remark@+1 {{stride-to-reshape: not applied to %emb: the map uses a data-dependent index}}
    %b = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 64 + d1)>](%i, %j)[%r] : memref<6400xf32>
    // expected-remark@+1 {{stride-to-reshape: not applied to %z: extent 200 is not divisible by step 3}}
    %c = ta.load %z[affine_map<(d0, d1) -> (d1 * 3)>](%i, %j) : memref<200xf32>
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<16x64xf32> at [%i, %j]}}
    ta.store %t, %out[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<1024xf32>
  }
}
