// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A layer norm in a matrix product's prologue (fuse-epilogues' fused loop): the row
// statistics do not vary along the product's columns, so they are reduced as (m, 1, k)
// tiles into (m, 1) values, not broadcast to (m, n, k) first, and the normalised rows
// stay an (m, k) tile that `tl.dot` takes. The policy blocks the loop by the roofline
// of its one contraction; the statistics beside it keep k whole.
ta.kernel @norm_linear(%x: memref<256x256xf32> {role = "in"}, %w: memref<256x512xf32> {role = "in"}, %o: memref<256x512xf32> {role = "out"}) {
  ta.loop [256, 512] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %k) : memref<256x256xf32>
    %s = ta.reduce <sum> %v : f32
    %n = arith.constant 3.906250e-03 : f32
    %mu = arith.mulf %s, %n : f32
    %d = arith.subf %v, %mu : f32
    %d2 = arith.mulf %d, %d : f32
    %ss = ta.reduce <sum> %d2 : f32
    %vr = arith.mulf %ss, %n : f32
    %eps = arith.constant 1.000000e-05 : f32
    %ve = arith.addf %vr, %eps : f32
    %rs = math.rsqrt %ve : f32
    %xh = arith.mulf %d, %rs : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %k) : memref<256x512xf32>
    %p = arith.mulf %xh, %wk : f32
    %y = ta.reduce <sum> %p : f32
    ta.store %y, %o[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<256x512xf32>
  }
}
func.func @forward(%x: memref<256x256xf32>, %w: memref<256x512xf32>) -> memref<256x512xf32> {
  %o = ta.alloc : memref<256x512xf32>
  ta.launch @norm_linear(%x, %w, %o) : memref<256x256xf32>, memref<256x512xf32>, memref<256x512xf32>
  func.return %o : memref<256x512xf32>
}

// CHECK:      tl.kernel @norm_linear
// CHECK:        %[[X:\w+]] = tl.load %x
// CHECK-NEXT:   %[[ROWS:\w+]] = tl.reshape %[[X]] : tensor<[[M:\d+]]x256xf32> to tensor<[[M]]x1x256xf32>
// CHECK-NEXT:   tl.reduce <sum> %[[ROWS]] [2] : tensor<[[M]]x1x256xf32> -> tensor<[[M]]x1x1xf32>
// CHECK:        tl.reduce <sum> %{{\w+}} [2] : tensor<[[M]]x1x256xf32> -> tensor<[[M]]x1x1xf32>
// CHECK:        %[[XH:\w+]] = arith.mulf %{{\w+}}, %{{\w+}} : tensor<[[M]]x1x256xf32>
// CHECK:        %[[A:\w+]] = tl.reshape %[[XH]] : tensor<[[M]]x1x256xf32> to tensor<[[M]]x256xf32>
// CHECK:        tl.dot %[[A]], %{{\w+}} precision <highest> : tensor<[[M]]x256xf32>, tensor<256x[[N:\d+]]xf32> -> tensor<[[M]]x[[N]]xf32>
// CHECK-NOT:    tl.reduce
// CHECK:        tl.store
