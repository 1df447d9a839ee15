// RUN: pallas-opt %s -p indirect-load-to-scalar-prefetch | filecheck %s
// RUN: pallas-opt %s -p indirect-load-to-scalar-prefetch,indirect-load-to-scalar-prefetch | filecheck %s
// RUN: pallas-opt %s -p indirect-load-to-scalar-prefetch --remarks --verify-diagnostics

// RUN: pallas-opt %s --verify-semantics -p indirect-load-to-scalar-prefetch

// Several gathered dims on flat storage. --verify-semantics keeps each random index below
// the dim its stride implies (i1 < 50 here, x's dim 1), so the input is a valid torch
// program and the pass is checked on it.

// out = x[i0, i1] for x: f32[100, 50, 256], i0, i1: i64[64]: two gathered dims. Both
// index buffers go to SMEM; the table (5 MB) is too big to keep in VMEM double-buffered.
ta.kernel @two_dims(%i0: memref<64xi64> {role = "in"}, %i1: memref<64xi64> {role = "in"}, %x: memref<1280000xf32> {role = "in"}, %out: memref<16384xf32> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %a = ta.load %i0[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %sa = arith.index_cast %a : i64 to index
    %b = ta.load %i1[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<64xi64>
    %sb = arith.index_cast %b : i64 to index
    // expected-remark@+1 {{applied to %x: gather = #ta<gather_strategy dma>, table 100x50x256xf32 gathered on dims 0, 1 by %i0, %i1; indices in SMEM (512 B as i32); auto picked the fewest modelled HBM bytes: prefetch 10305536 (65536 + 10240000 to relayout the table to 100x50x1x256), dma 65536, vmem n/a (table 5734400 B in VMEM, double-buffered, exceeds vmem-budget 8388608)}}
    %v = ta.load %x[affine_map<(d0, d1)[s0, s1] -> (s0 * 12800 + s1 * 256 + d1)>](%i, %j)[%sa, %sb] : memref<1280000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 256 + d1)>](%i, %j) : memref<16384xf32>
  }
}

// CHECK-LABEL: ta.kernel @two_dims(
// CHECK-SAME:      %i0: memref<64xi64> {role = "prefetch"}, %i1: memref<64xi64> {role = "prefetch"}
// CHECK-NEXT:    %x_100x50x256 = ta.reshape %x : memref<1280000xf32> to memref<100x50x256xf32>
// CHECK:         %v = ta.load %x_100x50x256[affine_map<(d0, d1)[s0, s1] -> (s0, s1, d1)>](%i, %j)[%sa, %sb] {gather = #ta<gather_strategy dma>} : memref<100x50x256xf32>
