// RUN: pallas-opt %s -p "tile{vmem-budget=262144}" | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p "tile{vmem-budget=262144},tl-to-pallas" -o /dev/null

// c = a @ b for a: f32[256, 512], b: f32[512, 384] with 256 KiB of VMEM: the product is
// a dot, and the contraction (k) no longer fits whole, so it becomes the last grid dim,
// sequential, and the store accumulates the partial products.
// CHECK-LABEL: tl.kernel @matmul
// CHECK:         tl.grid [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}] (parallel, parallel, sequential)
// CHECK:         tl.dot
// CHECK:         tl.store {{.*}} accumulate <sum>
ta.kernel @matmul(%a: memref<256x512xf32> {role = "in"}, %b: memref<512x384xf32> {role = "in"}, %c: memref<256x384xf32> {role = "out"}) {
  ta.loop [256, 384] reduce [512] (%i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<256x512xf32>
    %y = ta.load %b[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<512x384xf32>
    %p = arith.mulf %x, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<256x384xf32>
  }
}
func.func @forward(%a: memref<256x512xf32>, %b: memref<512x384xf32>) -> memref<256x384xf32> {
  %c = ta.alloc : memref<256x384xf32>
  ta.launch @matmul(%a, %b, %c) : memref<256x512xf32>, memref<512x384xf32>, memref<256x384xf32>
  func.return %c : memref<256x384xf32>
}
