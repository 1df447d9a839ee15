// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{strategy=prefetch}" | filecheck %s --check-prefix=PREFETCH
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{strategy=dma}" | filecheck %s --check-prefix=DMA
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{strategy=vmem}" | filecheck %s --check-prefix=VMEM
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{strategy=vmem}" --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=VMEM-REMARK
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{vmem-budget=32767}" | filecheck %s --check-prefix=SMALLVMEM
// RUN: pallas-opt %s --split-input-file -p "indirect-load-to-scalar-prefetch{vmem-budget=32768}" | filecheck %s --check-prefix=AUTO
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch | filecheck %s --check-prefix=AUTO
// RUN: pallas-opt %s --split-input-file -p indirect-load-to-scalar-prefetch --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=AUTO-REMARK
// RUN: pallas-opt %s --split-input-file --verify-semantics -p "indirect-load-to-scalar-prefetch{strategy=vmem}"
// RUN: not pallas-opt %s -p "indirect-load-to-scalar-prefetch{strategy=gather}" 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not pallas-opt %s -p "indirect-load-to-scalar-prefetch{smem-budget=0}" 2>&1 | filecheck %s --check-prefix=BADBUDGET

// A forced strategy is recorded as asked whatever the modelled bytes; only vmem can be
// refused (when the double-buffered table exceeds vmem-budget). Under auto, the
// embedding picks dma, the page table prefetch and the small table vmem (auto's reasons
// are in gathers.mlir); vmem-budget decides whether the small table may stay in VMEM.

// BAD: pallas-opt: error: bad pass options {{.*}}: indirect-load-to-scalar-prefetch: invalid value 'gather' for option 'strategy' (expected one of auto, prefetch, dma, vmem)
// BADBUDGET: pallas-opt: error: bad pass options {{.*}}: indirect-load-to-scalar-prefetch: invalid value 0 for option 'smem-budget' (expected a positive number of bytes)

// out = emb[idx] for emb: f32[1000, 256], idx: i64[64]
ta.kernel @embedding(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// PREFETCH-LABEL:  ta.kernel @embedding(%idx: memref<64xi64> {role = "prefetch"}
// PREFETCH:          ta.load %emb_1000x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy prefetch>} : memref<1000x256xf32>
// DMA-LABEL:       ta.kernel @embedding(%idx: memref<64xi64> {role = "prefetch"}
// DMA:               ta.load %emb_1000x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>
// VMEM-LABEL:      ta.kernel @embedding(%idx: memref<64xi64> {role = "prefetch"}
// VMEM:              ta.load %emb_1000x256[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy vmem>} : memref<1000x256xf32>
// VMEM-REMARK:     applied to %emb: gather = #ta<gather_strategy vmem>, table 1000x256xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32); strategy=vmem: prefetch 2113536 (65536 + 2048000 to relayout the table to 1000x1x256), dma 65536, vmem 1024000
// AUTO-LABEL:      ta.kernel @embedding(%idx: memref<64xi64> {role = "prefetch"}
// AUTO:              {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>
// AUTO-REMARK:     applied to %emb: gather = #ta<gather_strategy dma>
// SMALLVMEM-LABEL: ta.kernel @embedding(
// SMALLVMEM:         {gather = #ta<gather_strategy dma>} : memref<1000x256xf32>

// -----

// out = pages[idx] for pages: f32[64, 8, 128], idx: i64[16]
ta.kernel @pages(%idx: memref<16xi64> {role = "in"}, %pages: memref<65536xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [16, 8, 128] (%i, %r, %c) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2) -> (d0)>](%i, %r, %c) : memref<16xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %pages[affine_map<(d0, d1, d2)[s0] -> (s0 * 1024 + d1 * 128 + d2)>](%i, %r, %c)[%s] : memref<65536xf32>
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 128 + d2)>](%i, %r, %c) : memref<16384xf32>
  }
}

