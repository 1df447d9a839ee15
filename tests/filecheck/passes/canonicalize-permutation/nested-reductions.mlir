// RUN: pallas-opt %s -p canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s -p canonicalize-permutation,canonicalize-permutation | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p canonicalize-permutation -o /dev/null

// A loop of per-row reductions reduced again (`ta.reduce ... over`), whose row dim c
// walks two dims of the buffer (x: f32[2, 64, 128], read as rows of 256: c = h * 128 +
// l). Splitting c into (2, 128) renumbers the loop's dims: the rows' max over c is over
// both parts, [2, 3], and the sum over the rows stays over [1].
ta.kernel @sum_of_row_maxima(%x: memref<2x64x128xf32> {role = "in"}, %out: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64, 256] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d1 floordiv 128, d0, d1 mod 128)>](%r, %c) : memref<2x64x128xf32>
    %m = ta.reduce <max> %v over [2] : f32
    %s = ta.reduce <sum> %m over [1] : f32
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%p) : memref<1xf32>
  }
}

// CHECK:       ta.loop [1] reduce [64, 2, 128] (%p, %r, %c_outer, %c_inner) {
// CHECK-NEXT:    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d0, d2)>](%r, %c_outer, %c_inner) : memref<2x64x128xf32>
// CHECK-NEXT:    %m = ta.reduce <max> %v over [2, 3] : f32
// CHECK-NEXT:    %s = ta.reduce <sum> %m over [1] : f32
