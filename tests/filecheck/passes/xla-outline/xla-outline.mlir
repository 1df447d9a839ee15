// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline --remarks --verify-diagnostics -o /dev/null
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile-policy,xla-outline -o /dev/null

// xla-outline (ta → ta) moves what the tile policy cannot tile to XLA, and writes the
// policy's sizes on what is left. An anti-diagonal read (its lanes run backwards) in an
// element-wise kernel: the whole kernel runs on XLA as one fusion (no loop is tiled).
// CHECK-LABEL: ta.kernel @anti_diagonal
// CHECK-SAME:    attributes {target = #ta<target xla>}
// CHECK:         ta.loop [256] (%i) {
ta.kernel @anti_diagonal(%x: memref<256x256xf32> {role = "in"}, %out: memref<256xf32> {role = "out"}) {
  ta.loop [256] (%i) {
    // expected-remark@+1 {{tile: index 1 (((d0 * -1) + 255)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; @anti_diagonal runs on XLA as one fusion (moving only the access to XLA would write and read it once more)}}
    %v = ta.load %x[affine_map<(d0) -> (d0, 255 - d0)>](%i) : memref<256x256xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<256xf32>
  }
}
func.func @forward(%x: memref<256x256xf32>) -> memref<256xf32> {
  %out = ta.alloc : memref<256xf32>
  ta.launch @anti_diagonal(%x, %out) : memref<256x256xf32>, memref<256xf32>
  func.return %out : memref<256xf32>
}
// -----

// An anti-diagonal read beside a matrix product (which needs Pallas): only that read
// moves to an XLA kernel before the Pallas one, which gets the policy's tile sizes.
// CHECK-LABEL: ta.kernel @diag_matmul_0(%d: memref<128x128xf32> {role = "in"}, %xla: memref<128xf32> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access gather>}
// CHECK-NEXT:    ta.loop [128] (%x0) {
// CHECK-LABEL: ta.kernel @diag_matmul_1(%a: memref<128x128xf32> {role = "in"}, %b: memref<128x128xf32> {role = "in"}, %out: memref<128x128xf32> {role = "out"}, %xla: memref<128xf32> {role = "in"})
// CHECK-NEXT:    ta.loop [128, 128] reduce [128] (%i, %j, %k) attributes {tile_sizes = array<i64: 128, 128, 128>}
// CHECK:         ta.launch @diag_matmul_0(%d, %xla)
// CHECK-NEXT:    ta.launch @diag_matmul_1(%a, %b, %out, %xla)
// expected-remark@+1 {{xla-outline: @diag_matmul: to XLA: gather %s; the rest to tile}}
ta.kernel @diag_matmul(%a: memref<128x128xf32> {role = "in"}, %d: memref<128x128xf32> {role = "in"}, %b: memref<128x128xf32> {role = "in"}, %out: memref<128x128xf32> {role = "out"}) {
  ta.loop [128, 128] reduce [128] (%i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<128x128xf32>
    // expected-remark@+1 {{tile: index 1 (((d0 * -1) + 127)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; done by an XLA gather before the Pallas kernel @diag_matmul}}
    %s = ta.load %d[affine_map<(d0) -> (d0, 127 - d0)>](%i) : memref<128x128xf32>
    %y = ta.load %b[affine_map<(d0, d1) -> (d0, d1)>](%k, %j) : memref<128x128xf32>
    %xs = arith.mulf %x, %s : f32
    %p = arith.mulf %xs, %y : f32
    %r = ta.reduce <sum> %p : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x128xf32>
  }
}
func.func @forward(%a: memref<128x128xf32>, %d: memref<128x128xf32>, %b: memref<128x128xf32>) -> memref<128x128xf32> {
  %out = ta.alloc : memref<128x128xf32>
  ta.launch @diag_matmul(%a, %d, %b, %out) : memref<128x128xf32>, memref<128x128xf32>, memref<128x128xf32>, memref<128x128xf32>
  func.return %out : memref<128x128xf32>
}
// -----

