// RUN: pallas-opt %s --split-input-file -p tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tl-to-pallas -o /dev/null

// The KV-cache update: cache[b, h, pos[j]] = k[b, h, j] for 12 positions, 8 rows a
// step. The cache stays in HBM: passed in `any` and aliased to an `any` output, so the
// rows no position names keep their values and only the 2 * 4 * 12 rows written move.
// The index map's dim is sequential (arbitrary); b and h, the lead map's, stay
// parallel. Each step stores its tile to a VMEM scratch and writes row r to
// cache[b, h, pos[8 s + r]] by DMA, waiting before the next row, in a loop over the
// rows. The second step has 4 positions: rows 4 to 7 (a second loop) are guarded by
// `8 s + r < 12`; rows 0 to 3 never need it.
// (--verify-semantics runs the tl and the pallas module on the same random data.)
tl.kernel @update(%pos: memref<12xi32> {role = "prefetch"}, %k: memref<2x4x12x128xf32> {role = "in"}, %cache: memref<2x4x64x128xf32> {role = "inout"}) {
  tl.grid [2, 4, 2] (parallel, parallel, sequential) (%b, %h, %s) {
    %t = tl.load %k[affine_map<(d0, d1, d2) -> (d0, d1, d2 * 8, 0)>](%b, %h, %s) : memref<2x4x12x128xf32> -> tensor<1x1x8x128xf32>
    %v = tl.reshape %t : tensor<1x1x8x128xf32> to tensor<8x128xf32>
    tl.scatter %v, %cache[affine_map<(d0, d1, d2) -> (d0, d1)>], %pos[affine_map<(d0, d1, d2) -> (d2 * 8)>](%b, %h, %s) : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<12xi32>
  }
}
func.func @forward(%pos: memref<12xi32>, %k: memref<2x4x12x128xf32>, %cache: memref<2x4x64x128xf32>) -> memref<2x4x64x128xf32> {
  ta.launch @update(%pos, %k, %cache) : memref<12xi32>, memref<2x4x12x128xf32>, memref<2x4x64x128xf32>
  func.return %cache : memref<2x4x64x128xf32>
}

// CHECK-LABEL: func.func @forward(%pos: tensor<12xi32>, %k: tensor<2x4x12x128xf32>, %cache: tensor<2x4x64x128xf32> {pallas.donated}) -> tensor<2x4x64x128xf32> {
// CHECK-NEXT:    %cache_1 = pallas.call @update(%pos, %k, %cache) grid [2, 4, 2] prefetch 1
// CHECK-NEXT:      in [#pallas.block_spec<[1, 1, 8, 128], (d0, d1, d2) -> (d0, d1, d2, 0)>, #pallas.block_spec<any>]
// CHECK-NEXT:      out [#pallas.block_spec<any>]
// CHECK-NEXT:      semantics [parallel, parallel, arbitrary] scratch [!pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [2 -> 0]
// 12 positions * 2 * 4 heads * 512 B written, k read once, 48 B of positions.
// CHECK-NEXT:      attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 0, bytes_accessed = 98352>}
// CHECK-NEXT:      : (tensor<12xi32>, tensor<2x4x12x128xf32>, tensor<2x4x64x128xf32>) -> tensor<2x4x64x128xf32>
// CHECK-NEXT:      kernel(%pos_ref: !pallas.ref<12xi32, smem>, %k_ref: !pallas.ref<1x1x8x128xf32, vmem>, %cache_in: !pallas.ref<2x4x64x128xf32, any>, %cache_hbm: !pallas.ref<2x4x64x128xf32, any>, %rows: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
// CHECK:           pallas.store %v, %rows[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:      %0 = arith.constant 0 : i32
// CHECK:           %first = arith.addi
// CHECK-NEXT:      pallas.loop %r = 0 to 4 {
// CHECK-NEXT:        %at = arith.addi %first, %r : i32
// CHECK-NEXT:        %row = pallas.read %pos_ref[%at] : !pallas.ref<12xi32, smem> -> i32
// CHECK-NEXT:        pallas.dma_write_start %rows[0 + %r], %cache_hbm at [%lead, %lead_1] [%row], %sem
// CHECK-NEXT:        pallas.dma_write_wait %rows[0 + %r], %cache_hbm at [%lead, %lead_1] [%row], %sem
// CHECK-NEXT:      }
// CHECK-NEXT:      %count = arith.constant 12 : i32
// CHECK-NEXT:      pallas.loop %r_1 = 4 to 8 {
// CHECK-NEXT:        %at_1 = arith.addi %first, %r_1 : i32
// CHECK-NEXT:        %inside = arith.cmpi slt, %at_1, %count : i32
// CHECK-NEXT:        pallas.when %inside {
// CHECK-NEXT:          %row_1 = pallas.read %pos_ref[%at_1] : !pallas.ref<12xi32, smem> -> i32
// CHECK-NEXT:          pallas.dma_write_start %rows[0 + %r_1], %cache_hbm at [%lead, %lead_1] [%row_1], %sem : !pallas.ref<8x128xf32, vmem>, !pallas.ref<2x4x64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:          pallas.dma_write_wait %rows[0 + %r_1], %cache_hbm at [%lead, %lead_1] [%row_1], %sem : !pallas.ref<8x128xf32, vmem>, !pallas.ref<2x4x64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         func.return %cache_1 : tensor<2x4x64x128xf32>

