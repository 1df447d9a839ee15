// RUN: pallas-opt %s --split-input-file -p canonicalize | filecheck %s

// tl.reshape and tl.transpose canonicalize: back-to-back reshapes are one reshape, a
// reshape to the same shape vanishes; transposes compose, and an identity transpose
// vanishes. Each kernel stores the folded value, so only the folded ops remain.

// CHECK-LABEL: tl.kernel @reshapes
// CHECK:         %t = tl.load
// CHECK-NEXT:    %[[R:.*]] = tl.reshape %t : tensor<8x1x128xf32> to tensor<8x128xf32>
// CHECK-NEXT:    tl.store %[[R]], %o
// CHECK-NEXT:    tl.store %t, %p
tl.kernel @reshapes(%x: memref<64x1x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}, %p: memref<64x1x128xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (d0 * 8, 0, 0)>](%i) : memref<64x1x128xf32> -> tensor<8x1x128xf32>
    %a = tl.reshape %t : tensor<8x1x128xf32> to tensor<1024xf32>
    %b = tl.reshape %a : tensor<1024xf32> to tensor<8x128xf32>
    tl.store %b, %o[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x128xf32>, memref<64x128xf32>
    %c = tl.reshape %t : tensor<8x1x128xf32> to tensor<8x128xf32>
    %d = tl.reshape %c : tensor<8x128xf32> to tensor<8x1x128xf32>
    tl.store %d, %p[affine_map<(d0) -> (d0 * 8, 0, 0)>](%i) : tensor<8x1x128xf32>, memref<64x1x128xf32>
  }
}

// -----

// CHECK-LABEL: tl.kernel @transposes
// CHECK:         %t = tl.load
// CHECK-NEXT:    %[[T:.*]] = tl.transpose %t [1, 2, 0] : tensor<2x8x128xf32> -> tensor<8x128x2xf32>
// CHECK-NEXT:    tl.store %[[T]], %o
// CHECK-NEXT:    tl.store %t, %p
tl.kernel @transposes(%x: memref<2x64x128xf32> {role = "in"}, %o: memref<64x128x2xf32> {role = "out"}, %p: memref<2x64x128xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, d0 * 8, 0)>](%i) : memref<2x64x128xf32> -> tensor<2x8x128xf32>
    %a = tl.transpose %t [1, 0, 2] : tensor<2x8x128xf32> -> tensor<8x2x128xf32>
    %b = tl.transpose %a [0, 2, 1] : tensor<8x2x128xf32> -> tensor<8x128x2xf32>
    tl.store %b, %o[affine_map<(d0) -> (d0 * 8, 0, 0)>](%i) : tensor<8x128x2xf32>, memref<64x128x2xf32>
    %c = tl.transpose %t [0, 2, 1] : tensor<2x8x128xf32> -> tensor<2x128x8xf32>
    %d = tl.transpose %c [0, 2, 1] : tensor<2x128x8xf32> -> tensor<2x8x128xf32>
    %e = tl.transpose %d [0, 1, 2] : tensor<2x8x128xf32> -> tensor<2x8x128xf32>
    tl.store %e, %p[affine_map<(d0) -> (0, d0 * 8, 0)>](%i) : tensor<2x8x128xf32>, memref<2x64x128xf32>
  }
}

// -----

// Element-wise compute between reshapes drops its unit dims. A matrix product's
// prologue comes out of loop-space conversion as (m, 1, k) tiles (1 on the product's
// n dim), which Mosaic pads 8x (each unit second-minor dim takes 8 sublanes): the
// compare, select, broadcasts, exp and product run on (16, 128) tiles, the splat
// constants are made again at that shape, and no reshape is left between the load
// and the dot.

