// y = b.float() * 2 for b: bf16[48, 640] (bf16 blocks need 16-row tiles).
ta.kernel @bf16_scale(%b: memref<48x640xbf16> {role = "in"}, %y: memref<48x640xf32> {role = "out"}) {
  ta.loop [48, 640] (%i, %j) {
    %v = ta.load %b[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<48x640xbf16>
    %f = arith.extf %v : bf16 to f32
    %c = arith.constant 2.0 : f32
    %r = arith.mulf %f, %c : f32
    ta.store %r, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<48x640xf32>
  }
}
func.func @forward(%b: memref<48x640xbf16>) -> memref<48x640xf32> {
  %y = ta.alloc : memref<48x640xf32>
  ta.launch @bf16_scale(%b, %y) : memref<48x640xbf16>, memref<48x640xf32>
  func.return %y : memref<48x640xf32>
}
