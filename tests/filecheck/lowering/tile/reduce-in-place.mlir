// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A reduction along a block's leading dim is summed where it lies: the tiles keep the
// block's order (`Emitter.value_order`), with no transpose that puts the reduced dim
// on the lanes. Transposed, the (8, 128, 128) block below became (128, 128, 8), 16x
// larger in VMEM tiles once its 8 lanes pad to 128: the kernel asked 16.96 MB of a
// 16 MB scoped VMEM and the TPU compiler refused it (a fuzzer's program).
// CHECK-LABEL: tl.kernel @broadcast_sum
// CHECK-NOT:     tl.transpose
// CHECK:         tl.load %in1{{.*}} -> tensor<8x128x128xf32>
// CHECK-NOT:     tl.transpose
// CHECK:         tl.reduce <sum> %v6 [0] : tensor<8x128x128xf32> -> tensor<1x128x128xf32>
// CHECK-LABEL: tl.kernel @column_sum
// CHECK-NOT:     tl.transpose
// CHECK:         tl.reduce <sum> %v [0] : tensor<2048x128xf32> -> tensor<1x128xf32>
// CHECK-LABEL: tl.kernel @middle_sum
// CHECK-NOT:     tl.transpose
// CHECK:         tl.reduce <sum> %v [1] : tensor<8x256x128xf32> -> tensor<8x1x128xf32>
ta.kernel @broadcast_sum(%in0: memref<128x128xf32> {role = "in"}, %in1: memref<8x128x128xf32> {role = "in"}, %out: memref<128x128xf32> {role = "out"}) {
  ta.loop [128, 128] reduce [8] (%l0, %l1, %l2) {
    %v1 = ta.load %in0[affine_map<(d0, d1, d2) -> (d0, d1)>](%l0, %l1, %l2) : memref<128x128xf32>
    %v2 = arith.constant 0.000000e+00 : f32
    %v3 = arith.maximumf %v1, %v2 : f32
    %v4 = ta.load %in1[affine_map<(d0, d1, d2) -> (d2, d0, d1)>](%l0, %l1, %l2) : memref<8x128x128xf32>
    %v5 = arith.addf %v3, %v4 : f32
    %v6 = math.absf %v5 : f32
    %v7 = ta.reduce <sum> %v6 : f32
    ta.store %v7, %out[affine_map<(d0, d1) -> (d0, d1)>](%l0, %l1) : memref<128x128xf32>
  }
}
ta.kernel @column_sum(%x: memref<4096x1024xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  ta.loop [1024] reduce [4096] (%j, %i) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1, d0)>](%j, %i) : memref<4096x1024xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%j) : memref<1024xf32>
  }
}
ta.kernel @middle_sum(%x: memref<8x256x512xf32> {role = "in"}, %out: memref<8x512xf32> {role = "out"}) {
  ta.loop [8, 512] reduce [256] (%b, %j, %t) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2, d1)>](%b, %j, %t) : memref<8x256x512xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%b, %j) : memref<8x512xf32>
  }
}
func.func @forward(%in0: memref<128x128xf32>, %in1: memref<8x128x128xf32>, %x: memref<4096x1024xf32>, %y: memref<8x256x512xf32>) -> (memref<128x128xf32>, memref<1024xf32>, memref<8x512xf32>) {
  %a = ta.alloc : memref<128x128xf32>
  ta.launch @broadcast_sum(%in0, %in1, %a) : memref<128x128xf32>, memref<8x128x128xf32>, memref<128x128xf32>
  %b = ta.alloc : memref<1024xf32>
  ta.launch @column_sum(%x, %b) : memref<4096x1024xf32>, memref<1024xf32>
  %c = ta.alloc : memref<8x512xf32>
  ta.launch @middle_sum(%y, %c) : memref<8x256x512xf32>, memref<8x512xf32>
  func.return %a, %b, %c : memref<128x128xf32>, memref<1024xf32>, memref<8x512xf32>
}
