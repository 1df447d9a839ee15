// s = x.sum(dim=1) for x: f32[8, 4194304]: a 128 MiB row block is over any VMEM budget.
ta.kernel @bigsum(%x: memref<8x4194304xf32> {role = "in"}, %out: memref<8xf32> {role = "out"}) {
  ta.loop [8] reduce [4194304] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x4194304xf32>
    %s = ta.reduce <sum> %v : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
  }
}
func.func @forward(%x: memref<8x4194304xf32>) -> memref<8xf32> {
  %out = ta.alloc : memref<8xf32>
  ta.launch @bigsum(%x, %out) : memref<8x4194304xf32>, memref<8xf32>
  func.return %out : memref<8xf32>
}
