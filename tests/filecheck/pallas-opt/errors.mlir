// RUN: not pallas-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not pallas-opt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=STDOUT
// RUN: not pallas-opt %s -p nope 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not pallas-opt %s --no-such-option 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not pallas-opt %s -p "cse{bogus=1}" 2>&1 | filecheck %s --check-prefix=PASSOPT
// RUN: not pallas-opt %s --print-ir-after=nope 2>&1 | filecheck %s --check-prefix=DUMPPASS
// RUN: not pallas-opt %s -t nope 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not pallas-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING

// Errors in the input are reported as `file:line:col: error: message`, followed by the
// source line and a caret, with exit code 1 and never a Python traceback. Each chunk
// of --split-input-file is reported on its own, with line numbers of the whole file,
// and the chunks that are fine are still printed.

// CHECK-NOT: Traceback
// CHECK-NOT: internal error

// A syntax error: the loop's variables need parentheses.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] %i {
  }
}
// CHECK:      errors.mlir:[[# @LINE - 3]]:16: error: '(' expected
// CHECK-NEXT:   ta.loop [64] %i {
// CHECK-NEXT:                ^

// -----

// A block spec whose verifier fails while it is parsed is a parse error where it
// is written, not an internal error.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}
// CHECK:      errors.mlir:[[# @LINE - 8]]:11: error: index map has 1 results for a rank-2 block
// CHECK-NEXT:       in [#pallas.block_spec<[8, 256], (d0) -> (d0)>]
// CHECK-NEXT:          ^

// -----

// A failing verifier: the error is located at the op.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0 + 1)>](%i) : memref<64xf32>
  }
}
// CHECK:      errors.mlir:[[# @LINE - 3]]:5: error: 'ta.load' op load index #0 ranges over [1, 64] but the buffer dim is 64: the access leaves its buffer
// CHECK-NEXT:     %v = ta.load %x[affine_map<(d0) -> (d0 + 1)>](%i) : memref<64xf32>
// CHECK-NEXT:     ^

// -----

// A valid chunk: printed on stdout although its neighbours fail.
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  func.return %x : tensor<8x128xf32>
}

// CHECK-NOT: Traceback
// CHECK-NOT: internal error

// Only the valid chunk reaches stdout; the failed ones leave empty chunks.
// STDOUT:      // -----
// STDOUT-NEXT: // -----
// STDOUT-NEXT: // -----
// STDOUT-NEXT: builtin.module {
// STDOUT-NEXT:   func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
// STDOUT-NEXT:     func.return %x : tensor<8x128xf32>
// STDOUT-NEXT:   }
// STDOUT-NEXT: }
// STDOUT-NOT:  error

// Command-line errors: one line on stderr, no traceback.
// PASS:         pallas-opt: error: unknown pass 'nope' (see --list-passes)
// PASS-NOT:     Traceback
// OPTION:       pallas-opt: error: unrecognized arguments: --no-such-option
// OPTION-NOT:   Traceback
// PASSOPT:      pallas-opt: error: bad pass options in 'cse{bogus=1}': {{.*}}bogus
// PASSOPT-NOT:  Traceback
// DUMPPASS:     pallas-opt: error: --print-ir-after: unknown pass 'nope'
// DUMPPASS-NOT: Traceback
// TARGET:       pallas-opt: error: unknown target 'nope' (choose from python
// TARGET-NOT:   Traceback
// MISSING:      pallas-opt: error: cannot read {{.*}}errors.mlir.missing: No such file or directory
// MISSING-NOT:  Traceback
