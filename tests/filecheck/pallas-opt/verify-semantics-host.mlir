// RUN: pallas-opt %s --split-input-file --verify-semantics -p cse 2>&1 | filecheck %s
// RUN: pallas-opt %S/time-passes.mlir --verify-semantics -p cse 2>&1 | filecheck %s --check-prefix=SAME
// RUN: pallas-opt %S/print-ir.mlir --verify-semantics -p cse 2>&1 | filecheck %s --check-prefix=SAME
// RUN: pallas-opt %S/split-input-file.mlir --split-input-file --verify-semantics -p cse 2>&1 | filecheck %s --check-prefix=SAME
// RUN: pallas-opt %S/../emit-python/errors.mlir --split-input-file --verify-semantics -p cse 2>&1 | filecheck %s --check-prefix=SAME
// RUN: not pallas-opt %S/errors.mlir --split-input-file --verify-semantics -p cse 2>&1 | filecheck %s --check-prefix=ERRORS

// --verify-semantics on a @forward that launches no kernel: its level is read from its
// types (tensors: pallas; memrefs: ta), its scalar arguments get random values too, and
// arith and math ops on its arrays and scalars have their meaning. No internal error.

// CHECK-NOT: error
// SAME-NOT:  error
// SAME:      builtin.module
// SAME-NOT:  error

// CHECK-LABEL: func.func @forward(%x: tensor<8x128xf32>, %s: f32)
// CHECK-NEXT:    func.return %x
func.func @forward(%x: tensor<8x128xf32>, %s: f32) -> tensor<8x128xf32> {
  func.return %x : tensor<8x128xf32>
}

// -----

// cse merges the two products: what @forward computes is checked before and after.
// CHECK-LABEL: func.func @forward(%s: f32, %i: i32) -> (f32, i32)
// CHECK-NEXT:    %t = arith.mulf %s, %s : f32
// CHECK-NEXT:    %n = arith.divsi %i, %i : i32
// CHECK-NEXT:    func.return %t, %n
func.func @forward(%s: f32, %i: i32) -> (f32, i32) {
  %t = arith.mulf %s, %s : f32
  %u = arith.mulf %s, %s : f32
  %n = arith.divsi %i, %i : i32
  func.return %t, %n : f32, i32
}

// -----

// CHECK-LABEL: func.func @forward(%x: memref<8xf32>) -> memref<8xf32>
func.func @forward(%x: memref<8xf32>) -> memref<8xf32> {
  func.return %x : memref<8xf32>
}

// -----

// CHECK-LABEL: func.func @forward(%x: tensor<4x128xi32>, %y: tensor<4x128xi32>)
// CHECK-NEXT:    arith.remsi %x, %y
func.func @forward(%x: tensor<4x128xi32>, %y: tensor<4x128xi32>) -> tensor<4x128xi32> {
  %r = arith.remsi %x, %y : tensor<4x128xi32>
  func.return %r : tensor<4x128xi32>
}

// errors.mlir's chunks fail for what they hold (a parse error, a bad block spec), and
// its last chunk, a @forward with no kernel, runs.
// ERRORS:     errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: '(' expected
// ERRORS:     error: index map has 1 results for a rank-2 block
// ERRORS-NOT: internal error
// ERRORS-NOT: verify-semantics
