// RUN: pallas-opt %s --print-ir-after-all -p cse,canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// RUN: pallas-opt %s --print-ir-after-all -p cse,canonicalize 2>/dev/null | filecheck %s --check-prefix=OUT
// RUN: pallas-opt %s --print-ir-after=canonicalize -p cse,canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=ONE

// --print-ir-after-all dumps the module to stderr after each pass, headed as in
// mlir-opt; stdout holds only the final IR. --print-ir-after=PASS dumps after PASS only.
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %a = arith.addf %x, %x : tensor<8x128xf32>
  %b = arith.addf %x, %x : tensor<8x128xf32>
  %c = arith.mulf %a, %b : tensor<8x128xf32>
  func.return %c : tensor<8x128xf32>
}

// DUMP:      // -----// IR Dump After cse //----- //
// DUMP-NEXT: builtin.module {
// DUMP:        %a = arith.addf %x, %x : tensor<8x128xf32>
// DUMP-NEXT:   %c = arith.mulf %a, %a : tensor<8x128xf32>
// DUMP:      // -----// IR Dump After canonicalize //----- //
// DUMP-NEXT: builtin.module {
// DUMP:        %c = arith.mulf %a, %a : tensor<8x128xf32>
// DUMP-NOT:  IR Dump
// DUMP-NOT:  builtin.module

// OUT-NOT:   IR Dump
// OUT:       builtin.module {
// OUT-NEXT:    func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
// OUT-NEXT:      %a = arith.addf %x, %x : tensor<8x128xf32>
// OUT-NEXT:      %c = arith.mulf %a, %a : tensor<8x128xf32>
// OUT-NEXT:      func.return %c : tensor<8x128xf32>
// OUT-NEXT:    }
// OUT-NEXT:  }
// OUT-NOT:   IR Dump

// ONE-NOT:   IR Dump After cse
// ONE:       // -----// IR Dump After canonicalize //----- //
// ONE-NOT:   IR Dump
