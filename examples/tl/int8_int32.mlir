// Two outputs in one kernel: y = x8.clone() for x8: i8[64, 256] in (32, 256) tiles
// (8-bit blocks need 32 rows), and z = x32 * 3 + 1 for x32: i32[64, 256], in 32-bit
// arithmetic (TPU VPUs have none in 8 bits).
tl.kernel @ints(%x8: memref<64x256xi8> {role = "in"}, %x32: memref<64x256xi32> {role = "in"}, %y: memref<64x256xi8> {role = "out"}, %z: memref<64x256xi32> {role = "out"}) {
  tl.grid [2] (parallel) (%i) {
    %a = tl.load %x8[affine_map<(d0) -> (d0 * 32, 0)>](%i) : memref<64x256xi8> -> tensor<32x256xi8>
    tl.store %a, %y[affine_map<(d0) -> (d0 * 32, 0)>](%i) : tensor<32x256xi8>, memref<64x256xi8>
    %b = tl.load %x32[affine_map<(d0) -> (d0 * 32, 0)>](%i) : memref<64x256xi32> -> tensor<32x256xi32>
    %c3 = arith.constant dense<3> : tensor<32x256xi32>
    %c1 = arith.constant dense<1> : tensor<32x256xi32>
    %m = arith.muli %b, %c3 : tensor<32x256xi32>
    %s = arith.addi %m, %c1 : tensor<32x256xi32>
    tl.store %s, %z[affine_map<(d0) -> (d0 * 32, 0)>](%i) : tensor<32x256xi32>, memref<64x256xi32>
  }
}
func.func @forward(%x8: memref<64x256xi8>, %x32: memref<64x256xi32>) -> (memref<64x256xi8>, memref<64x256xi32>) {
  %y = ta.alloc : memref<64x256xi8>
  %z = ta.alloc : memref<64x256xi32>
  ta.launch @ints(%x8, %x32, %y, %z) : memref<64x256xi8>, memref<64x256xi32>, memref<64x256xi8>, memref<64x256xi32>
  func.return %y, %z : memref<64x256xi8>, memref<64x256xi32>
}
