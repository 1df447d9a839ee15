// RUN: pallas-opt %s --split-input-file -p 'fuse-epilogues{attention-raised=true}' | filecheck %s
// RUN: pallas-opt %s --split-input-file -p 'fuse-epilogues{attention-raised=true},fuse-epilogues{attention-raised=true}' | filecheck %s
// RUN: pallas-opt %s --split-input-file -p 'fuse-epilogues{attention-raised=true}' --verify-semantics -o /dev/null
// RUN: pallas-opt %s --split-input-file -p 'fuse-epilogues{attention-raised=true}' --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: pallas-opt %s --split-input-file -p fuse-epilogues --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE

// Cross-entropy as the frontend leaves it: one kernel computes each row's max, sum of
// exponentials and the logit at the row's label (a one-hot sum), and a second reduces
// the rows' losses into their mean. The second reads the per-row results along its
// reduction, so fused, the loop reduces over the rows and then over each row's
// columns: each row's statistics `over [2]`, the mean `over [1]`. The intermediates
// are gone. The first run (before raise-attention) leaves the pair apart: the accesses
// are rewritten in between, and a nested loop would have to be renumbered there.
ta.kernel @row_stats(%x: memref<64x256xf32> {role = "in"}, %y: memref<64xi32> {role = "in"}, %mx: memref<64xf32> {role = "out"}, %se: memref<64xf32> {role = "out"}, %pick: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<64x256xf32>
    %m = ta.reduce <max> %v : f32
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = ta.reduce <sum> %e : f32
    %lab = ta.load %y[affine_map<(d0, d1) -> (d0)>](%r, %c) : memref<64xi32>
    %ci = arith.index_cast %c : index to i32
    %hit = arith.cmpi eq, %ci, %lab : i32
    %zero = arith.constant 0.000000e+00 : f32
    %sel = arith.select %hit, %v, %zero : f32
    %p = ta.reduce <sum> %sel : f32
    ta.store %m, %mx[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
    ta.store %s, %se[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
    ta.store %p, %pick[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
  }
}
ta.kernel @mean_loss(%y: memref<64xi32> {role = "in"}, %mx: memref<64xf32> {role = "in"}, %se: memref<64xf32> {role = "in"}, %pick: memref<64xf32> {role = "in"}, %loss: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64] (%i, %r) {
    %lab = ta.load %y[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xi32>
    %m = ta.load %mx[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xf32>
    %s = ta.load %se[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xf32>
    %p = ta.load %pick[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xf32>
    %l = math.log %s : f32
    %lse = arith.addf %m, %l : f32
    %nll = arith.subf %lse, %p : f32
    %ignore = arith.constant -100 : i32
    %kept = arith.cmpi ne, %lab, %ignore : i32
    %zero = arith.constant 0.000000e+00 : f32
    %counted = arith.select %kept, %nll, %zero : f32
    %total = ta.reduce <sum> %counted : f32
    %one = arith.extui %kept : i1 to i32
    %n = ta.reduce <sum> %one : i32
    %nf = arith.sitofp %n : i32 to f32
    %mean = arith.divf %total, %nf : f32
    ta.store %mean, %loss[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>, %y: memref<64xi32>) -> memref<1xf32> {
  %mx = ta.alloc : memref<64xf32>
  %se = ta.alloc : memref<64xf32>
  %pick = ta.alloc : memref<64xf32>
  %loss = ta.alloc : memref<1xf32>
  ta.launch @row_stats(%x, %y, %mx, %se, %pick) : memref<64x256xf32>, memref<64xi32>, memref<64xf32>, memref<64xf32>, memref<64xf32>
  ta.launch @mean_loss(%y, %mx, %se, %pick, %loss) : memref<64xi32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<1xf32>
  func.return %loss : memref<1xf32>
}

// CHECK-LABEL: ta.kernel @row_stats_mean_loss(%x: memref<64x256xf32> {role = "in"}, %y: memref<64xi32> {role = "in"}, %loss: memref<1xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [1] reduce [64, 256] (%i, %r, %c) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%i, %r, %c) : memref<64x256xf32>
// CHECK-NEXT:      %m = ta.reduce <max> %v over [2] : f32
// CHECK:           %s = ta.reduce <sum> %e over [2] : f32
// CHECK-NEXT:      %lab = ta.load %y[affine_map<(d0, d1, d2) -> (d1)>](%i, %r, %c) : memref<64xi32>
// CHECK:           %p = ta.reduce <sum> %sel over [2] : f32
// CHECK-NOT:       ta.load
// CHECK:           %total = ta.reduce <sum> %counted over [1] : f32
// CHECK:           %n = ta.reduce <sum> %one over [1] : i32
// CHECK:           %mean = arith.divf %total, %nf : f32
// CHECK-NEXT:      ta.store %mean, %loss[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    %loss = ta.alloc : memref<1xf32>
// CHECK-NEXT:    ta.launch @row_stats_mean_loss(%x, %y, %loss)

// REMARK: remark: fuse-epilogues: fused @row_stats and its reader @mean_loss into @row_stats_mean_loss
// BEFORE: remark: fuse-epilogues: not fused: @mean_loss reduces the results over the points they were written at, which the run after raise-attention fuses

// -----

// A mean per batch of per-token losses: the reader keeps the batch dim parallel and
// reduces over the tokens, which the first kernel wrote as its rows (b * 16 + t).
ta.kernel @token_lse(%x: memref<4x16x128xf32> {role = "in"}, %lse: memref<64xf32> {role = "out"}) {
  ta.loop [4, 16] reduce [128] (%b, %t, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %t, %c) : memref<4x16x128xf32>
    %e = math.exp %v : f32
    %s = ta.reduce <sum> %e : f32
    %l = math.log %s : f32
    ta.store %l, %lse[affine_map<(d0, d1) -> (d0 * 16 + d1)>](%b, %t) : memref<64xf32>
  }
}
ta.kernel @batch_mean(%lse: memref<64xf32> {role = "in"}, %out: memref<4xf32> {role = "out"}) {
  ta.loop [4] reduce [16] (%b, %t) {
    %l = ta.load %lse[affine_map<(d0, d1) -> (d0 * 16 + d1)>](%b, %t) : memref<64xf32>
    %s = ta.reduce <sum> %l : f32
    %n = arith.constant 1.600000e+01 : f32
    %mean = arith.divf %s, %n : f32
    ta.store %mean, %out[affine_map<(d0) -> (d0)>](%b) : memref<4xf32>
  }
}
func.func @forward(%x: memref<4x16x128xf32>) -> memref<4xf32> {
  %lse = ta.alloc : memref<64xf32>
  %out = ta.alloc : memref<4xf32>
  ta.launch @token_lse(%x, %lse) : memref<4x16x128xf32>, memref<64xf32>
  ta.launch @batch_mean(%lse, %out) : memref<64xf32>, memref<4xf32>
  func.return %out : memref<4xf32>
}

// CHECK-LABEL: ta.kernel @token_lse_batch_mean(%x: memref<4x16x128xf32> {role = "in"}, %out: memref<4xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [4] reduce [16, 128] (%b, %t, %c) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %t, %c) : memref<4x16x128xf32>
// CHECK-NEXT:      %e = math.exp %v : f32
// CHECK-NEXT:      %s = ta.reduce <sum> %e over [2] : f32
// CHECK-NEXT:      %l = math.log %s : f32
// CHECK-NEXT:      %s_1 = ta.reduce <sum> %l over [1] : f32
// CHECK:           ta.store %mean, %out[affine_map<(d0) -> (d0)>](%b) : memref<4xf32>

// REMARK: remark: fuse-epilogues: fused @token_lse and its reader @batch_mean into @token_lse_batch_mean

// -----

// The per-row results are returned too (a training graph keeps each row's statistics
// for the backward): the fused loop stores them as well, each row's where the reader
// read it, since the reader's points read every row once.
ta.kernel @row_max(%x: memref<64x256xf32> {role = "in"}, %mx: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<64x256xf32>
    %m = ta.reduce <max> %v : f32
    ta.store %m, %mx[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
  }
}
ta.kernel @sum_of_maxima(%mx: memref<64xf32> {role = "in"}, %out: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64] (%i, %r) {
    %m = ta.load %mx[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xf32>
    %s = ta.reduce <sum> %m : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> (memref<64xf32>, memref<1xf32>) {
  %mx = ta.alloc : memref<64xf32>
  %out = ta.alloc : memref<1xf32>
  ta.launch @row_max(%x, %mx) : memref<64x256xf32>, memref<64xf32>
  ta.launch @sum_of_maxima(%mx, %out) : memref<64xf32>, memref<1xf32>
  func.return %mx, %out : memref<64xf32>, memref<1xf32>
}

// CHECK-LABEL: ta.kernel @row_max_sum_of_maxima(%x: memref<64x256xf32> {role = "in"}, %mx: memref<64xf32> {role = "out"}, %out: memref<1xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [1] reduce [64, 256] (%i, %r, %c) {
// CHECK-NEXT:      %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%i, %r, %c) : memref<64x256xf32>
// CHECK-NEXT:      %m = ta.reduce <max> %v over [2] : f32
// CHECK-NEXT:      ta.store %m, %mx[affine_map<(d0, d1, d2) -> (d1)>](%i, %r, %c) : memref<64xf32>
// CHECK-NEXT:      %s = ta.reduce <sum> %m over [1] : f32
// CHECK-NEXT:      ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    %mx = ta.alloc : memref<64xf32>
// CHECK-NEXT:    %out = ta.alloc : memref<1xf32>
// CHECK-NEXT:    ta.launch @row_max_sum_of_maxima(%x, %mx, %out)
// CHECK-NEXT:    func.return %mx, %out

// -----

// The reader sums the first 32 of 64 row maxima, which are returned too: a nested loop
// over the reader's points would store half of them, so the pair stays apart.
ta.kernel @row_max(%x: memref<64x256xf32> {role = "in"}, %mx: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<64x256xf32>
    %m = ta.reduce <max> %v : f32
    ta.store %m, %mx[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
  }
}
ta.kernel @sum_of_half(%mx: memref<64xf32> {role = "in"}, %out: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [32] (%i, %r) {
    %m = ta.load %mx[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xf32>
    %s = ta.reduce <sum> %m : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> (memref<64xf32>, memref<1xf32>) {
  %mx = ta.alloc : memref<64xf32>
  %out = ta.alloc : memref<1xf32>
  ta.launch @row_max(%x, %mx) : memref<64x256xf32>, memref<64xf32>
  ta.launch @sum_of_half(%mx, %out) : memref<64xf32>, memref<1xf32>
  func.return %mx, %out : memref<64xf32>, memref<1xf32>
}

// CHECK-LABEL: ta.kernel @row_max(
// CHECK-LABEL: ta.kernel @sum_of_half(
// REMARK: remark: fuse-epilogues: not fused: @sum_of_half reduces the results over the points they were written at, a result is read again after it, and it does not read every point (to store them all)

// -----

// The reader reads the row maxima through a view (`m.view(8, 8).sum(1)`): each row is
// two of its loop dims, so the fused loop would read x at `(d0 * 8 + d1, d2)`, which
// is no loop dim plus a constant. Kept apart.
ta.kernel @row_max(%x: memref<64x256xf32> {role = "in"}, %mx: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<64x256xf32>
    %m = ta.reduce <max> %v : f32
    ta.store %m, %mx[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
  }
}
ta.kernel @sums_of_eight(%mx: memref<64xf32> {role = "in"}, %out: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [8] (%i, %j) {
    %m = ta.load %mx[affine_map<(d0, d1) -> (d0 * 8 + d1)>](%i, %j) : memref<64xf32>
    %s = ta.reduce <sum> %m : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> memref<8xf32> {
  %mx = ta.alloc : memref<64xf32>
  %out = ta.alloc : memref<8xf32>
  ta.launch @row_max(%x, %mx) : memref<64x256xf32>, memref<64xf32>
  ta.launch @sums_of_eight(%mx, %out) : memref<64xf32>, memref<8xf32>
  func.return %out : memref<8xf32>
}

// CHECK-LABEL: ta.kernel @row_max(
// CHECK-LABEL: ta.kernel @sums_of_eight(
// REMARK: remark: fuse-epilogues: not fused: @sums_of_eight reads the results at a place that is not one of its loop dims per dim of the results

// -----

// The reader sums a value of every element of the rows, beside the rows' sums
// (`log_softmax(x).sum()`): nested, the sum would hold a value per element next to
// each row's reductions. Kept apart.
ta.kernel @row_sum(%x: memref<64x256xf32> {role = "in"}, %rs: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<64x256xf32>
    %e = math.exp %v : f32
    %s = ta.reduce <sum> %e : f32
    ta.store %s, %rs[affine_map<(d0) -> (d0)>](%r) : memref<64xf32>
  }
}
ta.kernel @squares(%x: memref<64x256xf32> {role = "in"}, %rs: memref<64xf32> {role = "in"}, %out: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64, 256] (%i, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%i, %r, %c) : memref<64x256xf32>
    %s = ta.load %rs[affine_map<(d0, d1, d2) -> (d1)>](%i, %r, %c) : memref<64xf32>
    %e = math.exp %v : f32
    %p = arith.divf %e, %s : f32
    %q = math.log %p : f32
    %t = ta.reduce <sum> %q : f32
    ta.store %t, %out[affine_map<(d0) -> (d0)>](%i) : memref<1xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> memref<1xf32> {
  %rs = ta.alloc : memref<64xf32>
  %out = ta.alloc : memref<1xf32>
  ta.launch @row_sum(%x, %rs) : memref<64x256xf32>, memref<64xf32>
  ta.launch @squares(%x, %rs, %out) : memref<64x256xf32>, memref<64xf32>, memref<1xf32>
  func.return %out : memref<1xf32>
}

// CHECK-LABEL: ta.kernel @row_sum(
// CHECK-LABEL: ta.kernel @squares(
// REMARK: remark: fuse-epilogues: not fused: @squares reduces the results over the points they were written at and over more

// -----

// An argmax among the reductions: a position is over every reduction dim of its loop,
// so it cannot be one of a nested loop's per-row reductions. Kept apart.
ta.kernel @row_argmax(%x: memref<64x256xf32> {role = "in"}, %am: memref<64xi32> {role = "out"}) {
  ta.loop [64] reduce [256] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<64x256xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    ta.store %a, %am[affine_map<(d0) -> (d0)>](%r) : memref<64xi32>
  }
}
ta.kernel @count_threes(%am: memref<64xi32> {role = "in"}, %out: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [64] (%i, %r) {
    %a = ta.load %am[affine_map<(d0, d1) -> (d1)>](%i, %r) : memref<64xi32>
    %three = arith.constant 3 : i32
    %hit = arith.cmpi eq, %a, %three : i32
    %one = arith.extui %hit : i1 to i32
    %n = ta.reduce <sum> %one : i32
    ta.store %n, %out[affine_map<(d0) -> (d0)>](%i) : memref<1xi32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> memref<1xi32> {
  %am = ta.alloc : memref<64xi32>
  %out = ta.alloc : memref<1xi32>
  ta.launch @row_argmax(%x, %am) : memref<64x256xf32>, memref<64xi32>
  ta.launch @count_threes(%am, %out) : memref<64xi32>, memref<1xi32>
  func.return %out : memref<1xi32>
}

// CHECK-LABEL: ta.kernel @row_argmax(
// CHECK-LABEL: ta.kernel @count_threes(
// REMARK: remark: fuse-epilogues: not fused: @count_threes reduces the results over the points they were written at, and an argmax or argmin is among the reductions
