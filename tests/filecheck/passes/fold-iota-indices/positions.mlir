// RUN: pallas-opt %s -p fold-iota-indices --verify-semantics | filecheck %s
// RUN: pallas-opt %s -p fold-iota-indices --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: pallas-opt %s -p fold-iota-indices,split-kernel-loops,fuse-epilogues,fuse-siblings,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,tile-policy,xla-outline,tile,tl-to-pallas --verify-semantics | filecheck %s --check-prefix=PALLAS

// x + table[arange(T)] + table[tokens] (x: f32[2, 64, 128], table: f32[64, 128]), as
// the frontend writes it: the positions are loads of the iota argument %iota64 (with the
// wrap of a negative index, which the loop's range rules out), the tokens are data.
// The positions' read becomes a direct one; the tokens' stays a gather.

// CHECK:       ta.kernel @k11(
// CHECK:         ta.loop [2, 64, 128] (%l0, %l1, %l2) {
// CHECK-NOT:       ta.load %iota64
// CHECK:           %v12 = ta.load %in1[affine_map<(d0, d1, d2) -> (((d1 * 128) + d2))>](%l0, %l1, %l2) : memref<8192xf32>
// CHECK:           %v19 = ta.load %in1[affine_map<(d0, d1, d2)[s0] -> (((s0 * 128) + d2))>](%l0, %l1, %l2)[%v18] : memref<8192xf32>
// REMARK:      remark: fold-iota-indices: 1 of the access's data-dependent indices are loop indices (read from ta.iota arguments): a direct access
// REMARK-NOT:  remark: fold-iota-indices

