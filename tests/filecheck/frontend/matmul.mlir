// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:linear --shapes 'f32[64,256]' 'f32[128,256]' | filecheck %s

// x @ w.t(): a sum over k of products, (i, j) kept and k reduced; the transpose of w
// is its load map (d1 * 256 + d2), not a copy.

// CHECK:      ta.kernel @[[MM:\w+]](%[[X:\w+]]: memref<16384xf32> {role = "in"}, %[[W:\w+]]: memref<32768xf32> {role = "in"}, %[[T:\w+]]: memref<8192xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [64, 128] reduce [256] (%[[I:\w+]], %[[J:\w+]], %[[K:\w+]]) {
// CHECK-NEXT:     %[[A:\w+]] = ta.load %[[X]][affine_map<(d0, d1, d2) -> (((d0 * 256) + d2))>](%[[I]], %[[J]], %[[K]])
// CHECK-NEXT:     %[[B:\w+]] = ta.load %[[W]][affine_map<(d0, d1, d2) -> (((d1 * 256) + d2))>](%[[I]], %[[J]], %[[K]])
// CHECK-NEXT:     %[[P:\w+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:     %[[S:\w+]] = ta.reduce <sum> %[[P]] : f32
// CHECK-NEXT:     ta.store %[[S]], %[[T]][affine_map<(d0, d1) -> (((d0 * 128) + d1))>](%[[I]], %[[J]])
// CHECK:      func.func @forward(%{{\w+}}: memref<64x256xf32>, %{{\w+}}: memref<128x256xf32>) -> memref<64x128xf32>
// CHECK:        ta.launch @[[MM]](
