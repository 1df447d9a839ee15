// RUN: pallas-opt %s --split-input-file -p xla-outline,tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p xla-outline,tile --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file --verify-semantics -p xla-outline,tile,tl-to-pallas

// Gathers whose idioms constrain each other or the table. --verify-semantics runs each
// case through the ta reference and the pallas reference on the same random data.

// out = x[idx] + y[idx] (broadcast over x's middle dim) for x: f32[32, 8, 128],
// y: f32[32, 128], idx: i32[8]. x's rows are (8, 128) slabs, one block a lookup by a
// scalar-prefetched index map; y's rows come by row DMA. The prefetched index picks one
// row a grid step, so the lookup dim takes tile 1 for both (y's DMAs would take 8 rows
// a step, and x's block would then be broadcast over all 8 lookups).
ta.kernel @prefetch_and_dma(%idx: memref<8xi32> {role = "prefetch"}, %x: memref<32x8x128xf32> {role = "in"}, %y: memref<32x128xf32> {role = "in"}, %out: memref<8x8x128xf32> {role = "out"}) {
  // expected-remark@+1 {{tile: @prefetch_and_dma: tiles [1, 8, 128] over loop [8, 8, 128], grid [8, 1, 1]}}
  ta.loop [8, 8, 128] (%i, %j, %k) {
    %r = ta.load %idx[affine_map<(d0, d1, d2) -> (d0)>](%i, %j, %k) : memref<8xi32>
    %s = arith.index_cast %r : i32 to index
    %a = ta.load %x[affine_map<(d0, d1, d2)[s0] -> (s0, d1, d2)>](%i, %j, %k)[%s] {gather = #ta<gather_strategy prefetch>} : memref<32x8x128xf32>
    // expected-remark@+1 {{tile: gather by row DMA, 1 rows per grid step}}
    %b = ta.load %y[affine_map<(d0, d1, d2)[s0] -> (s0, d2)>](%i, %j, %k)[%s] {gather = #ta<gather_strategy dma>} : memref<32x128xf32>
    %v = arith.addf %a, %b : f32
    ta.store %v, %out[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%i, %j, %k) : memref<8x8x128xf32>
  }
}
func.func @forward(%idx: memref<8xi32>, %x: memref<32x8x128xf32>, %y: memref<32x128xf32>) -> memref<8x8x128xf32> {
  %out = ta.alloc : memref<8x8x128xf32>
  ta.launch @prefetch_and_dma(%idx, %x, %y, %out) : memref<8xi32>, memref<32x8x128xf32>, memref<32x128xf32>, memref<8x8x128xf32>
  func.return %out : memref<8x8x128xf32>
}

// One lookup a step: x's block and y's row at the same prefetched index.
// CHECK:       tl.grid [8, 1, 1] (parallel, parallel, parallel) (%i, %j, %k) {
// CHECK-NEXT:    %r = tl.scalar_load %idx[affine_map<(d0, d1, d2) -> (d0)>](%i, %j, %k)
// CHECK-NEXT:    %a = tl.load %x[affine_map<(d0, d1, d2)[s0] -> (s0, 0, 0)>](%i, %j, %k)[%r] : memref<32x8x128xf32> -> tensor<1x8x128xf32>
// CHECK-NEXT:    %{{.*}} = tl.gather %y, %idx[affine_map<(d0, d1, d2) -> (d0)>](%i, %j, %k) : memref<32x128xf32>, memref<8xi32> -> tensor<1x128xf32>
// CHECK:         tl.store %v, %out[affine_map<(d0, d1, d2) -> (d0, 0, 0)>](%i, %j, %k) : tensor<1x8x128xf32>

// -----

// out = w[idx] * 2 for w: bf16[3, 128], idx: i32[16]. Rows of bf16 pack two to a 32-bit
// sublane; with an odd number of rows the table's HBM tiling admits neither a row DMA
// nor a one-row block at a dynamic row (measured with libtpu 0.0.42.1: the TPU
// compiler rejects both), so an XLA gather takes the rows and the kernel scales them.
// expected-remark@+1 {{xla-outline: @odd_bf16_rows: to XLA: gather %a; the rest to tile}}
ta.kernel @odd_bf16_rows(%idx: memref<16xi32> {role = "prefetch"}, %w: memref<3x128xbf16> {role = "in"}, %out: memref<16x128xbf16> {role = "out"}) {
  // expected-remark@+1 {{tile: @odd_bf16_rows_1: tiles [16, 128] over loop [16, 128], grid [1, 1]}}
  ta.loop [16, 128] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi32>
    %s = arith.index_cast %r : i32 to index
    // expected-remark@+1 {{tile: rows of bf16 pack 2 to a 32-bit sublane and the gathered dim (3 rows) is not a multiple of 2: no DMA or block addresses one row; done by an XLA gather before the Pallas kernel @odd_bf16_rows}}
    %a = ta.load %w[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = #ta<gather_strategy dma>} : memref<3x128xbf16>
    %c = arith.constant 2.0 : bf16
    %v = arith.mulf %a, %c : bf16
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<16x128xbf16>
  }
}
func.func @forward(%idx: memref<16xi32>, %w: memref<3x128xbf16>) -> memref<16x128xbf16> {
  %out = ta.alloc : memref<16x128xbf16>
  ta.launch @odd_bf16_rows(%idx, %w, %out) : memref<16xi32>, memref<3x128xbf16>, memref<16x128xbf16>
  func.return %out : memref<16x128xbf16>
}

// The gather moves to an XLA kernel that writes the 16 rows densely; the Pallas kernel
// reads them as one block and scales them.
// CHECK:       ta.kernel @odd_bf16_rows_0(%idx: memref<16xi32> {role = "prefetch"}, %w: memref<3x128xbf16> {role = "in"}, %xla: memref<16x128xbf16> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access gather>} {
// CHECK:           %a = ta.load %w[affine_map<(d0, d1)[s0] -> (s0, d1)>](%x0, %x1)[%s] : memref<3x128xbf16>
// CHECK-NEXT:      ta.store %a, %xla[affine_map<(d0, d1) -> (d0, d1)>](%x0, %x1) : memref<16x128xbf16>
// CHECK:       tl.kernel @odd_bf16_rows_1(%out: memref<16x128xbf16> {role = "out"}, %xla: memref<16x128xbf16> {role = "in"}) {
// CHECK:         %a = tl.load %xla[affine_map<(d0, d1) -> (0, 0)>](%i, %j) : memref<16x128xbf16> -> tensor<16x128xbf16>
// CHECK:       ta.launch @odd_bf16_rows_0(%idx, %w, %xla)
// CHECK-NEXT:  ta.launch @odd_bf16_rows_1(%out, %xla)
