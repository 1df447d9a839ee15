// RUN: pallas-opt %s --split-input-file -p cse,canonicalize | filecheck %s
// RUN: pallas-opt %s --split-input-file --cse --canonicalize | filecheck %s
// RUN: pallas-opt %s --split-input-file | filecheck %s --check-prefix=NOPASS

// Per-pass flags (`--cse --canonicalize`) build the same pipeline as
// `-p cse,canonicalize`: both runs must give the output checked below. In a pallas
// kernel, cse merges the identical arith.addf ops and the identical loads of a ref
// (nothing is stored in between), and the dead pure ops (math.exp, program_id,
// transpose) are removed. The stores stay.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    %b = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    %s1 = arith.addf %a, %a : tensor<8x256xf32>
    %s2 = arith.addf %a, %a : tensor<8x256xf32>
    %m = arith.mulf %s1, %s2 : tensor<8x256xf32>
    %dead = math.exp %m : tensor<8x256xf32>
    %i0 = pallas.program_id 0 : i32
    %i1 = pallas.program_id 0 : i32
    %t1 = pallas.transpose %m [1, 0] : tensor<8x256xf32> -> tensor<256x8xf32>
    %t2 = pallas.transpose %m [1, 0] : tensor<8x256xf32> -> tensor<256x8xf32>
    %r = arith.addf %m, %b : tensor<8x256xf32>
    pallas.store %r, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
  }
  func.return %o : tensor<64x256xf32>
}

// CHECK:       kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
// CHECK-NEXT:    %a = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
// CHECK-NEXT:    %s1 = arith.addf %a, %a : tensor<8x256xf32>
// CHECK-NEXT:    %m = arith.mulf %s1, %s1 : tensor<8x256xf32>
// CHECK-NEXT:    %r = arith.addf %m, %a : tensor<8x256xf32>
// CHECK-NEXT:    pallas.store %r, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
// CHECK-NEXT:  }

// Without passes, nothing is merged.
// NOPASS:      %b = pallas.load %x_ref[...]
// NOPASS:      %s2 = arith.addf %a, %a
// NOPASS:      %i1 = pallas.program_id 0 : i32
// NOPASS:      %t2 = pallas.transpose %m [1, 0]

// -----

// A load after a store to the same buffer is not merged with the load before it;
// identical loads with no store in between are.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "inout"}) {
  ta.loop [64] (%i) {
    %a = ta.load %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    %b = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    %b2 = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    %p = arith.mulf %b, %b2 : f32
    ta.store %p, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    %c = ta.load %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    %s = arith.addf %a, %c : f32
    ta.store %s, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// CHECK-LABEL: ta.kernel @k
// CHECK-NEXT:    ta.loop [64] (%i) {
// CHECK-NEXT:      %a = ta.load %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
// CHECK-NEXT:      %b = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
// CHECK-NEXT:      %p = arith.mulf %b, %b : f32
// CHECK-NEXT:      ta.store %p, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
// CHECK-NEXT:      %c = ta.load %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
// CHECK-NEXT:      %s = arith.addf %a, %c : f32
// CHECK-NEXT:      ta.store %s, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
