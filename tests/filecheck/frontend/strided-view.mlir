// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:strided --shapes 'f32[32,384]' | filecheck %s

// x[::2, 1::3].t() * 3 on a [32, 384] input: the steps, the start and the transpose
// fold into the load's index map (row 2 * d1 of 384 elements, column 3 * d0 + 1); the
// view is never materialised.

// CHECK:      ta.kernel @{{\w+}}(%[[X:\w+]]: memref<12288xf32> {role = "in"}, %[[OUT:\w+]]: memref<2048xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [128, 16] (%[[I:\w+]], %[[J:\w+]]) {
// CHECK-NEXT:     %[[V:\w+]] = ta.load %[[X]][affine_map<(d0, d1) -> (((d1 * 768) + ((d0 * 3) + 1)))>](%[[I]], %[[J]]) : memref<12288xf32>
// CHECK:          arith.mulf %[[V]], %{{\w+}} : f32
// CHECK:          ta.store %{{\w+}}, %[[OUT]][affine_map<(d0, d1) -> (((d0 * 16) + d1))>](%[[I]], %[[J]])
// CHECK-NOT:  ta.kernel
// CHECK:      func.func @forward(%{{\w+}}: memref<32x384xf32>) -> memref<128x16xf32>
