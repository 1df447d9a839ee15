// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas | filecheck %s --check-prefix=PALLAS
// RUN: pallas-opt %s -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A ta product of f32 values is an f32 product. The MXU's default precision is one
// bfloat16 pass (errors of 1e-1 on a v5e at K=256), so an f32 dot says
// `precision <highest>`, carried to pallas.dot and printed as jax's Precision.HIGHEST.
// CHECK-LABEL: tl.kernel @f32_matmul
// CHECK:         tl.dot %{{.*}}, %{{.*}} precision <highest> : tensor<64x256xf32>, tensor<256x128xf32> -> tensor<64x128xf32>
// PALLAS-LABEL:  pallas.call @f32_matmul
// PALLAS:          pallas.dot %{{.*}}, %{{.*}} precision <highest> : tensor<64x256xf32>
// PY-LABEL:      def f32_matmul_kernel(
// PY:              jnp.dot({{.*}}, preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)
ta.kernel @f32_matmul(%a: memref<64x256xf32> {role = "in"}, %b: memref<256x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [256] (%i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x256xf32>
    %y = ta.load %b[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<256x128xf32>
    %p = arith.mulf %x, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

// bfloat16 values widened to f32: their products are exact in f32 and the MXU sums in
// f32, so the dot takes the bfloat16 tiles at the default precision, one pass.
// CHECK-LABEL: tl.kernel @bf16_matmul
// CHECK-NOT:     arith.extf
// CHECK:         tl.dot %{{.*}}, %{{.*}} : tensor<64x256xbf16>, tensor<256x128xbf16> -> tensor<64x128xf32>
// PY-LABEL:      def bf16_matmul_kernel(
// PY:              jnp.dot({{.*}}, preferred_element_type=jnp.float32)
// PY-NEXT:         c_out[...] =
ta.kernel @bf16_matmul(%a: memref<64x256xbf16> {role = "in"}, %b: memref<256x128xbf16> {role = "in"}, %c: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [256] (%i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x256xbf16>
    %xw = arith.extf %x : bf16 to f32
    %y = ta.load %b[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<256x128xbf16>
    %yw = arith.extf %y : bf16 to f32
    %p = arith.mulf %xw, %yw : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

// One widened bfloat16 factor and one f32 factor: an f32 dot, at the highest precision.
// CHECK-LABEL: tl.kernel @mixed_matmul
// CHECK:         tl.dot %{{.*}}, %{{.*}} precision <highest> : tensor<64x256xf32>, tensor<256x128xf32> -> tensor<64x128xf32>
ta.kernel @mixed_matmul(%a: memref<64x256xbf16> {role = "in"}, %b: memref<256x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] reduce [256] (%i, %j, %k) {
    %x = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<64x256xbf16>
    %xw = arith.extf %x : bf16 to f32
    %y = ta.load %b[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<256x128xf32>
    %p = arith.mulf %xw, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

func.func @forward(%a: memref<64x256xf32>, %b: memref<256x128xf32>, %ah: memref<64x256xbf16>, %bh: memref<256x128xbf16>) -> (memref<64x128xf32>, memref<64x128xf32>, memref<64x128xf32>) {
  %c = ta.alloc : memref<64x128xf32>
  %ch = ta.alloc : memref<64x128xf32>
  %cm = ta.alloc : memref<64x128xf32>
  ta.launch @f32_matmul(%a, %b, %c) : memref<64x256xf32>, memref<256x128xf32>, memref<64x128xf32>
  ta.launch @bf16_matmul(%ah, %bh, %ch) : memref<64x256xbf16>, memref<256x128xbf16>, memref<64x128xf32>
  ta.launch @mixed_matmul(%ah, %b, %cm) : memref<64x256xbf16>, memref<256x128xf32>, memref<64x128xf32>
  func.return %c, %ch, %cm : memref<64x128xf32>, memref<64x128xf32>, memref<64x128xf32>
}
