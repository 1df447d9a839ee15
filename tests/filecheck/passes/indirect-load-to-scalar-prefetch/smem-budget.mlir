// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{smem-budget=1024}" | filecheck %s
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{smem-budget=1024},indirect-load-to-scalar-prefetch{smem-budget=1024}" | filecheck %s
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{smem-budget=1024 strategy=dma}" | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p "indirect-load-to-scalar-prefetch{smem-budget=1024}"
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{smem-budget=1024}" --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{smem-budget=1024 strategy=prefetch}" | filecheck %s --check-prefix=FORCED
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{smem-budget=1024 strategy=vmem}" --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=FORCED-REMARK

// SMEM holds every prefetch argument of a kernel, each index as one 32-bit word, and they
// must stay below smem-budget (a full 1 MiB array already fails on TPU). A 1 KiB budget
// makes the limit easy to reach. Index arrays that do not fit stay ordinary inputs: under
// auto (and dma) their gathers become "dma_chunked", which streams the indices to SMEM
// in 4096-byte chunks (G3c); under prefetch and vmem the gathers are left alone.

// out = emb[idx] for emb: f32[1000, 128], idx: i64[256]: 256 indices take exactly 1 KiB.
ta.kernel @over(%idx: memref<256xi64> {role = "in"}, %emb: memref<128000xf32> {role = "in"}, %out: memref<32768xf32> {role = "out"}) {
  ta.loop [256, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<256xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{indirect-load-to-scalar-prefetch: applied to %emb: gather = #ta<gather_strategy dma_chunked>, table 1000x128xf32 gathered on dim 0 by %idx; index %idx (1024 B as i32) does not fit smem-budget 1024, so it stays an ordinary input streamed to SMEM in 4096-byte chunks; modelled HBM bytes 132096 (131072 rows + 1024 indices)}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<128000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<32768xf32>
  }
}

// CHECK-LABEL: ta.kernel @over(
// CHECK-SAME:      %idx: memref<256xi64> {role = "in"}
// CHECK-NEXT:    %emb_1000x128 = ta.reshape %emb : memref<128000xf32> to memref<1000x128xf32>
// CHECK:         ta.load %emb_1000x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma_chunked>} : memref<1000x128xf32>

// FORCED-LABEL: ta.kernel @over(
// FORCED-SAME:      %idx: memref<256xi64> {role = "in"}
// FORCED-NOT:     gather
// FORCED:         ta.store
// FORCED-REMARK: not applied to %emb: index %idx (1024 B as i32) does not fit smem-budget 1024; strategy=vmem needs the indices in SMEM (strategy=auto or dma would stream them)

// -----

// out = emb[idx] for emb: f32[1000, 128], idx: i64[255]: 1020 bytes, just under.
ta.kernel @under(%idx: memref<255xi64> {role = "in"}, %emb: memref<128000xf32> {role = "in"}, %out: memref<32640xf32> {role = "out"}) {
  ta.loop [255, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<255xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %emb: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx; indices in SMEM (1020 B as i32)}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<128000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<32640xf32>
  }
}

// CHECK-LABEL: ta.kernel @under(
// CHECK-SAME:      %idx: memref<255xi64> {role = "prefetch"}
// CHECK:         {gather = #ta<gather_strategy dma>} : memref<1000x128xf32>

// FORCED-LABEL: ta.kernel @under(
// FORCED-SAME:      %idx: memref<255xi64> {role = "prefetch"}
// FORCED:         {gather = #ta<gather_strategy prefetch>} : memref<1000x128xf32>

// -----

// out = tok[idx] + pos[pidx] for tok: f32[1000, 128], pos: f32[512, 128], idx, pidx:
// i64[128]: 512 B each. The kernel's SMEM is shared: idx (first in program order) fits,
// idx and pidx together (1 KiB) do not, so pos's gather streams pidx.
ta.kernel @shared_budget(%idx: memref<128xi64> {role = "in"}, %pidx: memref<128xi64> {role = "in"}, %tok: memref<128000xf32> {role = "in"}, %pos: memref<65536xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [128, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xi64>
    %s = arith.index_cast %iv : i64 to index
    // expected-remark@+1 {{applied to %tok: gather = #ta<gather_strategy dma>, table 1000x128xf32 gathered on dim 0 by %idx; indices in SMEM (512 B as i32)}}
    %t = ta.load %tok[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<128000xf32>
    %pv = ta.load %pidx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xi64>
    %ps = arith.index_cast %pv : i64 to index
    // expected-remark@+1 {{applied to %pos: gather = #ta<gather_strategy dma_chunked>, table 512x128xf32 gathered on dim 0 by %pidx; index %pidx (512 B as i32, with 512 B of other prefetch arguments) does not fit smem-budget 1024, so it stays an ordinary input streamed to SMEM in 4096-byte chunks; modelled HBM bytes 66048 (65536 rows + 512 indices)}}
    %p = ta.load %pos[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%ps] : memref<65536xf32>
    %r = arith.addf %t, %p : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @shared_budget(
// CHECK-SAME:      %idx: memref<128xi64> {role = "prefetch"}, %pidx: memref<128xi64> {role = "in"}
// CHECK:         %t = ta.load %tok_1000x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x128xf32>
// CHECK:         %p = ta.load %pos_512x128[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ps] {gather = #ta<gather_strategy dma_chunked>} : memref<512x128xf32>

// FORCED-LABEL: ta.kernel @shared_budget(
// FORCED-SAME:      %idx: memref<128xi64> {role = "prefetch"}, %pidx: memref<128xi64> {role = "in"}
// FORCED:         %t = ta.load %tok_1000x128[{{.*}}] {gather = #ta<gather_strategy prefetch>}
// FORCED:         %p = ta.load %pos[affine_map<(d0, d1)[s0] -> (((s0 * 128) + d1))>](%i, %j)[%ps] : memref<65536xf32>
// FORCED-REMARK: applied to %tok: gather = #ta<gather_strategy vmem>
// FORCED-REMARK: not applied to %pos: index %pidx (512 B as i32, with 512 B of other prefetch arguments) does not fit smem-budget 1024; strategy=vmem needs the indices in SMEM
