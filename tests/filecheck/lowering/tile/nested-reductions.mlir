// RUN: pallas-opt %s --split-input-file -p "tile{vmem-budget=2097152}" | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p "tile{vmem-budget=2097152},tl-to-pallas,pallas-legalize-mosaic" -o /dev/null
// RUN: pallas-opt %s --split-input-file -p "tile{vmem-budget=2097152},tl-to-pallas,pallas-legalize-mosaic" | filecheck %s --check-prefix=PALLAS

// Cross-entropy as fuse-epilogues leaves it: per-row statistics (`over [2]`) and their
// mean over the rows (`over [1]`) in one loop. The rows do not fit 2 MiB of VMEM whole,
// so the row dim is split over a sequential grid dim: each step reduces whole rows of
// its block into (1, rows, 1) values, sums those over the block's rows, and adds the
// sums into running totals (tl.accumulate); the mean and the stores wait for the last
// step. The labels are read once, by both bodies.
// CHECK-LABEL: tl.kernel @cross_entropy
// CHECK:         tl.grid [1, {{[0-9]+}}] (parallel, sequential)
// CHECK:         %[[X:.*]] = tl.load %x{{.*}} -> tensor<[[R:[0-9]+]]x1024xf32>
// CHECK:         %m = tl.reduce <max> %v [2] : tensor<1x[[R]]x1024xf32> -> tensor<1x[[R]]x1xf32>
// CHECK:         %s = tl.reduce <sum> %e [2] : tensor<1x[[R]]x1024xf32> -> tensor<1x[[R]]x1xf32>
// CHECK:         tl.load %y
// CHECK-NOT:     tl.load
// CHECK:         %pick = tl.reduce <sum> %sel [2] : tensor<1x[[R]]x1024xf32> -> tensor<1x[[R]]x1xf32>
// CHECK-NOT:     tl.load
// CHECK:         %loss = arith.subf %ml, %pick : tensor<1x[[R]]x1xf32>
// CHECK:         %[[T:.*]] = tl.reduce <sum> %loss [1] : tensor<1x[[R]]x1xf32> -> tensor<1x1x1xf32>
// CHECK:         %t = tl.accumulate <sum> {{.*}} : tensor<1xf32>
// CHECK:         %any = tl.accumulate <max> {{.*}} : tensor<1xi32>
// CHECK:         tl.on_last_step {
// CHECK-NEXT:      %[[N:.*]] = arith.constant dense<4.096000e+03> : tensor<1xf32>
// CHECK-NEXT:      %mean = arith.divf %t, %[[N]] : tensor<1xf32>
// CHECK-NEXT:      tl.store %mean, %o
// CHECK-NEXT:      tl.store %any, %bad
// CHECK-NEXT:    }

// PALLAS-LABEL: pallas.call @cross_entropy
// PALLAS-SAME:    grid [1, [[STEPS:[0-9]+]]]
// PALLAS-NEXT:    in [#pallas.block_spec<[[[R:[0-9]+]], 1024], (d0, d1) -> (d1, 0)>, #pallas.block_spec<[[[R]]], (d0, d1) -> (d1)>]
// PALLAS-NEXT:    out [#pallas.block_spec<[1], (d0, d1) -> (0)>, #pallas.block_spec<[1], (d0, d1) -> (0)>]
// PALLAS-NEXT:    semantics [parallel, arbitrary] scratch [!pallas.ref<1xf32, vmem>, !pallas.ref<1xi32, vmem>]
ta.kernel @cross_entropy(%x: memref<4096x1024xf32> {role = "in"}, %y: memref<4096xi32> {role = "in"}, %o: memref<1xf32> {role = "out"}, %bad: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [4096, 1024] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<4096x1024xf32>
    %m = ta.reduce <max> %v over [2] : f32
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = ta.reduce <sum> %e over [2] : f32
    %lab = ta.load %y[affine_map<(d0, d1, d2) -> (d1)>](%p, %r, %c) : memref<4096xi32>
    %ci = arith.index_cast %c : index to i32
    %hit = arith.cmpi eq, %ci, %lab : i32
    %zero = arith.constant 0.000000e+00 : f32
    %sel = arith.select %hit, %v, %zero : f32
    %pick = ta.reduce <sum> %sel over [2] : f32
    %l = math.log %s : f32
    %ml = arith.addf %m, %l : f32
    %loss = arith.subf %ml, %pick : f32
    %t = ta.reduce <sum> %loss over [1] : f32
    %n = arith.constant 4.096000e+03 : f32
    %mean = arith.divf %t, %n : f32
    ta.store %mean, %o[affine_map<(d0) -> (d0)>](%p) : memref<1xf32>
    %zero_i = arith.constant 0 : i32
    %negative = arith.cmpi slt, %lab, %zero_i : i32
    %flag = arith.extui %negative : i1 to i32
    %any = ta.reduce <max> %flag over [1] : i32
    ta.store %any, %bad[affine_map<(d0) -> (d0)>](%p) : memref<1xi32>
  }
}
func.func @forward(%x: memref<4096x1024xf32>, %y: memref<4096xi32>) -> (memref<1xf32>, memref<1xi32>) {
  %o = ta.alloc : memref<1xf32>
  %bad = ta.alloc : memref<1xi32>
  ta.launch @cross_entropy(%x, %y, %o, %bad) : memref<4096x1024xf32>, memref<4096xi32>, memref<1xf32>, memref<1xi32>
  func.return %o, %bad : memref<1xf32>, memref<1xi32>
}

