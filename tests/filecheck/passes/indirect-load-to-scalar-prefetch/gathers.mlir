// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch | filecheck %s
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch,indirect-load-to-scalar-prefetch | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p indirect-load-to-scalar-prefetch
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch --remarks --verify-diagnostics

// Gathers the pass rewrites with the default options (strategy=auto, smem-budget 1 MiB,
// vmem-budget 8 MiB), as the torch frontend emits them: int64 index tensors, flat table
// storage, the symbol an index_cast of the loaded index. In every case the index buffer
// becomes a prefetch argument of its own type (int64 is narrowed to int32 by the tiler at
// the host boundary), the table is viewed with its torch shape so that each gathered dim
// is indexed by a bare symbol, and the load records the Pallas idiom auto chose by
// modelled HBM bytes (n lookups of D elements of s bytes: G1 prefetch n*D*s plus a 2*V*D*s
// relayout when it gathers the second-minor dim, G3 dma n*D*s, G4 vmem V*D*s).
// Running the pass twice gives the same IR (second RUN line).

// out = emb[idx] for emb: f32[1000, 256], idx: i64[64]
// 64 rows of 1 KiB: dma reads 64 KiB; prefetch would also relayout the 1 MB table to
// (1000, 1, 256) on every call; vmem would read all of it once.
ta.kernel @embedding(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{indirect-load-to-scalar-prefetch: applied to %emb: gather = #ta<gather_strategy dma>, table 1000x256xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 2113536 (65536 + 2048000 to relayout the table to 1000x1x256), dma 65536, vmem 1024000}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @embedding(
// CHECK-SAME:      %idx: memref<64xi64> {role = "prefetch"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
// CHECK-NEXT:    %emb_1000x256 = ta.reshape %emb : memref<256000xf32> to memref<1000x256xf32>
// CHECK-NEXT:    ta.loop [64, 256] (%i, %j) {
// CHECK-NEXT:      %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
// CHECK-NEXT:      %s = arith.index_cast %iv : i64 to index
// CHECK-NEXT:      %v = ta.load %emb_1000x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>
// CHECK-NEXT:      ta.store %v, %out

// -----

// The same lookup on a table that is already N-D, with int32 indices that the frontend
// already made a prefetch argument: nothing to reshape, the role stays.
ta.kernel @embedding_nd(%idx: memref<64xi32> {role = "prefetch"}, %emb: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi32>
    %s = arith.index_cast %iv : i32 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x256xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32)}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] : memref<1000x256xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @embedding_nd(
// CHECK-SAME:      %idx: memref<64xi32> {role = "prefetch"}, %emb: memref<1000x256xf32> {role = "in"}
// CHECK-NOT:     ta.reshape
// CHECK:         %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>

// -----

// out = emb[idx.long()] for emb: f32[1000, 256], idx: i32[64]: the frontend widens the
// int32 index to int64 before the cast to index; integer casts between the index load and
// the symbol are fine. The index buffer keeps its i32 type.
ta.kernel @widened_index(%idx: memref<64xi32> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi32>
    %wide = arith.extsi %iv : i32 to i64
    %s = arith.index_cast %wide : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x256xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32)}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @widened_index(
// CHECK-SAME:      %idx: memref<64xi32> {role = "prefetch"}
// CHECK:         %wide = arith.extsi %iv : i32 to i64
// CHECK-NEXT:    %s = arith.index_cast %wide : i64 to index
// CHECK-NEXT:    %v = ta.load %emb_1000x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>

// -----

// out = emb[idx] for emb: f32[1000, 128], idx: i64[8, 16] (an index of rank 2: out is
// f32[8, 16, 128]). All 128 indices go to SMEM; each loop point (b, s) picks row idx[b, s].
ta.kernel @index_rank2(%idx: memref<128xi64> {role = "in"}, %emb: memref<128000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [8, 16, 128] (%b, %t, %d) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2) -> (d0 * 16 + d1)>](%b, %t, %d) : memref<128xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx; indices in SMEM (512 B as i32); auto picked the fewest modelled HBM bytes: prefetch 1089536 (65536 + 1024000 to relayout the table to 1000x1x128), dma 65536, vmem 512000}}
    %v = ta.load %emb[affine_map<(d0, d1, d2)[s0] -> (s0 * 128 + d2)>](%b, %t, %d)[%s] : memref<128000xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 2048 + d1 * 128 + d2)>](%b, %t, %d) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @index_rank2(
// CHECK-SAME:      %idx: memref<128xi64> {role = "prefetch"}
// CHECK-NEXT:    %emb_1000x128 = ta.reshape %emb : memref<128000xf32> to memref<1000x128xf32>
// CHECK:         %v = ta.load %emb_1000x128[affine_map<(d0, d1, d2)[s0] -> (s0, d2)>](%b, %t, %d)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x128xf32>

// -----

// out = emb[idx] for emb: f32[1000, 128], idx: i64[2, 4, 8] (rank 3, stored N-D).
ta.kernel @index_rank3(%idx: memref<2x4x8xi64> {role = "in"}, %emb: memref<1000x128xf32> {role = "in"}, %out: memref<2x4x8x128xf32> {role = "out"}) {
  ta.loop [2, 4, 8, 128] (%a, %b, %c, %d) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>](%a, %b, %c, %d) : memref<2x4x8xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 1056768 (32768 + 1024000 to relayout the table to 1000x1x128), dma 32768, vmem 512000}}
    %v = ta.load %emb[affine_map<(d0, d1, d2, d3)[s0] -> (s0, d3)>](%a, %b, %c, %d)[%s] : memref<1000x128xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%a, %b, %c, %d) : memref<2x4x8x128xf32>
  }
}

