// RUN: pallas-opt %s -p raise-attention | filecheck %s
// RUN: pallas-opt %s -p raise-attention --verify-semantics -o /dev/null
// RUN: pallas-opt %s -p raise-attention,tile-policy,xla-outline,tile --verify-semantics | filecheck %s --check-prefix=TILE
// RUN: pallas-opt %s -p raise-attention --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: sed 's/ {ta.iota}//' %s | pallas-opt -p raise-attention | filecheck %s --check-prefix=UNMARKED
// RUN: sed 's/^ *%v4 = arith.constant 0 : i32$/%v4i = arith.constant 0 : index\n      %v4 = arith.index_cast %v4i : index to i32/' %s | pallas-opt -p raise-attention | filecheck %s --check-prefix=INDEX

// Causal attention in plain torch (B=1, H=2, T=128, D=64), as the frontend and the ta
// passes before raise-attention leave it: the scores @k2, the row max @k7, the row sum
// @k8 and att @ v @k6_k11. The masked_fill and the scale become the score region.

// The mask compares loads of %iota128, which @forward marks `ta.iota` (its element k is
// k): the region masks every score with j > i, so the op says `causal 0` and the region
// keeps only the scale. Unmarked, the buffer could hold anything: the op says nothing
// more than its region, which keeps the mask.
// UNMARKED:         ta.attention
// UNMARKED-NOT:     causal
// UNMARKED:         ta.load %{{.*}}[affine_map<(d0, d1, d2) -> (d2)>](%b, %i, %j) : memref<128xi32>
// UNMARKED:         ta.load %{{.*}}[affine_map<(d0, d1, d2) -> (d1)>](%b, %i, %j) : memref<128xi32>
// UNMARKED:         %[[SCALED:.*]] = arith.mulf %s, %{{.*}} : f32
// UNMARKED:         %[[MASKED:.*]] = arith.select %{{.*}}, %{{.*}}, %[[SCALED]] : f32
// UNMARKED-NEXT:    ta.yield %[[MASKED]] : f32

// The mask's offset as an index constant, cast to i32: the same bound.
// INDEX:            ta.attention {{.*}} causal 0 :

// CHECK-NOT:    ta.kernel @k2(
// CHECK-LABEL:  ta.kernel @k6_k11_attention(
// CHECK:        ta.attention batch [2] sizes [128, 128, 64, 64]
// CHECK-SAME:     q %{{.*}}[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>]
// CHECK-SAME:     k %{{.*}}[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>]
// CHECK-SAME:     v %{{.*}}[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>]
// CHECK-SAME:     out %{{.*}}[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>] causal 0 :
// CHECK-NEXT:   ^bb0(%b: index, %i: index, %j: index, %s: f32):
// CHECK-NOT:      ta.load
// CHECK:          %[[SCALED:.*]] = arith.mulf %s, %{{.*}} : f32
// CHECK-NEXT:     ta.yield %[[SCALED]] : f32
// CHECK-NOT:    ta.alloc : memref<2x128x128xf32>
// CHECK:        ta.launch @k6_k11_attention(
// CHECK-NOT:    ta.launch

// TILE:         tl.grid [2, 1, 1] (parallel, parallel, sequential)
// TILE:         tl.dot {{.*}} : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
// TILE:         tl.accumulate <max>
// TILE:         tl.previous
// TILE:         tl.accumulate <sum> %{{.*}} rescaled %{{.*}} : tensor<128x1xf32>
// TILE:         tl.dot {{.*}} : tensor<128x128xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
// TILE:         tl.accumulate <sum> %{{.*}} rescaled %{{.*}} : tensor<128x64xf32>
// TILE:         tl.on_last_step

// REMARK: remark: raise-attention: @k2, @k7, @k8 and @k6_k11 are one softmax attention, @k6_k11_attention

