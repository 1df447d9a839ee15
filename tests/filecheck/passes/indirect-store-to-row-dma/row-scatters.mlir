// RUN: pallas-opt %s --split-input-file -p indirect-store-to-row-dma | filecheck %s
// RUN: pallas-opt %s --split-input-file -p indirect-store-to-row-dma,indirect-store-to-row-dma | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p indirect-store-to-row-dma
// RUN: pallas-opt %s --split-input-file -p indirect-store-to-row-dma --remarks --verify-diagnostics

// Row scatters as the torch frontend emits them: the written buffer flat and `inout`,
// the wrapped indices in a buffer of their own, the symbol an index_cast of the loaded
// index. The index buffer becomes a prefetch argument and the store moves onto the N-D
// view whose second-minor dim the symbol picks. Running the pass twice gives the same
// IR (second RUN line); the reference gives the same results before and after (third).

// cache[:, :, pos] = new for cache: f32[2, 4, 64, 128], new: f32[2, 4, 16, 128]
// (a KV-cache update).
ta.kernel @kv_update(%pos: memref<16xi32> {role = "in"}, %new: memref<16384xf32> {role = "in"}, %cache: memref<65536xf32> {role = "inout"}) {
  %new_4d = ta.reshape %new : memref<16384xf32> to memref<2x4x16x128xf32>
  ta.loop [2, 4, 16, 128] (%b, %h, %p, %d) {
    %iv = ta.load %pos[affine_map<(d0, d1, d2, d3) -> (d2)>](%b, %h, %p, %d) : memref<16xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %new_4d[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%b, %h, %p, %d) : memref<2x4x16x128xf32>
    // expected-remark@+1 {{indirect-store-to-row-dma: applied to %cache: rows of 2x4x64x128 by row DMA, indices %pos prefetched}}
    ta.store %v, %cache[affine_map<(d0, d1, d2, d3)[s0] -> (d0 * 32768 + d1 * 8192 + s0 * 128 + d3)>](%b, %h, %p, %d)[%s] : memref<65536xf32>
  }
}

// CHECK-LABEL: ta.kernel @kv_update(
// CHECK-SAME:      %pos: memref<16xi32> {role = "prefetch"}, %new: memref<16384xf32> {role = "in"}, %cache: memref<65536xf32> {role = "inout"}) {
// CHECK-NEXT:    %new_4d = ta.reshape %new
// CHECK-NEXT:    %cache_2x4x64x128 = ta.reshape %cache : memref<65536xf32> to memref<2x4x64x128xf32>
// CHECK:           ta.store %v, %cache_2x4x64x128[affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, s0, d3)>](%b, %h, %p, %d)[%s] : memref<2x4x64x128xf32>

// -----

// x.index_add_(0, idx, src) on an N-D buffer: the rows are summed (repeated indices
// add up), nothing to reshape.
ta.kernel @index_add(%idx: memref<6xi32> {role = "in"}, %src: memref<6x256xf32> {role = "in"}, %x: memref<40x256xf32> {role = "inout"}) {
  ta.loop [6, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xf32>
    // expected-remark@+1 {{applied to %x: rows of 40x256 by row DMA, indices %idx prefetched}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] accumulate <sum> : memref<40x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @index_add(
// CHECK-SAME:      %idx: memref<6xi32> {role = "prefetch"}
// CHECK:           ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] accumulate <sum> : memref<40x256xf32>

// -----

// A decode step's write at one position: cache[:, :, pos] = new for pos: i32[1], the
// loop's position dim of extent 1, and the frontend reading the one index at (0). It is
// read along that dim instead (the same element, as the dim is always 0), which makes
// the dim the row dim of the scatter.
ta.kernel @decode_write(%pos: memref<1xi32> {role = "in"}, %new: memref<1024xf32> {role = "in"}, %cache: memref<65536xf32> {role = "inout"}) {
  ta.loop [2, 4, 1, 128] (%b, %h, %p, %d) {
    %iv = ta.load %pos[affine_map<(d0, d1, d2, d3) -> (0)>](%b, %h, %p, %d) : memref<1xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %new[affine_map<(d0, d1, d2, d3) -> (d0 * 512 + d1 * 128 + d3)>](%b, %h, %p, %d) : memref<1024xf32>
    // expected-remark@+1 {{indirect-store-to-row-dma: applied to %cache: rows of 2x4x64x128 by row DMA, indices %pos prefetched}}
    ta.store %v, %cache[affine_map<(d0, d1, d2, d3)[s0] -> (d0 * 32768 + d1 * 8192 + s0 * 128 + d3)>](%b, %h, %p, %d)[%s] : memref<65536xf32>
  }
}

// CHECK-LABEL: ta.kernel @decode_write(
// CHECK-SAME:      %pos: memref<1xi32> {role = "prefetch"}
// CHECK:         %{{.*}} = ta.load %pos[affine_map<(d0, d1, d2, d3) -> (d2)>](%b, %h, %p, %d) : memref<1xi32>
// CHECK:         ta.store %v, %{{.*}}[affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, s0, d3)>](%b, %h, %p, %d)[%s] : memref<2x4x64x128xf32>