// CHECK-LABEL: ta.kernel @index_rank3(
// CHECK-SAME:      %idx: memref<2x4x8xi64> {role = "prefetch"}
// CHECK:         ta.load %emb[affine_map<(d0, d1, d2, d3)[s0] -> (s0, d3)>](%a, %b, %c, %d)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x128xf32>

// -----

// out = x[:, idx, :] for x: f32[8, 1000, 128], idx: i64[16]: the gathered dim is the
// middle one. The view is x's own shape with the symbol on dim 1; prefetch would have to
// relayout x to (8, 1000, 1, 128), since a one-row block on the second-minor dim is illegal.
ta.kernel @middle_dim(%idx: memref<16xi64> {role = "in"}, %x: memref<1024000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [8, 16, 128] (%a, %i, %c) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2) -> (d1)>](%a, %i, %c) : memref<16xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %x: gather = #ta<gather_strategy dma>, table 8x1000x128xf32 gathered on dim 1 by %idx; indices in SMEM (64 B as i32); auto picked the fewest modelled HBM bytes: prefetch 8257536 (65536 + 8192000 to relayout the table to 8x1000x1x128), dma 65536, vmem 4096000}}
    %v = ta.load %x[affine_map<(d0, d1, d2)[s0] -> (d0 * 128000 + s0 * 128 + d2)>](%a, %i, %c)[%s] : memref<1024000xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 2048 + d1 * 128 + d2)>](%a, %i, %c) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @middle_dim(
// CHECK-SAME:      %idx: memref<16xi64> {role = "prefetch"}
// CHECK-NEXT:    %x_8x1000x128 = ta.reshape %x : memref<1024000xf32> to memref<8x1000x128xf32>
// CHECK:         %v = ta.load %x_8x1000x128[affine_map<(d0, d1, d2)[s0] -> (d0, s0, d2)>](%a, %i, %c)[%s] {gather = #ta<gather_strategy dma>} : memref<8x1000x128xf32>

// -----

// out = pages[idx] for pages: f32[64, 8, 128], idx: i64[16] (paged-attention style: a
// gathered "row" is a whole (8, 128) tile). The gathered dim is leading, so a one-page
// block is legal without any relayout: prefetch and dma both read 64 KiB and the tie
// goes to prefetch, a plain pipelined BlockSpec.
ta.kernel @pages(%idx: memref<16xi64> {role = "in"}, %pages: memref<65536xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16, 8, 128] (%i, %r, %c) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2) -> (d0)>](%i, %r, %c) : memref<16xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %pages: gather = #ta<gather_strategy prefetch>, table 64x8x128xf32 gathered on dim 0 by %idx; indices in SMEM (64 B as i32); auto picked the fewest modelled HBM bytes: prefetch 65536, dma 65536, vmem 262144}}
    %v = ta.load %pages[affine_map<(d0, d1, d2)[s0] -> (s0 * 1024 + d1 * 128 + d2)>](%i, %r, %c)[%s] : memref<65536xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 128 + d2)>](%i, %r, %c) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @pages(
// CHECK-SAME:      %idx: memref<16xi64> {role = "prefetch"}
// CHECK-NEXT:    %pages_64x8x128 = ta.reshape %pages : memref<65536xf32> to memref<64x8x128xf32>
// CHECK:         ta.load %pages_64x8x128[affine_map<(d0, d1, d2)[s0] -> (s0, d1, d2)>](%i, %r, %c)[%s] {gather = #ta<gather_strategy prefetch>} : memref<64x8x128xf32>

// -----

// out = emb[idx] for emb: f32[16, 256], idx: i64[128]: more lookups than rows, so the
// indices repeat. Reading the 16 KiB table once (vmem) beats reading 128 rows (128 KiB).
ta.kernel @duplicates(%idx: memref<128xi64> {role = "in"}, %emb: memref<4096xf32> {role = "in"}, %out: memref<32768xf32> {role = "out"}) {
  ta.loop [128, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy vmem>, table 16x256xf32 gathered on dim 0 by %idx; indices in SMEM (512 B as i32); auto picked the fewest modelled HBM bytes: prefetch 163840 (131072 + 32768 to relayout the table to 16x1x256), dma 131072, vmem 16384}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<4096xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<32768xf32>
  }
}

