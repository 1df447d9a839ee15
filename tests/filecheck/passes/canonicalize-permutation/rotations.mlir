// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation,canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p canonicalize-permutation

// A whole loop dim read rotated, `(d + c) mod n` with d of extent n (`torch.roll`, the
// rotate-half of a rotary embedding), is the one non-linear index the canonical form
// keeps: the pass places d in the view as if it were read plainly, then rotates the
// index it lands on, which must be d alone on a buffer dim of extent n. Inputs are what
// the frontend emits; the remarks say what became of each access.

// q = rotate_half(x.transpose(1, 2)) for x: f32[2, 8, 4, 32] (B, T, H, D), flat: the
// cat of two slices reads x at one rotation index, `(d + 16) mod 32`; x is viewed
// (2, 8, 4, 32) and read as (b, t, h, (d + 16) mod 32).
// CHECK-LABEL: ta.kernel @rotate_half
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<2048xf32> to memref<2x8x4x32xf32>
// CHECK:         ta.loop [2, 4, 8, 32] (%b, %h, %t, %d) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, ((d3 + 16) mod 32))>](%b, %h, %t, %d) : memref<2x8x4x32xf32>
ta.kernel @rotate_half(%x: memref<2048xf32> {role = "in"}, %out: memref<2048xf32> {role = "out"}) {
  ta.loop [2, 4, 8, 32] (%b, %h, %t, %d) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: memref<2x8x4x32xf32> at [%b, %t, %h, (%d + 16) mod 32]; loop dims (0, 2, 1, 3) reach buffer dims (0, 1, 2, 3)}}
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0 * 1024 + d2 * 128 + d1 * 32 + (d3 + 16) mod 32)>](%b, %h, %t, %d) : memref<2048xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: memref<2x4x8x32xf32> at [%b, %h, %t, %d]}}
    ta.store %v, %out[affine_map<(d0, d1, d2, d3) -> (d0 * 1024 + d1 * 256 + d2 * 32 + d3)>](%b, %h, %t, %d) : memref<2048xf32>
  }
}

// -----

// out = torch.roll(x, 3, 0) for x: f32[16, 128], flat: rows read at `(i + 13) mod 16`.
// CHECK-LABEL: ta.kernel @roll_rows
// CHECK:         ta.load %{{.*}}[affine_map<(d0, d1) -> (((d0 + 13) mod 16), d1)>](%i, %j) : memref<16x128xf32>
ta.kernel @roll_rows(%x: memref<2048xf32> {role = "in"}, %out: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] (%i, %j) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: memref<16x128xf32> at [(%i + 13) mod 16, %j]}}
    %v = ta.load %x[affine_map<(d0, d1) -> (((d0 + 13) mod 16) * 128 + d1)>](%i, %j) : memref<2048xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: memref<16x128xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<2048xf32>
  }
}

// -----

// out[i] = x[(i + 1) % 16, i] for x: f32[16, 16]: i is read rotated and plain, which
// no view of x separates; the access is left as it was.
// CHECK-LABEL: ta.kernel @rotated_and_not
// CHECK:         ta.load %x[affine_map<(d0) -> (((((d0 + 1) mod 16) * 16) + d0))>](%i) : memref<256xf32>
ta.kernel @rotated_and_not(%x: memref<256xf32> {role = "in"}, %out: memref<16xf32> {role = "out"}) {
  ta.loop [16] (%i) {
    // expected-remark@+1 {{canonicalize-permutation: not applied to %x: the map reads one loop dim both rotated and not}}
    %v = ta.load %x[affine_map<(d0) -> (((d0 + 1) mod 16) * 16 + d0)>](%i) : memref<256xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
  }
}

// -----

// out = x[:, :8].roll(-1, 1) for x: f32[4, 16], flat: the view (4, 2, 8) gives j a
// whole dim of 8, so the rotation stays there.
// CHECK-LABEL: ta.kernel @half_a_row
// CHECK:         ta.load %{{.*}}[affine_map<(d0, d1) -> (d0, 0, ((d1 + 1) mod 8))>](%i, %j) : memref<4x2x8xf32>
ta.kernel @half_a_row(%x: memref<64xf32> {role = "in"}, %out: memref<32xf32> {role = "out"}) {
  ta.loop [4, 8] (%i, %j) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: memref<4x2x8xf32> at [%i, 0, (%j + 1) mod 8]}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 16 + (d1 + 1) mod 8)>](%i, %j) : memref<64xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: memref<4x8xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 8 + d1)>](%i, %j) : memref<32xf32>
  }
}

// -----

// out = x[:, 4:12].roll(-1, 1) for x: f32[4, 16], flat: j (8) lands on the row of 16
// at offset 4, not on a whole dim of 8; left as it was.
// CHECK-LABEL: ta.kernel @part_of_a_dim
// CHECK:         ta.load %x[affine_map<(d0, d1) -> ((((d0 * 16) + 4) + ((d1 + 1) mod 8)))>](%i, %j) : memref<64xf32>
ta.kernel @part_of_a_dim(%x: memref<64xf32> {role = "in"}, %out: memref<32xf32> {role = "out"}) {
  ta.loop [4, 8] (%i, %j) {
    // expected-remark@+1 {{canonicalize-permutation: not applied to %x: %j is read rotated by 1 but does not walk a whole buffer dim of 8 in the view}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 16 + 4 + (d1 + 1) mod 8)>](%i, %j) : memref<64xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: memref<4x8xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 8 + d1)>](%i, %j) : memref<32xf32>
  }
}

// -----

// out = torch.roll(x[:64], 3, 0) for x: f32[128]: i (64) walks half of x; x is viewed
// (2, 64) so that i has a whole dim to rotate.
// CHECK-LABEL: ta.kernel @roll_of_a_slice
// CHECK:         ta.load %{{.*}}[affine_map<(d0) -> (0, ((d0 + 61) mod 64))>](%i) : memref<2x64xf32>
ta.kernel @roll_of_a_slice(%x: memref<128xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: memref<2x64xf32> at [0, (%i + 61) mod 64]}}
    %v = ta.load %x[affine_map<(d0) -> ((d0 + 61) mod 64)>](%i) : memref<128xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

// out = torch.roll(torch.roll(x, 3, 1), 5, 1) for x: f32[8, 128], flat: a rotation of
// a rotation is one, by 8 (`(d + 125) mod 128` then `+ 123`).
// CHECK-LABEL: ta.kernel @roll_of_a_roll
// CHECK:         ta.load %{{.*}}[affine_map<(d0, d1) -> (d0, ((d1 + 120) mod 128))>](%i, %j) : memref<8x128xf32>
ta.kernel @roll_of_a_roll(%x: memref<1024xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  ta.loop [8, 128] (%i, %j) {
    // expected-remark@+1 {{canonicalize-permutation: applied to %x: memref<8x128xf32> at [%i, (%j + 120) mod 128]}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + ((d1 + 123) mod 128 + 125) mod 128)>](%i, %j) : memref<1024xf32>
    // expected-remark@+1 {{canonicalize-permutation: applied to %out: memref<8x128xf32> at [%i, %j]}}
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<1024xf32>
  }
}
