// RUN: pallas-opt %s -p tl-to-pallas,pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// out[i, j] = sum over k < 2 of f32(x[i, j]) for x: bf16[16, 16] (an expand, then a sum
// over the new dim): the tile reshapes the loaded bf16 block to (16, 16, 1), then
// widens it. Mosaic cannot shape-cast packed 16-bit data across its last two dims
// (measured: "unsupported shape cast" for vector<16x16xbf16> -> vector<16x16x1xbf16>),
// so the kernel widens first and reshapes the f32 value.
tl.kernel @widen_first(%x: memref<16x16xbf16> {role = "in"}, %out: memref<16x16xf32> {role = "out"}) {
  tl.grid [1, 1] (parallel, parallel) (%i, %j) {
    %a = tl.load %x[affine_map<(d0, d1) -> (0, 0)>](%i, %j) : memref<16x16xbf16> -> tensor<16x16xbf16>
    %r = tl.reshape %a : tensor<16x16xbf16> to tensor<16x16x1xbf16>
    %w = arith.extf %r : tensor<16x16x1xbf16> to tensor<16x16x1xf32>
    %b = tl.broadcast %w : tensor<16x16x1xf32> to tensor<16x16x2xf32>
    %s = tl.reduce <sum> %b [2] : tensor<16x16x2xf32> -> tensor<16x16x1xf32>
    %t = tl.reshape %s : tensor<16x16x1xf32> to tensor<16x16xf32>
    tl.store %t, %out[affine_map<(d0, d1) -> (0, 0)>](%i, %j) : tensor<16x16xf32>, memref<16x16xf32>
  }
}
func.func @forward(%x: memref<16x16xbf16>) -> memref<16x16xf32> {
  %out = ta.alloc : memref<16x16xf32>
  ta.launch @widen_first(%x, %out) : memref<16x16xbf16>, memref<16x16xf32>
  func.return %out : memref<16x16xf32>
}

// CHECK:       %[[A:.*]] = pallas.load %x_ref[...] : !pallas.ref<16x16xbf16, vmem> -> tensor<16x16xbf16>
// CHECK-NEXT:  %[[W:.*]] = arith.extf %[[A]] : tensor<16x16xbf16> to tensor<16x16xf32>
// CHECK-NEXT:  %{{.*}} = pallas.reshape %[[W]] : tensor<16x16xf32> to tensor<16x16x1xf32>
// CHECK-NOT:   tensor<16x16x1xbf16>
