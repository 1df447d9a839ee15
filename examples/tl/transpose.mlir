// out = x.T for x: f32[256, 384]: tile (i, j) of x is tile (j, i) of out, transposed
// in the kernel; both blocks are (128, 128), legal on either side.
tl.kernel @transpose(%x: memref<256x384xf32> {role = "in"}, %out: memref<384x256xf32> {role = "out"}) {
  tl.grid [2, 3] (parallel, parallel) (%i, %j) {
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 128, d1 * 128)>](%i, %j) : memref<256x384xf32> -> tensor<128x128xf32>
    %tt = tl.transpose %t [1, 0] : tensor<128x128xf32> -> tensor<128x128xf32>
    tl.store %tt, %out[affine_map<(d0, d1) -> (d1 * 128, d0 * 128)>](%i, %j) : tensor<128x128xf32>, memref<384x256xf32>
  }
}
func.func @forward(%x: memref<256x384xf32>) -> memref<384x256xf32> {
  %out = ta.alloc : memref<384x256xf32>
  ta.launch @transpose(%x, %out) : memref<256x384xf32>, memref<384x256xf32>
  func.return %out : memref<384x256xf32>
}
