// i = x.argmax(dim=1).to(int32), m = x.amin(dim=1) for x: f32[128, 1024].
ta.kernel @argmax(%x: memref<128x1024xf32> {role = "in"}, %i: memref<128xi32> {role = "out"}, %m: memref<128xf32> {role = "out"}) {
  ta.loop [128] reduce [1024] (%r, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%r, %k) : memref<128x1024xf32>
    %a = ta.reduce <argmax> %v : f32 -> i32
    %n = ta.reduce <min> %v : f32
    ta.store %a, %i[affine_map<(d0) -> (d0)>](%r) : memref<128xi32>
    ta.store %n, %m[affine_map<(d0) -> (d0)>](%r) : memref<128xf32>
  }
}
func.func @forward(%x: memref<128x1024xf32>) -> (memref<128xi32>, memref<128xf32>) {
  %i = ta.alloc : memref<128xi32>
  %m = ta.alloc : memref<128xf32>
  ta.launch @argmax(%x, %i, %m) : memref<128x1024xf32>, memref<128xi32>, memref<128xf32>
  func.return %i, %m : memref<128xi32>, memref<128xf32>
}
