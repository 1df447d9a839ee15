// out = x.to(torch.bfloat16) for x: f32[128, 1024] (round to nearest even).
ta.kernel @to_bf16(%x: memref<128x1024xf32> {role = "in"}, %out: memref<128x1024xbf16> {role = "out"}) {
  ta.loop [128, 1024] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x1024xf32>
    %r = arith.truncf %v : f32 to bf16
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<128x1024xbf16>
  }
}
func.func @forward(%x: memref<128x1024xf32>) -> memref<128x1024xbf16> {
  %out = ta.alloc : memref<128x1024xbf16>
  ta.launch @to_bf16(%x, %out) : memref<128x1024xf32>, memref<128x1024xbf16>
  func.return %out : memref<128x1024xbf16>
}
