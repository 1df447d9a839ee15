// RUN: pallas-opt %s --split-input-file | filecheck %s
// RUN: not pallas-opt %s 2>&1 | filecheck %s --check-prefix=WHOLE

// --split-input-file treats each `// -----` chunk as its own module: the same symbol
// and value names may appear in every chunk, and the outputs are joined by `// -----`.
// Without it the file is one module, where @forward is defined twice.

func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  func.return %x : tensor<8x128xf32>
}

// -----

func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %y = arith.addf %x, %x : tensor<8x128xf32>
  func.return %y : tensor<8x128xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
// CHECK-NEXT:     func.return %x : tensor<8x128xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
// CHECK-NEXT:     %y = arith.addf %x, %x : tensor<8x128xf32>
// CHECK-NEXT:     func.return %y : tensor<8x128xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NOT:  // -----

// WHOLE:      error: 'builtin.module' op Redefinition of symbol "forward"
