// RUN: PALLAS_ROUNDTRIP
// RUN: PALLAS_GENERIC_ROUNDTRIP
// RUN: pallas-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC

// Every ta op and syntax form, in realistic kernels. The custom and the generic round
// trips must both reproduce the input. Note: xDSL prints affine expressions with extra
// parentheses, so `d0 * 256 + d1 * 2` comes back as `((d0 * 256) + (d1 * 2))`; the
// CHECK lines below spell that normalised form, which has the same meaning.

// An elementwise square over flat storage: x is read with stride 2 along j.
ta.kernel @mul(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
    %m = arith.mulf %v, %v : f32
    ta.store %m, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// An accumulation into an inout buffer, through a reshape of the flat input;
// `attributes` on the kernel and on the loop.
ta.kernel @acc(%x: memref<8192xf32> {role = "in"}, %acc: memref<64x128xf32> {role = "inout"}) attributes {fused = 2 : i64} {
  %x2 = ta.reshape %x : memref<8192xf32> to memref<64x128xf32>
  ta.loop [64, 128] (%i, %j) attributes {note = "acc"} {
    %a = ta.load %x2[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %b = ta.load %acc[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %c = arith.addf %a, %b : f32
    ta.store %c, %acc[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

// The host side: intermediate buffers, launches in program order, a host reshape.
func.func @forward(%x: memref<16384xf32>) -> memref<64x128xf32> {
  %tmp = ta.alloc : memref<8192xf32>
  %acc = ta.alloc {zeroed} : memref<64x128xf32>
  ta.launch @mul(%x, %tmp) : memref<16384xf32>, memref<8192xf32>
  ta.launch @acc(%tmp, %acc) : memref<8192xf32>, memref<64x128xf32>
  %flat = ta.reshape %acc : memref<64x128xf32> to memref<8192xf32>
  func.return %acc : memref<64x128xf32>
}

// CHECK-LABEL: ta.kernel @mul(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [64, 128] (%i, %j) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1) -> (((d0 * 256) + (d1 * 2)))>](%i, %j) : memref<16384xf32>
// CHECK-NEXT:      %m = arith.mulf %v, %v : f32
// CHECK-NEXT:      ta.store %m, %out[affine_map<(d0, d1) -> (((d0 * 128) + d1))>](%i, %j) : memref<8192xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: ta.kernel @acc(%x: memref<8192xf32> {role = "in"}, %acc: memref<64x128xf32> {role = "inout"}) attributes {fused = 2 : i64} {
// CHECK-NEXT:    %x2 = ta.reshape %x : memref<8192xf32> to memref<64x128xf32>
// CHECK-NEXT:    ta.loop [64, 128] (%i, %j) attributes {note = "acc"} {
// CHECK-NEXT:      %a = ta.load %x2[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
// CHECK-NEXT:      %b = ta.load %acc[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
// CHECK-NEXT:      %c = arith.addf %a, %b : f32
// CHECK-NEXT:      ta.store %c, %acc[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @forward(%x: memref<16384xf32>) -> memref<64x128xf32> {
// CHECK-NEXT:    %tmp = ta.alloc : memref<8192xf32>
// CHECK-NEXT:    %acc = ta.alloc {zeroed} : memref<64x128xf32>
// CHECK-NEXT:    ta.launch @mul(%x, %tmp) : memref<16384xf32>, memref<8192xf32>
// CHECK-NEXT:    ta.launch @acc(%tmp, %acc) : memref<8192xf32>, memref<64x128xf32>
// CHECK-NEXT:    %flat = ta.reshape %acc : memref<64x128xf32> to memref<8192xf32>
// CHECK-NEXT:    func.return %acc : memref<64x128xf32>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "mul", roles = [#ta<arg_role in>, #ta<arg_role out>]}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: memref<16384xf32>, %out: memref<8192xf32>):
// CHECK-GENERIC-NEXT:    "ta.loop"() <{bounds = array<i64: 64, 128>, reduce_bounds = array<i64>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%i: index, %j: index):
// CHECK-GENERIC-NEXT:      %v = "ta.load"(%x, %i, %j) <{map = affine_map<(d0, d1) -> (((d0 * 256) + (d1 * 2)))>, operandSegmentSizes = array<i32: 1, 2, 0>}> : (memref<16384xf32>, index, index) -> f32
// CHECK-GENERIC:         "ta.store"(%m, %out, %i, %j) <{map = affine_map<(d0, d1) -> (((d0 * 128) + d1))>, operandSegmentSizes = array<i32: 1, 1, 2, 0>}> : (f32, memref<8192xf32>, index, index) -> ()
// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "acc", roles = [#ta<arg_role in>, #ta<arg_role inout>]}> ({
// CHECK-GENERIC:         }) {note = "acc"} : () -> ()
// CHECK-GENERIC-NEXT:  }) {fused = 2 : i64} : () -> ()
// CHECK-GENERIC:       %tmp = "ta.alloc"() : () -> memref<8192xf32>
// CHECK-GENERIC:       "ta.launch"(%x, %tmp) <{callee = @mul}> : (memref<16384xf32>, memref<8192xf32>) -> ()
// CHECK-GENERIC:       %flat = "ta.reshape"(%acc) : (memref<64x128xf32>) -> memref<8192xf32>

// -----

// An indirect access (embedding): the prefetch buffer is loaded, cast to index and
// used as the symbol s0 of the table's map.
ta.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<64000xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
  ta.loop [64, 64] (%i, %d) {
    %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %row = arith.index_cast %r : i32 to index
    %e = ta.load %table[affine_map<(d0)[s0] -> (s0 * 64 + d0)>](%d)[%row] : memref<64000xf32>
    ta.store %e, %out[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %d) : memref<4096xf32>
  }
}

// A scatter: the symbol indexes the store.
ta.kernel @scatter(%idx: memref<64xi32> {role = "prefetch"}, %src: memref<4096xf32> {role = "in"}, %dst: memref<64000xf32> {role = "inout"}) {
  ta.loop [64, 64] (%i, %d) {
    %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %row = arith.index_cast %r : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %d) : memref<4096xf32>
    ta.store %v, %dst[affine_map<(d0)[s0] -> (s0 * 64 + d0)>](%d)[%row] : memref<64000xf32>
  }
}

// A scatter-add (an embedding's backward): every point adds its value to the row its
// index picks, repeated indices included.
ta.kernel @scatter_add(%idx: memref<64xi32> {role = "in"}, %grad: memref<4096xf32> {role = "in"}, %dw: memref<64000xf32> {role = "inout"}) {
  ta.loop [64, 64] (%i, %d) {
    %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %row = arith.index_cast %r : i32 to index
    %g = ta.load %grad[affine_map<(d0, d1) -> (d0 * 64 + d1)>](%i, %d) : memref<4096xf32>
    ta.store %g, %dw[affine_map<(d0)[s0] -> (s0 * 64 + d0)>](%d)[%row] accumulate <sum> : memref<64000xf32>
  }
}

// CHECK-LABEL: ta.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<64000xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [64, 64] (%i, %d) {
// CHECK-NEXT:      %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
// CHECK-NEXT:      %row = arith.index_cast %r : i32 to index
// CHECK-NEXT:      %e = ta.load %table[affine_map<(d0)[s0] -> (((s0 * 64) + d0))>](%d)[%row] : memref<64000xf32>
// CHECK-NEXT:      ta.store %e, %out[affine_map<(d0, d1) -> (((d0 * 64) + d1))>](%i, %d) : memref<4096xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-LABEL: ta.kernel @scatter(%idx: memref<64xi32> {role = "prefetch"}, %src: memref<4096xf32> {role = "in"}, %dst: memref<64000xf32> {role = "inout"}) {
// CHECK-NEXT:    ta.loop [64, 64] (%i, %d) {
// CHECK-NEXT:      %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
// CHECK-NEXT:      %row = arith.index_cast %r : i32 to index
// CHECK-NEXT:      %v = ta.load %src[affine_map<(d0, d1) -> (((d0 * 64) + d1))>](%i, %d) : memref<4096xf32>
// CHECK-NEXT:      ta.store %v, %dst[affine_map<(d0)[s0] -> (((s0 * 64) + d0))>](%d)[%row] : memref<64000xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-LABEL: ta.kernel @scatter_add(%idx: memref<64xi32> {role = "in"}, %grad: memref<4096xf32> {role = "in"}, %dw: memref<64000xf32> {role = "inout"}) {
// CHECK:         ta.store %g, %dw[affine_map<(d0)[s0] -> (((s0 * 64) + d0))>](%d)[%row] accumulate <sum> : memref<64000xf32>

// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "embedding", roles = [#ta<arg_role prefetch>, #ta<arg_role in>, #ta<arg_role out>]}> ({
// CHECK-GENERIC:         %e = "ta.load"(%table, %d, %row) <{map = affine_map<(d0)[s0] -> (((s0 * 64) + d0))>, operandSegmentSizes = array<i32: 1, 1, 1>}> : (memref<64000xf32>, index, index) -> f32
// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "scatter", roles = [#ta<arg_role prefetch>, #ta<arg_role in>, #ta<arg_role inout>]}> ({
// CHECK-GENERIC:         "ta.store"(%v, %dst, %d, %row) <{map = affine_map<(d0)[s0] -> (((s0 * 64) + d0))>, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (f32, memref<64000xf32>, index, index) -> ()
// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "scatter_add"
// CHECK-GENERIC:         "ta.store"(%g, %dw, %d, %row) <{map = affine_map<(d0)[s0] -> (((s0 * 64) + d0))>, accumulate = #ta<reduction_kind sum>, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (f32, memref<64000xf32>, index, index) -> ()

// -----

// Row statistics: a loop with a reduction dim and every reduction kind; argmax and
// argmin give i32 positions.
ta.kernel @rowstats(%x: memref<64x256xf32> {role = "in"}, %s: memref<64x4xf32> {role = "out"}, %pos: memref<64x2xi32> {role = "out"}) {
  ta.loop [64] reduce [256] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x256xf32>
    %sum = ta.reduce <sum> %v : f32
    %prod = ta.reduce <prod> %v : f32
    %max = ta.reduce <max> %v : f32
    %min = ta.reduce <min> %v : f32
    %am = ta.reduce <argmax> %v : f32 -> i32
    %an = ta.reduce <argmin> %v : f32 -> i32
    ta.store %sum, %s[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x4xf32>
    ta.store %prod, %s[affine_map<(d0) -> (d0, 1)>](%i) : memref<64x4xf32>
    ta.store %max, %s[affine_map<(d0) -> (d0, 2)>](%i) : memref<64x4xf32>
    ta.store %min, %s[affine_map<(d0) -> (d0, 3)>](%i) : memref<64x4xf32>
    ta.store %am, %pos[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x2xi32>
    ta.store %an, %pos[affine_map<(d0) -> (d0, 1)>](%i) : memref<64x2xi32>
  }
}

// CHECK-LABEL: ta.kernel @rowstats(%x: memref<64x256xf32> {role = "in"}, %s: memref<64x4xf32> {role = "out"}, %pos: memref<64x2xi32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [64] reduce [256] (%i, %k) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x256xf32>
// CHECK-NEXT:      %sum = ta.reduce <sum> %v : f32
// CHECK-NEXT:      %prod = ta.reduce <prod> %v : f32
// CHECK-NEXT:      %max = ta.reduce <max> %v : f32
// CHECK-NEXT:      %min = ta.reduce <min> %v : f32
// CHECK-NEXT:      %am = ta.reduce <argmax> %v : f32 -> i32
// CHECK-NEXT:      %an = ta.reduce <argmin> %v : f32 -> i32
// CHECK-NEXT:      ta.store %sum, %s[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x4xf32>
// CHECK-NEXT:      ta.store %prod, %s[affine_map<(d0) -> (d0, 1)>](%i) : memref<64x4xf32>
// CHECK-NEXT:      ta.store %max, %s[affine_map<(d0) -> (d0, 2)>](%i) : memref<64x4xf32>
// CHECK-NEXT:      ta.store %min, %s[affine_map<(d0) -> (d0, 3)>](%i) : memref<64x4xf32>
// CHECK-NEXT:      ta.store %am, %pos[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x2xi32>
// CHECK-NEXT:      ta.store %an, %pos[affine_map<(d0) -> (d0, 1)>](%i) : memref<64x2xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "rowstats", roles = [#ta<arg_role in>, #ta<arg_role out>, #ta<arg_role out>]}> ({
// CHECK-GENERIC:         "ta.loop"() <{bounds = array<i64: 64>, reduce_bounds = array<i64: 256>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%i: index, %k: index):
// CHECK-GENERIC:           %sum = "ta.reduce"(%v) <{kind = #ta<reduction_kind sum>}> : (f32) -> f32
// CHECK-GENERIC:           %am = "ta.reduce"(%v) <{kind = #ta<reduction_kind argmax>}> : (f32) -> i32
// CHECK-GENERIC-NEXT:      %an = "ta.reduce"(%v) <{kind = #ta<reduction_kind argmin>}> : (f32) -> i32

// -----

// Per-row reductions reduced again (`over`: the loop dims a reduction combines over):
// each row's log-sum-exp over the row's dim 2, then their sum over the rows, dim 1.
ta.kernel @sum_of_logsumexp(%x: memref<64x256xf32> {role = "in"}, %out: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64, 256] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<64x256xf32>
    %m = ta.reduce <max> %v over [2] : f32
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = ta.reduce <sum> %e over [2] : f32
    %l = math.log %s : f32
    %lse = arith.addf %m, %l : f32
    %t = ta.reduce <sum> %lse over [1] : f32
    ta.store %t, %out[affine_map<(d0) -> (d0)>](%p) : memref<1xf32>
  }
}

// CHECK-LABEL: ta.kernel @sum_of_logsumexp
// CHECK:           %m = ta.reduce <max> %v over [2] : f32
// CHECK:           %s = ta.reduce <sum> %e over [2] : f32
// CHECK:           %t = ta.reduce <sum> %lse over [1] : f32

// CHECK-GENERIC-LABEL: "ta.kernel"() <{sym_name = "sum_of_logsumexp"
// CHECK-GENERIC:           %m = "ta.reduce"(%v) <{kind = #ta<reduction_kind max>, over = array<i64: 2>}> : (f32) -> f32
// CHECK-GENERIC:           %t = "ta.reduce"(%lse) <{kind = #ta<reduction_kind sum>, over = array<i64: 1>}> : (f32) -> f32
