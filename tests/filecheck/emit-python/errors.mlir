// RUN: not pallas-opt %s --split-input-file -t python 2>&1 | filecheck %s

// emit-python fails with a located error, and no traceback, when the module has
// something Python cannot express: a top-level op other than func.func @forward, or
// an op in @forward other than pallas.call.

// CHECK-NOT: Traceback

func.func @helper(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  func.return %x : tensor<8x128xf32>
}
// CHECK:      errors.mlir:[[# @LINE - 3]]:1: error: emit-python: expected only func.func @forward at top level, got func.func
// CHECK-NEXT: func.func @helper(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
// CHECK-NEXT: ^

// -----

func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %y = arith.addf %x, %x : tensor<8x128xf32>
  func.return %y : tensor<8x128xf32>
}
// CHECK:      errors.mlir:[[# @LINE - 3]]:3: error: emit-python: no Python for 'arith.addf' in @forward
// CHECK-NEXT:   %y = arith.addf %x, %x : tensor<8x128xf32>
// CHECK-NEXT:   ^

// CHECK-NOT: Traceback
