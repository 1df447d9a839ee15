// RUN: pallas-opt %s --split-input-file -p stride-to-reshape | filecheck %s
// RUN: pallas-opt %s --split-input-file -p stride-to-reshape,stride-to-reshape | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p stride-to-reshape

// Flat strided accesses, as the frontend emits them, become N-D accesses on a
// ta.reshape of the storage. Each case gives the torch program it models; the CHECK
// lines are the view of the storage that program walks (derived by hand), with the
// N-D index per access. The second RUN line checks idempotency (same output after two
// runs), the third that the rewrite computes the same values on random inputs.

// out = x[:, 1::2] * 2 for x: f32[64, 256]  (the design example: a lane step with an offset)
// x: strides (256, 2), offset 1 -> 64 rows of 128 pairs, element 1 of each pair.
// CHECK-LABEL: ta.kernel @lane_step_offset
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<64x128x2xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<8192xf32> to memref<64x128xf32>
// CHECK-NEXT:    ta.loop [64, 128] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1, 1)>](%i, %j) : memref<64x128x2xf32>
// CHECK:           ta.store %m, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
ta.kernel @lane_step_offset(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2 + 1)>](%i, %j) : memref<16384xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// out = x + 1 for x: f32[64, 128]  (plain contiguous: k = 1, identity map)
// CHECK-LABEL: ta.kernel @contiguous
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<8192xf32> to memref<64x128xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<8192xf32> to memref<64x128xf32>
// CHECK-NEXT:    ta.loop [64, 128] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
// CHECK:           ta.store %a, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
ta.kernel @contiguous(%x: memref<8192xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    %c = arith.constant 1.0 : f32
    %a = arith.addf %v, %c : f32
    ta.store %a, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// out = x[1::3] * 2 for x: f32[300]  (1-D step with an offset: 100 triples, element 1)
// The 1-D store is already one unit-step index: not touched.
// CHECK-LABEL: ta.kernel @step_1d
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<300xf32> to memref<100x3xf32>
// CHECK-NEXT:    ta.loop [100] (%i) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0) -> (d0, 1)>](%i) : memref<100x3xf32>
// CHECK:           ta.store %m, %out[affine_map<(d0) -> (d0)>](%i) : memref<100xf32>
ta.kernel @step_1d(%x: memref<300xf32> {role = "in"}, %out: memref<100xf32> {role = "out"}) {
  ta.loop [100] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0 * 3 + 1)>](%i) : memref<300xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0) -> (d0)>](%i) : memref<100xf32>
  }
}

// -----

// out = x[::2, :] for x: f32[64, 256]  (a step on the leading dim)
// Rows 0, 2, 4, ...: the 64 rows split into (32, 2) and row 0 of each pair is read.
// CHECK-LABEL: ta.kernel @leading_step
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<32x2x256xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<8192xf32> to memref<32x256xf32>
// CHECK-NEXT:    ta.loop [32, 256] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, 0, d1)>](%i, %j) : memref<32x2x256xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<32x256xf32>
ta.kernel @leading_step(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [32, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 512 + d1)>](%i, %j) : memref<16384xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// out = x[::2, ::4] for x: f32[64, 256]  (two strided dims)
// Rows split (32, 2), row 0 of each pair; columns split (64, 4), column 0 of each four.
// CHECK-LABEL: ta.kernel @two_steps
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<32x2x64x4xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<2048xf32> to memref<32x64xf32>
// CHECK-NEXT:    ta.loop [32, 64] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, 0, d1, 0)>](%i, %j) : memref<32x2x64x4xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<32x64xf32>
ta.kernel @two_steps(%x: memref<16384xf32> {role = "in"}, %out: memref<2048xf32> {role = "out"}) {
  ta.loop [32, 64] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 512 + d1 * 4)>](%i, %j) : memref<16384xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<2048xf32>
  }
}

// -----

