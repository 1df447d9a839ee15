// RUN: pallas-opt %s -p fold-iota-indices,split-kernel-loops,indirect-load-to-one-hot-sum,fuse-epilogues,fuse-siblings,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,indirect-store-to-row-dma,raise-attention,fuse-epilogues{attention-raised=true},share-identical-kernels,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics | filecheck %s

// A norm's statistics over a residual stream emb[idx] + (a @ wo): the first run keeps
// them apart (a product's result), indirect-load-to-scalar-prefetch picks a gather
// strategy for the lookup (row DMAs), and the second run fuses them into the next
// product: the fused kernel keeps that strategy (the copied load keeps its
// attributes), where it once went to XLA.
ta.kernel @proj(%a: memref<64x256xf32> {role = "in"}, %wo: memref<256x256xf32> {role = "in"}, %t: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] reduce [256] (%r, %c, %k) {
    %u = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %k) : memref<64x256xf32>
    %w = ta.load %wo[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %k) : memref<256x256xf32>
    %p = arith.mulf %u, %w : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %c) : memref<16384xf32>
  }
}
ta.kernel @stats(%idx: memref<64xi32> {role = "in"}, %emb: memref<262144xf32> {role = "in"}, %t: memref<16384xf32> {role = "in"}, %ss: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %k) {
    %i = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%r, %k) : memref<64xi32>
    %ii = arith.index_cast %i : i32 to index
    %e = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%r, %k)[%ii] : memref<262144xf32>
    %o = ta.load %t[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<16384xf32>
    %h = arith.addf %e, %o : f32
    %h2 = arith.mulf %h, %h : f32
    %s = ta.reduce <sum> %h2 : f32
    ta.store %s, %ss[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
  }
}
ta.kernel @q(%x: memref<16384xf32> {role = "in"}, %ss: memref<64xf32> {role = "in"}, %w: memref<65536xf32> {role = "in"}, %o: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<16384xf32>
    %s = ta.load %ss[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<64xf32>
    %one = arith.constant 1.0 : f32
    %s1 = arith.addf %s, %one : f32
    %rs = math.rsqrt %s1 : f32
    %xh = arith.mulf %v, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 256 + d1)>](%r, %c, %k) : memref<65536xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %c) : memref<16384xf32>
  }
}
func.func @forward(%a: memref<64x256xf32>, %wo: memref<256x256xf32>, %idx: memref<64xi32>, %emb: memref<262144xf32>, %x: memref<16384xf32>, %w: memref<65536xf32>) -> memref<16384xf32> {
  %t = ta.alloc : memref<16384xf32>
  %ss = ta.alloc : memref<64xf32>
  %y = ta.alloc : memref<16384xf32>
  ta.launch @proj(%a, %wo, %t) : memref<64x256xf32>, memref<256x256xf32>, memref<16384xf32>
  ta.launch @stats(%idx, %emb, %t, %ss) : memref<64xi32>, memref<262144xf32>, memref<16384xf32>, memref<64xf32>
  ta.launch @q(%x, %ss, %w, %y) : memref<16384xf32>, memref<64xf32>, memref<65536xf32>, memref<16384xf32>
  func.return %y : memref<16384xf32>
}

// CHECK-NOT:   xla.func
// CHECK:       pallas.call @proj(
// CHECK:       pallas.call @stats_q(%idx, {{.*}}) grid [8, 1] prefetch 1
// CHECK:       pallas.dma_start %emb_1024x256_hbm
// CHECK-NOT:   xla.func