// CHECK-LABEL: ta.kernel @duplicates(
// CHECK-SAME:      %idx: memref<128xi64> {role = "prefetch"}
// CHECK:         ta.load %emb_16x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy vmem>} : memref<16x256xf32>

// -----

// out = tok[idx] + pos[pidx] for tok: f32[1000, 128], pos: f32[512, 128] and idx, pidx:
// i64[64] (two gathers in one kernel; Inductor's Pallas backend asserts on this). Both
// index buffers become prefetch arguments (512 B of SMEM together), each table gets its
// view, and each gather its own idiom.
ta.kernel @two_gathers(%idx: memref<64xi64> {role = "in"}, %pidx: memref<64xi64> {role = "in"}, %tok: memref<128000xf32> {role = "in"}, %pos: memref<65536xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %tok: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 1056768 (32768 + 1024000 to relayout the table to 1000x1x128), dma 32768, vmem 512000}}
    %t = ta.load %tok[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<128000xf32>
    %pv = ta.load %pidx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %ps = arith.index_cast %pv : i64 to index
    // expected-remark@+1 {{applied to %pos: gather = #ta<gather_strategy dma>, table 512x128xf32 gathered on dim 0 by %pidx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 557056 (32768 + 524288 to relayout the table to 512x1x128), dma 32768, vmem 262144}}
    %p = ta.load %pos[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%ps] : memref<65536xf32>
    %r = arith.addf %t, %p : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// CHECK-LABEL: ta.kernel @two_gathers(
// CHECK-SAME:      %idx: memref<64xi64> {role = "prefetch"}, %pidx: memref<64xi64> {role = "prefetch"}, %tok: memref<128000xf32> {role = "in"}, %pos: memref<65536xf32> {role = "in"}
// CHECK-NEXT:    %tok_1000x128 = ta.reshape %tok : memref<128000xf32> to memref<1000x128xf32>
// CHECK-NEXT:    %pos_512x128 = ta.reshape %pos : memref<65536xf32> to memref<512x128xf32>
// CHECK:         %t = ta.load %tok_1000x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x128xf32>
// CHECK:         %p = ta.load %pos_512x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ps] {gather = #ta<gather_strategy dma>} : memref<512x128xf32>
// CHECK-NEXT:    %r = arith.addf %t, %p : f32

// -----

// out = emb[idx] + emb[idx2] for emb: f32[1000, 128], idx, idx2: i64[64]: two gathers of
// the same table share one view of it.
ta.kernel @same_table(%idx: memref<64xi64> {role = "in"}, %idx2: memref<64xi64> {role = "in"}, %emb: memref<128000xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %a = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %sa = arith.index_cast %a : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx;}}
    %x = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%sa] : memref<128000xf32>
    %b = ta.load %idx2[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %sb = arith.index_cast %b : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx2;}}
    %y = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%sb] : memref<128000xf32>
    %r = arith.addf %x, %y : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// CHECK-LABEL: ta.kernel @same_table(
