// RUN: pallas-opt %s -p tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tl-to-pallas -o /dev/null

// out = x[1::2, 130:131] for x: f32[64, 256]: every other row, one lane past the first
// 128. Mosaic's strided load wants a 128-lane ref (measured: "The last dim size is not
// 128 in original base memref" for this 256-lane block), so the 32 rows come whole by
// row DMA from x left in HBM and the kernel slices lane 130 out of them.
tl.kernel @part_lanes(%x: memref<64x256xf32> {role = "in"}, %out: memref<32x1xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (1, 130)>](%i) strides [2, 1] : memref<64x256xf32> -> tensor<32x1xf32>
    tl.store %v, %out[affine_map<(d0) -> (0, 0)>](%i) : tensor<32x1xf32>, memref<32x1xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> memref<32x1xf32> {
  %out = ta.alloc : memref<32x1xf32>
  ta.launch @part_lanes(%x, %out) : memref<64x256xf32>, memref<32x1xf32>
  func.return %out : memref<32x1xf32>
}

// x stays in HBM; 32 whole rows of 256 lanes land in a VMEM scratch, one DMA each, in a
// loop over the rows (rows 1, 3, ..., 63: --verify-semantics checks the values), and
// the kernel keeps lane 130 of each.
// CHECK:       in [#pallas.block_spec<any>]
// CHECK:       scratch [!pallas.ref<32x256xf32, vmem>, !pallas.ref<i32, semaphore>]
// CHECK:       %[[START:.*]] = arith.constant 1 : i32
// CHECK-NEXT:  %[[STRIDE:.*]] = arith.constant 2 : i32
// CHECK-NEXT:  pallas.loop %r = 0 to 32 {
// CHECK-NEXT:    %[[STEP:.*]] = arith.muli %r, %[[STRIDE]] : i32
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[START]], %[[STEP]] : i32
// CHECK-NEXT:    pallas.dma_start %x_hbm[%[[AT]]], %rows[0 + %r], %sem
// CHECK-NEXT:  }
// CHECK-NEXT:  pallas.loop %r_1 = 0 to 32 {
// CHECK:         pallas.dma_wait %x_hbm[%{{.*}}], %rows[0 + %r_1], %sem
// CHECK-NEXT:  }
// CHECK-NEXT:  %v = pallas.load %rows[:, ds(130, 1)] : !pallas.ref<32x256xf32, vmem> -> tensor<32x1xf32>
