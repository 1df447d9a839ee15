// RUN: pallas-opt %s --split-input-file -p tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tile,tl-to-pallas,pallas-legalize-mosaic | filecheck %s --check-prefix=PALLAS
// RUN: pallas-opt %s --split-input-file -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A load at a rotation index, `(d + c) mod n` over a whole dim d (`torch.roll`, the
// rotate-half of a rotary embedding), takes that dim whole in its block and rolls the
// tile by n - c in the kernel (`pltpu.roll`, jnp.roll's direction): no (2, 16) halves
// padded to (8, 128) tiles, no gather.

// k = rotate_half(x.transpose(1, 2)) * sin + x.transpose(1, 2) * cos for x: f32[4, 128,
// 2, 32] (B, T, H, D): the 32 lanes of a head are one block dim, rolled by 16; the
// transpose to (B, H, T, D) follows the roll; both reads are one block (one operand).
// CHECK-LABEL: tl.kernel @rotate_half
// CHECK:         tl.load %x[{{.*}}]({{.*}}) : memref<4x128x2x32xf32> -> tensor<1x128x2x32xf32>
// CHECK-NEXT:    %v = tl.transpose
// CHECK-NEXT:    %[[X:.*]] = tl.load %x[{{.*}}]({{.*}}) : memref<4x128x2x32xf32> -> tensor<1x128x2x32xf32>
// CHECK-NEXT:    %[[R:.*]] = tl.roll %[[X]] by 16 along 3 : tensor<1x128x2x32xf32>
// CHECK-NEXT:    %r = tl.transpose %[[R]] [0, 2, 1, 3]
// PALLAS-LABEL:  pallas.call @rotate_half
// PALLAS:          pallas.roll %{{.*}} by 16 along 3 : tensor<1x128x2x32xf32>
// PY-LABEL:      def rotate_half_kernel(x_ref, cos_ref, sin_ref, out_out):
// PY:              pltpu.roll(v{{.*}}, 16, 3)
ta.kernel @rotate_half(%x: memref<4x128x2x32xf32> {role = "in"}, %cos: memref<128x32xf32> {role = "in"}, %sin: memref<128x32xf32> {role = "in"}, %out: memref<4x2x128x32xf32> {role = "out"}) {
  ta.loop [4, 2, 128, 32] (%b, %h, %t, %d) {
    %v = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>](%b, %h, %t, %d) : memref<4x128x2x32xf32>
    %r = ta.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, (d3 + 16) mod 32)>](%b, %h, %t, %d) : memref<4x128x2x32xf32>
    %c = ta.load %cos[affine_map<(d0, d1, d2, d3) -> (d2, d3)>](%b, %h, %t, %d) : memref<128x32xf32>
    %s = ta.load %sin[affine_map<(d0, d1, d2, d3) -> (d2, d3)>](%b, %h, %t, %d) : memref<128x32xf32>
    %neg = arith.negf %r : f32
    %lane = arith.index_cast %d : index to i32
    %half = arith.constant 16 : i32
    %second = arith.cmpi sge, %lane, %half : i32
    %rot = arith.select %second, %r, %neg : f32
    %a = arith.mulf %v, %c : f32
    %b2 = arith.mulf %rot, %s : f32
    %o = arith.addf %a, %b2 : f32
    ta.store %o, %out[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%b, %h, %t, %d) : memref<4x2x128x32xf32>
  }
}
func.func @forward(%x: memref<4x128x2x32xf32>, %cos: memref<128x32xf32>, %sin: memref<128x32xf32>) -> memref<4x2x128x32xf32> {
  %out = ta.alloc : memref<4x2x128x32xf32>
  ta.launch @rotate_half(%x, %cos, %sin, %out) : memref<4x128x2x32xf32>, memref<128x32xf32>, memref<128x32xf32>, memref<4x2x128x32xf32>
  func.return %out : memref<4x2x128x32xf32>
}

// -----

