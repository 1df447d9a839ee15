// RUN: pallas-opt %s -p stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch
// RUN: pallas-opt %s -p stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch | filecheck %s

// out = x.t()[::2] + emb[idx] for x: f32[256, 64] (so x.t() is [64, 256] with strides
// (1, 64), and [::2] makes them (2, 64)), emb: f32[1000, 256], idx: i64[32]. All three
// passes have work: x is a flat, strided and transposed view; emb is gathered.
//
// - stride-to-reshape: x's strides 64 (d1, extent 256) and 2 (d0, extent 32) are those of
//   the row-major view 256 x 32 x 2 of its 16384 elements; the step 2 is a split with
//   index 0, and the loop dims reach the buffer in the order (d1, d0): a permuted map.
// - stride-to-reshape also makes the contiguous flat store N-D: out is 32 x 256.
// - canonicalize-permutation: that map is already a projected permutation; it stays.
// - indirect-load-to-scalar-prefetch: idx becomes a prefetch buffer, emb is viewed as
//   1000 x 256 and gathered on dim 0 by the symbol.
// A second run of the three passes changes nothing (the third RUN line).

// CHECK-LABEL: ta.kernel @strided_transpose_gather(
// CHECK-SAME:    %idx: memref<32xi64> {role = "prefetch"}
// CHECK-DAG:     %[[X3:.*]] = ta.reshape %x : memref<16384xf32> to memref<256x32x2xf32>
// CHECK-DAG:     %[[E2:.*]] = ta.reshape %emb : memref<256000xf32> to memref<1000x256xf32>
// CHECK-DAG:     %[[O2:.*]] = ta.reshape %out : memref<8192xf32> to memref<32x256xf32>
// CHECK:         ta.load %[[X3]][affine_map<(d0, d1) -> (d1, d0, 0)>](%i, %j) : memref<256x32x2xf32>
// CHECK:         ta.load %[[E2]][affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather =
// CHECK:         ta.store %{{.*}}, %[[O2]][affine_map<(d0, d1) -> (d0, d1)>](%i, %j)
ta.kernel @strided_transpose_gather(%x: memref<16384xf32> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %idx: memref<32xi64> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [32, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 2 + d1 * 64)>](%i, %j) : memref<16384xf32>
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<32xi64>
    %s = arith.index_cast %r : i64 to index
    %e = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    %a = arith.addf %v, %e : f32
    ta.store %a, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<8192xf32>
  }
}