// out = x[:, ::2, :] for x: f32[4, 16, 128]  (a step on the sublane dim of a 3-D tensor)
// The 16 rows split (8, 2), row 0 of each pair.
// CHECK-LABEL: ta.kernel @sublane_step
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<8192xf32> to memref<4x8x2x128xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<4096xf32> to memref<4x8x128xf32>
// CHECK-NEXT:    ta.loop [4, 8, 128] (%b, %i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>](%b, %i, %j) : memref<4x8x2x128xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %i, %j) : memref<4x8x128xf32>
ta.kernel @sublane_step(%x: memref<8192xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
  ta.loop [4, 8, 128] (%b, %i, %j) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 2048 + d1 * 256 + d2)>](%b, %i, %j) : memref<8192xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 128 + d2)>](%b, %i, %j) : memref<4096xf32>
  }
}

// -----

// out = x[:, 1:3, :, ::4] for x: f32[2, 4, 8, 128]  (4-D: a slice, a lane step)
// Offset 1 * 1024 lands on dim 1 (rows 1 and 2 of 4); columns split (32, 4), column 0.
// CHECK-LABEL: ta.kernel @four_d
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<8192xf32> to memref<2x4x8x32x4xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<1024xf32> to memref<2x2x8x32xf32>
// CHECK-NEXT:    ta.loop [2, 2, 8, 32] (%a, %b, %c, %d) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2, d3) -> (d0, (d1 + 1), d2, d3, 0)>](%a, %b, %c, %d) : memref<2x4x8x32x4xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%a, %b, %c, %d) : memref<2x2x8x32xf32>
ta.kernel @four_d(%x: memref<8192xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  ta.loop [2, 2, 8, 32] (%a, %b, %c, %d) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0 * 4096 + d1 * 1024 + d2 * 128 + d3 * 4 + 1024)>](%a, %b, %c, %d) : memref<8192xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2, d3) -> (d0 * 512 + d1 * 256 + d2 * 32 + d3)>](%a, %b, %c, %d) : memref<1024xf32>
  }
}

// -----

// out = x[3:, 5:] for x: f32[16, 32]  (storage offset 3 * 32 + 5 = 101)
// 27 does not divide 32, so the rows keep their 32 columns and the offset becomes
// (3, 5) in them.
// CHECK-LABEL: ta.kernel @storage_offset
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<512xf32> to memref<16x32xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<351xf32> to memref<13x27xf32>
// CHECK-NEXT:    ta.loop [13, 27] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> ((d0 + 3), (d1 + 5))>](%i, %j) : memref<16x32xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<13x27xf32>
ta.kernel @storage_offset(%x: memref<512xf32> {role = "in"}, %out: memref<351xf32> {role = "out"}) {
  ta.loop [13, 27] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 32 + d1 + 101)>](%i, %j) : memref<512xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 27 + d1)>](%i, %j) : memref<351xf32>
  }
}

// -----

// out = x[:, 64:] for x: f32[64, 128]  (a partial lane walk that fits a split)
// 64 divides 128: the columns split (2, 64) and the second half is read whole.
// CHECK-LABEL: ta.kernel @second_half
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<8192xf32> to memref<64x2x64xf32>
// CHECK:           %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, 1, d1)>](%i, %j) : memref<64x2x64xf32>
ta.kernel @second_half(%x: memref<8192xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
  ta.loop [64, 64] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1 + 64)>](%i, %j) : memref<8192xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<4096xf32>
  }
}

// -----

// out[:, ::2] = x for out: f32[64, 256], x: f32[64, 128]  (a store through a strided view)
// CHECK-LABEL: ta.kernel @strided_store
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<8192xf32> to memref<64x128xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<64x128x2xf32>
// CHECK-NEXT:    ta.loop [64, 128] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1, 0)>](%i, %j) : memref<64x128x2xf32>
ta.kernel @strided_store(%x: memref<8192xf32> {role = "in"}, %out: memref<16384xf32> {role = "inout"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
  }
}

// -----

// out = x.t() + 1 for x: f32[256, 64]  (a transposed input: loop dims in another order)
// The storage is [256, 64]; the loop's i walks its columns and j its rows, so the map
// is the permutation (j, i). canonicalize-permutation takes it as it is.
// CHECK-LABEL: ta.kernel @transposed
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<256x64xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    ta.loop [64, 256] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<256x64xf32>
// CHECK:           ta.store %a, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xf32>
ta.kernel @transposed(%x: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 + d1 * 64)>](%i, %j) : memref<16384xf32>
    %c = arith.constant 1.0 : f32
    %a = arith.addf %v, %c : f32
    ta.store %a, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// -----

