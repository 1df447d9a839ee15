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
