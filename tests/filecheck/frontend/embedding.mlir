// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:embedding --shapes 'f32[100,128]' 'i64[16]' | filecheck %s

// F.embedding(ids, table): the id read at the row (int64 narrowed to i32) becomes an
// index value, the symbol s0 of the table's load map: a gather. Before it, two kernels
// check the ids (the call raises IndexError on one outside [0, 100)): whether any is
// outside, and the largest that is.

// CHECK:      ta.kernel @{{\w+}}(%[[IDS0:\w+]]: memref<16xi32> {role = "in"}, %{{\w+}}: memref<1xi32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [1] reduce [16] (%{{\w+}}, %{{\w+}}) {
// CHECK-NEXT:     %[[C:\w+]] = ta.load %[[IDS0]]
// CHECK-NEXT:     %[[ZERO:\w+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[BELOW:\w+]] = arith.cmpi slt, %[[C]], %[[ZERO]] : i32
// CHECK-NEXT:     %[[ROWS:\w+]] = arith.constant 100 : i32
// CHECK-NEXT:     %[[ABOVE:\w+]] = arith.cmpi sge, %[[C]], %[[ROWS]] : i32
// CHECK-NEXT:     %[[BAD:\w+]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK-NEXT:     %[[FLAG:\w+]] = arith.extui %[[BAD]] : i1 to i32
// CHECK-NEXT:     ta.reduce <max> %[[FLAG]] : i32
// CHECK:      ta.kernel @{{\w+}}(%{{\w+}}: memref<16xi32> {role = "in"}, %{{\w+}}: memref<1xi32> {role = "out"}) {
// CHECK:          arith.select
// CHECK-NEXT:     ta.reduce <max>
// CHECK:      ta.kernel @{{\w+}}(%[[IDS:\w+]]: memref<16xi32> {role = "in"}, %[[TABLE:\w+]]: memref<12800xf32> {role = "in"}, %[[OUT:\w+]]: memref<2048xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [16, 128] (%[[I:\w+]], %[[J:\w+]]) {
// CHECK-NEXT:     %[[ID:\w+]] = ta.load %[[IDS]][affine_map<(d0, d1) -> (d0)>](%[[I]], %[[J]]) : memref<16xi32>
// CHECK-NEXT:     %[[ROW:\w+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT:     %[[V:\w+]] = ta.load %[[TABLE]][affine_map<(d0, d1)[s0] -> (((s0 * 128) + d1))>](%[[I]], %[[J]])[%[[ROW]]] : memref<12800xf32>
// CHECK-NEXT:     ta.store %[[V]], %[[OUT]]
// CHECK:      func.func @forward(%{{\w+}}: memref<100x128xf32>, %{{\w+}}: memref<16xi32>) -> (memref<16x128xf32>, memref<i32>, memref<i32>)
