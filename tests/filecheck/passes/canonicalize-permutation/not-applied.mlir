// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p canonicalize-permutation

// Accesses canonicalize-permutation cannot make projected permutations, each with the
// remark that says why (every remark of a chunk, `applied` ones included, is expected),
// and what the output keeps.

// out = x.view(-1)[:100] for x: f32[34, 3] passed N-D  (x[i // 3, i % 3]: 3 does not
// divide the 100 iterations, so the loop cannot be split)
// CHECK-LABEL: ta.kernel @divisor_not_dividing
// CHECK-NEXT:    ta.loop [100] (%i) {
// CHECK-NEXT:      ta.load %x[affine_map<(d0) -> ((d0 floordiv 3), (d0 mod 3))>](%i) : memref<34x3xf32>
ta.kernel @divisor_not_dividing(%x: memref<34x3xf32> {role = "in"}, %out: memref<100xf32> {role = "out"}) {
  ta.loop [100] (%i) {
    // expected-remark@+1 {{canonicalize-permutation: not applied to %x: floordiv by 3 does not divide extent 100}}
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 3, d0 mod 3)>](%i) : memref<34x3xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<100xf32>
  }
}

// -----

// out = x.view(-1) + y.view(-1)[:100] for x: f32[10, 10], y: f32[34, 3], both N-D
// The loop splits by 10 for x (and out); y's `floordiv 3` still cannot be removed, and
// the remark says so about the map as written.
// CHECK-LABEL: ta.kernel @one_of_two
// CHECK:         ta.loop [10, 10] (%i_outer, %i_inner) {
// CHECK:           ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<10x10xf32>
// CHECK:           ta.load %y[affine_map<(d0, d1) -> ((((d0 * 10) + d1) floordiv 3), (((d0 * 10) + d1) mod 3))>](%i_outer, %i_inner) : memref<34x3xf32>
// CHECK:           ta.store %s, %{{.*}}[affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<10x10xf32>
ta.kernel @one_of_two(%x: memref<10x10xf32> {role = "in"}, %y: memref<34x3xf32> {role = "in"}, %out: memref<100xf32> {role = "out"}) {
  ta.loop [100] (%i) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: split loop dim %i (100) into (10, 10); memref<10x10xf32> at [%i_outer, %i_inner]}}
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 10, d0 mod 10)>](%i) : memref<10x10xf32>
    // expected-remark@+1 {{canonicalize-permutation: not applied to %y: floordiv by 3 does not divide extent 100}}
    %w = ta.load %y[affine_map<(d0) -> (d0 floordiv 3, d0 mod 3)>](%i) : memref<34x3xf32>
    %s = arith.addf %v, %w : f32
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: split loop dim %i (100) into (10, 10); memref<10x10xf32> at [%i_outer, %i_inner]}}
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<100xf32>
  }
}

// -----

// out = x[(torch.arange(127) + 1) // 2] for x: f32[64]  (a shifted nearest upsample: the
// dividend is not a loop dim, so no split gives a projected permutation)
// CHECK-LABEL: ta.kernel @shifted_division
// CHECK:         ta.load %x[affine_map<(d0) -> (((d0 + 1) floordiv 2))>](%i) : memref<64xf32>
ta.kernel @shifted_division(%x: memref<64xf32> {role = "in"}, %out: memref<127xf32> {role = "out"}) {
  ta.loop [127] (%i) {
    // expected-remark@+1 {{canonicalize-permutation: not applied to %x: ((%i + 1) floordiv 2) is not a split of a loop dim}}
    %v = ta.load %x[affine_map<(d0) -> ((d0 + 1) floordiv 2)>](%i) : memref<64xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<127xf32>
  }
}

// -----

// out = emb[idx] for emb: f32[1000, 64], idx: i32[16]  (a gather: the row is data,
// indirect-load-to-scalar-prefetch's business)
// CHECK-LABEL: ta.kernel @gather
// CHECK:         ta.load %emb[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%r] : memref<1000x64xf32>
ta.kernel @gather(%idx: memref<16xi32> {role = "prefetch"}, %emb: memref<1000x64xf32> {role = "in"}, %out: memref<16x64xf32> {role = "out"}) {
  ta.loop [16, 64] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi32>
    %r = arith.index_cast %iv : i32 to index
    // expected-remark@+1 {{canonicalize-permutation: not applied to %emb: the map uses a data-dependent index}}
    %e = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%r] : memref<1000x64xf32>
    ta.store %e, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<16x64xf32>
  }
}

// -----

// out = x.t().flip(1) for x: f32[8, 16]  (a transposed, flipped view: the flip is a
// negative stride; the contiguous store is made N-D)
// CHECK-LABEL: ta.kernel @flipped_transpose
// CHECK:         ta.load %x[affine_map<(d0, d1) -> ((((d1 * -16) + 112) + d0))>](%i, %j) : memref<128xf32>
ta.kernel @flipped_transpose(%x: memref<128xf32> {role = "in"}, %out: memref<128xf32> {role = "out"}) {
  ta.loop [16, 8] (%i, %j) {
    // expected-remark@+1 {{canonicalize-permutation: not applied to %x: %j walks with negative stride -16 (a flipped view)}}
    %v = ta.load %x[affine_map<(d0, d1) -> ((7 - d1) * 16 + d0)>](%i, %j) : memref<128xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: memref<16x8xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 8 + d1)>](%i, %j) : memref<128xf32>
  }
}

// -----

// out = x.as_strided((4, 4), (1, 4)) for x: f32[16] passed as [4, 4]: a plain transpose,
// but x.as_strided((4, 4), (1, 1)) (an overlapping view) is refused.
// CHECK-LABEL: ta.kernel @overlapping
// CHECK:         ta.load %x[affine_map<(d0, d1) -> ((d0 + d1))>](%i, %j) : memref<16xf32>
ta.kernel @overlapping(%x: memref<16xf32> {role = "in"}, %out: memref<4x4xf32> {role = "out"}) {
  ta.loop [4, 4] (%i, %j) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: memref<4x4xf32> at [%j, %i]; loop dims (1, 0) reach buffer dims (0, 1)}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 + d1 * 4)>](%i, %j) : memref<16xf32>
    // expected-remark@+1 {{canonicalize-permutation: not applied to %x: %i and %j share stride 1 (an overlapping view)}}
    %w = ta.load %x[affine_map<(d0, d1) -> (d0 + d1)>](%i, %j) : memref<16xf32>
    %s = arith.addf %v, %w : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<4x4xf32>
  }
}

// -----

// out = x.t() for x: f32[64, 128] with N-D buffers and a projected permutation
// already: not considered, no remark, unchanged.
// CHECK-LABEL: ta.kernel @nothing_to_do
// CHECK-NOT:     ta.reshape
// CHECK:         ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<64x128xf32>
ta.kernel @nothing_to_do(%x: memref<64x128xf32> {role = "in"}, %out: memref<128x64xf32> {role = "out"}) {
  ta.loop [128, 64] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x64xf32>
  }
}
