// RUN: pallas-opt %s --split-input-file -p tile | filecheck %s
// RUN: pallas-opt %s --split-input-file -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --split-input-file --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// Heads read from a projection the host holds as (B * T, H * D): the kernel's view
// splits the lanes into three dims, and its rows into (B, T). Through the view, the
// host would relayout the projection before the kernel (a full HBM read and write).
// Instead the kernel reads the projection viewed as (B, T, H * D) (regrouping rows of
// whole (8, 128) tiles moves nothing), a block of the heads it needs, and splits the
// lanes in registers.

// q of a fused qkv projection, `qkv.view(4, 128, 3, 4, 64)[:, :, 0].transpose(1, 2)`:
// one index of the first split dim, so the block is q's 256 lanes at lane 0.
// CHECK-LABEL: tl.kernel @q_of_qkv
// CHECK-SAME:    %qkv: memref<4x128x768xf32> {role = "in"}
// CHECK:         %[[L:.*]] = tl.load %qkv[affine_map<(d0, d1, d2, d3) -> (d0, 0, 0)>]({{.*}}) : memref<4x128x768xf32> -> tensor<1x128x256xf32>
// CHECK-NEXT:    tl.reshape %[[L]] : tensor<1x128x256xf32> to tensor<1x128x4x64xf32>
// PY-LABEL:      def forward(
// PY-NOT:          jnp.reshape(qkv, (4, 128, 3, 4, 64))
// PY:              return
ta.kernel @q_of_qkv(%qkv: memref<393216xf32> {role = "in"}, %q: memref<131072xf32> {role = "out"}) {
  %v = ta.reshape %qkv : memref<393216xf32> to memref<4x128x3x4x64xf32>
  %o = ta.reshape %q : memref<131072xf32> to memref<4x4x128x64xf32>
  ta.loop [4, 4, 128, 64] (%b, %h, %t, %d) {
    %x = ta.load %v[affine_map<(d0, d1, d2, d3) -> (d0, d2, 0, d1, d3)>](%b, %h, %t, %d) : memref<4x128x3x4x64xf32>
    ta.store %x, %o[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>](%b, %h, %t, %d) : memref<4x4x128x64xf32>
  }
}
func.func @forward(%qkv: memref<512x768xf32>) -> memref<4x4x128x64xf32> {
  %f = ta.reshape %qkv : memref<512x768xf32> to memref<393216xf32>
  %q = ta.alloc : memref<4x4x128x64xf32>
  %qf = ta.reshape %q : memref<4x4x128x64xf32> to memref<131072xf32>
  ta.launch @q_of_qkv(%f, %qf) : memref<393216xf32>, memref<131072xf32>
  func.return %q : memref<4x4x128x64xf32>
}

// -----

// llama's grouped q with its rotary rotate-half, `q.view(4, 128, 2, 4, 32)` read as
// (b, kv head, group, t, d): one kv head a grid step, so the block is that head's
// 4 * 32 = 128 lanes at lane 128 * kv head; each head's 32 lanes are then rolled.
// CHECK-LABEL: tl.kernel @grouped_q
// CHECK-SAME:    %q: memref<4x128x256xf32> {role = "in"}
// CHECK:         %[[L:.*]] = tl.load %q[affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, (d1 * 128))>]({{.*}}) : memref<4x128x256xf32> -> tensor<1x128x128xf32>
// CHECK-NEXT:    %[[S:.*]] = tl.reshape %[[L]] : tensor<1x128x128xf32> to tensor<1x128x1x4x32xf32>
// CHECK-NEXT:    tl.roll %[[S]] by 16 along 4 : tensor<1x128x1x4x32xf32>
// PY-LABEL:      def forward(
// PY-NOT:          jnp.reshape(q, (4, 128, 2, 4, 32))
// PY:              return
ta.kernel @grouped_q(%q: memref<131072xf32> {role = "in"}, %out: memref<131072xf32> {role = "out"}) {
  %v = ta.reshape %q : memref<131072xf32> to memref<4x128x2x4x32xf32>
  %o = ta.reshape %out : memref<131072xf32> to memref<4x2x4x128x32xf32>
  ta.loop [4, 2, 4, 128, 32] (%b, %kv, %g, %t, %d) {
    %x = ta.load %v[affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d2, (d4 + 16) mod 32)>](%b, %kv, %g, %t, %d) : memref<4x128x2x4x32xf32>
    ta.store %x, %o[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>](%b, %kv, %g, %t, %d) : memref<4x2x4x128x32xf32>
  }
}
func.func @forward(%q: memref<512x256xf32>) -> memref<4x2x4x128x32xf32> {
  %f = ta.reshape %q : memref<512x256xf32> to memref<131072xf32>
  %out = ta.alloc : memref<4x2x4x128x32xf32>
  %of = ta.reshape %out : memref<4x2x4x128x32xf32> to memref<131072xf32>
  ta.launch @grouped_q(%f, %of) : memref<131072xf32>, memref<131072xf32>
  func.return %out : memref<4x2x4x128x32xf32>
}
