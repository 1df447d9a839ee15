// RUN: pallas-opt %s -p raise-attention --split-input-file | filecheck %s
// RUN: pallas-opt %s -p raise-attention --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: pallas-opt %s -p raise-attention,tile-policy,xla-outline,tile --split-input-file --verify-semantics -o /dev/null

// softmax(q @ k.T * 0.125) @ v with q, k and v the heads of a qkv projection's output
// plus its bias, (x + b).view(1, 128, 3, 2, 64).permute(2, 0, 3, 1, 4): the product
// reads computed factors, in a (T, H, D) layout. raise-attention computes them ahead,
// each in (H, T, D), in one kernel launched where the product was, and the attention
// reads them as they are.

// CHECK:       ta.kernel @k2_q_k_v(%in0_flat: memref<49152xf32> {role = "in"}, %in1_flat: memref<384xf32> {role = "in"}, %q: memref<2x128x64xf32> {role = "out"}, %k: memref<2x128x64xf32> {role = "out"}, %v: memref<2x128x64xf32> {role = "out"}) {
// CHECK:         ta.loop [2, 128, 64] (%0, %1, %2) {
// CHECK-NEXT:      %v1 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2) -> (d1, 0, d0, d2)>](%0, %1, %2)
// CHECK-NEXT:      %v2 = ta.load %in1_6x64[affine_map<(d0, d1, d2) -> (d0, d2)>](%0, %1, %2)
// CHECK-NEXT:      %v3 = arith.addf %v1, %v2 : f32
// CHECK-NEXT:      ta.store %v3, %q[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%0, %1, %2)
// CHECK:           %v5 = ta.load %in1_6x64[affine_map<(d0, d1, d2) -> ((d0 + 2), d2)>](%0, %1, %2)
// CHECK:           ta.store %v6, %k[
// CHECK:           %v9 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2) -> (d1, 2, d0, d2)>](%0, %1, %2)
// CHECK:           ta.store %v11, %v[
// CHECK:       ta.kernel @k6_k11_attention(%q: memref<2x128x64xf32> {role = "in"}, %k: memref<2x128x64xf32> {role = "in"}, %v: memref<2x128x64xf32> {role = "in"}, %out9_flat: memref<16384xf32> {role = "out"}) {
// CHECK:         ta.attention batch [2] sizes [128, 128, 64, 64] q %q[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>] k %k[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>] v %v[affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>]
// CHECK:       func.func @forward
// CHECK:         %q = ta.alloc : memref<2x128x64xf32>
// CHECK:         ta.launch @k2_q_k_v(%in0_flat, %in1_flat, %q, %k, %v)
// CHECK-NEXT:    ta.launch @k6_k11_attention(%q, %k, %v, %out9_flat)
// CHECK-NEXT:    func.return
// REMARK:      remark: raise-attention: @k2, @k7_k8 and @k6_k11 are one softmax attention, @k6_k11_attention; q, k, v computed ahead by @k2_q_k_v
builtin.module {
  ta.kernel @k2(%in0: memref<49152xf32> {role = "in"}, %in1: memref<384xf32> {role = "in"}, %t1: memref<32768xf32> {role = "out"}) {
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    %in0_128x3x2x64 = ta.reshape %in0 : memref<49152xf32> to memref<128x3x2x64xf32>
    %in1_6x64 = ta.reshape %in1 : memref<384xf32> to memref<6x64xf32>
    ta.loop [2, 128, 128] reduce [64] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2, d3) -> (d1, 0, d0, d3)>](%l0, %l1, %l2, %l3) : memref<128x3x2x64xf32>
      %v2 = ta.load %in1_6x64[affine_map<(d0, d1, d2, d3) -> (d0, d3)>](%l0, %l1, %l2, %l3) : memref<6x64xf32>
      %v3 = arith.addf %v1, %v2 : f32
      %v4 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2, d3) -> (d2, 1, d0, d3)>](%l0, %l1, %l2, %l3) : memref<128x3x2x64xf32>
      %v5 = ta.load %in1_6x64[affine_map<(d0, d1, d2, d3) -> ((d0 + 2), d3)>](%l0, %l1, %l2, %l3) : memref<6x64xf32>
      %v6 = arith.addf %v4, %v5 : f32
      %v7 = arith.mulf %v3, %v6 : f32
      %v8 = ta.reduce <sum> %v7 : f32
      ta.store %v8, %t1_2x128x128[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%l0, %l1, %l2) : memref<2x128x128xf32>
    }
  }
  ta.kernel @k7_k8(%t1: memref<32768xf32> {role = "in"}, %t3: memref<256xf32> {role = "out"}, %t4: memref<256xf32> {role = "out"}) {
    %t3_2x128 = ta.reshape %t3 : memref<256xf32> to memref<2x128xf32>
    %t4_2x128 = ta.reshape %t4 : memref<256xf32> to memref<2x128xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    ta.loop [1, 2, 128] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.reduce <max> %v3 : f32
      %v5 = arith.subf %v3, %v4 : f32
      %v6 = math.exp %v5 : f32
      %v7 = ta.reduce <sum> %v6 : f32
      ta.store %v4, %t3_2x128[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<2x128xf32>
      ta.store %v7, %t4_2x128[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<2x128xf32>
    }
  }
  ta.kernel @k6_k11(%t1: memref<32768xf32> {role = "in"}, %t3: memref<256xf32> {role = "in"}, %t4: memref<256xf32> {role = "in"}, %in0: memref<49152xf32> {role = "in"}, %in1: memref<384xf32> {role = "in"}, %out9: memref<16384xf32> {role = "out"}) {
    %out9_2x128x64 = ta.reshape %out9 : memref<16384xf32> to memref<2x128x64xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    %t3_2x128 = ta.reshape %t3 : memref<256xf32> to memref<2x128xf32>
    %t4_2x128 = ta.reshape %t4 : memref<256xf32> to memref<2x128xf32>
    %in0_128x3x2x64 = ta.reshape %in0 : memref<49152xf32> to memref<128x3x2x64xf32>
    %in1_6x64 = ta.reshape %in1 : memref<384xf32> to memref<6x64xf32>
    ta.loop [2, 128, 64] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %t3_2x128[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%l0, %l1, %l2, %l3) : memref<2x128xf32>
      %v5 = arith.subf %v3, %v4 : f32
      %v6 = math.exp %v5 : f32
      %v7 = ta.load %t4_2x128[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%l0, %l1, %l2, %l3) : memref<2x128xf32>
      %v8 = arith.divf %v6, %v7 : f32
      %v9 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2, d3) -> (d3, 2, d0, d2)>](%l0, %l1, %l2, %l3) : memref<128x3x2x64xf32>
      %v10 = ta.load %in1_6x64[affine_map<(d0, d1, d2, d3) -> ((d0 + 4), d2)>](%l0, %l1, %l2, %l3) : memref<6x64xf32>
      %v11 = arith.addf %v9, %v10 : f32
      %v12 = arith.mulf %v8, %v11 : f32
      %v13 = ta.reduce <sum> %v12 : f32
      ta.store %v13, %out9_2x128x64[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%l0, %l1, %l2) : memref<2x128x64xf32>
    }
  }
  func.func @forward(%in0: memref<128x384xf32>, %in1: memref<384xf32>) -> memref<1x2x128x64xf32> {
    %in0_flat = ta.reshape %in0 : memref<128x384xf32> to memref<49152xf32>
    %in1_flat = ta.reshape %in1 : memref<384xf32> to memref<384xf32>
    %t1 = ta.alloc : memref<2x128x128xf32>
    %t1_flat = ta.reshape %t1 : memref<2x128x128xf32> to memref<32768xf32>
    %t3 = ta.alloc : memref<1x2x128xf32>
    %t3_flat = ta.reshape %t3 : memref<1x2x128xf32> to memref<256xf32>
    %t4 = ta.alloc : memref<1x2x128xf32>
    %t4_flat = ta.reshape %t4 : memref<1x2x128xf32> to memref<256xf32>
    %out9 = ta.alloc : memref<1x2x128x64xf32>
    %out9_flat = ta.reshape %out9 : memref<1x2x128x64xf32> to memref<16384xf32>
    ta.launch @k2(%in0_flat, %in1_flat, %t1_flat) : memref<49152xf32>, memref<384xf32>, memref<32768xf32>
    ta.launch @k7_k8(%t1_flat, %t3_flat, %t4_flat) : memref<32768xf32>, memref<256xf32>, memref<256xf32>
    ta.launch @k6_k11(%t1_flat, %t3_flat, %t4_flat, %in0_flat, %in1_flat, %out9_flat) : memref<32768xf32>, memref<256xf32>, memref<256xf32>, memref<49152xf32>, memref<384xf32>, memref<16384xf32>
    func.return %out9 : memref<1x2x128x64xf32>
  }
}


