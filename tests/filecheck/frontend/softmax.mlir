// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:softmax --shapes 'f32[64,512]' | filecheck %s

// softmax over the rows: the max of each row, the sum of exp(x - max), then the
// normalisation, which fuses exp(x - max) again rather than storing it.

// CHECK:      ta.kernel @[[MAX:\w+]](%{{\w+}}: memref<32768xf32> {role = "in"}, %[[M:\w+]]: memref<64xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [64] reduce [512]
// CHECK:          ta.reduce <max> %{{\w+}} : f32

// CHECK:      ta.kernel @[[SUM:\w+]](%{{\w+}}: memref<32768xf32> {role = "in"}, %[[M2:\w+]]: memref<64xf32> {role = "in"}, %[[S:\w+]]: memref<64xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [64] reduce [512]
// CHECK:          %[[ROWMAX:\w+]] = ta.load %[[M2]][affine_map<(d0, d1) -> (d0)>]
// CHECK-NEXT:     %[[C:\w+]] = arith.subf %{{\w+}}, %[[ROWMAX]] : f32
// CHECK-NEXT:     %[[E:\w+]] = math.exp %[[C]] : f32
// CHECK-NEXT:     ta.reduce <sum> %[[E]] : f32

// CHECK:      ta.kernel @[[NORM:\w+]]({{.*}}%[[OUT:\w+]]: memref<32768xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [64, 512] (
// CHECK-NOT:      ta.reduce
// CHECK:          math.exp
// CHECK:          %[[Q:\w+]] = arith.divf
// CHECK-NEXT:     ta.store %[[Q]], %[[OUT]]

// CHECK:      func.func @forward
// CHECK:        ta.launch @[[MAX]](
// CHECK-NEXT:   ta.launch @[[SUM]](
// CHECK-NEXT:   ta.launch @[[NORM]](
