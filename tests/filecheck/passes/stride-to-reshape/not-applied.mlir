// RUN: pallas-opt %s --split-input-file -p stride-to-reshape --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p stride-to-reshape

// Accesses stride-to-reshape leaves unchanged, each with the remark that says why (the
// first RUN line: every remark of a chunk, `applied` ones included, is expected), and
// the unchanged maps (the second).

// out = x[::3] for x: f32[100]  (100 is not a multiple of the step: no (n, 3) view)
// CHECK-LABEL: ta.kernel @step_not_dividing
// CHECK-NOT:     ta.reshape
// CHECK:         ta.load %x[affine_map<(d0) -> ((d0 * 3))>](%i) : memref<100xf32>
ta.kernel @step_not_dividing(%x: memref<100xf32> {role = "in"}, %out: memref<34xf32> {role = "out"}) {
  ta.loop [34] (%i) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: extent 100 is not divisible by step 3}}
    %v = ta.load %x[affine_map<(d0) -> (d0 * 3)>](%i) : memref<100xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<34xf32>
  }
}

// -----

// out = x[:, ::3] for x: f32[4, 100]  (the same, on the inner dim: a row of 100 is not
// a whole number of steps of 3); the contiguous store is rewritten.
// CHECK-LABEL: ta.kernel @inner_step_not_dividing
// CHECK:         ta.load %x[affine_map<(d0, d1) -> (((d0 * 100) + (d1 * 3)))>](%i, %j) : memref<400xf32>
ta.kernel @inner_step_not_dividing(%x: memref<400xf32> {role = "in"}, %out: memref<136xf32> {role = "out"}) {
  ta.loop [4, 34] (%i, %j) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: extent 100 is not divisible by step 3}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 100 + d1 * 3)>](%i, %j) : memref<400xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<4x34xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 34 + d1)>](%i, %j) : memref<136xf32>
  }
}

// -----

// out = emb[idx] for emb: f32[1000, 64], idx: i32[16]  (a gather: the row is data)
// CHECK-LABEL: ta.kernel @gather
// CHECK:         ta.load %emb[affine_map<(d0, d1)[s0] -> (((s0 * 64) + d1))>](%i, %j)[%r] : memref<64000xf32>
ta.kernel @gather(%idx: memref<16xi32> {role = "prefetch"}, %emb: memref<64000xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  ta.loop [16, 64] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi32>
    %r = arith.index_cast %iv : i32 to index
    // expected-remark@+1 {{stride-to-reshape: not applied to %emb: the map uses a data-dependent index}}
    %e = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 64 + d1)>](%i, %j)[%r] : memref<64000xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<16x64xf32> at [%i, %j]}}
    ta.store %e, %out[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<1024xf32>
  }
}

// -----

// out = x.t().reshape(-1) for x: f32[64, 256]  (one loop dim walks both dims of the
// transposed view: floordiv/mod, left to canonicalize-permutation)
// CHECK-LABEL: ta.kernel @collapsed
// CHECK:         ta.load %x[affine_map<(d0) -> (((d0 floordiv 64) + ((d0 mod 64) * 256)))>](%i) : memref<16384xf32>
ta.kernel @collapsed(%x: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16384] (%i) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: the map is not linear in the loop dims}}
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 64 + (d0 mod 64) * 256)>](%i) : memref<16384xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<16384xf32>
  }
}

// -----

// out = x.as_strided((4, 4), (1, 1)) for x: f32[64]  (two dims share a stride: overlapping)
// CHECK-LABEL: ta.kernel @shared_stride
// CHECK:         ta.load %x[affine_map<(d0, d1) -> ((d0 + d1))>](%i, %j) : memref<64xf32>
ta.kernel @shared_stride(%x: memref<64xf32> {role = "in"}, %out: memref<16xf32> {role = "out"}) {
  ta.loop [4, 4] (%i, %j) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: %i and %j share stride 1 (an overlapping view)}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 + d1)>](%i, %j) : memref<64xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<4x4xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 4 + d1)>](%i, %j) : memref<16xf32>
  }
}

// -----

// out = x.as_strided((4, 8), (4, 1)) for x: f32[64]  (rows of 8 start every 4 elements:
// the span of %j runs past the stride of %i, an overlapping view)
// CHECK-LABEL: ta.kernel @span_exceeds_stride
// CHECK:         ta.load %x[affine_map<(d0, d1) -> (((d0 * 4) + d1))>](%i, %j) : memref<64xf32>
ta.kernel @span_exceeds_stride(%x: memref<64xf32> {role = "in"}, %out: memref<32xf32> {role = "out"}) {
  ta.loop [4, 8] (%i, %j) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: %j spans 8 elements but the next stride is 4 (an overlapping view)}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 4 + d1)>](%i, %j) : memref<64xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<4x8xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 8 + d1)>](%i, %j) : memref<32xf32>
  }
}

// -----

// out = x.flip(0) for x: f32[64]  (a negative stride)
// CHECK-LABEL: ta.kernel @flipped
// CHECK:         ta.load %x[affine_map<(d0) -> (((d0 * -1) + 63))>](%i) : memref<64xf32>
ta.kernel @flipped(%x: memref<64xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: %i walks with negative stride -1 (a flipped view)}}
    %v = ta.load %x[affine_map<(d0) -> (63 - d0)>](%i) : memref<64xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

// out = x.as_strided((3, 4), (8, 1), 5) for x: f32[32]  (rows of 8, but each 4-element
// walk starts at column 5 and wraps into the next row)
// CHECK-LABEL: ta.kernel @wraps_around
// CHECK:         ta.load %x[affine_map<(d0, d1) -> ((((d0 * 8) + d1) + 5))>](%i, %j) : memref<32xf32>
ta.kernel @wraps_around(%x: memref<32xf32> {role = "in"}, %out: memref<12xf32> {role = "out"}) {
  ta.loop [3, 4] (%i, %j) {
    // expected-remark@+1 {{stride-to-reshape: not applied to %x: %j starts at 5 and walks 4 elements of a dim of 8: the access wraps around}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 8 + d1 + 5)>](%i, %j) : memref<32xf32>
    // expected-remark@+1 {{stride-to-reshape: applied to %out: memref<3x4xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 4 + d1)>](%i, %j) : memref<12xf32>
  }
}

// -----

// out = x + y for x: f32[64, 128] already N-D and y: f32[128] broadcast over rows:
// N-D accesses and flat accesses that are one unit-step index are not considered (no remark).
// CHECK-LABEL: ta.kernel @nothing_to_do
// CHECK-NOT:     ta.reshape
// CHECK:         ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
// CHECK:         ta.load %y[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<128xf32>
ta.kernel @nothing_to_do(%x: memref<64x128xf32> {role = "in"}, %y: memref<128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %w = ta.load %y[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<128xf32>
    %s = arith.addf %v, %w : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