// PREFETCH-LABEL:  ta.kernel @pages(
// PREFETCH:          {gather = #ta<gather_strategy prefetch>} : memref<64x8x128xf32>
// DMA-LABEL:       ta.kernel @pages(
// DMA:               {gather = #ta<gather_strategy dma>} : memref<64x8x128xf32>
// VMEM-LABEL:      ta.kernel @pages(
// VMEM:              {gather = #ta<gather_strategy vmem>} : memref<64x8x128xf32>
// AUTO-LABEL:      ta.kernel @pages(
// AUTO:              {gather = #ta<gather_strategy prefetch>} : memref<64x8x128xf32>
// AUTO-REMARK:     applied to %pages: gather = #ta<gather_strategy prefetch>

// -----

// out = emb[idx] for emb: f32[16, 256] (16 KiB, 32 KiB double-buffered), idx: i64[128]
ta.kernel @small_table(%idx: memref<128xi64> {role = "in"}, %emb: memref<4096xf32> {role = "in"}, %out: memref<32768xf32> {role = "out"}) {
  ta.loop [128, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<4096xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<32768xf32>
  }
}

// PREFETCH-LABEL:  ta.kernel @small_table(
// PREFETCH:          {gather = #ta<gather_strategy prefetch>} : memref<16x256xf32>
// DMA-LABEL:       ta.kernel @small_table(
// DMA:               {gather = #ta<gather_strategy dma>} : memref<16x256xf32>
// VMEM-LABEL:      ta.kernel @small_table(
// VMEM:              {gather = #ta<gather_strategy vmem>} : memref<16x256xf32>
// AUTO-LABEL:      ta.kernel @small_table(
// AUTO:              {gather = #ta<gather_strategy vmem>} : memref<16x256xf32>
// AUTO-REMARK:     applied to %emb: gather = #ta<gather_strategy vmem>
// SMALLVMEM-LABEL: ta.kernel @small_table(
// SMALLVMEM:         {gather = #ta<gather_strategy dma>} : memref<16x256xf32>

// -----

// out = emb[idx] for emb: f32[4096, 512] (8 MiB: 16 MiB double-buffered), idx: i64[64]
ta.kernel @big_table(%idx: memref<64xi64> {role = "in"}, %emb: memref<2097152xf32> {role = "in"}, %out: memref<32768xf32> {role = "out"}) {
  ta.loop [64, 512] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 512 + d1)>](%i, %j)[%s] : memref<2097152xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 512 + d1)>](%i, %j) : memref<32768xf32>
  }
}

// PREFETCH-LABEL:  ta.kernel @big_table(%idx: memref<64xi64> {role = "prefetch"}
// PREFETCH:          {gather = #ta<gather_strategy prefetch>} : memref<4096x512xf32>
// DMA-LABEL:       ta.kernel @big_table(%idx: memref<64xi64> {role = "prefetch"}
// DMA:               {gather = #ta<gather_strategy dma>} : memref<4096x512xf32>

// strategy=vmem cannot keep this table resident, so the load is left alone.
// VMEM-LABEL:      ta.kernel @big_table(%idx: memref<64xi64> {role = "in"}
// VMEM-NOT:          ta.reshape
// VMEM:              %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (((s0 * 512) + d1))>](%i, %j)[%s] : memref<2097152xf32>
// VMEM-REMARK:     not applied to %emb: strategy=vmem, but the table (8388608 B in VMEM, double-buffered 16777216 B) does not fit vmem-budget 8388608
// AUTO-LABEL:      ta.kernel @big_table(
// AUTO:              {gather = #ta<gather_strategy dma>} : memref<4096x512xf32>
// AUTO-REMARK:     applied to %emb: gather = #ta<gather_strategy dma>, table 4096x512xf32 gathered on dim 0 by %idx; indices in SMEM (256 B as i32); auto picked the fewest modelled HBM bytes: prefetch 16908288 (131072 + 16777216 to relayout the table to 4096x1x512), dma 131072, vmem n/a (table 8388608 B in VMEM, double-buffered, exceeds vmem-budget 8388608)
