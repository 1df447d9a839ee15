// out = (x > 0).to(torch.int32).sum(dim=1) for x: f32[64, 384] (a bool tile widened
// with arith.extui, then reduced).
ta.kernel @mask_count(%x: memref<64x384xf32> {role = "in"}, %out: memref<64xi32> {role = "out"}) {
  ta.loop [64] reduce [384] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x384xf32>
    %z = arith.constant 0.0 : f32
    %m = arith.cmpf ogt, %v, %z : f32
    %w = arith.extui %m : i1 to i32
    %s = ta.reduce <sum> %w : i32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0)>](%i, %k) : memref<64xi32>
  }
}
func.func @forward(%x: memref<64x384xf32>) -> memref<64xi32> {
  %out = ta.alloc : memref<64xi32>
  ta.launch @mask_count(%x, %out) : memref<64x384xf32>, memref<64xi32>
  func.return %out : memref<64xi32>
}
