// RUN: pallas-opt %s -p stride-to-reshape,canonicalize-permutation --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: pallas-opt %s -p stride-to-reshape,canonicalize-permutation --remarks --remarks-filter=stride-to-reshape 2>&1 >/dev/null | filecheck %s --check-prefix=ONE
// RUN: pallas-opt %s -p stride-to-reshape,canonicalize-permutation 2>&1 >/dev/null | filecheck %s --check-prefix=NONE --allow-empty

// --remarks prints every pass's remarks; --remarks-filter keeps the passes whose name
// matches; without --remarks, none. x[::2] is flat and strided (stride-to-reshape's
// work); y is read through a collapsed dim, floordiv/mod (canonicalize-permutation's).

// ALL-DAG: remark: stride-to-reshape: applied to %x
// ALL-DAG: remark: canonicalize-permutation: applied to %y
// ONE: remark: stride-to-reshape: applied to %x
// ONE-NOT: canonicalize-permutation
// NONE-NOT: remark
ta.kernel @k(%x: memref<16384xf32> {role = "in"}, %y: memref<64x128xf32> {role = "in"}, %out: memref<64x128xf32> {role = "out"}) {
  ta.loop [8192] (%i) {
    %a = ta.load %x[affine_map<(d0) -> (d0 * 2)>](%i) : memref<16384xf32>
    %b = ta.load %y[affine_map<(d0) -> (d0 floordiv 128, d0 mod 128)>](%i) : memref<64x128xf32>
    %s = arith.addf %a, %b : f32
    ta.store %s, %out[affine_map<(d0) -> (d0 floordiv 128, d0 mod 128)>](%i) : memref<64x128xf32>
  }
}
