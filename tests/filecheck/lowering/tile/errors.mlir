// RUN: pallas-opt %s --split-input-file -p tile --verify-diagnostics

// What the tiler refuses even with its XLA fallback (xla-fallback.mlir): an access
// whose index needs a reduction of the same loop cannot be computed before the kernel
// (and the gather-like load keeps the kernel off the one-fusion path).
// out[i] = y[x[i].argmax()] for x: f32[64, 128], y: f32[128].
ta.kernel @by_argmax(%x: memref<64x128xf32> {role = "in"}, %y: memref<128xf32> {role = "in"}, %out: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x128xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    %s = arith.index_cast %a : i32 to index
    // expected-error@+1 {{tile: the index depends on data and the load is not a gather (indirect-load-to-scalar-prefetch left it)}}
    %w = ta.load %y[affine_map<(d0, d1)[s0] -> (s0)>](%i, %k)[%s] : memref<128xf32>
    ta.store %w, %out[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<64xf32>
  }
}

