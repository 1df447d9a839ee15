builtin.module {
  ta.kernel @k2(%in0: memref<131072xf32> {role = "in"}, %in1: memref<131072xf32> {role = "in"}, %t1: memref<524288xf32> {role = "out"}) {
    ta.loop [8, 256, 256] reduce [64] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %in0[affine_map<(d0, d1, d2, d3) -> ((((((((((d0 * 16384) + (d1 * 64)) + d3) floordiv 65536) mod 2) * 65536) + ((((((d0 * 16384) + (d1 * 64)) + d3) floordiv 16384) mod 4) * 16384)) + ((((((d0 * 16384) + (d1 * 64)) + d3) floordiv 64) mod 256) * 64)) + ((((d0 * 16384) + (d1 * 64)) + d3) mod 64)))>](%l0, %l1, %l2, %l3) : memref<131072xf32>
      %v2 = ta.load %in1[affine_map<(d0, d1, d2, d3) -> ((((((((((d0 * 16384) + (d3 * 256)) + d2) floordiv 65536) mod 2) * 65536) + ((((((d0 * 16384) + (d3 * 256)) + d2) floordiv 16384) mod 4) * 16384)) + (((((d0 * 16384) + (d3 * 256)) + d2) mod 256) * 64)) + (((((d0 * 16384) + (d3 * 256)) + d2) floordiv 256) mod 64)))>](%l0, %l1, %l2, %l3) : memref<131072xf32>
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.reduce <sum> %v3 : f32
      ta.store %v4, %t1[affine_map<(d0, d1, d2) -> ((((d0 * 65536) + (d1 * 256)) + d2))>](%l0, %l1, %l2) : memref<524288xf32>
    }
  }
  ta.kernel @k7(%t1: memref<524288xf32> {role = "in"}, %in3: memref<4xf32> {role = "in"}, %t3: memref<2048xf32> {role = "out"}) {
    ta.loop [2, 4, 256] reduce [256] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1[affine_map<(d0, d1, d2, d3) -> ((((((((((d0 * 262144) + (d1 * 65536)) + (d2 * 256)) + d3) floordiv 65536) mod 8) * 65536) + (((((((d0 * 262144) + (d1 * 65536)) + (d2 * 256)) + d3) floordiv 256) mod 256) * 256)) + (((((d0 * 262144) + (d1 * 65536)) + (d2 * 256)) + d3) mod 256)))>](%l0, %l1, %l2, %l3) : memref<524288xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %in3[affine_map<(d0, d1, d2, d3) -> (d1)>](%l0, %l1, %l2, %l3) : memref<4xf32>
      %v5 = arith.addf %v3, %v4 : f32
      %v6 = ta.reduce <max> %v5 : f32
      ta.store %v6, %t3[affine_map<(d0, d1, d2) -> ((((d0 * 1024) + (d1 * 256)) + d2))>](%l0, %l1, %l2) : memref<2048xf32>
    }
  }
  ta.kernel @k8(%t1: memref<524288xf32> {role = "in"}, %in3: memref<4xf32> {role = "in"}, %t4: memref<2048xf32> {role = "out"}) {
    ta.loop [2, 4, 256] reduce [256] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1[affine_map<(d0, d1, d2, d3) -> ((((((((((d0 * 262144) + (d1 * 65536)) + (d2 * 256)) + d3) floordiv 65536) mod 8) * 65536) + (((((((d0 * 262144) + (d1 * 65536)) + (d2 * 256)) + d3) floordiv 256) mod 256) * 256)) + (((((d0 * 262144) + (d1 * 65536)) + (d2 * 256)) + d3) mod 256)))>](%l0, %l1, %l2, %l3) : memref<524288xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %in3[affine_map<(d0, d1, d2, d3) -> (d1)>](%l0, %l1, %l2, %l3) : memref<4xf32>
      %v5 = arith.addf %v3, %v4 : f32
      %v6 = ta.reduce <max> %v5 : f32
      %v7 = arith.subf %v5, %v6 : f32
      %v8 = math.exp %v7 : f32
      %v9 = ta.reduce <sum> %v8 : f32
      ta.store %v9, %t4[affine_map<(d0, d1, d2) -> ((((d0 * 1024) + (d1 * 256)) + d2))>](%l0, %l1, %l2) : memref<2048xf32>
    }
  }
  ta.kernel @k6(%t1: memref<524288xf32> {role = "in"}, %in3: memref<4xf32> {role = "in"}, %t3: memref<2048xf32> {role = "in"}, %t4: memref<2048xf32> {role = "in"}, %in2: memref<131072xf32> {role = "in"}, %t5: memref<131072xf32> {role = "out"}) {
    ta.loop [8, 256, 64] reduce [256] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t1[affine_map<(d0, d1, d2, d3) -> (((((((((((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 262144) mod 2) * 262144) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 65536) mod 4) * 65536)) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 256) mod 256) * 256)) + ((((d0 * 65536) + (d1 * 256)) + d3) mod 256)) floordiv 65536) mod 8) * 65536) + ((((((((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 262144) mod 2) * 262144) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 65536) mod 4) * 65536)) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 256) mod 256) * 256)) + ((((d0 * 65536) + (d1 * 256)) + d3) mod 256)) floordiv 256) mod 256) * 256)) + ((((((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 262144) mod 2) * 262144) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 65536) mod 4) * 65536)) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 256) mod 256) * 256)) + ((((d0 * 65536) + (d1 * 256)) + d3) mod 256)) mod 256)))>](%l0, %l1, %l2, %l3) : memref<524288xf32>
      %v2 = arith.constant 1.250000e-01 : f32
      %v3 = arith.mulf %v1, %v2 : f32
      %v4 = ta.load %in3[affine_map<(d0, d1, d2, d3) -> ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 65536) mod 4))>](%l0, %l1, %l2, %l3) : memref<4xf32>
      %v5 = arith.addf %v3, %v4 : f32
      %v6 = ta.load %t3[affine_map<(d0, d1, d2, d3) -> (((((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 262144) mod 2) * 1024) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 65536) mod 4) * 256)) + (((((d0 * 65536) + (d1 * 256)) + d3) floordiv 256) mod 256)))>](%l0, %l1, %l2, %l3) : memref<2048xf32>
      %v7 = arith.subf %v5, %v6 : f32
      %v8 = math.exp %v7 : f32
      %v9 = ta.load %t4[affine_map<(d0, d1, d2, d3) -> (((((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 262144) mod 2) * 1024) + ((((((d0 * 65536) + (d1 * 256)) + d3) floordiv 65536) mod 4) * 256)) + (((((d0 * 65536) + (d1 * 256)) + d3) floordiv 256) mod 256)))>](%l0, %l1, %l2, %l3) : memref<2048xf32>
      %v10 = arith.divf %v8, %v9 : f32
      %v11 = ta.load %in2[affine_map<(d0, d1, d2, d3) -> ((((((((((d0 * 16384) + (d3 * 64)) + d2) floordiv 65536) mod 2) * 65536) + ((((((d0 * 16384) + (d3 * 64)) + d2) floordiv 16384) mod 4) * 16384)) + ((((((d0 * 16384) + (d3 * 64)) + d2) floordiv 64) mod 256) * 64)) + ((((d0 * 16384) + (d3 * 64)) + d2) mod 64)))>](%l0, %l1, %l2, %l3) : memref<131072xf32>
      %v12 = arith.mulf %v10, %v11 : f32
      %v13 = ta.reduce <sum> %v12 : f32
      ta.store %v13, %t5[affine_map<(d0, d1, d2) -> ((((d0 * 16384) + (d1 * 64)) + d2))>](%l0, %l1, %l2) : memref<131072xf32>
    }
  }
  ta.kernel @k11(%t5: memref<131072xf32> {role = "in"}, %out9: memref<131072xf32> {role = "out"}) {
    ta.loop [2, 4, 256, 64] (%l0, %l1, %l2, %l3) {
      %v1 = ta.load %t5[affine_map<(d0, d1, d2, d3) -> ((((((((((d0 * 65536) + (d1 * 16384)) + (d2 * 64)) + d3) floordiv 16384) mod 8) * 16384) + (((((((d0 * 65536) + (d1 * 16384)) + (d2 * 64)) + d3) floordiv 64) mod 256) * 64)) + (((((d0 * 65536) + (d1 * 16384)) + (d2 * 64)) + d3) mod 64)))>](%l0, %l1, %l2, %l3) : memref<131072xf32>
      ta.store %v1, %out9[affine_map<(d0, d1, d2, d3) -> (((((d0 * 65536) + (d1 * 16384)) + (d2 * 64)) + d3))>](%l0, %l1, %l2, %l3) : memref<131072xf32>
    }
  }
  func.func @forward(%in0: memref<2x4x256x64xf32>, %in1: memref<2x4x256x64xf32>, %in2: memref<2x4x256x64xf32>, %in3: memref<4x1x1xf32>) -> memref<2x4x256x64xf32> {
    %in0_flat = ta.reshape %in0 : memref<2x4x256x64xf32> to memref<131072xf32>
    %in1_flat = ta.reshape %in1 : memref<2x4x256x64xf32> to memref<131072xf32>
    %in2_flat = ta.reshape %in2 : memref<2x4x256x64xf32> to memref<131072xf32>
    %in3_flat = ta.reshape %in3 : memref<4x1x1xf32> to memref<4xf32>
    %t1 = ta.alloc : memref<8x256x256xf32>
    %t1_flat = ta.reshape %t1 : memref<8x256x256xf32> to memref<524288xf32>
    %t5 = ta.alloc : memref<8x256x64xf32>
    %t5_flat = ta.reshape %t5 : memref<8x256x64xf32> to memref<131072xf32>
    %t3 = ta.alloc : memref<2x4x256xf32>
    %t3_flat = ta.reshape %t3 : memref<2x4x256xf32> to memref<2048xf32>
    %t4 = ta.alloc : memref<2x4x256xf32>
    %t4_flat = ta.reshape %t4 : memref<2x4x256xf32> to memref<2048xf32>
    %out9 = ta.alloc : memref<2x4x256x64xf32>
    %out9_flat = ta.reshape %out9 : memref<2x4x256x64xf32> to memref<131072xf32>
    ta.launch @k2(%in0_flat, %in1_flat, %t1_flat) : memref<131072xf32>, memref<131072xf32>, memref<524288xf32>
    ta.launch @k7(%t1_flat, %in3_flat, %t3_flat) : memref<524288xf32>, memref<4xf32>, memref<2048xf32>
    ta.launch @k8(%t1_flat, %in3_flat, %t4_flat) : memref<524288xf32>, memref<4xf32>, memref<2048xf32>
    ta.launch @k6(%t1_flat, %in3_flat, %t3_flat, %t4_flat, %in2_flat, %t5_flat) : memref<524288xf32>, memref<4xf32>, memref<2048xf32>, memref<2048xf32>, memref<131072xf32>, memref<131072xf32>
    ta.launch @k11(%t5_flat, %out9_flat) : memref<131072xf32>, memref<131072xf32>
    func.return %out9 : memref<2x4x256x64xf32>
  }
}
