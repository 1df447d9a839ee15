// RUN: pallas-opt %s --split-input-file --verify-semantics -p cse,canonicalize | filecheck %s
// RUN: pallas-opt %s --split-input-file --verify-semantics -p cse --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=TIME

// --verify-semantics runs each ta kernel on random inputs before and after every pass;
// cse and canonicalize keep the meaning, so the run succeeds and the IR is printed.
// cse merges the recomputed product: one mulf remains.

// CHECK-LABEL: ta.kernel @mul
// CHECK:         arith.mulf
// CHECK-NOT:     arith.mulf
// CHECK:         ta.store
// TIME: (verify-semantics)
ta.kernel @mul(%x: memref<16384xf32> {role = "in"}, %out: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>](%i, %j) : memref<16384xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    %m2 = arith.mulf %v, %c : f32
    %s = arith.addf %m, %m2 : f32
    ta.store %s, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// A reduction and an argmax survive the pipeline unchanged in meaning.
// CHECK-LABEL: ta.kernel @rowmax
// CHECK:         ta.reduce <max>
// CHECK:         ta.reduce <argmax>
ta.kernel @rowmax(%x: memref<8x32xf32> {role = "in"}, %m: memref<8xf32> {role = "out"}, %a: memref<8xi32> {role = "out"}) {
  ta.loop [8] reduce [32] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<8x32xf32>
    %r = ta.reduce <max> %v : f32
    %q = ta.reduce <argmax> %v : f32 -> i32
    ta.store %r, %m[affine_map<(d0) -> (d0)>](%i) : memref<8xf32>
    ta.store %q, %a[affine_map<(d0) -> (d0)>](%i) : memref<8xi32>
  }
}
