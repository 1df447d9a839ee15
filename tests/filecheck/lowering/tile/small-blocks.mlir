// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A rotate-half written with a constant half index (as the frontend wrote a rotary
// embedding until it read the head rotated, `rotations.mlir`): heads moved before
// tokens, each head's 32 lanes split in two halves of 16, the halves swapped and one
// negated. Its minor dims make (2, 16) blocks, 4 KiB of VMEM a row once padded to
// an (8, 128) tile. Leading dims start at one point; with blocks this small the token
// dim grows until a block is 512 KiB (`MIN_BLOCK_BYTES`), 64 rows here: 16 grid steps,
// not 1024 of one row each (129 us against 33 on a v5e for a llama layer's q).
// CHECK-LABEL: tl.kernel @rotate_half
// CHECK:         tl.grid [4, 2, 2, 1, 1]
// CHECK:         tl.load %x[{{.*}}]({{.*}}) : memref<4x128x2x2x16xf32> -> tensor<1x64x1x1x16xf32>
ta.kernel @rotate_half(%x: memref<4x128x2x2x16xf32> {role = "in"}, %out: memref<4x2x128x2x16xf32> {role = "out"}) {
  ta.loop [4, 2, 128, 2, 16] (%b, %h, %t, %half, %j) {
    %hi = ta.load %x[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, 1, d4)>](%b, %h, %t, %half, %j) : memref<4x128x2x2x16xf32>
    %lo = ta.load %x[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, 0, d4)>](%b, %h, %t, %half, %j) : memref<4x128x2x2x16xf32>
    %neg = arith.negf %hi : f32
    %first = arith.index_cast %half : index to i32
    %zero = arith.constant 0 : i32
    %is_first = arith.cmpi eq, %first, %zero : i32
    %v = arith.select %is_first, %neg, %lo : f32
    ta.store %v, %out[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>](%b, %h, %t, %half, %j) : memref<4x2x128x2x16xf32>
  }
}
func.func @forward(%x: memref<4x128x2x2x16xf32>) -> memref<4x2x128x2x16xf32> {
  %out = ta.alloc : memref<4x2x128x2x16xf32>
  ta.launch @rotate_half(%x, %out) : memref<4x128x2x2x16xf32>, memref<4x2x128x2x16xf32>
  func.return %out : memref<4x2x128x2x16xf32>
}