// -----

// A sum per batch of per-token log-sum-exps with rows that fit: one block, no split
// and no accumulator; the per-token values are reduced at their (4, 16, 1) shape.
// CHECK-LABEL: tl.kernel @token_lse_batch_sum
// CHECK:         tl.grid [1] (parallel)
// CHECK:         %s = tl.reduce <sum> %e [2] : tensor<4x16x128xf32> -> tensor<4x16x1xf32>
// CHECK:         %u = tl.reduce <sum> %l [1] : tensor<4x16x1xf32> -> tensor<4x1x1xf32>
// CHECK-NOT:     tl.accumulate
ta.kernel @token_lse_batch_sum(%x: memref<4x16x128xf32> {role = "in"}, %out: memref<4xf32> {role = "out"}) {
  ta.loop [4] reduce [16, 128] (%b, %t, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %t, %c) : memref<4x16x128xf32>
    %e = math.exp %v : f32
    %s = ta.reduce <sum> %e over [2] : f32
    %l = math.log %s : f32
    %u = ta.reduce <sum> %l over [1] : f32
    ta.store %u, %out[affine_map<(d0) -> (d0)>](%b) : memref<4xf32>
  }
}
func.func @forward(%x: memref<4x16x128xf32>) -> memref<4xf32> {
  %out = ta.alloc : memref<4xf32>
  ta.launch @token_lse_batch_sum(%x, %out) : memref<4x16x128xf32>, memref<4xf32>
  func.return %out : memref<4xf32>
}

// -----

// A per-row value stored beside the total (a training graph keeps each row's
// log-sum-exp for the backward): its rows are whole in each step's block, so it is
// stored with them at every step, as a parallel dim's block would be, and the total,
// with no epilogue to wait for it, is stored accumulating over the steps.
// CHECK-LABEL: tl.kernel @logsumexp_and_their_sum
// CHECK:         tl.grid [1, {{[0-9]+}}] (parallel, sequential)
// CHECK:         %[[LSE:.*]] = tl.reshape %lse : tensor<1x[[R:[0-9]+]]x1xf32> to tensor<[[R]]xf32>
// CHECK-NEXT:    tl.store %[[LSE]], %rows[affine_map<(d0, d1) -> ((d1 * [[R]]))>](%i, %j) : tensor<[[R]]xf32>, memref<4096xf32>
// CHECK-NEXT:    %t = tl.reduce <sum> %lse [1] : tensor<1x[[R]]x1xf32> -> tensor<1x1x1xf32>
// CHECK:         tl.store {{.*}}, %total{{.*}} accumulate <sum>
ta.kernel @logsumexp_and_their_sum(%x: memref<4096x1024xf32> {role = "in"}, %rows: memref<4096xf32> {role = "out"}, %total: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [4096, 1024] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<4096x1024xf32>
    %e = math.exp %v : f32
    %s = ta.reduce <sum> %e over [2] : f32
    %lse = math.log %s : f32
    ta.store %lse, %rows[affine_map<(d0, d1, d2) -> (d1)>](%p, %r, %c) : memref<4096xf32>
    %t = ta.reduce <sum> %lse over [1] : f32
    ta.store %t, %total[affine_map<(d0) -> (d0)>](%p) : memref<1xf32>
  }
}
func.func @forward(%x: memref<4096x1024xf32>) -> (memref<4096xf32>, memref<1xf32>) {
  %rows = ta.alloc : memref<4096xf32>
  %total = ta.alloc : memref<1xf32>
  ta.launch @logsumexp_and_their_sum(%x, %rows, %total) : memref<4096x1024xf32>, memref<4096xf32>, memref<1xf32>
  func.return %rows, %total : memref<4096xf32>, memref<1xf32>
}

// -----

