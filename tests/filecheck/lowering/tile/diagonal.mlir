// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile --remarks --verify-diagnostics -o /dev/null
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null
// RUN: pallas-opt %s --split-input-file -p tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --cost-report 2>&1 >/dev/null | filecheck %s --check-prefix=COST

// A diagonal read (one loop dim on the last two dims of a buffer, `x.diagonal()` after
// stride-to-reshape): each grid step loads the (t, t) block on the diagonal (index map
// (p) -> (p, p)), keeps the elements where row = lane (the rest selected to 0) and
// sums down the rows as 32-bit integers, floats as their bits (one nonzero term: its
// bits exactly, -0.0 and NaN included): t elements along the lanes. A block
// reads t elements per one kept, so t is the smallest legal size, 128: 512 B an
// element, what XLA's (8, 128) HBM tiles read too. The cost model's minimum is the
// diagonal (the select keeps row = lane only): 8 blocks of 128 x 128 floats (524288 B)
// for 1024 diagonal floats (4096 B), plus the 4096 B written.

// out = x.diagonal() * 2 for x: f32[1024, 1024]
// CHECK-LABEL: tl.kernel @diagonal
// CHECK:         tl.grid [8] (parallel) (%i) {
// CHECK-NEXT:      %0 = tl.load %x[affine_map<(d0) -> ((d0 * 128), (d0 * 128))>](%i) : memref<1024x1024xf32> -> tensor<128x128xf32>
// CHECK-NEXT:      %1 = arith.bitcast %0 : tensor<128x128xf32> to tensor<128x128xi32>
// CHECK-NEXT:      %2 = tl.iota dim 0 offset affine_map<(d0) -> (0)>(%i) : tensor<128x128xi32>
// CHECK-NEXT:      %3 = tl.iota dim 1 offset affine_map<(d0) -> (0)>(%i) : tensor<128x128xi32>
// CHECK-NEXT:      %4 = tl.compare <eq> %2, %3 : tensor<128x128xi32>
// CHECK-NEXT:      %5 = arith.constant dense<0> : tensor<128x128xi32>
// CHECK-NEXT:      %6 = tl.select %4, %1, %5 : tensor<128x128xi1>, tensor<128x128xi32>
// CHECK-NEXT:      %7 = tl.reduce <sum> %6 [0] : tensor<128x128xi32> -> tensor<1x128xi32>
// CHECK-NEXT:      %8 = arith.bitcast %7 : tensor<1x128xi32> to tensor<1x128xf32>
// CHECK-NEXT:      %v = tl.reshape %8 : tensor<1x128xf32> to tensor<128xf32>
// COST:        pallas.call @diagonal  grid [8]
// COST-NEXT:     HBM read 524288 B, written 4096 B, modelled 528384 B, minimum 8192 B, ratio 64.500
ta.kernel @diagonal(%x: memref<1024x1024xf32> {role = "in"}, %out: memref<1024xf32> {role = "out"}) {
  // expected-remark@+1 {{tile: @diagonal: tiles [128] over loop [1024], grid [8]}}
  ta.loop [1024] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0, d0)>](%i) : memref<1024x1024xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<(d0) -> (d0)>](%i) : memref<1024xf32>
  }
}
func.func @forward(%x: memref<1024x1024xf32>) -> memref<1024xf32> {
  %out = ta.alloc : memref<1024xf32>
  ta.launch @diagonal(%x, %out) : memref<1024x1024xf32>, memref<1024xf32>
  func.return %out : memref<1024xf32>
}

// -----

// out = x.diagonal(dim1=-2, dim2=-1) + x.diagonal(1, -2, -1) for x: i32[8, 100, 100]:
// one whole block (99 is no multiple of 128), integers kept by a select to 0; the
// diagonal starting at column 1 is the (99, 99) tile at lane offset 1.
// CHECK-LABEL: tl.kernel @batched_int
// CHECK:         tl.grid [1, 1]
// CHECK:         tl.load %x[affine_map<(d0, d1) -> (0, 0, 0)>](%i, %j) : memref<8x100x100xi32> -> tensor<8x99x99xi32>
// CHECK:         arith.constant dense<0> : tensor<8x99x99xi32>
// CHECK:         tl.reduce <sum> %{{.*}} [1] : tensor<8x99x99xi32> -> tensor<8x1x99xi32>
// CHECK:         tl.load %x[affine_map<(d0, d1) -> (0, 0, 1)>](%i, %j) : memref<8x100x100xi32> -> tensor<8x99x99xi32>
ta.kernel @batched_int(%x: memref<8x100x100xi32> {role = "in"}, %out: memref<8x99xi32> {role = "out"}) {
  // expected-remark@+1 {{tile: @batched_int: tiles [8, 99] over loop [8, 99], grid [1, 1]}}
  ta.loop [8, 99] (%b, %i) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1, d1)>](%b, %i) : memref<8x100x100xi32>
    %w = ta.load %x[affine_map<(d0, d1) -> (d0, d1, d1 + 1)>](%b, %i) : memref<8x100x100xi32>
    %s = arith.addi %v, %w : i32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0, d1)>](%b, %i) : memref<8x99xi32>
  }
}
func.func @forward(%x: memref<8x100x100xi32>) -> memref<8x99xi32> {
  %out = ta.alloc : memref<8x99xi32>
  ta.launch @batched_int(%x, %out) : memref<8x100x100xi32>, memref<8x99xi32>
  func.return %out : memref<8x99xi32>
}

// -----

// A bfloat16 diagonal: the same, widened to f32 first (exactly) for a 32-bit sum (a
// jnp.sum of 16-bit integers is 32-bit). The 1-D bfloat16 output takes blocks of at least 256 elements, so t is
// the whole 256 here.
// CHECK-LABEL: tl.kernel @packed
// CHECK:         tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<256x256xbf16> -> tensor<256x256xbf16>
// CHECK-NEXT:    tl.convert %{{.*}} : tensor<256x256xbf16> to tensor<256x256xf32>
// CHECK-NEXT:    arith.bitcast %{{.*}} : tensor<256x256xf32> to tensor<256x256xi32>
// CHECK:         tl.reduce <sum> %{{.*}} [0] : tensor<256x256xi32> -> tensor<1x256xi32>
// CHECK-NEXT:    arith.bitcast %{{.*}} : tensor<1x256xi32> to tensor<1x256xf32>
// CHECK-NEXT:    tl.convert %{{.*}} : tensor<1x256xf32> to tensor<1x256xbf16>
ta.kernel @packed(%x: memref<256x256xbf16> {role = "in"}, %out: memref<256xbf16> {role = "out"}) {
  // expected-remark@+1 {{tile: @packed: tiles [256] over loop [256], grid [1]}}
  ta.loop [256] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0, d0)>](%i) : memref<256x256xbf16>
    ta.store %v, %out[affine_map<(d0) -> (d0)>](%i) : memref<256xbf16>
  }
}
func.func @forward(%x: memref<256x256xbf16>) -> memref<256xbf16> {
  %out = ta.alloc : memref<256xbf16>
  ta.launch @packed(%x, %out) : memref<256x256xbf16>, memref<256xbf16>
  func.return %out : memref<256xbf16>
}