// CHECK-LABEL: tl.kernel @prologue
// CHECK:         %t = tl.load %x
// CHECK-NEXT:    %r = tl.load %y
// CHECK-NEXT:    %[[ROW:.*]] = tl.reshape %r : tensor<128xi32> to tensor<1x128xi32>
// CHECK-NEXT:    %[[NEG:.*]] = arith.constant dense<-100> : tensor<1x128xi32>
// CHECK-NEXT:    %valid = tl.compare <ne> %[[ROW]], %[[NEG]] : tensor<1x128xi32>
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1x128xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1x128xf32>
// CHECK-NEXT:    %weight = tl.select %valid, %[[ONE]], %[[ZERO]] : tensor<1x128xi1>, tensor<1x128xf32>
// CHECK-NEXT:    %[[WIDE:.*]] = tl.broadcast %weight : tensor<1x128xf32> to tensor<16x128xf32>
// CHECK-NEXT:    %e = math.exp %t : tensor<16x128xf32>
// CHECK-NEXT:    %p = arith.mulf %e, %[[WIDE]] : tensor<16x128xf32>
// CHECK-NEXT:    %w = tl.load %z
// CHECK-NEXT:    %d = tl.dot %p, %w precision <highest> : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
// CHECK-NOT:     16x1x128
tl.kernel @prologue(%x: memref<64x128xf32> {role = "in"}, %y: memref<128xi32> {role = "in"}, %z: memref<128x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [4] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (d0 * 16, 0)>](%i) : memref<64x128xf32> -> tensor<16x128xf32>
    %t3 = tl.reshape %t : tensor<16x128xf32> to tensor<16x1x128xf32>
    %r = tl.load %y[affine_map<(d0) -> (0)>](%i) : memref<128xi32> -> tensor<128xi32>
    %r3 = tl.reshape %r : tensor<128xi32> to tensor<1x1x128xi32>
    %neg = arith.constant dense<-100> : tensor<1x1x128xi32>
    %valid = tl.compare <ne> %r3, %neg : tensor<1x1x128xi32>
    %zero = arith.constant dense<0.0> : tensor<1x1x128xf32>
    %one = arith.constant dense<1.0> : tensor<1x1x128xf32>
    %weight = tl.select %valid, %one, %zero : tensor<1x1x128xi1>, tensor<1x1x128xf32>
    %wide = tl.broadcast %weight : tensor<1x1x128xf32> to tensor<16x1x128xf32>
    %e = math.exp %t3 : tensor<16x1x128xf32>
    %p = arith.mulf %e, %wide : tensor<16x1x128xf32>
    %p2 = tl.reshape %p : tensor<16x1x128xf32> to tensor<16x128xf32>
    %w = tl.load %z[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<128x128xf32>
    %d = tl.dot %p2, %w precision <highest> : tensor<16x128xf32>, tensor<128x128xf32> -> tensor<16x128xf32>
    tl.store %d, %o[affine_map<(d0) -> (d0 * 16, 0)>](%i) : tensor<16x128xf32>, memref<64x128xf32>
  }
}

// -----

// Unit dims stay where dropping them would leave a layout change behind: a value
// used by an op other than a reshape or an element-wise op (here a reduction), and a
// broadcast that keeps a unit dim its source would drop ((1, 8, 1, 128) to
// (4, 8, 1, 128): the source alone is (8, 128), the broadcast's (1, 8, 128)).

// CHECK-LABEL: tl.kernel @kept
// CHECK:         %e = math.exp %t3 : tensor<16x1x128xf32>
// CHECK:         %s = tl.reduce <sum> %e [2] : tensor<16x1x128xf32> -> tensor<16x1x1xf32>
// CHECK:         %n = math.exp %u4 : tensor<1x8x1x128xf32>
// CHECK-NEXT:    %b = tl.broadcast %n : tensor<1x8x1x128xf32> to tensor<4x8x1x128xf32>
tl.kernel @kept(%x: memref<64x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}, %q: memref<64xf32> {role = "out"}, %u: memref<8x128xf32> {role = "in"}, %v: memref<32x128xf32> {role = "out"}) {
  tl.grid [4] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (d0 * 16, 0)>](%i) : memref<64x128xf32> -> tensor<16x128xf32>
    %t3 = tl.reshape %t : tensor<16x128xf32> to tensor<16x1x128xf32>
    %e = math.exp %t3 : tensor<16x1x128xf32>
    %e2 = tl.reshape %e : tensor<16x1x128xf32> to tensor<16x128xf32>
    tl.store %e2, %o[affine_map<(d0) -> (d0 * 16, 0)>](%i) : tensor<16x128xf32>, memref<64x128xf32>
    %s = tl.reduce <sum> %e [2] : tensor<16x1x128xf32> -> tensor<16x1x1xf32>
    %s1 = tl.reshape %s : tensor<16x1x1xf32> to tensor<16xf32>
    tl.store %s1, %q[affine_map<(d0) -> (d0 * 16)>](%i) : tensor<16xf32>, memref<64xf32>
    %u2 = tl.load %u[affine_map<(d0) -> (0, 0)>](%i) : memref<8x128xf32> -> tensor<8x128xf32>
    %u4 = tl.reshape %u2 : tensor<8x128xf32> to tensor<1x8x1x128xf32>
    %n = math.exp %u4 : tensor<1x8x1x128xf32>
    %b = tl.broadcast %n : tensor<1x8x1x128xf32> to tensor<4x8x1x128xf32>
    %b2 = tl.reshape %b : tensor<4x8x1x128xf32> to tensor<32x128xf32>
    tl.store %b2, %v[affine_map<(d0) -> (0, 0)>](%i) : tensor<32x128xf32>, memref<32x128xf32>
  }
}

