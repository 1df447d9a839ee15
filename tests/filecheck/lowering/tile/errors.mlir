// RUN: pallas-opt %s --split-input-file -p tile --verify-diagnostics

// A diagonal read, x[i, i]: one loop dim walks two buffer dims; not a tiling.
ta.kernel @diag(%x: memref<64x64xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] (%i) {
    // expected-error@+1 {{tile: loop dim 0 indexes two dims of one buffer}}
    %v = ta.load %x[affine_map<(d0) -> (d0, d0)>](%i) : memref<64x64xf32>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

// A flat strided read that no pass has made N-D yet.
ta.kernel @flat(%x: memref<16384xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{tile: index 0 (((d0 * 256) + (d1 * 2))) is not a loop dim plus a constant; run stride-to-reshape and canonicalize-permutation first}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}
