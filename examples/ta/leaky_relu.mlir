// out = torch.where(x > 0, x, 0.1 * x) for x: f32[256, 512] (leaky relu by compare and select).
ta.kernel @leaky_relu(%x: memref<256x512xf32> {role = "in"}, %out: memref<256x512xf32> {role = "out"}) {
  ta.loop [256, 512] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<256x512xf32>
    %z = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %v, %z : f32
    %a = arith.constant 0.1 : f32
    %n = arith.mulf %a, %v : f32
    %r = arith.select %pos, %v, %n : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<256x512xf32>
  }
}
func.func @forward(%x: memref<256x512xf32>) -> memref<256x512xf32> {
  %out = ta.alloc : memref<256x512xf32>
  ta.launch @leaky_relu(%x, %out) : memref<256x512xf32>, memref<256x512xf32>
  func.return %out : memref<256x512xf32>
}
