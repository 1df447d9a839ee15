// RUN: pallas-opt %s -p tile-policy,xla-outline,tile | filecheck %s
// RUN: pallas-opt %s -p tile-policy,xla-outline,tile --remarks --verify-diagnostics
// RUN: pallas-opt %s --verify-semantics -p tile-policy,xla-outline,tile,tl-to-pallas -o /dev/null

// An integer product summed over (h, d) where h has extent 1: one wide reduction dim,
// so a matrix product, and Mosaic's dot takes floats: it runs on XLA, as an integer
// matrix product over one dim does. (The tile policy and the tiler count the same wide
// dims; counting the extent-1 dim too, the policy let it through and the tiler made an
// i32 `tl.dot` the TPU compiler rejects.)
// CHECK-LABEL: ta.kernel @int_product
// CHECK-SAME:    target = #ta<target xla>
// CHECK-NOT:   tl.dot
ta.kernel @int_product(%x: memref<16x1x32xi32> {role = "in"}, %w: memref<24x1x32xi32> {role = "in"}, %o: memref<16x24xi32> {role = "out"}) {
  ta.loop [16, 24] reduce [1, 32] (%i, %n, %h, %d) {
    %a = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>](%i, %n, %h, %d) : memref<16x1x32xi32>
    %b = ta.load %w[affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>](%i, %n, %h, %d) : memref<24x1x32xi32>
    // expected-remark@+1 {{tile: Mosaic's dot takes floats; a matrix product of integers runs on XLA: @int_product runs on XLA}}
    %p = arith.muli %a, %b : i32
    %s = ta.reduce <sum> %p : i32
    ta.store %s, %o[affine_map<(d0, d1) -> (d0, d1)>](%i, %n) : memref<16x24xi32>
  }
}
func.func @forward(%x: memref<16x1x32xi32>, %w: memref<24x1x32xi32>) -> memref<16x24xi32> {
  %o = ta.alloc : memref<16x24xi32>
  ta.launch @int_product(%x, %w, %o) : memref<16x1x32xi32>, memref<24x1x32xi32>, memref<16x24xi32>
  func.return %o : memref<16x24xi32>
}
