// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p indirect-load-to-scalar-prefetch
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// Indirect loads the pass leaves as ordinary loads, each with a remark saying why: the
// index buffer keeps its role, the table its flat storage, and no load gets a `gather`.
// --pass-statistics counts every indirect load once, by the reason it was left.

// STATS:      indirect-load-to-scalar-prefetch
// STATS-NEXT:   15 accesses seen
// STATS-NEXT:    1 rejected: element-wise gather
// STATS-NEXT:    1 rejected: flat index not separable
// STATS-NEXT:    5 rejected: gather on the lane dim
// STATS-NEXT:    2 rejected: gathered index is not a bare symbol
// STATS-NEXT:    3 rejected: index buffer has other uses
// STATS-NEXT:    1 rejected: index load is itself indirect
// STATS-NEXT:    1 rejected: symbol not loaded from an index buffer
// STATS-NEXT:    1 rejected: symbols unused

// out = emb.t()[idx] for emb: f32[256, 1000], idx: i64[64]: emb.t() is a view, so the
// index selects a column of the storage, i.e. it walks the lane (contiguous) dim.
ta.kernel @lane_flat(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{indirect-load-to-scalar-prefetch: not applied to %emb: symbol s0 indexes the lane (last, contiguous) dim: a lane gather has no row to fetch}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (d1 * 1000 + s0)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @lane_flat(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     ta.reshape
// CHECK:         %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (((d1 * 1000) + s0))>](%i, %j)[%s] : memref<256000xf32>

// -----

// out = x[:, idx] for x: f32[64, 1000], idx: i64[16], x already N-D.
ta.kernel @lane_nd(%idx: memref<16xi64> {role = "in"}, %x: memref<64x1000xf32> {role = "in"}, %out: memref<64x16xf32> {role = "out"}) {
  ta.loop [64, 16] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<16xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %x: the last (lane) table index s0 uses a symbol: a lane gather has no row to fetch}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (d0, s0)>](%i, %j)[%s] : memref<64x1000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x16xf32>
  }
}

// CHECK-LABEL: ta.kernel @lane_nd(
// CHECK-SAME:      %idx: memref<16xi64> {role = "in"}
// CHECK:         %v = ta.load %x[affine_map<(d0, d1)[s0] -> (d0, s0)>](%i, %j)[%s] : memref<64x1000xf32>

// -----

// out = torch.gather(x, 0, idx) for x: f32[100, 128], idx: i64[64, 128], i.e.
// out[i, j] = x[idx[i, j], j]: every output element has its own index, so no index picks
// a row: an element-wise gather.
ta.kernel @torch_gather_dim0(%idx: memref<8192xi64> {role = "in"}, %x: memref<12800xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %x: element-wise gather (torch.gather): the index is read at every loop point the table access depends on, so each index picks one element, not a row}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<12800xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// CHECK-LABEL: ta.kernel @torch_gather_dim0(
// CHECK-SAME:      %idx: memref<8192xi64> {role = "in"}
// CHECK-NOT:     ta.reshape
// CHECK:         %v = ta.load %x[affine_map<(d0, d1)[s0] -> (((s0 * 128) + d1))>](%i, %j)[%s] : memref<12800xf32>

// -----

// out = torch.gather(x, 1, idx) for x: f32[64, 100], idx: i64[64, 32]: element-wise, and
// along the lane dim, which is reported first.
ta.kernel @torch_gather_dim1(%idx: memref<2048xi64> {role = "in"}, %x: memref<6400xf32> {role = "in"}, %out: memref<2048xf32> {role = "out"}) {
  ta.loop [64, 32] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0 * 32 + d1)>](%i, %j) : memref<2048xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %x: symbol s0 indexes the lane (last, contiguous) dim}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (d0 * 100 + s0)>](%i, %j)[%s] : memref<6400xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 32 + d1)>](%i, %j) : memref<2048xf32>
  }
}

// CHECK-LABEL: ta.kernel @torch_gather_dim1(
// CHECK-SAME:      %idx: memref<2048xi64> {role = "in"}
// CHECK:         %v = ta.load %x[affine_map<(d0, d1)[s0] -> (((d0 * 100) + s0))>](%i, %j)[%s] : memref<6400xf32>

// -----

// out = emb[idx] + idx[:, None].float() for emb: f32[1000, 256], idx: i64[64]: idx is
// also data, which a prefetch (SMEM, scalar-only) argument cannot provide as a tile.
ta.kernel @index_is_data(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %emb: index buffer %idx is also read as data (by arith.sitofp), so it keeps its role}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    %f = arith.sitofp %iv : i64 to f32
    %r = arith.addf %v, %f : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @index_is_data(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     ta.reshape
// CHECK:         %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (((s0 * 256) + d1))>](%i, %j)[%s] : memref<256000xf32>

// -----

// out = a[idx] + b[:, idx].t() for a: f32[1000, 64], b: f32[64, 1000], idx: i64[64]:
// b's gather is on the lane dim, and since idx also feeds it, a's gather is left too.
ta.kernel @shared_with_lane(%idx: memref<64xi64> {role = "in"}, %a: memref<64000xf32> {role = "in"}, %b: memref<64000xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
  ta.loop [64, 64] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %a: index buffer %idx also indexes %b in a load this pass does not rewrite, so it keeps its role}}
    %x = ta.load %a[affine_map<(d0, d1)[s0] -> (s0 * 64 + d1)>](%i, %j)[%s] : memref<64000xf32>
    // expected-remark@+1 {{not applied to %b: symbol s0 indexes the lane (last, contiguous) dim}}
    %y = ta.load %b[affine_map<(d0, d1)[s0] -> (d1 * 1000 + s0)>](%i, %j)[%s] : memref<64000xf32>
    %r = arith.addf %x, %y : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %j) : memref<4096xf32>
  }
}

