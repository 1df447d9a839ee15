// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:swish_twice --shapes 'f32[8,128]' | filecheck %s

// y = x * sigmoid(x); y * sigmoid(y): x and y are each used twice, and each is emitted
// once (the kernel keeps what it built: a DAG, not a tree). One load of x, one
// constant 1.0 for both sigmoids, each sigmoid's four ops once.

// CHECK:      ta.loop [8, 128] (%[[I:\w+]], %[[J:\w+]]) {
// CHECK-NEXT:   %[[X:\w+]] = ta.load
// CHECK-NEXT:   %[[N:\w+]] = arith.negf %[[X]] : f32
// CHECK-NEXT:   %[[E:\w+]] = math.exp %[[N]] : f32
// CHECK-NEXT:   %[[ONE:\w+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[D:\w+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:   %[[S:\w+]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:   %[[Y:\w+]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT:   %[[N2:\w+]] = arith.negf %[[Y]] : f32
// CHECK-NEXT:   %[[E2:\w+]] = math.exp %[[N2]] : f32
// CHECK-NEXT:   %[[D2:\w+]] = arith.addf %[[ONE]], %[[E2]] : f32
// CHECK-NEXT:   %[[S2:\w+]] = arith.divf %[[ONE]], %[[D2]] : f32
// CHECK-NEXT:   %[[R:\w+]] = arith.mulf %[[Y]], %[[S2]] : f32
// CHECK-NEXT:   ta.store %[[R]]
// CHECK-NEXT: }
