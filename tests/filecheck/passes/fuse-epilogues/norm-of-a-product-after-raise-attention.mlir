// RUN: pallas-opt %s -p 'fuse-epilogues{attention-raised=true}' | filecheck %s
// RUN: pallas-opt %s -p 'fuse-epilogues{attention-raised=true}' --verify-semantics | filecheck %s
// RUN: pallas-opt %s -p fuse-epilogues --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE

// A layer norm of a residual stream that holds a matrix product's result (a
// transformer block's second norm: x + attn @ wo), read by the next product. Before
// raise-attention such row statistics over a product's result look like attention's,
// which raise-attention fuses whole into a flash kernel, so the pair stays apart. After
// it (`attention-raised`), what is left is no attention, and the statistics fuse into
// the next product's prologue.
ta.kernel @proj(%a: memref<16x256xf32> {role = "in"}, %wo: memref<256x256xf32> {role = "in"}, %t: memref<4096xf32> {role = "out"}) {
  ta.loop [16, 256] reduce [256] (%r, %c, %k) {
    %u = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%r, %c, %k) : memref<16x256xf32>
    %w = ta.load %wo[affine_map<(d0, d1, d2) -> (d2, d1)>](%r, %c, %k) : memref<256x256xf32>
    %p = arith.mulf %u, %w : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %c) : memref<4096xf32>
  }
}
ta.kernel @stats(%x: memref<4096xf32> {role = "in"}, %t: memref<4096xf32> {role = "in"}, %mean: memref<16xf32> {role = "out"}) {
  ta.loop [16] reduce [256] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %o = ta.load %t[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%r, %k) : memref<4096xf32>
    %h = arith.addf %v, %o : f32
    %s = ta.reduce <sum> %h : f32
    ta.store %s, %mean[affine_map<(d0) -> (d0)>](%r) : memref<16xf32>
  }
}
ta.kernel @centred_linear(%x: memref<4096xf32> {role = "in"}, %t: memref<4096xf32> {role = "in"}, %mean: memref<16xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %y: memref<2048xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [256] (%r, %c, %k) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %o = ta.load %t[affine_map<(d0, d1, d2) -> (d0 * 256 + d2)>](%r, %c, %k) : memref<4096xf32>
    %h = arith.addf %v, %o : f32
    %s = ta.load %mean[affine_map<(d0, d1, d2) -> (d0)>](%r, %c, %k) : memref<16xf32>
    %n = arith.constant 3.906250e-03 : f32
    %mu = arith.mulf %s, %n : f32
    %d = arith.subf %h, %mu : f32
    %wk = ta.load %w[affine_map<(d0, d1, d2) -> (d2 * 128 + d1)>](%r, %c, %k) : memref<32768xf32>
    %p = arith.mulf %d, %wk : f32
    %q = ta.reduce <sum> %p : f32
    ta.store %q, %y[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%r, %c) : memref<2048xf32>
  }
}
func.func @forward(%a: memref<16x256xf32>, %wo: memref<256x256xf32>, %x: memref<4096xf32>, %w: memref<32768xf32>) -> memref<2048xf32> {
  %t = ta.alloc : memref<4096xf32>
  %mean = ta.alloc : memref<16xf32>
  %y = ta.alloc : memref<2048xf32>
  ta.launch @proj(%a, %wo, %t) : memref<16x256xf32>, memref<256x256xf32>, memref<4096xf32>
  ta.launch @stats(%x, %t, %mean) : memref<4096xf32>, memref<4096xf32>, memref<16xf32>
  ta.launch @centred_linear(%x, %t, %mean, %w, %y) : memref<4096xf32>, memref<4096xf32>, memref<16xf32>, memref<32768xf32>, memref<2048xf32>
  func.return %y : memref<2048xf32>
}

// CHECK-LABEL: ta.kernel @proj(
// CHECK-LABEL: ta.kernel @stats_centred_linear(%x: memref<4096xf32> {role = "in"}, %t: memref<4096xf32> {role = "in"}, %w: memref<32768xf32> {role = "in"}, %y: memref<2048xf32> {role = "out"})
// CHECK-NEXT:    ta.loop [16, 128] reduce [256] (%r, %c, %k) {
// CHECK-NEXT:      %v = ta.load %x
// CHECK-NEXT:      %o = ta.load %t
// CHECK-NEXT:      %h = arith.addf %v, %o : f32
// CHECK-NEXT:      %s = ta.reduce <sum> %h : f32
// CHECK-NOT:       ta.load %x
// CHECK-NOT:       ta.load %t
// CHECK:           %q = ta.reduce <sum> %p : f32
// CHECK:         ta.launch @proj(%a, %wo, %t)
// CHECK-NEXT:    ta.launch @stats_centred_linear(%x, %t, %w, %y)

// BEFORE: remark: fuse-epilogues: not fused: it reduces a matrix product's result (as attention's statistics do), and @centred_linear reduces too
