// out = torch.where(torch.arange(384)[None, :] < 300, x, 0) + torch.arange(64)[:, None]
// for x: f32[64, 384]: loop indices used as values (an iota in the kernel).
ta.kernel @iota_mask(%x: memref<64x384xf32> {role = "in"}, %out: memref<64x384xf32> {role = "out"}) {
  ta.loop [64, 384] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x384xf32>
    %jj = arith.index_cast %j : index to i32
    %n = arith.constant 300 : i32
    %keep = arith.cmpi slt, %jj, %n : i32
    %zero = arith.constant 0.0 : f32
    %m = arith.select %keep, %v, %zero : f32
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %r = arith.addf %m, %fi : f32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x384xf32>
  }
}
func.func @forward(%x: memref<64x384xf32>) -> memref<64x384xf32> {
  %out = ta.alloc : memref<64x384xf32>
  ta.launch @iota_mask(%x, %out) : memref<64x384xf32>, memref<64x384xf32>
  func.return %out : memref<64x384xf32>
}
