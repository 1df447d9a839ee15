// table.index_add_(0, pos, x) for table: f32[64, 128], x: f32[12, 128] and 12 int32
// positions, repeats summing, by row DMAs in place (the KV-cache write idiom, with
// accumulation): the table stays in HBM, passed in and aliased to the output, and only
// the rows named move. Each grid step stores its 8 rows of x to VMEM and, in a loop over
// them (`pallas.loop`), reads the table's row at pos[8 i + r], adds row r (copied out of
// the rows at the loop's index) and writes the sum back, each DMA waited for: a later
// row to the same position reads what an earlier one wrote. Rows 4 to 7 of the second
// step are past the 12 positions: their loop runs each row under `8 i + r < 12`.
func.func @forward(%pos: tensor<12xi32>, %x: tensor<12x128xf32>, %table: tensor<64x128xf32> {pallas.donated}) -> tensor<64x128xf32> {
  %table_1 = pallas.call @accumulate(%pos, %x, %table) grid [2] prefetch 1
    in [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<any>]
    out [#pallas.block_spec<any>]
    semantics [arbitrary] scratch [!pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<1x128xf32, vmem>] aliases [2 -> 0]
    : (tensor<12xi32>, tensor<12x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
    kernel(%pos_ref: !pallas.ref<12xi32, smem>, %x_ref: !pallas.ref<8x128xf32, vmem>, %table_in: !pallas.ref<64x128xf32, any>, %table_hbm: !pallas.ref<64x128xf32, any>, %rows: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>, %old: !pallas.ref<1x128xf32, vmem>, %new: !pallas.ref<1x128xf32, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    pallas.store %v, %rows[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    %0 = arith.constant 0 : i32
    %1 = pallas.program_id 0 : i32
    %2 = arith.constant 8 : i32
    %3 = arith.muli %1, %2 : i32
    %first = arith.addi %0, %3 : i32
    pallas.loop %r = 0 to 4 {
      %at = arith.addi %first, %r : i32
      %row = pallas.read %pos_ref[%at] : !pallas.ref<12xi32, smem> -> i32
      pallas.dma_start %table_hbm[%row], %old[0], %sem : !pallas.ref<64x128xf32, any>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<i32, semaphore>
      pallas.dma_wait %table_hbm[%row], %old[0], %sem : !pallas.ref<64x128xf32, any>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<i32, semaphore>
      pallas.copy_row %rows[%r], %new[0] : !pallas.ref<8x128xf32, vmem>, !pallas.ref<1x128xf32, vmem>
      %old_row = pallas.load %old[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
      %new_row = pallas.load %new[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
      %sum = arith.addf %old_row, %new_row : tensor<1x128xf32>
      pallas.store %sum, %old[...] : tensor<1x128xf32>, !pallas.ref<1x128xf32, vmem>
      pallas.dma_write_start %old[0], %table_hbm[%row], %sem : !pallas.ref<1x128xf32, vmem>, !pallas.ref<64x128xf32, any>, !pallas.ref<i32, semaphore>
      pallas.dma_write_wait %old[0], %table_hbm[%row], %sem : !pallas.ref<1x128xf32, vmem>, !pallas.ref<64x128xf32, any>, !pallas.ref<i32, semaphore>
    }
    %count = arith.constant 12 : i32
    pallas.loop %r_1 = 4 to 8 {
      %at_1 = arith.addi %first, %r_1 : i32
      %inside = arith.cmpi slt, %at_1, %count : i32
      pallas.when %inside {
        %row_1 = pallas.read %pos_ref[%at_1] : !pallas.ref<12xi32, smem> -> i32
        pallas.dma_start %table_hbm[%row_1], %old[0], %sem : !pallas.ref<64x128xf32, any>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<i32, semaphore>
        pallas.dma_wait %table_hbm[%row_1], %old[0], %sem : !pallas.ref<64x128xf32, any>, !pallas.ref<1x128xf32, vmem>, !pallas.ref<i32, semaphore>
        pallas.copy_row %rows[%r_1], %new[0] : !pallas.ref<8x128xf32, vmem>, !pallas.ref<1x128xf32, vmem>
        %old_row_1 = pallas.load %old[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
        %new_row_1 = pallas.load %new[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
        %sum_1 = arith.addf %old_row_1, %new_row_1 : tensor<1x128xf32>
        pallas.store %sum_1, %old[...] : tensor<1x128xf32>, !pallas.ref<1x128xf32, vmem>
        pallas.dma_write_start %old[0], %table_hbm[%row_1], %sem : !pallas.ref<1x128xf32, vmem>, !pallas.ref<64x128xf32, any>, !pallas.ref<i32, semaphore>
        pallas.dma_write_wait %old[0], %table_hbm[%row_1], %sem : !pallas.ref<1x128xf32, vmem>, !pallas.ref<64x128xf32, any>, !pallas.ref<i32, semaphore>
      }
    }
  }
  func.return %table_1 : tensor<64x128xf32>
}
