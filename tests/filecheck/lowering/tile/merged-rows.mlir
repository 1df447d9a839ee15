// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A product per head, `x.view(b, t, h, d).transpose(1, 2) @ w`: the left factor varies
// along (h, t, d) and the right along (d, n), so the rows are two loop dims. They are
// one m of the dot, the tile (h, t, d) merged row-major to (h * t, d) in registers
// (Mosaic reshapes it for any t; here t = 12, not whole sublane tiles), not the
// (h, t, n, d) product multiplied out and summed on the VPU.
// CHECK-LABEL: tl.kernel @per_head
// CHECK:         tl.reshape %{{.*}} : tensor<1x4x12x32xf32> to tensor<48x32xf32>
// CHECK:         tl.dot %{{.*}}, %{{.*}} precision <highest> : tensor<48x32xf32>, tensor<32x48xf32> -> tensor<48x48xf32>
// CHECK:         tl.reshape %{{.*}} : tensor<48x48xf32> to tensor<1x4x12x48xf32>
// CHECK-NOT:     tl.reduce
ta.kernel @per_head(%x: memref<2x12x4x32xf32> {role = "in"}, %w: memref<32x48xf32> {role = "in"}, %o: memref<2x4x12x48xf32> {role = "out"}) {
  ta.loop [2, 4, 12, 48] reduce [32] (%b, %h, %t, %n, %d) {
    %a = ta.load %x[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>](%b, %h, %t, %n, %d) : memref<2x12x4x32xf32>
    %y = ta.load %w[affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>](%b, %h, %t, %n, %d) : memref<32x48xf32>
    %p = arith.mulf %a, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %o[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%b, %h, %t, %n) : memref<2x4x12x48xf32>
  }
}
func.func @forward(%x: memref<2x12x4x32xf32>, %w: memref<32x48xf32>) -> memref<2x4x12x48xf32> {
  %o = ta.alloc : memref<2x4x12x48xf32>
  ta.launch @per_head(%x, %w, %o) : memref<2x12x4x32xf32>, memref<32x48xf32>, memref<2x4x12x48xf32>
  func.return %o : memref<2x4x12x48xf32>
}
