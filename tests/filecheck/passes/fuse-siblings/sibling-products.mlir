// RUN: pallas-opt %s -p fuse-siblings | filecheck %s
// RUN: pallas-opt %s -p fuse-siblings,tile | filecheck %s --check-prefix=TILE
// RUN: pallas-opt %s --verify-semantics -p fuse-siblings,tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// Two matrix products of one x (a llama layer's k and v projections, or its gate and
// up): one kernel, whose loop sums both products. x's block is read once for both, and
// the tiler sizes the blocks of the pair (`contraction_tiles` over both products): two
// `tl.dot`s of one x tile.
ta.kernel @k_proj(%x: memref<256x256xf32> {role = "in"}, %wk: memref<256x512xf32> {role = "in"}, %k: memref<256x512xf32> {role = "out"}) {
  ta.loop [256, 512] reduce [256] (%r, %c, %i) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %i) : memref<256x256xf32>
    %b = ta.load %wk[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %i) : memref<256x512xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %k[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<256x512xf32>
  }
}
ta.kernel @v_proj(%x: memref<256x256xf32> {role = "in"}, %wv: memref<256x512xf32> {role = "in"}, %v: memref<256x512xf32> {role = "out"}) {
  ta.loop [256, 512] reduce [256] (%r, %c, %i) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %i) : memref<256x256xf32>
    %b = ta.load %wv[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %i) : memref<256x512xf32>
    %p = arith.mulf %a, %b : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %v[affine_map<(d0, d1) -> (d0, d1)>](%r, %c) : memref<256x512xf32>
  }
}
func.func @forward(%x: memref<256x256xf32>, %wk: memref<256x512xf32>, %wv: memref<256x512xf32>) -> (memref<256x512xf32>, memref<256x512xf32>) {
  %k = ta.alloc : memref<256x512xf32>
  %v = ta.alloc : memref<256x512xf32>
  ta.launch @k_proj(%x, %wk, %k) : memref<256x256xf32>, memref<256x512xf32>, memref<256x512xf32>
  ta.launch @v_proj(%x, %wv, %v) : memref<256x256xf32>, memref<256x512xf32>, memref<256x512xf32>
  func.return %k, %v : memref<256x512xf32>, memref<256x512xf32>
}

// CHECK:       ta.kernel @k_proj_v_proj(%x: memref<256x256xf32> {role = "in"}, %wk: memref<256x512xf32> {role = "in"}, %k: memref<256x512xf32> {role = "out"}, %wv: memref<256x512xf32> {role = "in"}, %v: memref<256x512xf32> {role = "out"}) {
// CHECK-NEXT:    ta.loop [256, 512] reduce [256] (%r, %c, %i) {
// CHECK-NEXT:      %a = ta.load %x
// CHECK-NEXT:      %b = ta.load %wk
// CHECK-NEXT:      %p = arith.mulf %a, %b : f32
// CHECK-NEXT:      %s = ta.reduce <sum> %p : f32
// CHECK-NEXT:      %b_1 = ta.load %wv
// CHECK-NEXT:      %p_1 = arith.mulf %a, %b_1 : f32
// CHECK-NEXT:      %s_1 = ta.reduce <sum> %p_1 : f32
// CHECK-NEXT:      ta.store %s, %k
// CHECK-NEXT:      ta.store %s_1, %v
// CHECK:         ta.launch @k_proj_v_proj(%x, %wk, %k, %wv, %v)
// CHECK-NOT:     ta.launch

// TILE:        tl.kernel @k_proj_v_proj
// TILE:          %[[X:\w+]] = tl.load %x
// TILE:          tl.dot %[[X]], %{{\w+}} precision <highest> : tensor<[[M:\d+]]x256xf32>, tensor<256x[[N:\d+]]xf32> -> tensor<[[M]]x[[N]]xf32>
// TILE:          tl.dot %[[X]], %{{\w+}} precision <highest> : tensor<[[M]]x256xf32>, tensor<256x[[N]]xf32> -> tensor<[[M]]x[[N]]xf32>
