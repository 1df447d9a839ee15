// RUN: pallas-opt %s -p raise-attention | filecheck %s
// RUN: pallas-opt %s -p raise-attention --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// softmax(q @ k.T * 0.125 + b[1:129, 3:131]) @ v (T=128, D=32), as the ta passes before
// raise-attention leave it. The bias is read at an offset the flash-attention tiler's
// blocks cannot start at, so the chain is left as it was, with a remark.

// CHECK-NOT:  ta.attention
// REMARK:     remark: raise-attention: not raised: a score load indexes its buffer by (d0 + 1), not by one dim or a constant
builtin.module {
  ta.kernel @k2(%in0: memref<4096xf32> {role = "in"}, %in1: memref<4096xf32> {role = "in"}, %t1: memref<16384xf32> {role = "out"}) {
    %in0_128x32 = ta.reshape %in0 : memref<4096xf32> to memref<128x32xf32>
    %in1_128x32 = ta.reshape %in1 : memref<4096xf32> to memref<128x32xf32>
    %t1_128x128 = ta.reshape %t1 : memref<16384xf32> to memref<128x128xf32>
    ta.loop [128, 128] reduce [32] (%l0, %l1, %l2) {
      %v1 = ta.load %in0_128x32[affine_map<(d0, d1, d2) -> (d0, d2)>](%l0, %l1, %l2) : memref<128x32xf32>
      %v2 = ta.load %in1_128x32[affine_map<(d0, d1, d2) -> (d1, d2)>](%l0, %l1, %l2) : memref<128x32xf32>
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.reduce <sum> %v3 : f32
      ta.store %v4, %t1_128x128[affine_map<(d0, d1) -> (d0, d1)>](%l0, %l1) : memref<128x128xf32>
    }
  }
  ta.kernel @k7_k8(%t1: memref<16384xf32> {role = "in"}, %in3: memref<17424xf32> {role = "in"}, %t3: memref<128xf32> {role = "out"}, %t4: memref<128xf32> {role = "out"}) {
    %t1_128x128 = ta.reshape %t1 : memref<16384xf32> to memref<128x128xf32>
    %in3_132x132 = ta.reshape %in3 : memref<17424xf32> to memref<132x132xf32>
    ta.loop [128] reduce [128] (%l0, %l1) {
      %v1 = ta.load %t1_128x128[affine_map<(d0, d1) -> (d0, d1)>](%l0, %l1) : memref<128x128xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %in3_132x132[affine_map<(d0, d1) -> ((d0 + 1), (d1 + 3))>](%l0, %l1) : memref<132x132xf32>
      %v5 = arith.addf %v3, %v4 : f32
      %v6 = ta.reduce <max> %v5 : f32
      %v7 = arith.subf %v5, %v6 : f32
      %v8 = math.exp %v7 : f32
      %v9 = ta.reduce <sum> %v8 : f32
      ta.store %v6, %t3[affine_map<(d0) -> (d0)>](%l0) : memref<128xf32>
      ta.store %v9, %t4[affine_map<(d0) -> (d0)>](%l0) : memref<128xf32>
    }
  }
  ta.kernel @k6(%t1: memref<16384xf32> {role = "in"}, %in3: memref<17424xf32> {role = "in"}, %t3: memref<128xf32> {role = "in"}, %t4: memref<128xf32> {role = "in"}, %in2: memref<4096xf32> {role = "in"}, %t5: memref<4096xf32> {role = "out"}) {
    %t1_128x128 = ta.reshape %t1 : memref<16384xf32> to memref<128x128xf32>
    %in3_132x132 = ta.reshape %in3 : memref<17424xf32> to memref<132x132xf32>
    %in2_128x32 = ta.reshape %in2 : memref<4096xf32> to memref<128x32xf32>
    %t5_128x32 = ta.reshape %t5 : memref<4096xf32> to memref<128x32xf32>
    ta.loop [128, 32] reduce [128] (%l0, %l1, %l2) {
      %v1 = ta.load %t1_128x128[affine_map<(d0, d1, d2) -> (d0, d2)>](%l0, %l1, %l2) : memref<128x128xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %in3_132x132[affine_map<(d0, d1, d2) -> ((d0 + 1), (d2 + 3))>](%l0, %l1, %l2) : memref<132x132xf32>
      %v5 = arith.addf %v3, %v4 : f32
      %v6 = ta.load %t3[affine_map<(d0, d1, d2) -> (d0)>](%l0, %l1, %l2) : memref<128xf32>
      %v7 = arith.subf %v5, %v6 : f32
      %v8 = math.exp %v7 : f32
      %v9 = ta.load %t4[affine_map<(d0, d1, d2) -> (d0)>](%l0, %l1, %l2) : memref<128xf32>
      %v10 = arith.divf %v8, %v9 : f32
      %v11 = ta.load %in2_128x32[affine_map<(d0, d1, d2) -> (d2, d1)>](%l0, %l1, %l2) : memref<128x32xf32>
      %v12 = arith.mulf %v10, %v11 : f32
      %v13 = ta.reduce <sum> %v12 : f32
      ta.store %v13, %t5_128x32[affine_map<(d0, d1) -> (d0, d1)>](%l0, %l1) : memref<128x32xf32>
    }
  }
  func.func @forward(%in0: memref<128x32xf32>, %in1: memref<128x32xf32>, %in2: memref<128x32xf32>, %in3: memref<132x132xf32>) -> memref<128x32xf32> {
    %in0_flat = ta.reshape %in0 : memref<128x32xf32> to memref<4096xf32>
    %in1_flat = ta.reshape %in1 : memref<128x32xf32> to memref<4096xf32>
    %in2_flat = ta.reshape %in2 : memref<128x32xf32> to memref<4096xf32>
    %in3_flat = ta.reshape %in3 : memref<132x132xf32> to memref<17424xf32>
    %t1 = ta.alloc : memref<128x128xf32>
    %t1_flat = ta.reshape %t1 : memref<128x128xf32> to memref<16384xf32>
    %t5 = ta.alloc : memref<128x32xf32>
    %t5_flat = ta.reshape %t5 : memref<128x32xf32> to memref<4096xf32>
    %t3 = ta.alloc : memref<128xf32>
    %t3_flat = ta.reshape %t3 : memref<128xf32> to memref<128xf32>
    %t4 = ta.alloc : memref<128xf32>
    %t4_flat = ta.reshape %t4 : memref<128xf32> to memref<128xf32>
    ta.launch @k2(%in0_flat, %in1_flat, %t1_flat) : memref<4096xf32>, memref<4096xf32>, memref<16384xf32>
    ta.launch @k7_k8(%t1_flat, %in3_flat, %t3_flat, %t4_flat) : memref<16384xf32>, memref<17424xf32>, memref<128xf32>, memref<128xf32>
    ta.launch @k6(%t1_flat, %in3_flat, %t3_flat, %t4_flat, %in2_flat, %t5_flat) : memref<16384xf32>, memref<17424xf32>, memref<128xf32>, memref<128xf32>, memref<4096xf32>, memref<4096xf32>
    func.return %t5 : memref<128x32xf32>
  }
}