// 3000 rows, which no legal block of the rows' 1-D vector divides (a multiple of 1024
// or a power of two from 128): the last of cdiv(3000, R) steps holds padding past row
// 3000, which the kernel sets to each outer reduction's identity before reducing (0
// for the sum, the lowest i32 for the max) so that it counts for nothing.
// CHECK-LABEL: tl.kernel @ragged_rows
// CHECK:         tl.grid [1, [[STEPS:[0-9]+]]] (parallel, sequential)
// CHECK:         %[[ROW:.*]] = tl.iota dim 1 offset affine_map<(d0, d1) -> ((d1 * [[R:[0-9]+]]))>(%i, %j) : tensor<1x[[R]]x1xi32>
// CHECK-NEXT:    %[[END:.*]] = arith.constant dense<3000> : tensor<1x[[R]]x1xi32>
// CHECK-NEXT:    %[[IN:.*]] = tl.compare <slt> %[[ROW]], %[[END]] : tensor<1x[[R]]x1xi32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1x[[R]]x1xf32>
// CHECK-NEXT:    %[[KEPT:.*]] = tl.select %[[IN]], %lse, %[[ZERO]] : tensor<1x[[R]]x1xi1>, tensor<1x[[R]]x1xf32>
// CHECK-NEXT:    %{{.*}} = tl.reduce <sum> %[[KEPT]] [1]
// CHECK:         %[[LOWEST:.*]] = arith.constant dense<-2147483648> : tensor<1x[[R]]x1xi32>
// CHECK-NEXT:    tl.select %{{.*}}, %flag, %[[LOWEST]]
ta.kernel @ragged_rows(%x: memref<3000x1024xf32> {role = "in"}, %y: memref<3000xi32> {role = "in"}, %total: memref<1xf32> {role = "out"}, %bad: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [3000, 1024] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<3000x1024xf32>
    %e = math.exp %v : f32
    %s = ta.reduce <sum> %e over [2] : f32
    %lse = math.log %s : f32
    %t = ta.reduce <sum> %lse over [1] : f32
    %n = arith.constant 3.000000e+03 : f32
    %mean = arith.divf %t, %n : f32
    ta.store %mean, %total[affine_map<(d0) -> (d0)>](%p) : memref<1xf32>
    %lab = ta.load %y[affine_map<(d0, d1, d2) -> (d1)>](%p, %r, %c) : memref<3000xi32>
    %zero_i = arith.constant 0 : i32
    %negative = arith.cmpi slt, %lab, %zero_i : i32
    %flag = arith.extui %negative : i1 to i32
    %any = ta.reduce <max> %flag over [1] : i32
    ta.store %any, %bad[affine_map<(d0) -> (d0)>](%p) : memref<1xi32>
  }
}
func.func @forward(%x: memref<3000x1024xf32>, %y: memref<3000xi32>) -> (memref<1xf32>, memref<1xi32>) {
  %total = ta.alloc : memref<1xf32>
  %bad = ta.alloc : memref<1xi32>
  ta.launch @ragged_rows(%x, %y, %total, %bad) : memref<3000x1024xf32>, memref<3000xi32>, memref<1xf32>, memref<1xi32>
  func.return %total, %bad : memref<1xf32>, memref<1xi32>
}

// -----

// A sum over a dim nothing reads (a broadcast: an int64 input held expanded is summed
// along the expanded dim in words), then a max over the rows. Last, that dim would be
// the lanes and every value read (1, 8, 128, 1), a lane each; it goes first, and the
// values keep the read's 128 lanes.
// CHECK-LABEL: tl.kernel @broadcast_sum
// CHECK:         %v = tl.reshape %{{.*}} : tensor<8x128xi32> to tensor<1x1x8x128xi32>
// CHECK-NEXT:    %[[B:.*]] = tl.broadcast %v : tensor<1x1x8x128xi32> to tensor<3x1x8x128xi32>
// CHECK-NEXT:    %s = tl.reduce <sum> %[[B]] [0] : tensor<3x1x8x128xi32> -> tensor<1x1x8x128xi32>
// CHECK-NEXT:    %m = tl.reduce <max> %s [2, 3] : tensor<1x1x8x128xi32> -> tensor<1x1x1x1xi32>
// PALLAS-LABEL: pallas.call @broadcast_sum
ta.kernel @broadcast_sum(%x: memref<8x128xi32> {role = "in"}, %o: memref<1xi32> {role = "out"}) {
  ta.loop [1] reduce [8, 128, 3] (%l0, %a, %b, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d1, d2)>](%l0, %a, %b, %c) : memref<8x128xi32>
    %s = ta.reduce <sum> %v over [3] : i32
    %m = ta.reduce <max> %s over [1, 2] : i32
    ta.store %m, %o[affine_map<(d0) -> (d0)>](%l0) : memref<1xi32>
  }
}
func.func @forward(%x: memref<8x128xi32>) -> memref<1xi32> {
  %o = ta.alloc : memref<1xi32>
  ta.launch @broadcast_sum(%x, %o) : memref<8x128xi32>, memref<1xi32>
  func.return %o : memref<1xi32>
}
