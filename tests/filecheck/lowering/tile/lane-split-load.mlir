// RUN: pallas-opt %s -p tile | filecheck %s
// RUN: pallas-opt %s -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// A weight the host holds as (256, 256), read through the kernel's view (256, 8, 32)
// (canonicalize-permutation splits the lane dim into heads). Through the view, the
// host would relayout the weight into (256, 8, 32) before every call, a full HBM read
// and write. The tile holds the split dims whole and 256 rows are a legal block of the
// host's (256, 256), so the kernel reads that block and splits it in registers; the
// dot then merges it back, and the two reshapes fold away.
// CHECK-LABEL: tl.kernel @out_projection
// CHECK-SAME:    %w: memref<256x256xf32> {role = "in"}
// CHECK:         tl.load %w[{{.*}}]({{.*}}) : memref<256x256xf32> -> tensor<256x256xf32>
// CHECK:         tl.dot
// PY-LABEL:      def forward(
// PY-NOT:          jnp.reshape
// PY:              return
ta.kernel @out_projection(%y: memref<65536xf32> {role = "in"}, %w: memref<65536xf32> {role = "in"}, %o: memref<65536xf32> {role = "out"}) {
  %yv = ta.reshape %y : memref<65536xf32> to memref<2x8x128x32xf32>
  %wv = ta.reshape %w : memref<65536xf32> to memref<256x8x32xf32>
  %ov = ta.reshape %o : memref<65536xf32> to memref<2x128x256xf32>
  ta.loop [2, 128, 256] reduce [8, 32] (%b, %t, %n, %h, %d) {
    %a = ta.load %yv[affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>](%b, %t, %n, %h, %d) : memref<2x8x128x32xf32>
    %x = ta.load %wv[affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>](%b, %t, %n, %h, %d) : memref<256x8x32xf32>
    %p = arith.mulf %a, %x : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %ov[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%b, %t, %n) : memref<2x128x256xf32>
  }
}
func.func @forward(%y: memref<2x8x128x32xf32>, %w: memref<256x256xf32>) -> memref<2x128x256xf32> {
  %yf = ta.reshape %y : memref<2x8x128x32xf32> to memref<65536xf32>
  %wf = ta.reshape %w : memref<256x256xf32> to memref<65536xf32>
  %o = ta.alloc : memref<2x128x256xf32>
  %of = ta.reshape %o : memref<2x128x256xf32> to memref<65536xf32>
  ta.launch @out_projection(%yf, %wf, %of) : memref<65536xf32>, memref<65536xf32>, memref<65536xf32>
  func.return %o : memref<2x128x256xf32>
}
