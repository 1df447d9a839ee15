// RUN: not pallas-opt %s --verify-diagnostics 2>&1 | filecheck %s

// --verify-diagnostics fails (exit 1) when an expected diagnostic is not produced and
// when a produced diagnostic was not expected, naming each mismatch with its line.
// (The CHECK lines below spell "expected error" without the dash so that they are not
// read as designators themselves.)

ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    // This load is valid: the expected error is not produced.
    // expected-error@+1 {{the access leaves its buffer}}
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    // This store is invalid but nothing expects its error.
    ta.store %v, %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    // A remark that no pass emits.
    // expected-remark@below {{never emitted}}
    ta.store %v, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// CHECK-NOT: Traceback
// CHECK:     verify-diagnostics-missing.mlir:11: error: expected error "the access leaves its buffer" on line 12 was not produced
// CHECK:     verify-diagnostics-missing.mlir:16: error: expected remark "never emitted" on line 17 was not produced
// CHECK:     verify-diagnostics-missing.mlir:14:5: error: unexpected error: 'ta.store' op stored buffer is kernel argument #0 with role 'in'; expected 'inout' or 'out'
// CHECK-NOT: Traceback