builtin.module {
  ta.kernel @k2(%in0: memref<16384xf32> {role = "in"}, %in1: memref<16384xf32> {role = "in"}, %t1: memref<32768xf32> {role = "out"}) {
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    %in0_2x128x64 = ta.reshape %in0 : memref<16384xf32> to memref<2x128x64xf32>
    %in1_2x128x64 = ta.reshape %in1 : memref<16384xf32> to memref<2x128x64xf32>
    ta.loop [2, 128, 128] reduce [64] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %in0_2x128x64[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x64xf32>
      %v2 = ta.load %in1_2x128x64[affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x64xf32>
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.reduce <sum> %v3 : f32
      ta.store %v4, %t1_2x128x128[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%l0, %l1, %l2) : memref<2x128x128xf32>
    }
  }
  ta.kernel @k7(%iota128: memref<128xi32> {role = "in"}, %t1: memref<32768xf32> {role = "in"}, %t3: memref<256xf32> {role = "out"}) {
    %t3_2x128 = ta.reshape %t3 : memref<256xf32> to memref<2x128xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    ta.loop [1, 2, 128] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %iota128[affine_map<(d0, d1, d2, d3) -> (d3)>](%l0, %l1, %l2, %l3) : memref<128xi32>
      %v2 = arith.constant 1 : i32
      %v3 = arith.muli %v1, %v2 : i32
      %v4 = arith.constant 0 : i32
      %v5 = arith.addi %v3, %v4 : i32
      %v6 = ta.load %iota128[affine_map<(d0, d1, d2, d3) -> (d2)>](%l0, %l1, %l2, %l3) : memref<128xi32>
      %v7 = arith.muli %v6, %v2 : i32
      %v8 = arith.addi %v7, %v4 : i32
      %v9 = arith.subi %v5, %v8 : i32
      %v10 = arith.cmpi sge, %v9, %v2 : i32
      %v11 = arith.constant true
      %v12 = arith.andi %v10, %v11 : i1
      %v13 = arith.constant 0xff800000 : f32
      %v14 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v15 = arith.constant 1.250000e-01 : f32
      %v16 = arith.mulf %v14, %v15 : f32
      %v17 = arith.select %v12, %v13, %v16 : f32
      %v18 = ta.reduce <max> %v17 : f32
      ta.store %v18, %t3_2x128[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<2x128xf32>
    }
  }
  ta.kernel @k8(%iota128: memref<128xi32> {role = "in"}, %t1: memref<32768xf32> {role = "in"}, %t4: memref<256xf32> {role = "out"}) {
    %t4_2x128 = ta.reshape %t4 : memref<256xf32> to memref<2x128xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    ta.loop [1, 2, 128] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %iota128[affine_map<(d0, d1, d2, d3) -> (d3)>](%l0, %l1, %l2, %l3) : memref<128xi32>
      %v2 = arith.constant 1 : i32
      %v3 = arith.muli %v1, %v2 : i32
      %v4 = arith.constant 0 : i32
      %v5 = arith.addi %v3, %v4 : i32
      %v6 = ta.load %iota128[affine_map<(d0, d1, d2, d3) -> (d2)>](%l0, %l1, %l2, %l3) : memref<128xi32>
      %v7 = arith.muli %v6, %v2 : i32
      %v8 = arith.addi %v7, %v4 : i32
      %v9 = arith.subi %v5, %v8 : i32
      %v10 = arith.cmpi sge, %v9, %v2 : i32
      %v11 = arith.constant true
      %v12 = arith.andi %v10, %v11 : i1
      %v13 = arith.constant 0xff800000 : f32
      %v14 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v15 = arith.constant 1.250000e-01 : f32
      %v16 = arith.mulf %v14, %v15 : f32
      %v17 = arith.select %v12, %v13, %v16 : f32
      %v18 = ta.reduce <max> %v17 : f32
      %v19 = arith.subf %v17, %v18 : f32
      %v20 = math.exp %v19 : f32
      %v21 = ta.reduce <sum> %v20 : f32
      ta.store %v21, %t4_2x128[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<2x128xf32>
    }
  }
  ta.kernel @k6_k11(%iota128: memref<128xi32> {role = "in"}, %t1: memref<32768xf32> {role = "in"}, %t3: memref<256xf32> {role = "in"}, %t4: memref<256xf32> {role = "in"}, %in2: memref<16384xf32> {role = "in"}, %out9: memref<16384xf32> {role = "out"}) {
    %out9_2x128x64 = ta.reshape %out9 : memref<16384xf32> to memref<2x128x64xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    %t3_2x128 = ta.reshape %t3 : memref<256xf32> to memref<2x128xf32>
    %t4_2x128 = ta.reshape %t4 : memref<256xf32> to memref<2x128xf32>
    %in2_2x128x64 = ta.reshape %in2 : memref<16384xf32> to memref<2x128x64xf32>
    ta.loop [2, 128, 64] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %iota128[affine_map<(d0, d1, d2, d3) -> (d3)>](%l0, %l1, %l2, %l3) : memref<128xi32>
      %v2 = arith.constant 1 : i32
      %v3 = arith.muli %v1, %v2 : i32
      %v4 = arith.constant 0 : i32
      %v5 = arith.addi %v3, %v4 : i32
      %v6 = ta.load %iota128[affine_map<(d0, d1, d2, d3) -> (d1)>](%l0, %l1, %l2, %l3) : memref<128xi32>
      %v7 = arith.muli %v6, %v2 : i32
      %v8 = arith.addi %v7, %v4 : i32
      %v9 = arith.subi %v5, %v8 : i32
      %v10 = arith.cmpi sge, %v9, %v2 : i32
      %v11 = arith.constant true
      %v12 = arith.andi %v10, %v11 : i1
      %v13 = arith.constant 0xff800000 : f32
      %v14 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v15 = arith.constant 1.250000e-01 : f32
      %v16 = arith.mulf %v14, %v15 : f32
      %v17 = arith.select %v12, %v13, %v16 : f32
      %v18 = ta.load %t3_2x128[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%l0, %l1, %l2, %l3) : memref<2x128xf32>
      %v19 = arith.subf %v17, %v18 : f32
      %v20 = math.exp %v19 : f32
      %v21 = ta.load %t4_2x128[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%l0, %l1, %l2, %l3) : memref<2x128xf32>
      %v22 = arith.divf %v20, %v21 : f32
      %v23 = ta.load %in2_2x128x64[affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>](%l0, %l1, %l2, %l3) : memref<2x128x64xf32>
      %v24 = arith.mulf %v22, %v23 : f32
      %v25 = ta.reduce <sum> %v24 : f32
      ta.store %v25, %out9_2x128x64[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%l0, %l1, %l2) : memref<2x128x64xf32>
    }
  }
  func.func @forward(%in0: memref<1x2x128x64xf32>, %in1: memref<1x2x128x64xf32>, %in2: memref<1x2x128x64xf32>, %iota128: memref<128xi32> {ta.iota}) -> memref<1x2x128x64xf32> {
    %in0_flat = ta.reshape %in0 : memref<1x2x128x64xf32> to memref<16384xf32>
    %in1_flat = ta.reshape %in1 : memref<1x2x128x64xf32> to memref<16384xf32>
    %in2_flat = ta.reshape %in2 : memref<1x2x128x64xf32> to memref<16384xf32>
    %iota128_flat = ta.reshape %iota128 : memref<128xi32> to memref<128xi32>
    %t1 = ta.alloc : memref<2x128x128xf32>
    %t1_flat = ta.reshape %t1 : memref<2x128x128xf32> to memref<32768xf32>
    %t3 = ta.alloc : memref<1x2x128xf32>
    %t3_flat = ta.reshape %t3 : memref<1x2x128xf32> to memref<256xf32>
    %t4 = ta.alloc : memref<1x2x128xf32>
    %t4_flat = ta.reshape %t4 : memref<1x2x128xf32> to memref<256xf32>
    %out9 = ta.alloc : memref<1x2x128x64xf32>
    %out9_flat = ta.reshape %out9 : memref<1x2x128x64xf32> to memref<16384xf32>
    ta.launch @k2(%in0_flat, %in1_flat, %t1_flat) : memref<16384xf32>, memref<16384xf32>, memref<32768xf32>
    ta.launch @k7(%iota128_flat, %t1_flat, %t3_flat) : memref<128xi32>, memref<32768xf32>, memref<256xf32>
    ta.launch @k8(%iota128_flat, %t1_flat, %t4_flat) : memref<128xi32>, memref<32768xf32>, memref<256xf32>
    ta.launch @k6_k11(%iota128_flat, %t1_flat, %t3_flat, %t4_flat, %in2_flat, %out9_flat) : memref<128xi32>, memref<32768xf32>, memref<256xf32>, memref<256xf32>, memref<16384xf32>, memref<16384xf32>
    func.return %out9 : memref<1x2x128x64xf32>
  }
}

