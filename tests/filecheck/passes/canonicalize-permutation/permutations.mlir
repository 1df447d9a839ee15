// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file -p canonicalize-permutation,canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p canonicalize-permutation

// After canonicalize-permutation every index of every access is `d + c` or `c`, each
// loop dim in at most one index: the permutation is the map itself. Inputs are what the
// frontend emits (the pass runs without stride-to-reshape first); each case gives the
// torch program it models, the CHECK lines the loop, the view and the maps derived by
// hand from it. The second RUN line checks idempotency, the third that the rewrite
// computes the same values on random inputs.

// out = x.t() + 1 for x: f32[256, 64]  (permuted strides, flat: reinterpreted, then the
// map is the permutation (j, i))
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

// out = x.t().reshape(-1) for x: f32[64, 256]  (one loop dim over the 16384 elements
// of the transposed view: out[i] = x[i % 64, i // 64])
// i splits into (256, 64); the read is then the transpose (i_inner, i_outer) of x's
// [64, 256] storage, the write the contiguous [256, 64] result.
// CHECK-LABEL: ta.kernel @collapsed_transpose
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<256x64xf32>
// CHECK-NEXT:    ta.loop [256, 64] (%i_outer, %i_inner) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0)>](%i_outer, %i_inner) : memref<64x256xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<256x64xf32>
ta.kernel @collapsed_transpose(%x: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16384] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 64 + (d0 mod 64) * 256)>](%i) : memref<16384xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<16384xf32>
  }
}

// -----

// out = x.reshape(-1) * 2 for x: f32[64, 256] passed N-D  (a collapsed dim on an N-D
// buffer: x[i // 256, i % 256]); x needs no reshape, out becomes [64, 256].
// CHECK-LABEL: ta.kernel @collapsed_nd
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    ta.loop [64, 256] (%i_outer, %i_inner) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<64x256xf32>
// CHECK:           ta.store %m, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<64x256xf32>
ta.kernel @collapsed_nd(%x: memref<64x256xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16384] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 256, d0 mod 256)>](%i) : memref<64x256xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0) -> (d0)>](%i) : memref<16384xf32>
  }
}

// -----

// out = x.permute(2, 0, 1).reshape(-1) for x: f32[2, 3, 4]  (a loop dim collapsing three
// buffer dims: out[i] = x[(i // 3) % 2, i % 3, i // 6], storage offset
// ((i // 3) % 2) * 12 + (i % 3) * 4 + i // 6)
// i splits by 3 into (8, 3), then i_outer by 2 into (4, 2): loop [4, 2, 3] = (a, b, c)
// of the permuted view, which reads x[b, c, a].
// CHECK-LABEL: ta.kernel @collapsed_three
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<24xf32> to memref<2x3x4xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<24xf32> to memref<4x2x3xf32>
// CHECK-NEXT:    ta.loop [4, 2, 3] (%i_outer_outer, %i_outer_inner, %i_inner) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2) -> (d1, d2, d0)>](%i_outer_outer, %i_outer_inner, %i_inner) : memref<2x3x4xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%i_outer_outer, %i_outer_inner, %i_inner) : memref<4x2x3xf32>
ta.kernel @collapsed_three(%x: memref<24xf32> {role = "in"}, %out: memref<24xf32> {role = "out"}) {
  ta.loop [24] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (((d0 floordiv 3) mod 2) * 12 + (d0 mod 3) * 4 + d0 floordiv 6)>](%i) : memref<24xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<24xf32>
  }
}

// -----

// out = x.permute(2, 0, 1) for x: f32[4, 8, 16]  (a rank-3 permutation: out[a, b, c] = x[b, c, a])
// CHECK-LABEL: ta.kernel @permute3
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<512xf32> to memref<4x8x16xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<512xf32> to memref<16x4x8xf32>
// CHECK-NEXT:    ta.loop [16, 4, 8] (%a, %b, %c) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2) -> (d1, d2, d0)>](%a, %b, %c) : memref<4x8x16xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%a, %b, %c) : memref<16x4x8xf32>
ta.kernel @permute3(%x: memref<512xf32> {role = "in"}, %out: memref<512xf32> {role = "out"}) {
  ta.loop [16, 4, 8] (%a, %b, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1 * 128 + d2 * 16 + d0)>](%a, %b, %c) : memref<512xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 32 + d1 * 8 + d2)>](%a, %b, %c) : memref<512xf32>
  }
}

// -----

// out = x.t()[::2] for x: f32[256, 128]  (a permutation with a stride: out[a, b] = x[b, 2a])
// x's 128 columns split (64, 2); the read is (b, a, 0).
// CHECK-LABEL: ta.kernel @strided_transpose
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<32768xf32> to memref<256x64x2xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    ta.loop [64, 256] (%a, %b) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0, 0)>](%a, %b) : memref<256x64x2xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%a, %b) : memref<64x256xf32>
ta.kernel @strided_transpose(%x: memref<32768xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%a, %b) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 2 + d1 * 128)>](%a, %b) : memref<32768xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%a, %b) : memref<16384xf32>
  }
}

// -----