// out = x.permute(0, 3, 1, 2) + 0 for x: f32[2, 4, 4, 8]  (channels-last NHWC storage read as NCHW)
// CHECK-LABEL: ta.kernel @channels_last
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<256xf32> to memref<2x4x4x8xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<256xf32> to memref<2x8x4x4xf32>
// CHECK-NEXT:    ta.loop [2, 8, 4, 4] (%n, %c, %h, %w) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>](%n, %c, %h, %w) : memref<2x4x4x8xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%n, %c, %h, %w) : memref<2x8x4x4xf32>
ta.kernel @channels_last(%x: memref<256xf32> {role = "in"}, %out: memref<256xf32> {role = "out"}) {
  ta.loop [2, 8, 4, 4] (%n, %c, %h, %w) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0 * 128 + d1 + d2 * 32 + d3 * 8)>](%n, %c, %h, %w) : memref<256xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2, d3) -> (d0 * 128 + d1 * 16 + d2 * 4 + d3)>](%n, %c, %h, %w) : memref<256xf32>
  }
}

// -----

// out = x.expand(4, 64, 128) * 1 for x: f32[64, 128]  (a broadcast dim: stride 0)
// The broadcast loop dim %b reaches no buffer dim of x.
// CHECK-LABEL: ta.kernel @broadcast
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<8192xf32> to memref<64x128xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<32768xf32> to memref<4x64x128xf32>
// CHECK-NEXT:    ta.loop [4, 64, 128] (%b, %i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2) -> (d1, d2)>](%b, %i, %j) : memref<64x128xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %i, %j) : memref<4x64x128xf32>
ta.kernel @broadcast(%x: memref<8192xf32> {role = "in"}, %out: memref<32768xf32> {role = "out"}) {
  ta.loop [4, 64, 128] (%b, %i, %j) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1 * 128 + d2)>](%b, %i, %j) : memref<8192xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 8192 + d1 * 128 + d2)>](%b, %i, %j) : memref<32768xf32>
  }
}

// -----

// out = x[:, ::2].sum(1) for x: f32[64, 256]  (a strided reduction; the store is 1-D already)
// One reshape per buffer and shape: the two loads of x share it.
// CHECK-LABEL: ta.kernel @strided_sum
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<64x128x2xf32>
// CHECK-NEXT:    ta.loop [64] reduce [128] (%i, %k) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1, 0)>](%i, %k) : memref<64x128x2xf32>
// CHECK-NEXT:      %w = ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1, 0)>](%i, %k) : memref<64x128x2xf32>
// CHECK-NEXT:      %p = arith.mulf %v, %w : f32
// CHECK-NEXT:      %s = ta.reduce <sum> %p : f32
// CHECK-NEXT:      ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
ta.kernel @strided_sum(%x: memref<16384xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %k) : memref<16384xf32>
    %w = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %k) : memref<16384xf32>
    %p = arith.mulf %v, %w : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

// out = x.view(64, 128)[:, 1::2] for x: f32[64, 128] passed N-D: the frontend reads
// it through a flat ta.reshape; the rewrite goes back to the root and drops the flat view.
// CHECK-LABEL: ta.kernel @through_flat_view
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<64x128xf32> to memref<64x64x2xf32>
// CHECK-NOT:     ta.reshape
// CHECK:         ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1, 1)>](%i, %j) : memref<64x64x2xf32>
ta.kernel @through_flat_view(%x: memref<64x128xf32> {role = "in"}, %out: memref<64x64xf32> {role = "out"}) {
  %flat = ta.reshape %x : memref<64x128xf32> to memref<8192xf32>
  ta.loop [64, 64] (%i, %j) {
    %v = ta.load %flat[affine_map<(d0, d1) -> (d0 * 128 + d1 * 2 + 1)>](%i, %j) : memref<8192xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x64xf32>
  }
}
