// RUN: pallas-opt %s -p "tile{vmem-budget=1048576}" | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p "tile{vmem-budget=1048576},tl-to-pallas,pallas-legalize-mosaic" -o /dev/null

// x @ w over k = 1000, which no legal part (a multiple of 128) divides, in a budget
// its whole k does not fit (1.09 MB of blocks): k is split into parts of 512 over a
// sequential grid dim, the last running 24 past k's end. The MXU sums whatever the
// blocks hold there, so both factors' padding is set to 0 before the dot, in the
// dot's layout: w's (k, n) block is masked as it was loaded, not transposed to loop
// space and back.
// CHECK-LABEL: tl.kernel @matmul
// CHECK:         tl.grid [1, 1, 2] (parallel, parallel, sequential)
// CHECK:         %[[X:.*]] = tl.load %x{{.*}} -> tensor<8x512xf32>
// CHECK:         %[[W:.*]] = tl.load %w{{.*}} -> tensor<512x128xf32>
// CHECK-NOT:     tl.transpose
// CHECK:         %[[KX:.*]] = tl.iota dim 1 offset affine_map<(d0, d1, d2) -> ((d2 * 512))>{{.*}} : tensor<1x512xi32>
// CHECK:         %[[END:.*]] = arith.constant dense<1000>
// CHECK:         tl.compare <slt> %[[KX]], %[[END]]
// CHECK:         %[[XM:.*]] = tl.select {{.*}}, %[[X]], {{.*}} : tensor<8x512xi1>, tensor<8x512xf32>
// CHECK:         %[[KW:.*]] = tl.iota dim 0 {{.*}} : tensor<512x1xi32>
// CHECK:         tl.compare <slt> %[[KW]]
// CHECK:         %[[WM:.*]] = tl.select {{.*}}, %[[W]], {{.*}} : tensor<512x128xi1>, tensor<512x128xf32>
// CHECK-NOT:     tl.transpose
// CHECK:         tl.dot %[[XM]], %[[WM]] precision <highest>
// CHECK:         tl.store {{.*}}, %out{{.*}} accumulate <sum>
ta.kernel @matmul(%x: memref<8x1000xf32> {role = "in"}, %w: memref<1000x128xf32> {role = "in"}, %out: memref<8x128xf32> {role = "out"}) {
  ta.loop [8, 128] reduce [1000] (%m, %n, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%m, %n, %k) : memref<8x1000xf32>
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%m, %n, %k) : memref<1000x128xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1, d2) -> (d0, d1)>](%m, %n, %k) : memref<8x128xf32>
  }
}
func.func @forward(%x: memref<8x1000xf32>, %w: memref<1000x128xf32>) -> memref<8x128xf32> {
  %out = ta.alloc : memref<8x128xf32>
  ta.launch @matmul(%x, %w, %out) : memref<8x1000xf32>, memref<1000x128xf32>, memref<8x128xf32>
  func.return %out : memref<8x128xf32>
}
