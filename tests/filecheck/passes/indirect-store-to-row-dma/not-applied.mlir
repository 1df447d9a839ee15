// RUN: pallas-opt %s --split-input-file -p indirect-store-to-row-dma | filecheck %s
// RUN: pallas-opt %s --split-input-file -p indirect-store-to-row-dma,indirect-store-to-row-dma | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p indirect-store-to-row-dma
// RUN: pallas-opt %s --split-input-file -p indirect-store-to-row-dma --remarks --verify-diagnostics

// Stores the pass leaves as they were, each with a remark saying why: the tiler then
// keeps the kernel on XLA (a scatter). The reference gives the same results before and
// after (third RUN line).

// torch.scatter(dim=0): an index per element, read at every point of the store: no
// row to write. Left as it was.
ta.kernel @elementwise(%idx: memref<6x256xi32> {role = "in"}, %src: memref<6x256xf32> {role = "in"}, %x: memref<40x256xf32> {role = "inout"}) {
  ta.loop [6, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xf32>
    // expected-remark@+1 {{indirect-store-to-row-dma: not applied to %x: the index is read at every point of a row: each index picks one element, not a row}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] : memref<40x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @elementwise(
// CHECK-SAME:      %idx: memref<6x256xi32> {role = "in"}

// -----

// Half of each row: a DMA of the whole row would write the other half too.
ta.kernel @part_rows(%idx: memref<6xi32> {role = "in"}, %src: memref<6x128xf32> {role = "in"}, %x: memref<40x256xf32> {role = "inout"}) {
  ta.loop [6, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x128xf32>
    // expected-remark@+1 {{not applied to %x: the store writes 128 of the 256 elements of a row}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] : memref<40x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @part_rows(
// CHECK-SAME:      %idx: memref<6xi32> {role = "in"}

// -----

// bf16 rows pack two to a 32-bit sublane: one of them cannot be DMA'd alone.
ta.kernel @packed_rows(%idx: memref<6xi32> {role = "in"}, %src: memref<6x256xbf16> {role = "in"}, %x: memref<40x256xbf16> {role = "inout"}) {
  ta.loop [6, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xbf16>
    // expected-remark@+1 {{not applied to %x: rows of bf16 pack several to a 32-bit sublane: a row DMA cannot write one of them}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] : memref<40x256xbf16>
  }
}

// CHECK-LABEL: ta.kernel @packed_rows(
// CHECK-SAME:      %idx: memref<6xi32> {role = "in"}

// -----

// The index is also stored as data: it stays an ordinary input.
ta.kernel @index_also_data(%idx: memref<6xi32> {role = "in"}, %src: memref<6x256xf32> {role = "in"}, %x: memref<40x256xf32> {role = "inout"}, %copy: memref<6xi32> {role = "out"}) {
  ta.loop [6, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xf32>
    // expected-remark@+1 {{not applied to %x: index buffer %idx is also read by ta.store, so it keeps its role}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] : memref<40x256xf32>
    ta.store %iv, %copy[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
  }
}

// CHECK-LABEL: ta.kernel @index_also_data(
// CHECK-SAME:      %idx: memref<6xi32> {role = "in"}

// -----

// A scatter-max (scatter_reduce amax): rows are written or summed, not maxed.
ta.kernel @scatter_max(%idx: memref<6xi32> {role = "in"}, %src: memref<6x256xf32> {role = "in"}, %x: memref<40x256xf32> {role = "inout"}) {
  ta.loop [6, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<6xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<6x256xf32>
    // expected-remark@+1 {{not applied to %x: the store accumulates with <max>; rows are added (<sum>) or written}}
    ta.store %v, %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] accumulate <max> : memref<40x256xf32>
  }
}

// CHECK-LABEL: ta.kernel @scatter_max(
// CHECK-SAME:      %idx: memref<6xi32> {role = "in"}

// -----

// A decode step's write at one position (row-scatters.mlir's @decode_write) with no
// loop dim of extent 1 to read the one index along: every point of a
// (b, h) pair's row writes at the one position, and the loop's rows are not the index's.
ta.kernel @one_index_no_unit_dim(%pos: memref<1xi32> {role = "in"}, %new: memref<1024xf32> {role = "in"}, %cache: memref<65536xf32> {role = "inout"}) {
  ta.loop [2, 4, 128] (%b, %h, %d) {
    %iv = ta.load %pos[affine_map<(d0, d1, d2) -> (0)>](%b, %h, %d) : memref<1xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %new[affine_map<(d0, d1, d2) -> (d0 * 512 + d1 * 128 + d2)>](%b, %h, %d) : memref<1024xf32>
    // expected-remark@+1 {{indirect-store-to-row-dma: not applied to %cache: the index is read from %pos at (d0, d1, d2) -> (0): consecutive along one loop dim is needed}}
    ta.store %v, %cache[affine_map<(d0, d1, d2)[s0] -> (d0 * 32768 + d1 * 8192 + s0 * 128 + d2)>](%b, %h, %d)[%s] : memref<65536xf32>
  }
}

// CHECK-LABEL: ta.kernel @one_index_no_unit_dim(
// CHECK-SAME:      %pos: memref<1xi32> {role = "in"}
