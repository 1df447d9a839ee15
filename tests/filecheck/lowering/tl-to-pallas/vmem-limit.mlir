// RUN: pallas-opt %s -p tl-to-pallas | filecheck %s --check-prefix=V5E
// RUN: pallas-opt %s -p "tl-to-pallas{chip=v6e}" | filecheck %s --check-prefix=V6E

// A copy in (32, 512, 2) f32 blocks: 128 KiB of data each, but VMEM holds the last two
// dims in (8, 128) tiles, so the 2-lane minor dim pads to 128 lanes: 32 * 512 * 128 * 4
// = 8 MiB a buffer, 32 MiB for the double-buffered input and output blocks. That is over
// v5e's 16 MiB default scoped VMEM (the limit becomes 2 * 32 MiB = 64 MiB) and within
// v6e's 32 MiB (no limit). Without the limit the TPU compiler runs out of scoped VMEM
// for blocks of this kind (E1001, measured with (128, 512, 2) blocks on v5e).
tl.kernel @copy(%x: memref<64x512x2xf32> {role = "in"}, %out: memref<64x512x2xf32> {role = "out"}) {
  tl.grid [2] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 32, 0, 0)>](%i) : memref<64x512x2xf32> -> tensor<32x512x2xf32>
    tl.store %v, %out[affine_map<(d0) -> (d0 * 32, 0, 0)>](%i) : tensor<32x512x2xf32>, memref<64x512x2xf32>
  }
}
func.func @forward(%x: memref<64x512x2xf32>) -> memref<64x512x2xf32> {
  %out = ta.alloc : memref<64x512x2xf32>
  ta.launch @copy(%x, %out) : memref<64x512x2xf32>, memref<64x512x2xf32>
  func.return %out : memref<64x512x2xf32>
}

// V5E:      pallas.call @copy
// V5E:      attributes {cost_estimate = {{.*}}, vmem_limit_bytes = 67108864 : i64}
// V6E:      pallas.call @copy
// V6E-NOT:  vmem_limit_bytes