// torch.roll(x, 3, 0) * 2 for x: bf16[64, 256]: the rows are one block dim, rolled by
// 3. Mosaic rotates no packed (16-bit) tile along sublanes, so pallas-legalize-mosaic
// rolls it as f32 and narrows it back (exact).
// CHECK-LABEL: tl.kernel @roll_rows
// CHECK:         %[[X:.*]] = tl.load %x[{{.*}}]({{.*}}) : memref<64x256xbf16> -> tensor<64x{{[0-9]+}}xbf16>
// CHECK-NEXT:    tl.roll %[[X]] by 3 along 0 : tensor<64x{{[0-9]+}}xbf16>
// PALLAS-LABEL:  pallas.call @roll_rows
// PALLAS:          %[[W:.*]] = pallas.convert %{{.*}} : tensor<64x{{[0-9]+}}xbf16> to tensor<64x{{[0-9]+}}xf32>
// PALLAS-NEXT:     %[[R:.*]] = pallas.roll %[[W]] by 3 along 0 : tensor<64x{{[0-9]+}}xf32>
// PALLAS-NEXT:     pallas.convert %[[R]] : tensor<64x{{[0-9]+}}xf32> to tensor<64x{{[0-9]+}}xbf16>
ta.kernel @roll_rows(%x: memref<64x256xbf16> {role = "in"}, %out: memref<64x256xbf16> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> ((d0 + 61) mod 64, d1)>](%i, %j) : memref<64x256xbf16>
    %w = arith.extf %v : bf16 to f32
    %two = arith.constant 2.0 : f32
    %p = arith.mulf %w, %two : f32
    %n = arith.truncf %p : f32 to bf16
    ta.store %n, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xbf16>
  }
}
func.func @forward(%x: memref<64x256xbf16>) -> memref<64x256xbf16> {
  %out = ta.alloc : memref<64x256xbf16>
  ta.launch @roll_rows(%x, %out) : memref<64x256xbf16>, memref<64x256xbf16>
  func.return %out : memref<64x256xbf16>
}

// -----

// torch.roll(x.view(64, 8, 32).transpose(0, 1), 16, -1) for x: f32[64, 256] (heads of
// a projection, each rotated by half): the host holds x as (64, 256), so the kernel
// reads that block, splits the lanes into heads in registers and rolls each head's
// 32 lanes; no relayout of x on the host.
// CHECK-LABEL: tl.kernel @heads_rotated
// CHECK:         %[[X:.*]] = tl.load %x[{{.*}}]({{.*}}) : memref<64x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT:    %[[S:.*]] = tl.reshape %[[X]] : tensor<64x256xf32> to tensor<64x8x32xf32>
// CHECK-NEXT:    %[[R:.*]] = tl.roll %[[S]] by 16 along 2 : tensor<64x8x32xf32>
// CHECK-NEXT:    tl.transpose %[[R]] [1, 0, 2]
// PY-LABEL:      def forward(x,
// PY-NOT:          jnp.reshape(x
// PY:              return
ta.kernel @heads_rotated(%x: memref<16384xf32> {role = "in"}, %o: memref<16384xf32> {role = "out"}) {
  %xv = ta.reshape %x : memref<16384xf32> to memref<64x8x32xf32>
  %ov = ta.reshape %o : memref<16384xf32> to memref<8x64x32xf32>
  ta.loop [8, 64, 32] (%h, %t, %d) {
    %r = ta.load %xv[affine_map<(d0, d1, d2) -> (d1, d0, (d2 + 16) mod 32)>](%h, %t, %d) : memref<64x8x32xf32>
    ta.store %r, %ov[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%h, %t, %d) : memref<8x64x32xf32>
  }
}
func.func @forward(%x: memref<64x256xf32>) -> memref<8x64x32xf32> {
  %xf = ta.reshape %x : memref<64x256xf32> to memref<16384xf32>
  %o = ta.alloc : memref<8x64x32xf32>
  %of = ta.reshape %o : memref<8x64x32xf32> to memref<16384xf32>
  ta.launch @heads_rotated(%xf, %of) : memref<16384xf32>, memref<16384xf32>
  func.return %o : memref<8x64x32xf32>
}
