// RUN: pallas-opt %s --split-input-file -p "tile{vmem-budget=32768}" | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p "tile{vmem-budget=32768},tl-to-pallas,pallas-legalize-mosaic" -o /dev/null
// RUN: pallas-opt %s --split-input-file -p "tile{vmem-budget=32768},tl-to-pallas,pallas-legalize-mosaic" | filecheck %s --check-prefix=PALLAS

// Rows of 1000 do not fit 32 KiB of VMEM whole, and no legal part (a multiple of 128)
// divides 1000: the reduction is split into parts of 384 over a sequential grid dim,
// the last running 152 past the row's end. Before each reduction the kernel sets
// those points to the reduction's identity (0 for the sum, -inf for the max), so
// whatever the block holds there changes nothing.
// CHECK-LABEL: tl.kernel @row_sum_and_max
// CHECK:         tl.grid [1, 3] (parallel, sequential)
// CHECK:         %v = tl.load %x{{.*}} -> tensor<8x384xf32>
// CHECK:         %[[C:.*]] = tl.iota dim 1 offset affine_map<(d0, d1) -> ((d1 * 384))>(%i, %j) : tensor<1x384xi32>
// CHECK:         %[[END:.*]] = arith.constant dense<1000> : tensor<1x384xi32>
// CHECK:         %[[IN:.*]] = tl.compare <slt> %[[C]], %[[END]]
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<8x384xf32>
// CHECK:         %[[INB:.*]] = tl.broadcast %[[IN]] : tensor<1x384xi1> to tensor<8x384xi1>
// CHECK:         %[[SUMMED:.*]] = tl.select %[[INB]], %v, %[[ZERO]]
// CHECK:         %sum = tl.reduce <sum> %[[SUMMED]] [1]
// CHECK:         %[[NEG:.*]] = arith.constant dense<0xff800000> : tensor<8x384xf32>
// CHECK:         %[[MAXED:.*]] = tl.select %{{.*}}, %v, %[[NEG]]
// CHECK:         %max = tl.reduce <max> %[[MAXED]] [1]
// CHECK:         tl.store {{.*}}, %s{{.*}} accumulate <sum>
// CHECK:         tl.store {{.*}}, %m{{.*}} accumulate <max>

// PALLAS-LABEL: pallas.call @row_sum_and_max
// PALLAS-SAME:    grid [1, 3]
// PALLAS-NEXT:    in [#pallas.block_spec<[8, 384], (d0, d1) -> (0, d1)>]
// PALLAS:         semantics [parallel, arbitrary]
ta.kernel @row_sum_and_max(%x: memref<8x1000xf32> {role = "in"}, %s: memref<8xf32> {role = "out"}, %m: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [1000] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<8x1000xf32>
    %sum = ta.reduce <sum> %v : f32
    %max = ta.reduce <max> %v : f32
    ta.store %sum, %s[affine_map<(d0) -> (d0)>](%r) : memref<8xf32>
    ta.store %max, %m[affine_map<(d0) -> (d0)>](%r) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x1000xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %s = ta.alloc : memref<8xf32>
  %m = ta.alloc : memref<8xf32>
  ta.launch @row_sum_and_max(%x, %s, %m) : memref<8x1000xf32>, memref<8xf32>, memref<8xf32>
  func.return %s, %m : memref<8xf32>, memref<8xf32>
}

// -----

// An argmax cannot be split, so its rows are whole in a block; a block of the
// rank-1 result is 128 rows or all 256, which with their rows of 200 is 200 KiB,
// over the budget. As the column (256, 1) its block is 8 rows: the kernel stores a
// (256, 1) view of the result, which the host reshapes (a relayout of 1 KiB).
// CHECK-LABEL: tl.kernel @row_argmax
// CHECK-SAME:    %i: memref<256x1xi32>
// CHECK:         tl.grid [32] (parallel)
// CHECK:         %v = tl.load %x{{.*}} -> tensor<8x200xf32>
// CHECK:         %a = tl.reduce <argmax> %v [1] : tensor<8x200xf32> -> tensor<8x1xi32>
// CHECK:         tl.store %a, %i[affine_map<(d0) -> ((d0 * 8), 0)>](%{{.*}}) : tensor<8x1xi32>, memref<256x1xi32>
// CHECK-LABEL: func.func @forward
// CHECK:         %i = ta.alloc : memref<256xi32>
// CHECK:         %[[COLUMN:.*]] = ta.reshape %i : memref<256xi32> to memref<256x1xi32>
// CHECK:         ta.launch @row_argmax(%x, %[[COLUMN]])
// CHECK:         func.return %i

// PALLAS-LABEL: pallas.call @row_argmax
// PALLAS-SAME:    grid [32]
// PALLAS-NEXT:    in [#pallas.block_spec<[8, 200], (d0) -> (d0, 0)>]
// PALLAS-NEXT:    out [#pallas.block_spec<[8, 1], (d0) -> (d0, 0)>]
// PALLAS:         %i = pallas.reshape %{{.*}} : tensor<256x1xi32> to tensor<256xi32>
ta.kernel @row_argmax(%x: memref<256x200xf32> {role = "in"}, %i: memref<256xi32> {role = "out"}) {
  ta.loop [256] reduce [200] (%r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<256x200xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    ta.store %a, %i[affine_map<(d0) -> (d0)>](%r) : memref<256xi32>
  }
}
func.func @forward(%x: memref<256x200xf32>) -> memref<256xi32> {
  %i = ta.alloc : memref<256xi32>
  ta.launch @row_argmax(%x, %i) : memref<256x200xf32>, memref<256xi32>
  func.return %i : memref<256xi32>
}
