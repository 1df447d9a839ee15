// RUN: pallas-opt %s --verify-semantics --verify-diagnostics

// The index is computed from data, not loaded from an index buffer, so random inputs
// cannot be kept in range: the input itself reads outside the table, and
// --verify-semantics says it cannot run the kernel (as torch would raise).

// expected-error@+1 {{verify-semantics: cannot run @k on the input: 'ta.load' at}}
ta.kernel @k(%x: memref<16xf32> {role = "in"}, %o: memref<16xf32> {role = "out"}) {
  ta.loop [16] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
    %c = arith.constant 100.0 : f32
    %w = arith.mulf %v, %c : f32
    %n = arith.fptosi %w : f32 to i32
    %s = arith.index_cast %n : i32 to index
    %g = ta.load %x[affine_map<(d0)[s0] -> (s0)>](%i)[%s] : memref<16xf32>
    ta.store %g, %o[affine_map<(d0) -> (d0)>](%i) : memref<16xf32>
  }
}
