// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:row_sums --shapes 'f32[32,512]' | filecheck %s

// x.sum(dim=1): a kernel whose loop keeps the 32 rows and reduces over the 512
// columns into a ta.alloc buffer, which @forward returns as it is (no copy kernel).

// CHECK:      ta.kernel @[[SUM:\w+]](%[[X:\w+]]: memref<16384xf32> {role = "in"}, %[[T:\w+]]: memref<32xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [32] reduce [512] (%[[I:\w+]], %[[K:\w+]]) {
// CHECK-NEXT:     %[[V:\w+]] = ta.load %[[X]][affine_map<(d0, d1) -> (((d0 * 512) + d1))>](%[[I]], %[[K]])
// CHECK-NEXT:     %[[S:\w+]] = ta.reduce <sum> %[[V]] : f32
// CHECK-NEXT:     ta.store %[[S]], %[[T]][affine_map<(d0) -> (d0)>](%[[I]])
// CHECK-NOT:  ta.kernel

// CHECK:      func.func @forward(%[[IN:\w+]]: memref<32x512xf32>) -> memref<32xf32> {
// CHECK:        %[[TMP:\w+]] = ta.alloc : memref<32xf32>
// CHECK:        %[[TMP_FLAT:\w+]] = ta.reshape %[[TMP]]
// CHECK:        ta.launch @[[SUM]](%{{\w+}}, %[[TMP_FLAT]])
// CHECK-NEXT:   func.return %[[TMP]] : memref<32xf32>
