// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile-policy,xla-outline,tile,tl-to-pallas
// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile,tl-to-pallas | filecheck %s --check-prefix=PALLAS
// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile,tl-to-pallas --cost-report 2>&1 >/dev/null | filecheck %s --check-prefix=COST

// The tiler's fallback: a kernel with an access no Pallas idiom covers runs whole on
// XLA as one fusion when nothing else in it needs Pallas; beside a matrix product or a
// gather's row DMAs, only the access moves to a `ta.kernel {target = #ta<target xla>}` that
// @forward calls (an XLA gather before the Pallas kernel, or an XLA scatter after it)
// and the rest is tiled as usual. A kernel with 64-bit data runs on XLA whole; a
// gather of whole rows at a computed row moves only its row indices to XLA. --verify-semantics runs every case through the ta reference and the
// pallas reference (which runs XLA kernels with the ta reference).

// An anti-diagonal read, out = x.flip(1).diagonal() * 3: its lanes run backwards, which
// no Pallas idiom covers. The rest of the kernel is element-wise, so it runs whole on XLA
// as one fusion (outlining the read would write and read it once more).
ta.kernel @anti_diag(%x: memref<64x64xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    // expected-remark@+1 {{tile: index 1 (((d0 * -1) + 63)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; @anti_diag runs on XLA as one fusion (moving only the access to XLA would write and read it once more)}}
    %v = ta.load %x[affine_map<(d0) -> (d0, 63 - d0)>](%i) : memref<64x64xf32>
    %c = arith.constant 3.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x64xf32>) -> memref<64xf32> {
  %out = ta.alloc : memref<64xf32>
  ta.launch @anti_diag(%x, %out) : memref<64x64xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}

// CHECK-LABEL: ta.kernel @anti_diag(
// CHECK-SAME:      attributes {target = #ta<target xla>} {
// CHECK-NEXT:    ta.loop [64] (%i) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0) -> (d0, ((d0 * -1) + 63))>](%i) : memref<64x64xf32>
// CHECK:           arith.mulf
// CHECK-NOT:   tl.kernel

// PALLAS:       func.func @forward(%x: tensor<64x64xf32>) -> tensor<64xf32> {
// PALLAS-NEXT:    %out = pallas.xla_call @anti_diag(%x) : (tensor<64x64xf32>) -> tensor<64xf32>
// PALLAS-NOT:     pallas.call

// It needs the 64 anti-diagonal floats and writes 64 (512 B), but each x[i, 63 - i] lies
// in a different row of 64 lanes, and HBM moves a row's lanes whole: all of x (16384 B).
// COST:      pallas.xla_call @anti_diag  (XLA kernel)
// COST-NEXT:   HBM read 16384 B, written 256 B, modelled 16640 B, minimum 512 B
// COST:      total: modelled 16640 B, minimum 512 B, ratio 32.500

// -----