// Only the tokens' rows are an index array computed on XLA and prefetched (the
// positions' index computation was another XLA call before).
// PALLAS:      pallas.xla_call @k11_0(%in0)
// PALLAS-NOT:  pallas.xla_call
// PALLAS:      pallas.call @k11_1({{.*}}) grid [2, 8, 1] prefetch 1
// PALLAS-NOT:  pallas.xla_call
builtin.module {
  ta.kernel @k3(%iota64: memref<64xi32> {role = "in"}, %failed1: memref<1xi32> {role = "out"}) {
    ta.loop [1] reduce [64] (%l0, %l1) {
      %v1 = ta.load %iota64[affine_map<(d0, d1) -> (d1)>](%l0, %l1) : memref<64xi32>
      %v2 = arith.constant 1 : i32
      %v3 = arith.muli %v1, %v2 : i32
      %v4 = arith.constant 0 : i32
      %v5 = arith.addi %v3, %v4 : i32
      %v6 = arith.constant -64 : i32
      %v7 = arith.cmpi slt, %v5, %v6 : i32
      %v8 = arith.constant 64 : i32
      %v9 = arith.cmpi sge, %v5, %v8 : i32
      %v10 = arith.ori %v7, %v9 : i1
      %v11 = arith.extui %v10 : i1 to i32
      %v12 = ta.reduce <max> %v11 : i32
      ta.store %v12, %failed1[affine_map<(d0) -> (d0)>](%l0) : memref<1xi32>
    }
  }
  ta.kernel @k4(%iota64: memref<64xi32> {role = "in"}, %worst2: memref<1xi32> {role = "out"}) {
    ta.loop [1] reduce [64] (%l0, %l1) {
      %v1 = ta.load %iota64[affine_map<(d0, d1) -> (d1)>](%l0, %l1) : memref<64xi32>
      %v2 = arith.constant 1 : i32
      %v3 = arith.muli %v1, %v2 : i32
      %v4 = arith.constant 0 : i32
      %v5 = arith.addi %v3, %v4 : i32
      %v6 = arith.constant -2147483648 : i32
      %v7 = arith.constant -64 : i32
      %v8 = arith.cmpi slt, %v5, %v7 : i32
      %v9 = arith.constant 64 : i32
      %v10 = arith.cmpi sge, %v5, %v9 : i32
      %v11 = arith.ori %v8, %v10 : i1
      %v12 = arith.select %v11, %v5, %v6 : i32
      %v13 = ta.reduce <max> %v12 : i32
      ta.store %v13, %worst2[affine_map<(d0) -> (d0)>](%l0) : memref<1xi32>
    }
  }
  ta.kernel @k7(%in0: memref<128xi32> {role = "in"}, %failed5: memref<1xi32> {role = "out"}) {
    ta.loop [1] reduce [2, 64] (%l0, %l1, %l2) {
      %v1 = ta.load %in0[affine_map<(d0, d1, d2) -> (((d1 * 64) + d2))>](%l0, %l1, %l2) : memref<128xi32>
      %v2 = arith.constant -64 : i32
      %v3 = arith.cmpi slt, %v1, %v2 : i32
      %v4 = arith.constant 64 : i32
      %v5 = arith.cmpi sge, %v1, %v4 : i32
      %v6 = arith.ori %v3, %v5 : i1
      %v7 = arith.extui %v6 : i1 to i32
      %v8 = ta.reduce <max> %v7 : i32
      ta.store %v8, %failed5[affine_map<(d0) -> (d0)>](%l0) : memref<1xi32>
    }
  }
  ta.kernel @k8(%in0: memref<128xi32> {role = "in"}, %worst6: memref<1xi32> {role = "out"}) {
    ta.loop [1] reduce [2, 64] (%l0, %l1, %l2) {
      %v1 = ta.load %in0[affine_map<(d0, d1, d2) -> (((d1 * 64) + d2))>](%l0, %l1, %l2) : memref<128xi32>
      %v2 = arith.constant -2147483648 : i32
      %v3 = arith.constant -64 : i32
      %v4 = arith.cmpi slt, %v1, %v3 : i32
      %v5 = arith.constant 64 : i32
      %v6 = arith.cmpi sge, %v1, %v5 : i32
      %v7 = arith.ori %v4, %v6 : i1
      %v8 = arith.select %v7, %v1, %v2 : i32
      %v9 = ta.reduce <max> %v8 : i32
      ta.store %v9, %worst6[affine_map<(d0) -> (d0)>](%l0) : memref<1xi32>
    }
  }
  ta.kernel @k11(%in2: memref<16384xf32> {role = "in"}, %iota64: memref<64xi32> {role = "in"}, %in1: memref<8192xf32> {role = "in"}, %in0: memref<128xi32> {role = "in"}, %out9: memref<16384xf32> {role = "out"}) {
    ta.loop [2, 64, 128] (%l0, %l1, %l2) {
      %v1 = ta.load %in2[affine_map<(d0, d1, d2) -> ((((d0 * 8192) + (d1 * 128)) + d2))>](%l0, %l1, %l2) : memref<16384xf32>
      %v2 = ta.load %iota64[affine_map<(d0, d1, d2) -> (d1)>](%l0, %l1, %l2) : memref<64xi32>
      %v3 = arith.constant 1 : i32
      %v4 = arith.muli %v2, %v3 : i32
      %v5 = arith.constant 0 : i32
      %v6 = arith.addi %v4, %v5 : i32
      %v7 = arith.cmpi slt, %v6, %v5 : i32
      %v8 = arith.constant 64 : i32
      %v9 = arith.addi %v6, %v8 : i32
      %v10 = arith.select %v7, %v9, %v6 : i32
      %v11 = arith.index_cast %v10 : i32 to index
      %v12 = ta.load %in1[affine_map<(d0, d1, d2)[s0] -> (((s0 * 128) + d2))>](%l0, %l1, %l2)[%v11] : memref<8192xf32>
      %v13 = arith.addf %v1, %v12 : f32
      %v14 = ta.load %in0[affine_map<(d0, d1, d2) -> (((d0 * 64) + d1))>](%l0, %l1, %l2) : memref<128xi32>
      %v15 = arith.cmpi slt, %v14, %v5 : i32
      %v16 = arith.addi %v14, %v8 : i32
      %v17 = arith.select %v15, %v16, %v14 : i32
      %v18 = arith.index_cast %v17 : i32 to index
      %v19 = ta.load %in1[affine_map<(d0, d1, d2)[s0] -> (((s0 * 128) + d2))>](%l0, %l1, %l2)[%v18] : memref<8192xf32>
      %v20 = arith.addf %v13, %v19 : f32
      ta.store %v20, %out9[affine_map<(d0, d1, d2) -> ((((d0 * 8192) + (d1 * 128)) + d2))>](%l0, %l1, %l2) : memref<16384xf32>
    }
  }
  func.func @forward(%in0: memref<2x64xi32>, %in1: memref<64x128xf32>, %in2: memref<2x64x128xf32>, %iota64: memref<64xi32> {ta.iota}) -> (memref<2x64x128xf32>, memref<i32>, memref<i32>, memref<i32>, memref<i32>) {
    %in0_flat = ta.reshape %in0 : memref<2x64xi32> to memref<128xi32>
    %in1_flat = ta.reshape %in1 : memref<64x128xf32> to memref<8192xf32>
    %in2_flat = ta.reshape %in2 : memref<2x64x128xf32> to memref<16384xf32>
    %iota64_flat = ta.reshape %iota64 : memref<64xi32> to memref<64xi32>
    %out9 = ta.alloc : memref<2x64x128xf32>
    %out9_flat = ta.reshape %out9 : memref<2x64x128xf32> to memref<16384xf32>
    %failed1 = ta.alloc : memref<i32>
    %failed1_flat = ta.reshape %failed1 : memref<i32> to memref<1xi32>
    %worst2 = ta.alloc : memref<i32>
    %worst2_flat = ta.reshape %worst2 : memref<i32> to memref<1xi32>
    %failed5 = ta.alloc : memref<i32>
    %failed5_flat = ta.reshape %failed5 : memref<i32> to memref<1xi32>
    %worst6 = ta.alloc : memref<i32>
    %worst6_flat = ta.reshape %worst6 : memref<i32> to memref<1xi32>
    ta.launch @k3(%iota64_flat, %failed1_flat) : memref<64xi32>, memref<1xi32>
    ta.launch @k4(%iota64_flat, %worst2_flat) : memref<64xi32>, memref<1xi32>
    ta.launch @k7(%in0_flat, %failed5_flat) : memref<128xi32>, memref<1xi32>
    ta.launch @k8(%in0_flat, %worst6_flat) : memref<128xi32>, memref<1xi32>
    ta.launch @k11(%in2_flat, %iota64_flat, %in1_flat, %in0_flat, %out9_flat) : memref<16384xf32>, memref<64xi32>, memref<8192xf32>, memref<128xi32>, memref<16384xf32>
    func.return %out9, %failed1, %worst2, %failed5, %worst6 : memref<2x64x128xf32>, memref<i32>, memref<i32>, memref<i32>, memref<i32>
  }
}