// CHECK-LABEL: ta.kernel @shared_with_lane(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     ta.reshape
// CHECK:         %x = ta.load %a[affine_map<(d0, d1)[s0] -> (((s0 * 64) + d1))>](%i, %j)[%s] : memref<64000xf32>

// -----

// out = emb[idx] with negative indices wrapped (idx + 1000 where idx < 0), as Inductor
// spells torch's indexing of emb: f32[1000, 256], idx: i64[64]. The symbol is computed
// from the index, not just cast, and the index map would have to replay that.
ta.kernel @wrapped_index(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %c0 = arith.constant 0 : i64
    %cv = arith.constant 1000 : i64
    %neg = arith.cmpi slt, %iv, %c0 : i64
    %up = arith.addi %iv, %cv : i64
    %w = arith.select %neg, %up, %iv : i64
    %s = arith.index_cast %w : i64 to index
    // expected-remark@+1 {{not applied to %emb: symbol s0 is computed by arith.select, not cast from a value loaded from an index buffer}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @wrapped_index(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK:         %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (((s0 * 256) + d1))>](%i, %j)[%s] : memref<256000xf32>

// -----

// out = emb[perm[idx]] for emb: f32[1000, 256], perm: i64[1000], idx: i64[64]: a double
// indirection. perm[idx] is a lane gather of a 1-D tensor, and emb's index is itself
// loaded indirectly.
ta.kernel @double_indirect(%idx: memref<64xi64> {role = "in"}, %perm: memref<1000xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %perm: symbol s0 indexes the lane (last, contiguous) dim}}
    %pv = ta.load %perm[affine_map<(d0, d1)[s0] -> (s0)>](%i, %j)[%s] : memref<1000xi64>
    %ps = arith.index_cast %pv : i64 to index
    // expected-remark@+1 {{not applied to %emb: symbol s0 is loaded from %perm, which is itself read indirectly}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%ps] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @double_indirect(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}, %perm: memref<1000xi64> {role = "in"}
// CHECK-NOT:     gather
// CHECK:         ta.store

// -----

// out = emb[idx]; idx += 1, fused into one kernel (emb: f32[1000, 256], idx: i64[64]):
// the kernel writes idx, so it cannot be a read-only prefetch argument.
ta.kernel @index_written(%idx: memref<64xi64> {role = "inout"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %emb: index buffer %idx has role 'inout': the kernel writes it, so it cannot be a prefetch argument}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
  ta.loop [64] (%i) {
    %iv = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
    %one = arith.constant 1 : i64
    %n = arith.addi %iv, %one : i64
    ta.store %n, %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
  }
}

// CHECK-LABEL: ta.kernel @index_written(
// CHECK-SAME:      %idx: memref<64xi64> {role = "inout"}
// CHECK-NOT:     gather
// CHECK:         ta.store %n

// -----

// out = emb[1:][idx] for emb: f32[1001, 256], idx: i64[64]: the view starts one row into
// the storage, so the row is idx + 1, not a bare prefetched index.
ta.kernel @offset_view(%idx: memref<64xi64> {role = "in"}, %emb: memref<256256xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %emb: symbol s0 is offset by the constant 256 (1 x its stride 256)}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1 + 256)>](%i, %j)[%s] : memref<256256xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @offset_view(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     gather
// CHECK:         ta.store

// -----

// out = emb.as_strided((1000, 128), (100, 1))[idx] for emb: f32[100000]: overlapping
// rows (128 elements every 100), which no contiguous N-D view separates.
ta.kernel @overlapping_rows(%idx: memref<64xi64> {role = "in"}, %emb: memref<100000xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %emb: d1 reaches 127 along a dim of 100 with stride 1: the access crosses rows}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 100 + d1)>](%i, %j)[%s] : memref<100000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// CHECK-LABEL: ta.kernel @overlapping_rows(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     gather
// CHECK:         ta.store

// -----

// out = emb[idx + 1] for emb: f32[1001, 256] already N-D (a view one row into the
// storage, after stride-to-reshape): the gathered index is not a bare symbol.
ta.kernel @offset_nd(%idx: memref<64xi64> {role = "in"}, %emb: memref<1001x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %emb: table index #0 is (s0 + 1): it combines a symbol with other terms}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 + 1, d1)>](%i, %j)[%s] : memref<1001x256xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @offset_nd(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     gather
// CHECK:         ta.store

// -----

// Not a frontend output: a symbol operand the map ignores. The load is not indirect.
ta.kernel @unused_symbol(%idx: memref<64xi64> {role = "in"}, %x: memref<16384xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{not applied to %x: the map does not use its symbols: the access is not indirect}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (d0 * 256 + d1)>](%i, %j)[%s] : memref<16384xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @unused_symbol(
// CHECK-SAME:      %idx: memref<64xi64> {role = "in"}
// CHECK-NOT:     gather
// CHECK:         ta.store