// -----

// The same chain, but q's bias is read at a row of the key's index, b[j floordiv 64, d]:
// q is no function of (head, query, d) to compute ahead, so the chain is left as it was.

// CHECK-NOT:   ta.attention
// REMARK:      remark: raise-attention: not raised: q varies along a dim outside the attention
builtin.module {
  ta.kernel @k2(%in0: memref<49152xf32> {role = "in"}, %in1: memref<384xf32> {role = "in"}, %t1: memref<32768xf32> {role = "out"}) {
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    %in0_128x3x2x64 = ta.reshape %in0 : memref<49152xf32> to memref<128x3x2x64xf32>
    %in1_6x64 = ta.reshape %in1 : memref<384xf32> to memref<6x64xf32>
    ta.loop [2, 128, 128] reduce [64] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2, d3) -> (d1, 0, d0, d3)>](%l0, %l1, %l2, %l3) : memref<128x3x2x64xf32>
      %v2 = ta.load %in1_6x64[affine_map<(d0, d1, d2, d3) -> ((d2 floordiv 64), d3)>](%l0, %l1, %l2, %l3) : memref<6x64xf32>
      %v3 = arith.addf %v1, %v2 : f32
      %v4 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2, d3) -> (d2, 1, d0, d3)>](%l0, %l1, %l2, %l3) : memref<128x3x2x64xf32>
      %v5 = ta.load %in1_6x64[affine_map<(d0, d1, d2, d3) -> ((d0 + 2), d3)>](%l0, %l1, %l2, %l3) : memref<6x64xf32>
      %v6 = arith.addf %v4, %v5 : f32
      %v7 = arith.mulf %v3, %v6 : f32
      %v8 = ta.reduce <sum> %v7 : f32
      ta.store %v8, %t1_2x128x128[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%l0, %l1, %l2) : memref<2x128x128xf32>
    }
  }
  ta.kernel @k7_k8(%t1: memref<32768xf32> {role = "in"}, %t3: memref<256xf32> {role = "out"}, %t4: memref<256xf32> {role = "out"}) {
    %t3_2x128 = ta.reshape %t3 : memref<256xf32> to memref<2x128xf32>
    %t4_2x128 = ta.reshape %t4 : memref<256xf32> to memref<2x128xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    ta.loop [1, 2, 128] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.reduce <max> %v3 : f32
      %v5 = arith.subf %v3, %v4 : f32
      %v6 = math.exp %v5 : f32
      %v7 = ta.reduce <sum> %v6 : f32
      ta.store %v4, %t3_2x128[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<2x128xf32>
      ta.store %v7, %t4_2x128[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<2x128xf32>
    }
  }
  ta.kernel @k6_k11(%t1: memref<32768xf32> {role = "in"}, %t3: memref<256xf32> {role = "in"}, %t4: memref<256xf32> {role = "in"}, %in0: memref<49152xf32> {role = "in"}, %in1: memref<384xf32> {role = "in"}, %out9: memref<16384xf32> {role = "out"}) {
    %out9_2x128x64 = ta.reshape %out9 : memref<16384xf32> to memref<2x128x64xf32>
    %t1_2x128x128 = ta.reshape %t1 : memref<32768xf32> to memref<2x128x128xf32>
    %t3_2x128 = ta.reshape %t3 : memref<256xf32> to memref<2x128xf32>
    %t4_2x128 = ta.reshape %t4 : memref<256xf32> to memref<2x128xf32>
    %in0_128x3x2x64 = ta.reshape %in0 : memref<49152xf32> to memref<128x3x2x64xf32>
    %in1_6x64 = ta.reshape %in1 : memref<384xf32> to memref<6x64xf32>
    ta.loop [2, 128, 64] reduce [128] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1_2x128x128[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>](%l0, %l1, %l2, %l3) : memref<2x128x128xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %t3_2x128[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%l0, %l1, %l2, %l3) : memref<2x128xf32>
      %v5 = arith.subf %v3, %v4 : f32
      %v6 = math.exp %v5 : f32
      %v7 = ta.load %t4_2x128[affine_map<(d0, d1, d2, d3) -> (d0, d1)>](%l0, %l1, %l2, %l3) : memref<2x128xf32>
      %v8 = arith.divf %v6, %v7 : f32
      %v9 = ta.load %in0_128x3x2x64[affine_map<(d0, d1, d2, d3) -> (d3, 2, d0, d2)>](%l0, %l1, %l2, %l3) : memref<128x3x2x64xf32>
      %v10 = ta.load %in1_6x64[affine_map<(d0, d1, d2, d3) -> ((d0 + 4), d2)>](%l0, %l1, %l2, %l3) : memref<6x64xf32>
      %v11 = arith.addf %v9, %v10 : f32
      %v12 = arith.mulf %v8, %v11 : f32
      %v13 = ta.reduce <sum> %v12 : f32
      ta.store %v13, %out9_2x128x64[affine_map<(d0, d1, d2) -> (d0, d1, d2)>](%l0, %l1, %l2) : memref<2x128x64xf32>
    }
  }
  func.func @forward(%in0: memref<128x384xf32>, %in1: memref<384xf32>) -> memref<1x2x128x64xf32> {
    %in0_flat = ta.reshape %in0 : memref<128x384xf32> to memref<49152xf32>
    %in1_flat = ta.reshape %in1 : memref<384xf32> to memref<384xf32>
    %t1 = ta.alloc : memref<2x128x128xf32>
    %t1_flat = ta.reshape %t1 : memref<2x128x128xf32> to memref<32768xf32>
    %t3 = ta.alloc : memref<1x2x128xf32>
    %t3_flat = ta.reshape %t3 : memref<1x2x128xf32> to memref<256xf32>
    %t4 = ta.alloc : memref<1x2x128xf32>
    %t4_flat = ta.reshape %t4 : memref<1x2x128xf32> to memref<256xf32>
    %out9 = ta.alloc : memref<1x2x128x64xf32>
    %out9_flat = ta.reshape %out9 : memref<1x2x128x64xf32> to memref<16384xf32>
    ta.launch @k2(%in0_flat, %in1_flat, %t1_flat) : memref<49152xf32>, memref<384xf32>, memref<32768xf32>
    ta.launch @k7_k8(%t1_flat, %t3_flat, %t4_flat) : memref<32768xf32>, memref<256xf32>, memref<256xf32>
    ta.launch @k6_k11(%t1_flat, %t3_flat, %t4_flat, %in0_flat, %in1_flat, %out9_flat) : memref<32768xf32>, memref<256xf32>, memref<256xf32>, memref<49152xf32>, memref<384xf32>, memref<16384xf32>
    func.return %out9 : memref<1x2x128x64xf32>
  }
}

