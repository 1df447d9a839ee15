// gelu(x @ w + b) for x: bf16[256, 2048], w: bf16[2048, 384], b: f32[384]: the
// products are summed in f32, and the bias and the tanh GELU are the epilogue, computed
// once from each whole sum. The tiler splits k over a sequential grid dim, keeps the
// running sum in VMEM (tl.accumulate) and runs the epilogue in tl.on_last_step.
ta.kernel @linear_gelu(%x: memref<256x2048xbf16> {role = "in"}, %w: memref<2048x384xbf16> {role = "in"}, %b: memref<384xf32> {role = "in"}, %y: memref<256x384xf32> {role = "out"}) {
  ta.loop [256, 384] reduce [2048] (%i, %j, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : memref<256x2048xbf16>
    %c = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : memref<2048x384xbf16>
    %a32 = arith.extf %a : bf16 to f32
    %c32 = arith.extf %c : bf16 to f32
    %p = arith.mulf %a32, %c32 : f32
    %s = ta.reduce <sum> %p : f32
    %bias = ta.load %b[affine_map<(d0, d1, d2) -> (d1)>](%i, %j, %k) : memref<384xf32>
    %h = arith.addf %s, %bias : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k0 = arith.constant 0.7978845608 : f32
    %k1 = arith.constant 0.044715 : f32
    %h2 = arith.mulf %h, %h : f32
    %h3 = arith.mulf %h2, %h : f32
    %t0 = arith.mulf %h3, %k1 : f32
    %t1 = arith.addf %h, %t0 : f32
    %t2 = arith.mulf %t1, %k0 : f32
    %t3 = math.tanh %t2 : f32
    %t4 = arith.addf %t3, %one : f32
    %t5 = arith.mulf %h, %half : f32
    %g = arith.mulf %t5, %t4 : f32
    ta.store %g, %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<256x384xf32>
  }
}
func.func @forward(%x: memref<256x2048xbf16>, %w: memref<2048x384xbf16>, %b: memref<384xf32>) -> memref<256x384xf32> {
  %y = ta.alloc : memref<256x384xf32>
  ta.launch @linear_gelu(%x, %w, %b, %y) : memref<256x2048xbf16>, memref<2048x384xbf16>, memref<384xf32>, memref<256x384xf32>
  func.return %y : memref<256x384xf32>
}
