// RUN: pallas-opt %s --split-input-file -p "tile{vmem-budget=524288}" | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p "tile{vmem-budget=524288},tl-to-pallas,pallas-legalize-mosaic" -o /dev/null
// RUN: pallas-opt %s --split-input-file -p "tile{vmem-budget=524288},tl-to-pallas,pallas-legalize-mosaic" | filecheck %s --check-prefix=PALLAS

// relu(x @ w + b) cast to bf16, for x: f32[256, 1024], w: f32[1024, 256] in 512 KiB of
// VMEM: k does not fit whole, so it is split over a sequential grid dim. The epilogue
// (bias, relu, cast) waits for the whole sum: the dot's partial products accumulate in
// VMEM (tl.accumulate, on the parallel dims) and the epilogue runs on the last k step,
// on (m, n) tiles (no unit k dim on the lanes).
// CHECK-LABEL: tl.kernel @linear_relu
// CHECK:         tl.grid [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}] (parallel, parallel, sequential)
// CHECK:         %[[P:.*]] = tl.dot {{.*}} -> tensor<[[M:[0-9]+]]x[[N:[0-9]+]]xf32>
// CHECK-NEXT:    %s = tl.accumulate <sum> %[[P]] : tensor<[[M]]x[[N]]xf32>
// CHECK:         tl.on_last_step {
// CHECK:           %h = arith.addf %s, {{.*}} : tensor<[[M]]x[[N]]xf32>
// CHECK:           %r = arith.maximumf %h, {{.*}} : tensor<[[M]]x[[N]]xf32>
// CHECK-NEXT:      %y = arith.truncf %r : tensor<[[M]]x[[N]]xf32> to tensor<[[M]]x[[N]]xbf16>
// CHECK-NEXT:      tl.store %y, %out
// CHECK-NEXT:    }
// CHECK-NOT:     tl.store

// PALLAS-LABEL: pallas.call @linear_relu
// PALLAS:         scratch [!pallas.ref<{{[0-9]+}}x{{[0-9]+}}xf32, vmem>]
// PALLAS:         pallas.when
// PALLAS:         pallas.when
// PALLAS:         %s = pallas.load %acc
// PALLAS:         pallas.when
// PALLAS:           arith.truncf
// PALLAS:           pallas.store %y, %out_out
ta.kernel @linear_relu(%x: memref<256x1024xf32> {role = "in"}, %w: memref<1024x256xf32> {role = "in"}, %b: memref<256xf32> {role = "in"}, %out: memref<256x256xbf16> {role = "out"}) {
  ta.loop [256, 256] reduce [1024] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<256x1024xf32>
    %c = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<1024x256xf32>
    %p = arith.mulf %a, %c : f32
    %s = ta.reduce <sum> %p : f32
    %bias = ta.load %b[affine_map<(d0, d1, d2) -> (d1)>](%i, %j, %k) : memref<256xf32>
    %h = arith.addf %s, %bias : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %h, %zero : f32
    %y = arith.truncf %r : f32 to bf16
    ta.store %y, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<256x256xbf16>
  }
}
func.func @forward(%x: memref<256x1024xf32>, %w: memref<1024x256xf32>, %b: memref<256xf32>) -> memref<256x256xbf16> {
  %out = ta.alloc : memref<256x256xbf16>
  ta.launch @linear_relu(%x, %w, %b, %out) : memref<256x1024xf32>, memref<1024x256xf32>, memref<256xf32>, memref<256x256xbf16>
  func.return %out : memref<256x256xbf16>
}

// -----

// A scaled product with k whole (it fits): no accumulator; the epilogue still runs on
// (m, n) tiles.
// CHECK-LABEL: tl.kernel @small
// CHECK:         tl.grid [1, 1] (parallel, parallel)
// CHECK:         %[[P:.*]] = tl.dot {{.*}} -> tensor<64x128xf32>
// CHECK-NOT:     tl.accumulate
// CHECK-NOT:     tl.on_last_step
// CHECK:         %h = arith.mulf %[[P]], {{.*}} : tensor<64x128xf32>
// CHECK-NEXT:    tl.store %h, %out
ta.kernel @small(%x: memref<64x128xf32> {role = "in"}, %w: memref<128x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [128] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x128xf32>
    %c = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<128x128xf32>
    %p = arith.mulf %a, %c : f32
    %s = ta.reduce <sum> %p : f32
    %scale = arith.constant 0.125 : f32
    %h = arith.mulf %s, %scale : f32
    ta.store %h, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
func.func @forward(%x: memref<64x128xf32>, %w: memref<128x128xf32>) -> memref<64x128xf32> {
  %out = ta.alloc : memref<64x128xf32>
  ta.launch @small(%x, %w, %out) : memref<64x128xf32>, memref<128x128xf32>, memref<64x128xf32>
  func.return %out : memref<64x128xf32>
}