// out = x.permute(0, 3, 1, 2).reshape(2, 8, 16) for x: f32[2, 4, 4, 8] passed N-D
// (channels-last NHWC storage read as NCHW with H*W flattened: x[n, p // 4, p % 4, c])
// p splits into (4, 4): the read is (n, h, w, c) = (d0, d2, d3, d1) on x as it is; the
// store's (d0, d1, d2 * 4 + d3) into [2, 8, 16] becomes (d0, d1, d2, d3) on [2, 8, 4, 4].
// CHECK-LABEL: ta.kernel @channels_last
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<2x8x16xf32> to memref<2x8x4x4xf32>
// CHECK-NEXT:    ta.loop [2, 8, 4, 4] (%n, %c, %p_outer, %p_inner) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>](%n, %c, %p_outer, %p_inner) : memref<2x4x4x8xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%n, %c, %p_outer, %p_inner) : memref<2x8x4x4xf32>
ta.kernel @channels_last(%x: memref<2x4x4x8xf32> {role = "in"}, %out: memref<2x8x16xf32> {role = "out"}) {
  ta.loop [2, 8, 16] (%n, %c, %p) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2 floordiv 4, d2 mod 4, d1)>](%n, %c, %p) : memref<2x4x4x8xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%n, %c, %p) : memref<2x8x16xf32>
  }
}

// -----

// out = x.permute(0, 2, 1).reshape(16, 32).argmax(1) for x: f32[16, 8, 4]  (a collapsed
// reduction dim: x[i, k % 8, k // 8])
// k splits into reduce dims (4, 8), still after the parallel dim; the argmax position
// k_outer * 8 + k_inner is k, so the store is unchanged.
// CHECK-LABEL: ta.kernel @collapsed_reduction
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<512xf32> to memref<16x8x4xf32>
// CHECK-NEXT:    ta.loop [16] reduce [4, 8] (%i, %k_outer, %k_inner) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1, d2) -> (d0, d2, d1)>](%i, %k_outer, %k_inner) : memref<16x8x4xf32>
// CHECK-NEXT:      %a = ta.reduce <argmax> %v : f32 -> i32
// CHECK-NEXT:      ta.store %a, %out[affine_map<(d0) -> (d0)>](%i) : memref<16xi32>
ta.kernel @collapsed_reduction(%x: memref<512xf32> {role = "in"}, %out: memref<16xi32> {role = "out"}) {
  ta.loop [16] reduce [32] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 32 + (d1 mod 8) * 4 + d1 floordiv 8)>](%i, %k) : memref<512xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    ta.store %a, %out[affine_map<(d0) -> (d0)>](%i) : memref<16xi32>
  }
}

// -----

// out = x.t().reshape(-1) + torch.arange(32) for x: f32[4, 8]  (the loop variable is also
// used as a value: after the split it is rebuilt as i_outer * 4 + i_inner)
// CHECK-LABEL: ta.kernel @index_as_value
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<32xf32> to memref<4x8xf32>
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<32xf32> to memref<8x4xf32>
// CHECK-NEXT:    ta.loop [8, 4] (%i_outer, %i_inner) {
// CHECK-NEXT:      %[[C:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[M:.*]] = arith.muli %i_outer, %[[C]] : index
// CHECK-NEXT:      %i = arith.addi %[[M]], %i_inner : index
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d1, d0)>](%i_outer, %i_inner) : memref<4x8xf32>
// CHECK-NEXT:      %n = arith.index_cast %i : index to i32
// CHECK-NEXT:      %f = arith.sitofp %n : i32 to f32
// CHECK-NEXT:      %s = arith.addf %v, %f : f32
// CHECK-NEXT:      ta.store %s, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<8x4xf32>
ta.kernel @index_as_value(%x: memref<32xf32> {role = "in"}, %out: memref<32xf32> {role = "out"}) {
  ta.loop [32] (%i) {
    %v = ta.load %x[affine_map<(d0) -> ((d0 mod 4) * 8 + d0 floordiv 4)>](%i) : memref<32xf32>
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %s = arith.addf %v, %f : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<32xf32>
  }
}

// -----

// out = x.repeat_interleave(2) for x: f32[64]  (nearest upsampling: out[i] = x[i // 2])
// i splits into (64, 2) and i_inner becomes a broadcast dim of x.
// CHECK-LABEL: ta.kernel @upsample
// CHECK-NEXT:    %[[O:.*]] = ta.reshape %out : memref<128xf32> to memref<64x2xf32>
// CHECK-NEXT:    ta.loop [64, 2] (%i_outer, %i_inner) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1) -> (d0)>](%i_outer, %i_inner) : memref<64xf32>
// CHECK-NEXT:      ta.store %v, %[[O]][affine_map<(d0, d1) -> (d0, d1)>](%i_outer, %i_inner) : memref<64x2xf32>
ta.kernel @upsample(%x: memref<64xf32> {role = "in"}, %out: memref<128xf32> {role = "out"}) {
  ta.loop [128] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0 floordiv 2)>](%i) : memref<64xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<128xf32>
  }
}

// -----

// out = x[:, ::2] for x: f32[64, 256] passed N-D  (a strided N-D access: (i, 2j) is not
// a projected permutation; through its flat offset it becomes (i, j, 0) on [64, 128, 2])
// CHECK-LABEL: ta.kernel @strided_nd
// CHECK-NEXT:    %[[X:.*]] = ta.reshape %x : memref<64x256xf32> to memref<64x128x2xf32>
// CHECK-NEXT:    ta.loop [64, 128] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %[[X]][affine_map<(d0, d1) -> (d0, d1, 0)>](%i, %j) : memref<64x128x2xf32>
// CHECK-NEXT:      ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
ta.kernel @strided_nd(%x: memref<64x256xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1 * 2)>](%i, %j) : memref<64x256xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

// -----

// out = x.t() for x: f32[64, 128], out: f32[128, 64], both N-D and already a projected
// permutation: left as they are (the permutation (d1, d0) is what the tiler reads).
// CHECK-LABEL: ta.kernel @already_canonical
// CHECK-NEXT:    ta.loop [128, 64] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<64x128xf32>
// CHECK-NEXT:      ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x64xf32>
ta.kernel @already_canonical(%x: memref<64x128xf32> {role = "in"}, %out: memref<128x64xf32> {role = "out"}) {
  ta.loop [128, 64] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x64xf32>
  }
}
