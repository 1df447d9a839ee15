// out = table[idx] for table: f32[1000, 256] and 64 int32 indices, by manual row DMAs
// (the G3 idiom): the table stays in HBM (memory space any, no relayout), each grid
// step copies 8 rows into a VMEM buffer and writes them as one (8, 256) output block.
// Exactly the rows used move.
func.func @forward(%idx: tensor<64xi32>, %table: tensor<1000x256xf32>) -> tensor<64x256xf32> {
  %out = pallas.call @gather(%idx, %table) grid [8] prefetch 1
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %g = pallas.program_id 0 : i32
    %eight = arith.constant 8 : i32
    %base = arith.muli %g, %eight : i32
    %c0 = arith.constant 0 : i32
    %i0 = arith.addi %base, %c0 : i32
    %row0 = pallas.read %idx_ref[%i0] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row0], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c1 = arith.constant 1 : i32
    %i1 = arith.addi %base, %c1 : i32
    %row1 = pallas.read %idx_ref[%i1] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row1], %rows[1], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c2 = arith.constant 2 : i32
    %i2 = arith.addi %base, %c2 : i32
    %row2 = pallas.read %idx_ref[%i2] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row2], %rows[2], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c3 = arith.constant 3 : i32
    %i3 = arith.addi %base, %c3 : i32
    %row3 = pallas.read %idx_ref[%i3] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row3], %rows[3], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c4 = arith.constant 4 : i32
    %i4 = arith.addi %base, %c4 : i32
    %row4 = pallas.read %idx_ref[%i4] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row4], %rows[4], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c5 = arith.constant 5 : i32
    %i5 = arith.addi %base, %c5 : i32
    %row5 = pallas.read %idx_ref[%i5] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row5], %rows[5], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c6 = arith.constant 6 : i32
    %i6 = arith.addi %base, %c6 : i32
    %row6 = pallas.read %idx_ref[%i6] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row6], %rows[6], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c7 = arith.constant 7 : i32
    %i7 = arith.addi %base, %c7 : i32
    %row7 = pallas.read %idx_ref[%i7] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row7], %rows[7], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row0], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row1], %rows[1], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row2], %rows[2], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row3], %rows[3], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row4], %rows[4], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row5], %rows[5], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row6], %rows[6], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row7], %rows[7], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %v = pallas.load %rows[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    pallas.store %v, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
  }
  func.return %out : tensor<64x256xf32>
}