// CHECK-SAME:      %idx: memref<64xi64> {role = "prefetch"}, %idx2: memref<64xi64> {role = "prefetch"}
// CHECK-NEXT:    %emb_1000x128 = ta.reshape %emb : memref<128000xf32> to memref<1000x128xf32>
// CHECK-NOT:     ta.reshape
// CHECK:         %x = ta.load %emb_1000x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%sa] {gather = #ta<gather_strategy dma>}
// CHECK:         %y = ta.load %emb_1000x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%sb] {gather = #ta<gather_strategy dma>}

// -----

// out = emb[idx].sum(-1) for emb: f32[1000, 256], idx: i64[64]: a gather feeding a
// reduction; the row is walked by the reduction dim.
ta.kernel @gather_sum(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%i, %k) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x256xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 2113536 (65536 + 2048000 to relayout the table to 1000x1x256), dma 65536, vmem 1024000}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %k)[%s] : memref<256000xf32>
    %r = ta.reduce <sum> %v : f32
    ta.store %r, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// CHECK-LABEL: ta.kernel @gather_sum(
// CHECK-SAME:      %idx: memref<64xi64> {role = "prefetch"}
// CHECK:         ta.loop [64] reduce [256] (%i, %k) {
// CHECK:           %v = ta.load %emb_1000x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %k)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>
// CHECK-NEXT:      %r = ta.reduce <sum> %v : f32

// -----

// out = F.embedding_bag(idx, emb, mode="sum") for emb: f32[1000, 128], idx: i64[8, 4]:
// the index is read along a reduction dim; every bag sums 4 gathered rows.
ta.kernel @embedding_bag(%idx: memref<32xi64> {role = "in"}, %emb: memref<128000xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  ta.loop [8, 128] reduce [4] (%b, %d, %k) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2) -> (d0 * 4 + d2)>](%b, %d, %k) : memref<32xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx; indices in SMEM (128 B as i32); auto picked the fewest modelled HBM bytes: prefetch 1040384 (16384 + 1024000 to relayout the table to 1000x1x128), dma 16384, vmem 512000}}
    %v = ta.load %emb[affine_map<(d0, d1, d2)[s0] -> (s0 * 128 + d1)>](%b, %d, %k)[%s] : memref<128000xf32>
    %r = ta.reduce <sum> %v : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%b, %d) : memref<1024xf32>
  }
}

// CHECK-LABEL: ta.kernel @embedding_bag(
// CHECK-SAME:      %idx: memref<32xi64> {role = "prefetch"}
// CHECK:         ta.load %emb_1000x128[affine_map<(d0, d1, d2)[s0] -> (s0, d1)>](%b, %d, %k)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x128xf32>

// -----

