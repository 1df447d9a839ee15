// RUN: pallas-opt %s --split-input-file -p split-kernel-loops | filecheck %s
// RUN: pallas-opt %s --split-input-file -p split-kernel-loops,split-kernel-loops | filecheck %s
// RUN: pallas-opt %s --split-input-file -p split-kernel-loops --verify-semantics | filecheck %s
// RUN: pallas-opt %s --split-input-file -p split-kernel-loops --remarks --verify-diagnostics
// RUN: pallas-opt %s --split-input-file -p split-kernel-loops --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// y = x * 2; out = y + 1 through a scratch buffer, fused into one kernel. The first part
// writes every element of %y and does not read it, so it needs no incoming value: `out`.
// The second only reads it (`in`). %x is not passed to the second part, %out not to the
// first. The view %xv is cloned into its user only.
// expected-remark@+1 {{split-kernel-loops: split @two_steps into 2 kernels, one per loop: @two_steps_0, @two_steps_1}}
ta.kernel @two_steps(%x: memref<8192xf32> {role = "in"}, %y: memref<64x128xf32> {role = "inout"}, %out: memref<64x128xf32> {role = "out"}) {
  %xv = ta.reshape %x : memref<8192xf32> to memref<64x128xf32>
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %xv[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %v, %two : f32
    ta.store %m, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %one = arith.constant 1.0 : f32
    %a = arith.addf %v, %one : f32
    ta.store %a, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%x: memref<8192xf32>, %y: memref<64x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @two_steps(%x, %y, %out) : memref<8192xf32>, memref<64x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}

// CHECK-LABEL: ta.kernel @two_steps_0(%x: memref<8192xf32> {role = "in"}, %y: memref<64x128xf32> {role = "out"}) {
// CHECK-NEXT:    %xv = ta.reshape %x
// CHECK-NEXT:    ta.loop [64, 128]
// CHECK:         ta.store %m, %y
// CHECK-LABEL: ta.kernel @two_steps_1(%y: memref<64x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
// CHECK-NOT:     ta.reshape
// CHECK:         ta.load %y
// CHECK:         ta.store %a, %out
// CHECK-NOT:     ta.kernel @two_steps(
// CHECK-LABEL: func.func @forward
// CHECK:         ta.launch @two_steps_0(%x, %y) : memref<8192xf32>, memref<64x128xf32>
// CHECK-NEXT:    ta.launch @two_steps_1(%y, %out) : memref<64x128xf32>, memref<64x128xf32>

// -----

// out = emb[idx]; idx += 1 (the indirect-load-to-scalar-prefetch input it refuses whole):
// once split, the gather's kernel only reads %idx, and the increment's kernel keeps
// `inout`. The last loop writes only column 0 of %out, which the first loop wrote: it must
// keep the rest, so `inout`.
// expected-remark@+1 {{split-kernel-loops: split @index_written into 3 kernels, one per loop: @index_written_0, @index_written_1, @index_written_2}}
ta.kernel @index_written(%idx: memref<64xi64> {role = "inout"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 256 + d1)>](%i, %j)[%s] : memref<256000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
  ta.loop [64] (%i) {
    %iv = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
    %one = arith.constant 1 : i64
    %n = arith.addi %iv, %one : i64
    ta.store %n, %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi64>
  }
  ta.loop [64] (%i) {
    %z = arith.constant 0.0 : f32
    ta.store %z, %out[affine_map<(d0) -> (d0 * 256)>](%i) : memref<16384xf32>
  }
}
func.func @forward(%idx: memref<64xi64>, %emb: memref<256000xf32>) -> (memref<64xi64>, memref<16384xf32>) {
  %out = ta.alloc : memref<16384xf32>
  ta.launch @index_written(%idx, %emb, %out) : memref<64xi64>, memref<256000xf32>, memref<16384xf32>
  func.return %idx, %out : memref<64xi64>, memref<16384xf32>
}

// CHECK-LABEL: ta.kernel @index_written_0(%idx: memref<64xi64> {role = "in"}, %emb: memref<256000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"})
// CHECK-LABEL: ta.kernel @index_written_1(%idx: memref<64xi64> {role = "inout"})
// CHECK-LABEL: ta.kernel @index_written_2(%out: memref<16384xf32> {role = "inout"})
// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    %out = ta.alloc
// CHECK-NEXT:    ta.launch @index_written_0(%idx, %emb, %out)
// CHECK-NEXT:    ta.launch @index_written_1(%idx)
// CHECK-NEXT:    ta.launch @index_written_2(%out)

// -----

// One loop: nothing to split, no remark.
ta.kernel @one(%x: memref<64x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
// CHECK-LABEL: ta.kernel @one(

// STATS: split-kernel-loops
// STATS-NEXT:   4 kernels split

// -----

// Partial writes of an `inout` buffer keep `inout` in every part: here each loop writes
// one half of %y (a constant offset is not a whole-buffer numbering), and the second
// half's incoming values must survive the first part.
// expected-remark@+1 {{split-kernel-loops: split @halves into 2 kernels, one per loop: @halves_0, @halves_1}}
ta.kernel @halves(%x: memref<64x128xf32> {role = "in"}, %y: memref<128x128xf32> {role = "inout"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x128xf32>
  }
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %y[affine_map<(d0, d1) -> (d0 + 64, d1)>](%i, %j) : memref<128x128xf32>
  }
}
// CHECK-LABEL: ta.kernel @halves_0(%x: memref<64x128xf32> {role = "in"}, %y: memref<128x128xf32> {role = "inout"})
// CHECK-LABEL: ta.kernel @halves_1(%x: memref<64x128xf32> {role = "in"}, %y: memref<128x128xf32> {role = "inout"})

// -----

// An accumulating store reads what it combines with: its buffer stays `inout`, even
// where the store reaches every element of it (a plain store there would make it `out`).
// expected-remark@+1 {{split-kernel-loops: split @copy_then_add into 2 kernels, one per loop: @copy_then_add_0, @copy_then_add_1}}
ta.kernel @copy_then_add(%x: memref<64x128xf32> {role = "in"}, %y: memref<64x128xf32> {role = "inout"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    ta.store %v, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) accumulate <sum> : memref<64x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>) -> memref<64x128xf32> {
  %y = ta.alloc : memref<64x128xf32>
  ta.launch @copy_then_add(%x, %y) : memref<64x128xf32>, memref<64x128xf32>
  func.return %y : memref<64x128xf32>
}
// CHECK-LABEL: ta.kernel @copy_then_add_0(%x: memref<64x128xf32> {role = "in"}, %y: memref<64x128xf32> {role = "out"})
// CHECK-LABEL: ta.kernel @copy_then_add_1(%x: memref<64x128xf32> {role = "in"}, %y: memref<64x128xf32> {role = "inout"})
// CHECK:         ta.store %v, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) accumulate <sum> : memref<64x128xf32>
