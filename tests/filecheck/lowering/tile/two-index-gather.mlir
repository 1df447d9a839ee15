// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas | filecheck %s --check-prefix=PALLAS
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas -o /dev/null

// out = x[i0, i1] for x: f32[100, 50, 256], i0, i1: i32[64] (as indirect-load-to-scalar-
// prefetch marks it: gather = #ta<gather_strategy dma>). Each lookup names one row of 256 floats at
// x[i0[r], i1[r]]; a row of the second-minor dim cannot be a block (one row of 50) and
// viewing x as 5000 rows would relayout it (50 is not a multiple of 8), so each row
// comes by its own DMA from x left in HBM: 8 lookups per grid step.
ta.kernel @two_index_rows(%i0: memref<64xi32> {role = "prefetch"}, %i1: memref<64xi32> {role = "prefetch"}, %x: memref<100x50x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %a = ta.load %i0[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi32>
    %sa = arith.index_cast %a : i32 to index
    %b = ta.load %i1[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi32>
    %sb = arith.index_cast %b : i32 to index
    %v = ta.load %x[affine_map<(d0, d1)[s0, s1] -> (s0, s1, d1)>](%i, %j)[%sa, %sb] {gather = #ta<gather_strategy dma>} : memref<100x50x256xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xf32>
  }
}
func.func @forward(%i0: memref<64xi32>, %i1: memref<64xi32>, %x: memref<100x50x256xf32>) -> memref<64x256xf32> {
  %out = ta.alloc : memref<64x256xf32>
  ta.launch @two_index_rows(%i0, %i1, %x, %out) : memref<64xi32>, memref<64xi32>, memref<100x50x256xf32>, memref<64x256xf32>
  func.return %out : memref<64x256xf32>
}

// The tile: 8 rows of 256 (the lookup dim in 8s, the row whole), both index buffers
// read at the step's first lookup, 8 * i.
// CHECK:       tl.grid [8, 1] (parallel, parallel) (%i, %j) {
// CHECK-NEXT:    %{{.*}} = tl.gather %x, %i0, %i1[affine_map<(d0, d1) -> ((d0 * 8))>](%i, %j) : memref<100x50x256xf32>, memref<64xi32>, memref<64xi32> -> tensor<8x256xf32>

// Both index buffers are scalar-prefetched; row r of step i is x[i0[8i + r], i1[8i + r]],
// one DMA each, started in a loop over r and waited for in another: i0 is the leading
// index, i1 the row.
// PALLAS:       pallas.call @two_index_rows(%i0, %i1, %x)
// PALLAS-SAME:    prefetch 2
// PALLAS:         pallas.loop %r = 0 to 8 {
// PALLAS:           %[[A:.*]] = pallas.read %i0_ref[%{{.*}}] : !pallas.ref<64xi32, smem> -> i32
// PALLAS:           %[[B:.*]] = pallas.read %i1_ref[%{{.*}}] : !pallas.ref<64xi32, smem> -> i32
// PALLAS-NEXT:      pallas.dma_start %x_hbm at [%[[A]]] [%[[B]]], %rows[0 + %r], %sem : !pallas.ref<100x50x256xf32, any>, !pallas.ref<8x256xf32, vmem>
// PALLAS-NEXT:    }
// PALLAS-NEXT:    pallas.loop %r_1 = 0 to 8 {
// PALLAS:           %[[C:.*]] = pallas.read %i0_ref[%{{.*}}] : !pallas.ref<64xi32, smem> -> i32
// PALLAS:           %[[D:.*]] = pallas.read %i1_ref[%{{.*}}] : !pallas.ref<64xi32, smem> -> i32
// PALLAS-NEXT:      pallas.dma_wait %x_hbm at [%[[C]]] [%[[D]]], %rows[0 + %r_1], %sem
// PALLAS-NEXT:    }
