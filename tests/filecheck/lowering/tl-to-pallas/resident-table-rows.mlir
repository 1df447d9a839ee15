// RUN: pallas-opt %s --split-input-file -p tl-to-pallas --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tl-to-pallas -t python | filecheck %s --check-prefix=PYTHON

// Lookups in a table resident in VMEM (`{table = "vmem"}`, the G4 idiom): the table is
// one whole block, fetched once. Of 32-bit data each row is copied through registers
// (`pallas.copy_row`: a load at a dynamic row and a store), with no DMA and no semaphore.
tl.kernel @lookup(%idx: memref<4096xi32> {role = "prefetch"}, %out: memref<4096x128xf32> {role = "out"}, %emb: memref<100x128xf32> {role = "in"}) {
  tl.grid [512] (parallel) (%i) {
    %v = tl.gather %emb, %idx[affine_map<(d0) -> ((d0 * 8))>](%i) {table = "vmem"} : memref<100x128xf32>, memref<4096xi32> -> tensor<8x128xf32>
    tl.store %v, %out[affine_map<(d0) -> ((d0 * 8), 0)>](%i) : tensor<8x128xf32>, memref<4096x128xf32>
  }
}
func.func @forward(%idx: memref<4096xi32>, %emb: memref<100x128xf32>) -> memref<4096x128xf32> {
  %out = ta.alloc : memref<4096x128xf32>
  ta.launch @lookup(%idx, %out, %emb) : memref<4096xi32>, memref<4096x128xf32>, memref<100x128xf32>
  func.return %out : memref<4096x128xf32>
}

// CHECK-LABEL: func.func @forward(%idx: tensor<4096xi32>, %emb: tensor<100x128xf32>)
// CHECK:         in [#pallas.block_spec<[100, 128], (d0) -> (0, 0)>]
// CHECK:         semantics [parallel] scratch [!pallas.ref<8x128xf32, vmem>]
// CHECK:         kernel(%idx_ref: !pallas.ref<4096xi32, smem>, %emb_vmem: !pallas.ref<100x128xf32, vmem>, %out_out: !pallas.ref<8x128xf32, vmem>, %rows: !pallas.ref<8x128xf32, vmem>) {
// CHECK-NOT:     pallas.dma_start
// CHECK:         pallas.loop %r = 0 to 8 {
// CHECK:           %[[AT:.*]] = arith.addi %{{.*}}, %r : i32
// CHECK:           %[[ROW:.*]] = pallas.read %idx_ref[%{{.*}}] : !pallas.ref<4096xi32, smem> -> i32
// CHECK-NEXT:      pallas.copy_row %emb_vmem[%[[ROW]]], %rows[0 + %r] : !pallas.ref<100x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:    }
// CHECK-NOT:     pallas.copy_row
// CHECK-NOT:     pallas.dma_wait
// CHECK:         pallas.load %rows[...]

// PYTHON-LABEL: def lookup_kernel(idx_ref, emb_vmem, out_out, rows):
// PYTHON:         @pl.loop(0, 8)
// PYTHON-NEXT:    def _loop(r):
// PYTHON:             rows[pl.ds(r, 1)] = emb_vmem[pl.ds(v_{{[0-9]+}}, 1)]
// PYTHON-NOT:     make_async_copy
// PYTHON-NOT:     rows[pl.ds(
// PYTHON:         scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)]

// -----

// Of 16-bit data a row is half a 32-bit sublane, which no load at a dynamic row
// addresses: each lookup copies the sublane's pair of rows by local DMA, and the kernel
// picks its row of the pair.
tl.kernel @lookup(%idx: memref<4096xi32> {role = "prefetch"}, %out: memref<4096x128xbf16> {role = "out"}, %emb: memref<100x128xbf16> {role = "in"}) {
  tl.grid [256] (parallel) (%i) {
    %v = tl.gather %emb, %idx[affine_map<(d0) -> ((d0 * 16))>](%i) {table = "vmem"} : memref<100x128xbf16>, memref<4096xi32> -> tensor<16x128xbf16>
    tl.store %v, %out[affine_map<(d0) -> ((d0 * 16), 0)>](%i) : tensor<16x128xbf16>, memref<4096x128xbf16>
  }
}
func.func @forward(%idx: memref<4096xi32>, %emb: memref<100x128xbf16>) -> memref<4096x128xbf16> {
  %out = ta.alloc : memref<4096x128xbf16>
  ta.launch @lookup(%idx, %out, %emb) : memref<4096xi32>, memref<4096x128xbf16>, memref<100x128xbf16>
  func.return %out : memref<4096x128xbf16>
}

// CHECK-LABEL: func.func @forward(%idx: tensor<4096xi32>, %emb: tensor<100x128xbf16>)
// CHECK:         semantics [parallel] scratch [!pallas.ref<16x2x128xbf16, vmem>, !pallas.ref<i32, semaphore>]
// CHECK-NOT:     pallas.copy_row
// CHECK:         pallas.dma_start %emb_vmem[%{{.*}}], %rows[0], %sem {rows = 2 : i64}

// -----

// Leading indices: each lookup is a row of `emb[h]`, `emb_vmem[h, pl.ds(row, 1)]`
// (AOT-compiled for v5e and v6e by hand: a dynamic index on a leading dim and a dynamic
// sublane offset).
tl.kernel @lookup(%h: memref<64xi32> {role = "prefetch"}, %r: memref<64xi32> {role = "prefetch"}, %out: memref<64x128xf32> {role = "out"}, %emb: memref<4x100x128xf32> {role = "in"}) {
  tl.grid [8] (parallel) (%i) {
    %v = tl.gather %emb, %h, %r[affine_map<(d0) -> ((d0 * 8))>](%i) {table = "vmem"} : memref<4x100x128xf32>, memref<64xi32>, memref<64xi32> -> tensor<8x128xf32>
    tl.store %v, %out[affine_map<(d0) -> ((d0 * 8), 0)>](%i) : tensor<8x128xf32>, memref<64x128xf32>
  }
}
func.func @forward(%h: memref<64xi32>, %r: memref<64xi32>, %emb: memref<4x100x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @lookup(%h, %r, %out, %emb) : memref<64xi32>, memref<64xi32>, memref<64x128xf32>, memref<4x100x128xf32>
  func.return %out : memref<64x128xf32>
}

// CHECK-LABEL: func.func @forward(%h: tensor<64xi32>, %r: tensor<64xi32>, %emb: tensor<4x100x128xf32>)
// CHECK:         semantics [parallel] scratch [!pallas.ref<8x128xf32, vmem>]
// CHECK:         pallas.loop %[[R:r_1]] = 0 to 8 {
// CHECK:           pallas.copy_row %emb_vmem at [%{{.*}}] [%{{.*}}], %rows[0 + %[[R]]] : !pallas.ref<4x100x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:    }