// -----

// A mask's iota is made anew without the unit dims, along its renumbered dim: the
// ragged last k part of a bfloat16 product (k = 1000 in parts of 384) masks (16, 384)
// tiles, not (16, 1, 384) ones (Mosaic cannot select packed values on those). An iota
// along a dim that is dropped is a splat of its offset, not an iota of the new shape:
// its component keeps its unit dims.

// CHECK-LABEL: tl.kernel @masked
// CHECK:         %[[K:.*]] = tl.iota dim 1 offset affine_map<(d0) -> ((d0 * 384))>(%i) : tensor<1x384xi32>
// CHECK-NEXT:    %[[END:.*]] = arith.constant dense<1000> : tensor<1x384xi32>
// CHECK-NEXT:    %[[IN:.*]] = tl.compare <slt> %[[K]], %[[END]] : tensor<1x384xi32>
// CHECK-NEXT:    %[[M:.*]] = tl.broadcast %[[IN]] : tensor<1x384xi1> to tensor<16x384xi1>
// CHECK:         tl.select %[[M]], %t, %{{.*}} : tensor<16x384xi1>, tensor<16x384xbf16>
// CHECK:         %r = tl.iota dim 1 offset affine_map<(d0) -> (d0)>(%i) : tensor<16x1x384xi32>
// CHECK:         tl.compare <slt> %r, %{{.*}} : tensor<16x1x384xi32>
tl.kernel @masked(%x: memref<16x1152xbf16> {role = "in"}, %o: memref<16x1152xbf16> {role = "out"}, %q: memref<48x384xi32> {role = "out"}) {
  tl.grid [3] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, d0 * 384)>](%i) : memref<16x1152xbf16> -> tensor<16x384xbf16>
    %t3 = tl.reshape %t : tensor<16x384xbf16> to tensor<16x1x384xbf16>
    %k = tl.iota dim 2 offset affine_map<(d0) -> (d0 * 384)>(%i) : tensor<1x1x384xi32>
    %end = arith.constant dense<1000> : tensor<1x1x384xi32>
    %in = tl.compare <slt> %k, %end : tensor<1x1x384xi32>
    %m = tl.broadcast %in : tensor<1x1x384xi1> to tensor<16x1x384xi1>
    %zero = arith.constant dense<0.000000e+00> : tensor<16x1x384xbf16>
    %s = tl.select %m, %t3, %zero : tensor<16x1x384xi1>, tensor<16x1x384xbf16>
    %s2 = tl.reshape %s : tensor<16x1x384xbf16> to tensor<16x384xbf16>
    tl.store %s2, %o[affine_map<(d0) -> (0, d0 * 384)>](%i) : tensor<16x384xbf16>, memref<16x1152xbf16>
    %r = tl.iota dim 1 offset affine_map<(d0) -> (d0)>(%i) : tensor<16x1x384xi32>
    %three = arith.constant dense<3> : tensor<16x1x384xi32>
    %c = tl.compare <slt> %r, %three : tensor<16x1x384xi32>
    %ci = tl.convert %c : tensor<16x1x384xi1> to tensor<16x1x384xi32>
    %c2 = tl.reshape %ci : tensor<16x1x384xi32> to tensor<16x384xi32>
    tl.store %c2, %q[affine_map<(d0) -> (d0 * 16, 0)>](%i) : tensor<16x384xi32>, memref<48x384xi32>
  }
}