// -----

// index_add: table[pos[j]] += x[j], repeated positions summing. Each row reads the
// table's row into a spare VMEM row (a DMA, waited for), copies its own row into
// another (at the loop's index), adds them, and writes the sum back: a later row to
// the same position reads what an earlier one wrote.
tl.kernel @accumulate(%pos: memref<12xi32> {role = "prefetch"}, %x: memref<12x128xf32> {role = "in"}, %table: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<12x128xf32> -> tensor<8x128xf32>
    tl.scatter %v, %table[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) accumulate <sum> : tensor<8x128xf32>, memref<64x128xf32>, memref<12xi32>
  }
}
func.func @forward(%pos: memref<12xi32>, %x: memref<12x128xf32>, %table: memref<64x128xf32>) -> memref<64x128xf32> {
  ta.launch @accumulate(%pos, %x, %table) : memref<12xi32>, memref<12x128xf32>, memref<64x128xf32>
  func.return %table : memref<64x128xf32>
}

// CHECK-LABEL: pallas.call @accumulate(%pos, %x, %table) grid [2] prefetch 1
// CHECK-NEXT:      in [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<any>]
// CHECK-NEXT:      out [#pallas.block_spec<any>]
// CHECK-NEXT:      semantics [arbitrary] scratch [!pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<1x128xf32, vmem>] aliases [2 -> 0]
// CHECK:           pallas.loop %r = 0 to 4 {
// CHECK:             %row = pallas.read %pos_ref[%at] : !pallas.ref<12xi32, smem> -> i32
// CHECK-NEXT:        pallas.dma_start %table_hbm[%row], %old[0], %sem : !pallas.ref<64x128xf32, any>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:        pallas.dma_wait %table_hbm[%row], %old[0], %sem : !pallas.ref<64x128xf32, any>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:        pallas.copy_row %rows[%r], %new[0] : !pallas.ref<8x128xf32, vmem>, !pallas.ref<1x128xf32, vmem>
// CHECK-NEXT:        %old_row = pallas.load %old[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
// CHECK-NEXT:        %new_row = pallas.load %new[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
// CHECK-NEXT:        %sum = arith.addf %old_row, %new_row : tensor<1x128xf32>
// CHECK-NEXT:        pallas.store %sum, %old[...] : tensor<1x128xf32>, !pallas.ref<1x128xf32, vmem>
// CHECK-NEXT:        pallas.dma_write_start %old[0], %table_hbm[%row], %sem : !pallas.ref<1x128xf32, vmem>, !pallas.ref<64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:        pallas.dma_write_wait %old[0], %table_hbm[%row], %sem : !pallas.ref<1x128xf32, vmem>, !pallas.ref<64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      }
// CHECK:           pallas.loop %r_1 = 4 to 8 {
// CHECK:             pallas.when %inside {
// CHECK-NEXT:          %row_1 = pallas.read %pos_ref[%at_1] : !pallas.ref<12xi32, smem> -> i32
// CHECK-NEXT:          pallas.dma_start %table_hbm[%row_1], %old[0], %sem

// -----

// A grid dim the lead map does not use (j: the two 128-lane halves of x, both written
// to the same cache rows) may send rows of different steps to one place, so it runs in
// order too: the later step wins, as the tl reference says.
tl.kernel @halves(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x256xf32> {role = "in"}, %cache: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2, 2] (parallel, sequential) (%j, %i) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d1 * 8, d0 * 128)>](%j, %i) : memref<16x256xf32> -> tensor<8x128xf32>
    tl.scatter %v, %cache[affine_map<(d0, d1) -> ()>], %pos[affine_map<(d0, d1) -> (d1 * 8)>](%j, %i) : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}
func.func @forward(%pos: memref<16xi32>, %x: memref<16x256xf32>, %cache: memref<64x128xf32>) -> memref<64x128xf32> {
  ta.launch @halves(%pos, %x, %cache) : memref<16xi32>, memref<16x256xf32>, memref<64x128xf32>
  func.return %cache : memref<64x128xf32>
}

// CHECK-LABEL: pallas.call @halves
// CHECK:           semantics [arbitrary, arbitrary] scratch [!pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [2 -> 0]
// CHECK-NOT:       pallas.when
// CHECK:           pallas.loop %r = 0 to 8 {
// CHECK-NOT:         pallas.when
// CHECK:             pallas.dma_write_start %rows[0 + %r], %cache_hbm[%row], %sem
// CHECK-NOT:       pallas.loop