// Two accesses no Pallas idiom covers beside a matrix product: x read with its rows
// flipped and the anti-diagonal of d. The plan classifies both at once and xla-outline
// moves both in one step, each to an XLA gather before the Pallas kernel (named after
// the kernel it is split from), then asks the policy once for the sizes of what is left.
// CHECK-LABEL: ta.kernel @two_odd_reads_0(%x: memref<64x128xf32> {role = "in"}, %xla: memref<64x128xf32> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access gather>}
// CHECK-NEXT:    ta.loop [64, 128] (%x0, %x1) {
// CHECK-NEXT:      %a = ta.load %x[affine_map<(d0, d1) -> (((d0 * -1) + 63), d1)>](%x0, %x1) : memref<64x128xf32>
// CHECK-LABEL: ta.kernel @two_odd_reads_1_0(%d: memref<64x64xf32> {role = "in"}, %xla: memref<64xf32> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access gather>}
// CHECK-NEXT:    ta.loop [64] (%x0) {
// CHECK-NEXT:      %s = ta.load %d[affine_map<(d0) -> (d0, ((d0 * -1) + 63))>](%x0) : memref<64x64xf32>
// CHECK-LABEL: ta.kernel @two_odd_reads_1_1(%w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}, %xla: memref<64x128xf32> {role = "in"}, %xla_1: memref<64xf32> {role = "in"})
// CHECK-NEXT:    ta.loop [64, 128] reduce [128] (%i, %j, %k) attributes {tile_sizes = array<i64: 64, 128, 128>}
// CHECK-NEXT:      %a = ta.load %xla[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x128xf32>
// CHECK-NEXT:      %s = ta.load %xla_1[affine_map<(d0, d1, d2) -> (d0)>](%i, %j, %k) : memref<64xf32>
// CHECK:         ta.launch @two_odd_reads_0(%x, %xla)
// CHECK-NEXT:    %xla_1 = ta.alloc : memref<64xf32>
// CHECK-NEXT:    ta.launch @two_odd_reads_1_0(%d, %xla_1)
// CHECK-NEXT:    ta.launch @two_odd_reads_1_1(%w, %out, %xla, %xla_1)
// expected-remark@+1 {{xla-outline: @two_odd_reads: to XLA: gather %a, gather %s; the rest to tile}}
ta.kernel @two_odd_reads(%x: memref<64x128xf32> {role = "in"}, %d: memref<64x64xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    // expected-remark@+1 {{tile: index 0 (((d0 * -1) + 63)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; done by an XLA gather before the Pallas kernel @two_odd_reads}}
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (63 - d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    // expected-remark@+1 {{tile: index 1 (((d0 * -1) + 63)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; done by an XLA gather before the Pallas kernel @two_odd_reads_1}}
    %s = ta.load %d[affine_map<(d0) -> (d0, 63 - d0)>](%i) : memref<64x64xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %as = arith.mulf %a, %s : f32
    %p = arith.mulf %as, %b : f32
    %r = ta.reduce <sum> %p : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %d: memref<64x64xf32>, %w: memref<128x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @two_odd_reads(%x, %d, %w, %out) : memref<64x128xf32>, memref<64x64xf32>, memref<128x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}
// -----

// Three accesses no Pallas idiom covers beside a matrix product, of three kinds: two odd
// reads (as above), and a store at row offset 3 of a 72-row buffer, which no tile size
// of loop dim 0 allows (its blocks would not be aligned). The plan has all three; the
// store becomes an XLA scatter after the Pallas kernel, which writes a dense buffer.
// CHECK-LABEL: ta.kernel @offset_store_1_1_0(%w: memref<128x128xf32> {role = "in"}, %xla: memref<64x128xf32> {role = "in"}, %xla_1: memref<64xf32> {role = "in"}, %xla_2: memref<64x128xf32> {role = "out"})
// CHECK-NEXT:    ta.loop [64, 128] reduce [128] (%i, %j, %k) attributes {tile_sizes = array<i64: 64, 128, 128>}
// CHECK:           ta.store %s, %xla_2[affine_map<(d0, d1, d2) -> (d0, d1)>](%i, %j, %k) : memref<64x128xf32>
// CHECK-LABEL: ta.kernel @offset_store_1_1_1(%out: memref<72x128xf32> {role = "inout"}, %xla: memref<64x128xf32> {role = "in"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access scatter>}
// CHECK:           ta.store %s, %out[affine_map<(d0, d1) -> ((d0 + 3), d1)>](%x0, %x1) : memref<72x128xf32>
// CHECK:         ta.launch @offset_store_0(%x, %xla)
// CHECK:         ta.launch @offset_store_1_0(%d, %xla_1)
// CHECK:         ta.launch @offset_store_1_1_0(%w, %xla, %xla_1, %xla_2)
// CHECK-NEXT:    ta.launch @offset_store_1_1_1(%out, %xla_2)
// expected-remark@+1 {{xla-outline: @offset_store: to XLA: gather %a, gather %q, scatter the store to %out; the rest to tile}}
ta.kernel @offset_store(%x: memref<64x128xf32> {role = "in"}, %d: memref<64x64xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<72x128xf32> {role = "inout"}) {
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    // expected-remark@+1 {{tile: index 0 (((d0 * -1) + 63)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; done by an XLA gather before the Pallas kernel @offset_store}}
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (63 - d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    // expected-remark@+1 {{tile: index 1 (((d0 * -1) + 63)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; done by an XLA gather before the Pallas kernel @offset_store_1}}
    %q = ta.load %d[affine_map<(d0) -> (d0, 63 - d0)>](%i) : memref<64x64xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %aq = arith.mulf %a, %q : f32
    %p = arith.mulf %aq, %b : f32
    %s = ta.reduce <sum> %p : f32
    // expected-remark@+1 {{tile: no legal tile size for loop dim 0 (extent 64); done by an XLA scatter after the Pallas kernel @offset_store_1_1}}
    ta.store %s, %out[affine_map<(d0, d1) -> (d0 + 3, d1)>](%i, %j) : memref<72x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %d: memref<64x64xf32>, %w: memref<128x128xf32>, %out: memref<72x128xf32>) -> memref<72x128xf32> {
  ta.launch @offset_store(%x, %d, %w, %out) : memref<64x128xf32>, memref<64x64xf32>, memref<128x128xf32>, memref<72x128xf32>
  func.return %out : memref<72x128xf32>
}
// -----

// A store of a row sum at the row alone (the sum varies along j, which its index does
// not use): the policy only finds this when it builds the tile, and moving the store to
// XLA would leave the same store, into the XLA kernel's buffer. The plan has nothing to
// move, and the one policy call after it sends the kernel to XLA whole (no retry).
// CHECK-LABEL: ta.kernel @varies(
// CHECK-SAME:      attributes {target = #ta<target xla>}
// CHECK-NOT:   ta.kernel
ta.kernel @varies(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}, %o2: memref<64xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    // expected-remark@+1 {{tile: the stored value varies along loop dim 1, which the store's index does not use; @varies runs on XLA (its outlining plan did not foresee this: to XLA: nothing; the rest to tile)}}
    ta.store %s, %o2[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  %o2 = ta.alloc : memref<64xf32>
  ta.launch @varies(%x, %w, %out, %o2) : memref<64x128xf32>, memref<128x128xf32>, memref<64x128xf32>, memref<64xf32>
  func.return %out : memref<64x128xf32>
}
// -----

// A scatter-add (an embedding's backward: rows picked by data, repeated ones adding
// up) that indirect-store-to-row-dma has not made a row scatter (it does not run
// here): nothing else needs Pallas, so the kernel runs on XLA whole, as one fusion.
// CHECK-LABEL: ta.kernel @scatter_add(
// CHECK-SAME:      attributes {target = #ta<target xla>}
// CHECK:         ta.store %g, %dw[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %d)[%row] accumulate <sum> : memref<1000x128xf32>
ta.kernel @scatter_add(%idx: memref<64xi32> {role = "in"}, %grad: memref<64x128xf32> {role = "in"}, %dw: memref<1000x128xf32> {role = "inout"}) {
  ta.loop [64, 128] (%i, %d) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %d) : memref<64xi32>
    %row = arith.index_cast %r : i32 to index
    %g = ta.load %grad[affine_map<(d0, d1) -> (d0, d1)>](%i, %d) : memref<64x128xf32>
    // expected-remark@+1 {{tile: a data-dependent store (a scatter) is tiled only as a row scatter (indirect-store-to-row-dma did not make it one); @scatter_add runs on XLA as one fusion (moving only the access to XLA would write and read it once more)}}
    ta.store %g, %dw[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %d)[%row] accumulate <sum> : memref<1000x128xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %grad: memref<64x128xf32>, %dw: memref<1000x128xf32>) -> memref<1000x128xf32> {
  ta.launch @scatter_add(%idx, %grad, %dw) : memref<64xi32>, memref<64x128xf32>, memref<1000x128xf32>
  func.return %dw : memref<1000x128xf32>
}
// -----

// A scatter of gathered rows (dw[idx[i]] += w[perm[i] + 1]): the store keeps the kernel on
// XLA whatever else moves, so the plan moves nothing first (an XLA gather or an XLA
// computation of the row indices would only add a kernel) and the kernel runs on XLA
// whole, its gather included.
// CHECK-LABEL: ta.kernel @scatter_rows(
// CHECK-SAME:      attributes {target = #ta<target xla>}
// CHECK-NOT:   ta.kernel
// CHECK-NOT:   xla_access
ta.kernel @scatter_rows(%idx: memref<64xi32> {role = "in"}, %perm: memref<64xi32> {role = "in"}, %w: memref<500x128xf32> {role = "in"}, %dw: memref<1000x128xf32> {role = "inout"}) {
  ta.loop [64, 128] (%i, %d) {
    %p = ta.load %perm[affine_map<(d0, d1) -> (d0)>](%i, %d) : memref<64xi32>
    %prow = arith.index_cast %p : i32 to index
    %g = ta.load %w[affine_map<(d0, d1)[s0] -> (s0 + 1, d1)>](%i, %d)[%prow] : memref<500x128xf32>
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %d) : memref<64xi32>
    %row = arith.index_cast %r : i32 to index
    // expected-remark@+1 {{tile: a data-dependent store (a scatter) is tiled only as a row scatter (indirect-store-to-row-dma did not make it one); @scatter_rows runs on XLA}}
    ta.store %g, %dw[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %d)[%row] accumulate <sum> : memref<1000x128xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %perm: memref<64xi32>, %w: memref<500x128xf32>, %dw: memref<1000x128xf32>) -> memref<1000x128xf32> {
  ta.launch @scatter_rows(%idx, %perm, %w, %dw) : memref<64xi32>, memref<64xi32>, memref<500x128xf32>, memref<1000x128xf32>
  func.return %dw : memref<1000x128xf32>
}
// -----

// Two tables gathered at one computed index (x[s[q[p[i]]]] * w[s[q[p[i]]]], a double
// indirection each): both index loads and both gathers are odd. The plan asks each of
// its questions about the loop the outlinings planned before leave: the first moves the
// chain ending in the gather of x, so the second (blamed on %d) moves the one ending in
// the gather of w, not that of x again (it used to, and the rewrite then found nothing
// left to move).
// CHECK-LABEL: ta.kernel @shared_index_0(
// CHECK-SAME:      xla_access = #ta<xla_access gather>
// CHECK:           %a = ta.load %x
// CHECK-LABEL: ta.kernel @shared_index_1_0(
// CHECK-SAME:      xla_access = #ta<xla_access gather>
// CHECK:           %b = ta.load %w
// CHECK-LABEL: ta.kernel @shared_index_1_1(%out: memref<8x128xf32> {role = "out"}, %xla: memref<8x128xf32> {role = "in"}, %xla_1: memref<8x128xf32> {role = "in"})
// CHECK-NEXT:    ta.loop [8, 128] (%i, %j) attributes {tile_sizes = array<i64: 8, 128>}
// expected-remark@+1 {{xla-outline: @shared_index: to XLA: gather %c, gather %d; the rest to tile}}
ta.kernel @shared_index(%p: memref<8xi32> {role = "in"}, %q: memref<8x128xi32> {role = "in"}, %s: memref<8x128xi32> {role = "in"}, %x: memref<8x128xf32> {role = "in"}, %w: memref<8x128xf32> {role = "in"}, %out: memref<8x128xf32> {role = "out"}) {
  ta.loop [8, 128] (%i, %j) {
    %r = ta.load %p[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<8xi32>
    %ri = arith.index_cast %r : i32 to index
    // expected-remark@+1 {{tile: the index depends on data and the load is not a gather (indirect-load-to-scalar-prefetch left it); done by an XLA gather before the Pallas kernel @shared_index}}
    %c = ta.load %q[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ri] : memref<8x128xi32>
    %ci = arith.index_cast %c : i32 to index
    // expected-remark@+1 {{tile: the index depends on data and the load is not a gather (indirect-load-to-scalar-prefetch left it); done by an XLA gather before the Pallas kernel @shared_index_1}}
    %d = ta.load %s[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ci] : memref<8x128xi32>
    %di = arith.index_cast %d : i32 to index
    %a = ta.load %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%di] : memref<8x128xf32>
    %b = ta.load %w[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%di] : memref<8x128xf32>
    %m = arith.mulf %a, %b : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x128xf32>
  }
}
func.func @forward(%p: memref<8xi32>, %q: memref<8x128xi32>, %s: memref<8x128xi32>, %x: memref<8x128xf32>, %w: memref<8x128xf32>) -> memref<8x128xf32> {
  %out = ta.alloc : memref<8x128xf32>
  ta.launch @shared_index(%p, %q, %s, %x, %w, %out) : memref<8xi32>, memref<8x128xi32>, memref<8x128xi32>, memref<8x128xf32>, memref<8x128xf32>, memref<8x128xf32>
  func.return %out : memref<8x128xf32>
}