// out = x.flip(0) @ w for x: f32[64, 128], w: f32[128, 128]: the flipped read (a
// negative row step) has no Pallas idiom, but the matrix product wants the MXU: an XLA
// gather writes the flipped rows to a dense buffer, and the Pallas kernel multiplies.
// expected-remark@+1 {{xla-outline: @flip_matmul: to XLA: gather %a; the rest to tile}}
ta.kernel @flip_matmul(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  // expected-remark@+1 {{tile: @flip_matmul_1: tiles [64, 128, 128] over loop [64, 128, 128], grid [1, 1]}}
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    // expected-remark@+1 {{tile: index 0 (((d0 * -1) + 63)) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first; done by an XLA gather before the Pallas kernel @flip_matmul}}
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (63 - d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @flip_matmul(%x, %w, %out) : memref<64x128xf32>, memref<128x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}

// CHECK-LABEL: ta.kernel @flip_matmul_0(
// CHECK-SAME:      %x: memref<64x128xf32> {role = "in"}, %xla: memref<64x128xf32> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access gather>}
// CHECK-NEXT:    ta.loop [64, 128] (%x0, %x1) {
// CHECK-NEXT:      %a = ta.load %x[affine_map<(d0, d1) -> (((d0 * -1) + 63), d1)>](%x0, %x1) : memref<64x128xf32>
// CHECK-NEXT:      ta.store %a, %xla[affine_map<(d0, d1) -> (d0, d1)>](%x0, %x1) : memref<64x128xf32>
// CHECK:       tl.kernel @flip_matmul_1(%w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}, %xla: memref<64x128xf32> {role = "in"})
// CHECK:         %0 = tl.load %xla
// CHECK:         tl.dot %0, %1
// CHECK:       func.func @forward
// CHECK:         %xla = ta.alloc : memref<64x128xf32>
// CHECK-NEXT:    ta.launch @flip_matmul_0(%x, %xla)
// CHECK-NEXT:    ta.launch @flip_matmul_1(%w, %out, %xla)

// PALLAS:       func.func @forward
// PALLAS-NEXT:    %xla = pallas.xla_call @flip_matmul_0(%x) : (tensor<64x128xf32>) -> tensor<64x128xf32>
// PALLAS-NEXT:    %out = pallas.call @flip_matmul_1(%xla, %w)

// The gather reads the 64 rows and writes them flipped (2 x 32768 B), an extra pass;
// the matmul reads x's rows (from the gathered buffer) and w, and writes out.
// COST:      pallas.call @flip_matmul_1
// COST-NEXT:   HBM read 98304 B, written 32768 B, modelled 131072 B, minimum 131072 B, ratio 1.000
// COST:      pallas.xla_call @flip_matmul_0  (XLA gather)
// COST-NEXT:   HBM read 32768 B, written 32768 B, modelled 65536 B, minimum 0 B
// COST:      total: modelled 196608 B, minimum 131072 B, ratio 1.500

// -----


// out[:, ::2] = x @ w for out: f32[64, 256] (inout), x: f32[64, 128], w: f32[128, 128]:
// the store writes every other lane, part of every block (there are no masked stores).
// The Pallas kernel writes the product to a dense buffer; an XLA scatter puts it in
// place, keeping the other lanes of out.
// expected-remark@+1 {{xla-outline: @strided_store: to XLA: scatter the store to %out; the rest to tile}}
ta.kernel @strided_store(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128x2xf32> {role = "inout"}) {
  // expected-remark@+1 {{tile: @strided_store_0: tiles [64, 128, 128] over loop [64, 128, 128], grid [1, 1]}}
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    // expected-remark@+1 {{tile: the store writes one element of dim 2 (2 elements) where a block must hold the whole dim; masked stores are not supported; done by an XLA scatter after the Pallas kernel @strided_store}}
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1, 0)>](%i, %j) : memref<64x128x2xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x128xf32>, %out: memref<64x128x2xf32>) -> memref<64x128x2xf32> {
  ta.launch @strided_store(%x, %w, %out) : memref<64x128xf32>, memref<128x128xf32>, memref<64x128x2xf32>
  func.return %out : memref<64x128x2xf32>
}

// CHECK-LABEL: tl.kernel @strided_store_0(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %xla: memref<64x128xf32> {role = "out"})
// CHECK:         tl.dot
// CHECK:         tl.store %2, %xla
// CHECK:       ta.kernel @strided_store_1(
// CHECK-SAME:      %out: memref<64x128x2xf32> {role = "inout"}, %xla: memref<64x128xf32> {role = "in"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access scatter>}
// CHECK-NEXT:    ta.loop [64, 128] (%x0, %x1) {
// CHECK-NEXT:      %s = ta.load %xla[affine_map<(d0, d1) -> (d0, d1)>](%x0, %x1) : memref<64x128xf32>
// CHECK-NEXT:      ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1, 0)>](%x0, %x1) : memref<64x128x2xf32>
// CHECK:       func.func @forward
// CHECK:         ta.launch @strided_store_0(%x, %w, %xla)
// CHECK-NEXT:    ta.launch @strided_store_1(%out, %xla)

// PALLAS:       func.func @forward
// PALLAS:         %xla = pallas.call @strided_store_0(%x, %w)
// PALLAS:         %out_1 = pallas.xla_call @strided_store_1(%out, %xla) : (tensor<64x128x2xf32>, tensor<64x128xf32>) -> tensor<64x128x2xf32>
// PALLAS-NEXT:    func.return %out_1

// -----