// out = emb[idx] for emb: f32[1000, 100], idx: i64[64]: rows of 100 elements, not a
// multiple of 128 lanes. Still a gather: the row block spans the whole last dim.
ta.kernel @short_rows(%idx: memref<64xi64> {role = "in"}, %emb: memref<100000xf32> {role = "in"}, %out: memref<6400xf32> {role = "out"}) {
  ta.loop [64, 100] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x100xf32 gathered on dim 0 by %idx; rows of 100 elements are not a multiple of 128 lanes: legal, the block spans the whole last dim; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 825600 (25600 + 800000 to relayout the table to 1000x1x100), dma 25600, vmem 400000}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 100 + d1)>](%i, %j)[%s] : memref<100000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 100 + d1)>](%i, %j) : memref<6400xf32>
  }
}

// CHECK-LABEL: ta.kernel @short_rows(
// CHECK-SAME:      %idx: memref<64xi64> {role = "prefetch"}
// CHECK-NEXT:    %emb_1000x100 = ta.reshape %emb : memref<100000xf32> to memref<1000x100xf32>
// CHECK:         ta.load %emb_1000x100[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x100xf32>

// -----

// out = x[i0, i1] for x: f32[100, 50, 256], i0, i1: i64[64], with x already N-D (as after
// stride-to-reshape): two gathered dims, both bare symbols, so nothing to reshape. Both
// index buffers go to SMEM; the table (5 MB) is too big to keep in VMEM double-buffered.
// The flat-storage form of this program is in two-dims.mlir.
ta.kernel @two_dims_nd(%i0: memref<64xi64> {role = "in"}, %i1: memref<64xi64> {role = "in"}, %x: memref<100x50x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %a = ta.load %i0[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %sa = arith.index_cast %a : i64 to index
    %b = ta.load %i1[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %sb = arith.index_cast %b : i64 to index
    // expected-remark@+1 {{applied to %x: gather = #ta<gather_strategy dma>, table 100x50x256xf32 gathered on dims 0, 1 by %i0, %i1; indices in SMEM (512 B as i32); auto picked the fewest modelled HBM bytes: prefetch 10305536 (65536 + 10240000 to relayout the table to 100x50x1x256), dma 65536, vmem n/a (table 5734400 B in VMEM, double-buffered, exceeds vmem-budget 8388608)}}
    %v = ta.load %x[affine_map<(d0, d1)[s0, s1] -> (s0, s1, d1)>](%i, %j)[%sa, %sb] : memref<100x50x256xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @two_dims_nd(
// CHECK-SAME:      %i0: memref<64xi64> {role = "prefetch"}, %i1: memref<64xi64> {role = "prefetch"}
// CHECK-NOT:     ta.reshape
// CHECK:         %v = ta.load %x[affine_map<(d0, d1)[s0, s1] -> (s0, s1, d1)>](%i, %j)[%sa, %sb] {gather = #ta<gather_strategy dma>} : memref<100x50x256xf32>

// -----

// out = x[idx, idx] for x: f32[100, 100, 128], idx: i64[64], with the index load shared
// (one symbol for both dims): a diagonal pick, row x[idx[r], idx[r]] for lookup r. The
// same index buffer picks both leading dims (tile reads it once per dim).
ta.kernel @same_symbol_twice(%idx: memref<64xi64> {role = "in"}, %x: memref<100x100x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %x: gather = #ta<gather_strategy dma>, table 100x100x128xf32 gathered on dims 0, 1 by %idx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 10272768 (32768 + 10240000 to relayout the table to 100x100x1x128), dma 32768, vmem n/a (table 5324800 B in VMEM, double-buffered, exceeds vmem-budget 8388608)}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (s0, s0, d1)>](%i, %j)[%s] : memref<100x100x128xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

// CHECK-LABEL: ta.kernel @same_symbol_twice(
// CHECK-SAME:      %idx: memref<64xi64> {role = "prefetch"}
// CHECK:         %v = ta.load %x[affine_map<(d0, d1)[s0] -> (s0, s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<100x100x128xf32>
