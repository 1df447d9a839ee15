// RUN: pallas-opt %s -p tl-to-pallas --verify-diagnostics

// One (256, 512, 2) f32 block in and out: with the minor dim padded to 128 lanes each
// buffer takes 256 * 512 * 128 * 4 = 64 MiB, 256 MiB double-buffered: more than the
// 128 MiB of VMEM a v5e has, so no `vmem_limit_bytes` can make it compile.
tl.kernel @copy(%x: memref<256x512x2xf32> {role = "in"}, %out: memref<256x512x2xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (0, 0, 0)>](%i) : memref<256x512x2xf32> -> tensor<256x512x2xf32>
    tl.store %v, %out[affine_map<(d0) -> (0, 0, 0)>](%i) : tensor<256x512x2xf32>, memref<256x512x2xf32>
  }
}
func.func @forward(%x: memref<256x512x2xf32>) -> memref<256x512x2xf32> {
  %out = ta.alloc : memref<256x512x2xf32>
  // expected-error@+1 {{tl-to-pallas: @copy needs 268435456 B of VMEM (double-buffered blocks, scratch and relayout values, in whole tiles), over the 134217728 B of a v5e: tile it smaller}}
  ta.launch @copy(%x, %out) : memref<256x512x2xf32>, memref<256x512x2xf32>
  func.return %out : memref<256x512x2xf32>
}
