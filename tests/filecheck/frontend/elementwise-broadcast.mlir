// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:chain --shapes 'f32[64,256]' 'f32[256]' 'f32[64,1]' | filecheck %s

// tanh(x * 2 - row) + column: one fused kernel over the broadcast shape. The row vector
// is read at the column index (d1), the [64, 1] column at the row index (d0), and no
// intermediate is materialised.

// CHECK:      ta.kernel @[[K:\w+]](%[[X:\w+]]: memref<16384xf32> {role = "in"}, %[[ROW:\w+]]: memref<256xf32> {role = "in"}, %[[COL:\w+]]: memref<64xf32> {role = "in"}, %[[OUT:\w+]]: memref<16384xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [64, 256] (%[[I:\w+]], %[[J:\w+]]) {
// CHECK-NEXT:     %[[XV:\w+]] = ta.load %[[X]][affine_map<(d0, d1) -> (((d0 * 256) + d1))>](%[[I]], %[[J]])
// CHECK-NEXT:     %[[TWO:\w+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:     %[[M:\w+]] = arith.mulf %[[XV]], %[[TWO]] : f32
// CHECK-NEXT:     %[[R:\w+]] = ta.load %[[ROW]][affine_map<(d0, d1) -> (d1)>](%[[I]], %[[J]])
// CHECK-NEXT:     %[[S:\w+]] = arith.subf %[[M]], %[[R]] : f32
// CHECK-NEXT:     %[[T:\w+]] = math.tanh %[[S]] : f32
// CHECK-NEXT:     %[[C:\w+]] = ta.load %[[COL]][affine_map<(d0, d1) -> (d0)>](%[[I]], %[[J]])
// CHECK-NEXT:     %[[SUM:\w+]] = arith.addf %[[T]], %[[C]] : f32
// CHECK-NEXT:     ta.store %[[SUM]], %[[OUT]][affine_map<(d0, d1) -> (((d0 * 256) + d1))>](%[[I]], %[[J]])
// CHECK-NOT:  ta.kernel

// CHECK:      func.func @forward(%[[FX:\w+]]: memref<64x256xf32>, %[[FR:\w+]]: memref<256xf32>, %[[FC:\w+]]: memref<64x1xf32>) -> memref<64x256xf32> {
// CHECK:        %[[RESULT:\w+]] = ta.alloc : memref<64x256xf32>
// CHECK:        ta.launch @[[K]](
// CHECK-NEXT:   func.return %[[RESULT]] : memref<64x256xf32>
