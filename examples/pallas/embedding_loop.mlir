// out = table[idx] for table: f32[1000, 256] and 64 int32 indices, as
// embedding_dma.mlir does it (the G3 idiom: the table stays in HBM, 8 rows a grid step by
// manual row DMA into a VMEM buffer), with the rows in `pallas.loop`s: one loop starts the
// step's 8 DMAs, each to row r of the buffer (`%rows[0 + %r]`), a second waits for them.
// The kernel holds one row's copy, not eight.
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
    pallas.loop %r = 0 to 8 {
      %at = arith.addi %base, %r : i32
      %row = pallas.read %idx_ref[%at] : !pallas.ref<64xi32, smem> -> i32
      pallas.dma_start %t_ref[%row], %rows[0 + %r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    }
    pallas.loop %r = 0 to 8 {
      %at = arith.addi %base, %r : i32
      %row = pallas.read %idx_ref[%at] : !pallas.ref<64xi32, smem> -> i32
      pallas.dma_wait %t_ref[%row], %rows[0 + %r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    }
    %v = pallas.load %rows[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    pallas.store %v, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
  }
  func.return %out : tensor<64x256xf32>
}
