// RUN: pallas-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The designator forms of --verify-diagnostics: @+N, @-N, @above, @below (skipping
// other designator lines), several expected errors in one chunk, parse errors, and
// line numbers that count from the start of the file in every chunk. On success the
// exit code is 0 and nothing but the chunk separators is printed.

// CHECK-NOT: error
// CHECK-NOT: builtin.module

ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    ta.store %v, %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    // expected-error@-1 {{stored buffer is kernel argument #0 with role 'in'}}
    // expected-error@+2 {{store index #0 ranges over [1, 64]}}
    // A plain comment line between the designator and its op.
    ta.store %v, %o[affine_map<(d0) -> (d0 + 1)>](%i) : memref<64xf32>
    // expected-error@below {{store index #0 ranges over [-1, 62] but the buffer dim is 64: the access leaves its buffer}}
    // expected-error@+2 {{loaded buffer is kernel argument #1 with role 'out'}}
    ta.store %v, %o[affine_map<(d0) -> (d0 - 1)>](%i) : memref<64xf32>
    %w = ta.load %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    %v = ta.load %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    // expected-error@above {{loaded buffer is kernel argument #1 with role 'out'}}
  }
}

// -----

// expected-error@+1 {{'(' expected}}
ta.kernel @k[%x: memref<64xf32> {role = "in"}] {
}
