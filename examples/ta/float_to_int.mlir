// out = (x * 10).to(torch.int32) for x: f32[200, 256] (truncates toward zero, so -13.7
// gives -13).
ta.kernel @float_to_int(%x: memref<200x256xf32> {role = "in"}, %out: memref<200x256xi32> {role = "out"}) {
  ta.loop [200, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<200x256xf32>
    %c = arith.constant 10.0 : f32
    %s = arith.mulf %v, %c : f32
    %r = arith.fptosi %s : f32 to i32
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<200x256xi32>
  }
}
func.func @forward(%x: memref<200x256xf32>) -> memref<200x256xi32> {
  %out = ta.alloc : memref<200x256xi32>
  ta.launch @float_to_int(%x, %out) : memref<200x256xf32>, memref<200x256xi32>
  func.return %out : memref<200x256xi32>
}
