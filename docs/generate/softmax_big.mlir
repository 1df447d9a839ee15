// out = softmax(x, dim=1) for x: f32[4096, 2048], as the frontend writes it.
ta.kernel @softmax(%x: memref<4096x2048xf32> {role = "in"}, %out: memref<4096x2048xf32> {role = "out"}) {
  ta.loop [4096] reduce [2048] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<4096x2048xf32>
    %m = ta.reduce <max> %v : f32
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = ta.reduce <sum> %e : f32
    %p = arith.divf %e, %s : f32
    ta.store %p, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<4096x2048xf32>
  }
}
func.func @forward(%x: memref<4096x2048xf32>) -> memref<4096x2048xf32> {
  %out = ta.alloc : memref<4096x2048xf32>
  ta.launch @softmax(%x, %out) : memref<4096x2048xf32>, memref<4096x2048xf32>
  func.return %out : memref<4096x2048xf32>
}