// A store that reads back its own buffer, out[i, 0] = out[i, 1] + 1 for out: f32[64, 2]
// (inout): the store writes part of every block. The kernel is element-wise, so it
// runs whole on XLA, where the read and the write keep their order.
ta.kernel @read_back(%out: memref<64x2xf32> {role = "inout"}) {
  ta.loop [64] (%i) {
    %v = ta.load %out[affine_map<(d0) -> (d0, 1)>](%i) : memref<64x2xf32>
    %one = arith.constant 1.0 : f32
    %w = arith.addf %v, %one : f32
    // expected-remark@+1 {{tile: the store writes one element of dim 1 (2 elements) where a block must hold the whole dim; masked stores are not supported; @read_back runs on XLA as one fusion (moving only the access to XLA would write and read it once more)}}
    ta.store %w, %out[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x2xf32>
  }
}
func.func @forward(%out: memref<64x2xf32>) -> memref<64x2xf32> {
  ta.launch @read_back(%out) : memref<64x2xf32>
  func.return %out : memref<64x2xf32>
}

// CHECK-LABEL: ta.kernel @read_back(%out: memref<64x2xf32> {role = "inout"}) attributes {target = #ta<target xla>}

// PALLAS:       func.func @forward(%out: tensor<64x2xf32> {pallas.donated}) -> tensor<64x2xf32> {
// PALLAS-NEXT:    %out_1 = pallas.xla_call @read_back(%out)

// -----

// out = x[perm[idx]] * 2 for x: f32[1000, 128], perm: i32[1000], idx: i32[64], as a
// double indirection that indirect-load-to-scalar-prefetch leaves alone. The rows of x
// are whole, so only the row index perm[idx] (both loads) goes to XLA, in one step, and
// the kernel gathers the rows by row DMA.
// expected-remark@+1 {{xla-outline: @double_indirect: to XLA: index %pv; the rest to tile}}
ta.kernel @double_indirect(%idx: memref<64xi32> {role = "in"}, %perm: memref<1000xi32> {role = "in"}, %x: memref<1000x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  // expected-remark@+1 {{tile: @double_indirect_1: tiles [8, 128] over loop [64, 128], grid [8, 1]}}
  ta.loop [64, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi32>
    %s = arith.index_cast %iv : i32 to index
    // expected-remark@+1 {{tile: the index depends on data and the load is not a gather (indirect-load-to-scalar-prefetch left it); done by an XLA computation of the row indices before the Pallas kernel @double_indirect}}
    %pv = ta.load %perm[affine_map<(d0, d1)[s0] -> (s0)>](%i, %j)[%s] : memref<1000xi32>
    %ps = arith.index_cast %pv : i32 to index
    // expected-remark@+1 {{tile: gather by row DMA, 8 rows per grid step}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%ps] : memref<1000x128xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %perm: memref<1000xi32>, %x: memref<1000x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @double_indirect(%idx, %perm, %x, %out) : memref<64xi32>, memref<1000xi32>, memref<1000x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}

// CHECK-LABEL: ta.kernel @double_indirect_0(
// CHECK-SAME:      %rows: memref<64xi32> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access index>}
// CHECK-NEXT:    ta.loop [64] (%x0) {
// CHECK-NEXT:      %iv = ta.load %idx
// CHECK-NEXT:      %s = arith.index_cast %iv
// CHECK-NEXT:      %pv = ta.load %perm[affine_map<(d0)[s0] -> (s0)>](%x0)[%s]
// CHECK-NEXT:      %ps = arith.index_cast %pv
// CHECK-NEXT:      %{{.*}} = arith.index_cast %ps : index to i32
// CHECK-NEXT:      ta.store %{{.*}}, %rows
// CHECK:       tl.kernel @double_indirect_1(%x: memref<1000x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}, %rows: memref<64xi32> {role = "prefetch"})
// CHECK:         tl.gather %x, %rows[affine_map<(d0, d1) -> ((d0 * 8))>](%i, %j)

// -----

// idx += 1 on int64 indices: TPU kernels have no 64-bit types, so the kernel runs on
// XLA whole (and the program has no Pallas call).
ta.kernel @increment(%idx: memref<64xi64> {role = "inout"}) {
  ta.loop [64] (%i) {
    // expected-remark@+1 {{tile: TPU kernels have no 64-bit types and 'ta.load' uses i64: @increment runs on XLA}}
    %iv = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
    %one = arith.constant 1 : i64
    %n = arith.addi %iv, %one : i64
    ta.store %n, %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
  }
}
func.func @forward(%idx: memref<64xi64>) -> memref<64xi64> {
  ta.launch @increment(%idx) : memref<64xi64>
  func.return %idx : memref<64xi64>
}

// CHECK-LABEL: ta.kernel @increment(%idx: memref<64xi64> {role = "inout"}) attributes {target = #ta<target xla>}
// CHECK-NOT:   tl.kernel
// PALLAS:      %idx_1 = pallas.xla_call @increment(%idx) : (tensor<64xi64>) -> tensor<64xi64>
// COST:        pallas.xla_call @increment  (XLA kernel)
// COST-NEXT:     HBM read 512 B, written 512 B, modelled 1024 B, minimum 1024 B

// -----

// out = emb[idx] with torch's wrap of negative indices (idx + 1000 where idx < 0), for
// emb: f32[1000, 256] held as rows on the host. The rows are whole: only the row index
// (the wrap) moves to XLA, as i32, and the kernel gathers the rows by row DMA from emb
// left in HBM (G3): the rows move once.
// expected-remark@+1 {{xla-outline: @wrapped: to XLA: index %v; the rest to tile}}
ta.kernel @wrapped(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  // expected-remark@+1 {{tile: @wrapped_1: tiles [8, 256] over loop [64, 256], grid [8, 1]}}
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %c0 = arith.constant 0 : i64
    %cv = arith.constant 1000 : i64
    %neg = arith.cmpi slt, %iv, %c0 : i64
    %up = arith.addi %iv, %cv : i64
    %w = arith.select %neg, %up, %iv : i64
    %s = arith.index_cast %w : i64 to index
    // expected-remark@+2 {{tile: the index depends on data and the load is not a gather (indirect-load-to-scalar-prefetch left it); done by an XLA computation of the row indices before the Pallas kernel @wrapped}}
    // expected-remark@+1 {{tile: gather by row DMA, 8 rows per grid step}}
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<1000x256xf32>) -> memref<64x256xf32> {
  %e = ta.reshape %emb : memref<1000x256xf32> to memref<256000xf32>
  %out = ta.alloc : memref<64x256xf32>
  %o = ta.reshape %out : memref<64x256xf32> to memref<16384xf32>
  ta.launch @wrapped(%idx, %e, %o) : memref<64xi64>, memref<256000xf32>, memref<16384xf32>
  func.return %out : memref<64x256xf32>
}

// CHECK-LABEL: ta.kernel @wrapped_0(%idx: memref<64xi64> {role = "in"}, %rows: memref<64xi32> {role = "out"}) attributes {target = #ta<target xla>, xla_access = #ta<xla_access index>}
// CHECK:           %w = arith.select %neg, %up, %iv : i64
// CHECK-NEXT:      %s = arith.index_cast %w : i64 to index
// CHECK-NEXT:      %{{.*}} = arith.index_cast %s : index to i32
// CHECK-NEXT:      ta.store %{{.*}}, %rows[affine_map<(d0) -> (d0)>](%x0) : memref<64xi32>
// CHECK:       tl.kernel @wrapped_1(
// CHECK-SAME:      %rows: memref<64xi32> {role = "prefetch"}
// CHECK:           %v = tl.gather %{{.*}}, %rows[affine_map<(d0, d1) -> ((d0 * 8))>](%i, %j) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>

// The rows move once (65536 B) and the indices twice more (the i64 read and the i32
// write of the XLA step, and the i32 prefetch): ratio 1.006.
// COST:      pallas.call @wrapped_1
// COST:        in       %emb_hbm        65536 B in 64 DMAs
// COST:      pallas.xla_call @wrapped_0  (XLA index)
// COST-NEXT:   HBM read 512 B, written 256 B, modelled 768 B, minimum 0 B
// COST:      total: modelled 132096 B, minimum 131328 B, ratio 1.006

// -----

// out[i] = y[x[i].argmax()] for x: f32[64, 128], y: f32[128]: the index needs a
// reduction of the same loop, so no access can move out before the kernel and the
// load is not a gather; the kernel runs on XLA whole, as the ta reference runs it.
ta.kernel @by_argmax(%x: memref<64x128xf32> {role = "in"}, %y: memref<128xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x128xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    %s = arith.index_cast %a : i32 to index
    // expected-remark@+1 {{tile: the index depends on data and the load is not a gather (indirect-load-to-scalar-prefetch left it); @by_argmax runs on XLA}}
    %w = ta.load %y[affine_map<(d0, d1)[s0] -> (s0)>](%i, %k)[%s] : memref<128xf32>
    ta.store %w, %out[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<64xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %y: memref<128xf32>) -> memref<64xf32> {
  %out = ta.alloc : memref<64xf32>
  ta.launch @by_argmax(%x, %y, %out) : memref<64x128xf32>, memref<128xf32>, memref<64xf32>
  func.return %out : memref<64xf32>
}

// CHECK-LABEL: ta.kernel @by_argmax(
// CHECK-SAME:      attributes {target = #ta<target xla>}
