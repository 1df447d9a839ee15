// RUN: pallas-opt %s --split-input-file --verify-diagnostics

// Malformed pallas IR: each chunk must produce exactly the expected errors. Block
// specs follow the TPU block rules: the last two block dims are multiples of (8, 128)
// for 32-bit types ((32, 128) for 8-bit types) or equal the array dims.

// A rank-1 block spec for a rank-2 operand.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{in_specs[0]: the block spec has rank 1 but its operand tensor<64x256xf32> has rank 2}}
  %o = pallas.call @k(%x) grid [8, 2]
      in [#pallas.block_spec<[8], (d0, d1) -> (d0)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// The index map takes one grid index; the grid has two.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{in_specs[0]: the index map takes 1 grid indices but the grid has 2 dims}}
  %o = pallas.call @k(%x) grid [8, 2]
      in [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// 4 rows of f32 is not a multiple of 8 (nor all 64 rows).
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{in_specs[0]: block dim 0 (4) of a 32-bit array must be a multiple of 8 or equal the array dim 64}}
  %o = pallas.call @k(%x) grid [16, 2]
      in [#pallas.block_spec<[4, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<4x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// A squeezed second-minor dim is a block of 1 row out of 16.
func.func @forward(%x: tensor<64x16x256xf32>) -> tensor<64x16x256xf32> {
  // expected-error@+1 {{in_specs[0]: block dim 1 (squeezed) of a 32-bit array must be a multiple of 8 or equal the array dim 16}}
  %o = pallas.call @k(%x) grid [16, 2]
      in [#pallas.block_spec<[8, squeezed, 128], (d0, d1) -> (d0, 0, d1)>]
      out [#pallas.block_spec<[8, 16, 128], (d0, d1) -> (d0, 0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x16x256xf32>) -> tensor<64x16x256xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x16x128xf32, vmem>) {
  }
  func.return %o : tensor<64x16x256xf32>
}

// -----

// 8-bit blocks need 32 rows.
func.func @forward(%x: tensor<64x256xi8>) -> tensor<64x256xi8> {
  // expected-error@+1 {{in_specs[0]: block dim 0 (8) of a 8-bit array must be a multiple of 32 or equal the array dim 64}}
  %o = pallas.call @k(%x) grid [8, 2]
      in [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xi8>) -> tensor<64x256xi8>
      kernel(%x_ref: !pallas.ref<8x128xi8, vmem>, %o_ref: !pallas.ref<8x128xi8, vmem>) {
  }
  func.return %o : tensor<64x256xi8>
}

// -----

// Out specs are checked too: 64 lanes is not a multiple of 128 (nor all 256).
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{out_specs[0]: block dim 1 (64) of a 32-bit array must be a multiple of 128 or equal the array dim 256}}
  %o = pallas.call @k(%x) grid [8, 4]
      in [#pallas.block_spec<[8, 256], (d0, d1) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 64], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x64xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// A rank-1 block must be the whole array, a multiple of 1024, or a large power of 2.
func.func @forward(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  // expected-error@+1 {{in_specs[0]: a rank-1 block must equal the array dim (1024), be a multiple of 1024, or be a power of 2 of at least 128; got 100}}
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[100], (d0) -> (d0)>]
      out [#pallas.block_spec<[128], (d0) -> (d0)>]
      semantics [parallel]
      : (tensor<1024xf32>) -> tensor<1024xf32>
      kernel(%x_ref: !pallas.ref<100xf32, vmem>, %o_ref: !pallas.ref<128xf32, vmem>) {
  }
  func.return %o : tensor<1024xf32>
}

// -----

// One dimension semantics per grid dim.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{grid has 2 dims but dimension_semantics has 1 entries}}
  %o = pallas.call @k(%x) grid [8, 2]
      in [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{grid extents must be positive}}
  %o = pallas.call @k(%x) grid [0]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{1 block operands but 0 in_specs}}
  %o = pallas.call @k(%x) grid [8]
      in []
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{1 results but 0 out_specs}}
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out []
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// The kernel's refs have the block shapes: (8, 128), not (8, 256).
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{kernel arguments must be (!pallas.ref<8x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>), got (!pallas.ref<8x256xf32, vmem>, !pallas.ref<8x128xf32, vmem>)}}
  %o = pallas.call @k(%x) grid [8, 2]
      in [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// A squeezed dim is dropped from the kernel's ref.
func.func @forward(%x: tensor<64x1x256xf32>) -> tensor<64x1x256xf32> {
  // expected-error@+1 {{kernel arguments must be (!pallas.ref<1x256xf32, vmem>, !pallas.ref<1x256xf32, vmem>), got (!pallas.ref<1x1x256xf32, vmem>, !pallas.ref<1x256xf32, vmem>)}}
  %o = pallas.call @k(%x) grid [64]
      in [#pallas.block_spec<[squeezed, 1, 256], (d0) -> (d0, 0, 0)>]
      out [#pallas.block_spec<[squeezed, 1, 256], (d0) -> (d0, 0, 0)>]
      semantics [parallel]
      : (tensor<64x1x256xf32>) -> tensor<64x1x256xf32>
      kernel(%x_ref: !pallas.ref<1x1x256xf32, vmem>, %o_ref: !pallas.ref<1x256xf32, vmem>) {
  }
  func.return %o : tensor<64x1x256xf32>
}

// -----

// Prefetch refs come first and live in SMEM; a missing output ref is caught too.
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{kernel arguments must be (!pallas.ref<8xi32, smem>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<8x256xf32, vmem>), got (!pallas.ref<8xi32, vmem>, !pallas.ref<8x256xf32, vmem>)}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s0 = prefetch0[(d0) -> (d0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, vmem>, %x_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// SMEM holds 32-bit scalars.
func.func @forward(%idx: tensor<8xi64>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{scalar-prefetch operand #0 must be i32 (SMEM holds 32-bit scalars), got i64}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s0 = prefetch0[(d0) -> (d0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi64>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi64, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// 300000 int32 indices take 1.2 MB; SMEM holds 1 MiB.
func.func @forward(%idx: tensor<300000xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{scalar-prefetch operands take 1200000 bytes; SMEM holds 1048576}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s0 = prefetch0[(d0) -> (d0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<300000xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<300000xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{prefetch 3 but only 2 operands}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 3
      in []
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// s0 is bound to a second prefetch operand that does not exist.
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{in_specs[0]: binds prefetch1 but the call has 1 prefetch operands}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s0 = prefetch1[(d0) -> (d0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// The binding reads a rank-1 prefetch operand with two indices.
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{in_specs[0]: prefetch0 has rank 1 but its binding gives 2 indices}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s0 = prefetch0[(d0) -> (d0, 0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%x: tensor<64x256xf64>) -> tensor<64x256xf64> {
  // expected-error@+1 {{in_specs[0]: TPU kernels have no 64-bit types; got f64}}
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf64>) -> tensor<64x256xf64>
      kernel(%x_ref: !pallas.ref<8x256xf64, vmem>, %o_ref: !pallas.ref<8x256xf64, vmem>) {
  }
  func.return %o : tensor<64x256xf64>
}

// -----

// An aliased input and output share one buffer: same type.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x128xf32> {
  // expected-error@+1 {{alias 0 -> 0 joins tensor<64x256xf32> and tensor<64x128xf32>}}
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      semantics [parallel] aliases [0 -> 0]
      : (tensor<64x256xf32>) -> tensor<64x128xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<64x128xf32>
}

// -----

// A scalar-prefetch operand cannot be aliased.
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{alias 0 -> 0 names no block operand/result}}
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel] aliases [0 -> 0]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{vmem_limit_bytes must be positive}}
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      attributes {vmem_limit_bytes = 0 : i64}
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// Kernel ops: a ref in memory space `any` is reachable only by DMA; SMEM moves scalars;
// indexers stay inside the ref; the result shape follows the indexers; program_id
// names a grid dim.
func.func @forward(%x: tensor<64x256xf32>, %h: tensor<1024x128xf32>, %t: tensor<8x128xi32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x, %h, %t) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>, #pallas.block_spec<any>, #pallas.block_spec<[8, 128], (d0) -> (0, 0), smem>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>, tensor<1024x128xf32>, tensor<8x128xi32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %h_ref: !pallas.ref<1024x128xf32, any>, %t_ref: !pallas.ref<8x128xi32, smem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    // expected-error@+1 {{load cannot touch a ref in memory space any: it is reachable only by DMA}}
    %hv = pallas.load %h_ref[ds(0, 8), :] : !pallas.ref<1024x128xf32, any> -> tensor<8x128xf32>
    // expected-error@+1 {{load of SMEM moves scalars only; index every dim}}
    %tv = pallas.load %t_ref[0, ds(0, 4)] : !pallas.ref<8x128xi32, smem> -> tensor<4xi32>
    // expected-error@+1 {{slice of dim 0 reaches element 11 of 8: out of bounds}}
    %a = pallas.load %x_ref[ds(4, 8), :] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    // expected-error@+1 {{index 8 is out of bounds for dim 0 of 8}}
    %b = pallas.load %x_ref[8, :] : !pallas.ref<8x256xf32, vmem> -> tensor<256xf32>
    // expected-error@+1 {{slice of dim 0 reaches element 14 of 8: out of bounds}}
    %c = pallas.load %x_ref[ds(0, 8, stride = 2), :] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    // expected-error@+1 {{load of !pallas.ref<8x256xf32, vmem> at these indexers is tensor<8x256xf32>, not tensor<8x128xf32>}}
    %d = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x128xf32>
    // expected-error@+1 {{load of !pallas.ref<8x256xf32, vmem> at these indexers is tensor<256xf32>, not tensor<1x256xf32>}}
    %e = pallas.load %x_ref[0, :] : !pallas.ref<8x256xf32, vmem> -> tensor<1x256xf32>
    %f = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    // expected-error@+1 {{store of !pallas.ref<8x256xf32, vmem> at these indexers is tensor<8x128xf32>, not tensor<8x256xf32>}}
    pallas.store %f, %o_ref[:, ds(0, 128)] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
    // expected-error@+1 {{axis 1 is not a dim of the rank-1 grid}}
    %p = pallas.program_id 1 : i32
  }
  func.return %o : tensor<64x256xf32>
}

// -----

func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{'pallas.program_id' expects ancestor op 'pallas.call'}}
  %p = pallas.program_id 0 : i32
  func.return %x : tensor<64x256xf32>
}

// -----

// Tile compute in a kernel: the shared transpose/broadcast/reduce checks.
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    // expected-error@+1 {{[1, 1] is not a permutation of 2 dims}}
    %t = pallas.transpose %v [1, 1] : tensor<8x256xf32> -> tensor<256x256xf32>
    // expected-error@+1 {{dim 1 of size 256 cannot be broadcast to 512 (only size-1 dims can)}}
    %b = pallas.broadcast %v : tensor<8x256xf32> to tensor<8x512xf32>
    // expected-error@+1 {{<argmin> reduces exactly one dim}}
    %r = pallas.reduce <argmin> %v [0, 1] : tensor<8x256xf32> -> tensor<1x1xi32>
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// Attributes are verified where they are written: an index map with one result for
// a rank-2 block ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      // expected-error@+1 {{index map has 1 results for a rank-2 block}}
      in [#pallas.block_spec<[8, 256], (d0) -> (d0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... a symbol without a prefetch binding ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      // expected-error@+1 {{index map has 1 symbols but 0 prefetch bindings}}
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... an empty block dim ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      // expected-error@+1 {{block dims must be positive or squeezed}}
      in [#pallas.block_spec<[0, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... a negative cost ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      // expected-error@+1 {{cost estimate flops must be non-negative}}
      attributes {cost_estimate = #pallas.cost_estimate<flops = -1, transcendentals = 0, bytes_accessed = 0>}
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... an empty ref ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      // expected-error@+1 {{ref dims must be positive}}
      scratch [!pallas.ref<0x128xf32, vmem>]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... and an empty ds (generic form).
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    // expected-error@+1 {{ds needs start >= 0, size > 0 and stride > 0}}
    %v = "pallas.load"(%x_ref) <{indexers = [#pallas.ds<0, 0, 1>, #pallas.ds<0, 256, 1>]}> : (!pallas.ref<8x256xf32, vmem>) -> tensor<0x256xf32>
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// Parse errors, reported where the mistake is written: an indexer list of the wrong
// length ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    // expected-error@+1 {{1 indexers for a rank-2 ref (use [...] for all of it)}}
    %f = pallas.load %x_ref[0] : !pallas.ref<8x256xf32, vmem> -> tensor<256xf32>
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... a stride without its keyword ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    // expected-error@+1 {{Expected 'stride'}}
    %a = pallas.load %x_ref[ds(0, 4, 2), :] : !pallas.ref<8x256xf32, vmem> -> tensor<4x256xf32>
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... something other than a block spec in `in` ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      // expected-error@+1 {{expected a #pallas.block_spec, got #pallas.cost_estimate<flops = 0, transcendentals = 0, bytes_accessed = 0>}}
      in [#pallas.cost_estimate<flops = 0, transcendentals = 0, bytes_accessed = 0>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... a memref as scratch ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      // expected-error@+1 {{scratch shapes are !pallas.ref types, got memref<8xf32>}}
      semantics [parallel] scratch [memref<8xf32>]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... symbols bound out of order ...
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      // expected-error@+1 {{the binding `s0 = prefetchN[map]`, got 's1'}}
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s1 = prefetch0[(d0) -> (d0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... a binding to something other than a prefetch operand ...
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      // expected-error@+1 {{expected `prefetchN`}}
      in [#pallas.block_spec<[8, 256], (d0)[s0] -> (s0, 0), s0 = idx[(d0) -> (d0)]>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<8xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%i_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... an unknown dimension semantics ...
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      // expected-error@+1 {{Expected `parallel`, or `arbitrary`.}}
      semantics [sequential]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// ... and an operand type list of the wrong length.
func.func @forward(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x, %y) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      // expected-error@+1 {{2 operands but 1 operand types}}
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// A transpose whose output index map forgot to swap: grid dim 1 runs to 2 but the
// (384, 256) output has only 2 column blocks of 128.
func.func @forward(%x: tensor<256x384xf32>) -> tensor<384x256xf32> {
  // expected-error@+1 {{out_specs[0]: block index 1 ranges over [0, 2] but the operand has 2 blocks of 128 along dim 1}}
  %out = pallas.call @transpose(%x) grid [2, 3]
      in [#pallas.block_spec<[128, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[128, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<256x384xf32>) -> tensor<384x256xf32>
      kernel(%x_ref: !pallas.ref<128x128xf32, vmem>, %o_ref: !pallas.ref<128x128xf32, vmem>) {
  }
  func.return %out : tensor<384x256xf32>
}

// -----

func.func @forward(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  // expected-error@+1 {{scratch_shapes[0] is in memory space any}}
  %out = pallas.call @k(%x) grid [2]
      in [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      semantics [parallel] scratch [!pallas.ref<8x128xf32, any>]
      : (tensor<16x128xf32>) -> tensor<16x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>, %s: !pallas.ref<8x128xf32, any>) {
  }
  func.return %out : tensor<16x128xf32>
}

// -----

// pallas.convert, pallas.compare and pallas.select (the checks shared with tl).
func.func @f(%a: tensor<8x128xi8>) {
  // expected-error@+1 {{convert keeps the shape: 8x128 vs 16x128}}
  %w = pallas.convert %a : tensor<8x128xi8> to tensor<16x128xi32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>) {
  // expected-error@+1 {{convert to the same element type f32; use the value}}
  %w = pallas.convert %a : tensor<8x128xf32> to tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xcomplex<f32>>) {
  // expected-error@+1 {{convert takes integer, index or float elements, not complex<f32>}}
  %w = pallas.convert %a : tensor<8x128xcomplex<f32>> to tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xi32>) {
  // expected-error@+1 {{'olt' is not an integer predicate; expected one of eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge}}
  %c = pallas.compare <olt> %a, %a : tensor<8x128xi32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>) {
  // expected-error@+1 {{'sgt' is not a float predicate; expected one of oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno}}
  %c = pallas.compare <sgt> %a, %a : tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>) {
  // expected-error@+1 {{compare gives tensor<8x128xi1>, not tensor<8x128xi32>}}
  %c = "pallas.compare"(%a, %a) <{predicate = #pallas<compare_predicate olt>}> : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xi32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>, %b: tensor<8x128xf16>) {
  // expected-error@+1 {{operand 'rhs' at position 1 does not verify}}
  %c = "pallas.compare"(%a, %b) <{predicate = #pallas<compare_predicate olt>}> : (tensor<8x128xf32>, tensor<8x128xf16>) -> tensor<8x128xi1>
  func.return
}

// -----

func.func @f(%c: tensor<8x128xi32>, %a: tensor<8x128xf32>) {
  // expected-error@+1 {{select condition must be an i1 tile, got i32 elements}}
  %r = pallas.select %c, %a, %a : tensor<8x128xi32>, tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%c: tensor<8x1xi1>, %a: tensor<8x128xf32>) {
  // expected-error@+1 {{select condition shape 8x1 differs from the value shape 8x128}}
  %r = pallas.select %c, %a, %a : tensor<8x1xi1>, tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%c: tensor<8x128xi1>, %a: tensor<8x128xf32>, %b: tensor<8x128xbf16>) {
  // expected-error@+1 {{operand 'false_value' at position 2 does not verify}}
  %r = "pallas.select"(%c, %a, %b) : (tensor<8x128xi1>, tensor<8x128xf32>, tensor<8x128xbf16>) -> tensor<8x128xf32>
  func.return
}

// -----

// pallas.dot (the checks shared with tl).
func.func @f(%a: tensor<8x128x2xbf16>, %b: tensor<128x256xbf16>) {
  // expected-error@+1 {{dot multiplies two rank-2 tiles, or two rank-3 tiles with a batch dim}}
  %c = "pallas.dot"(%a, %b) : (tensor<8x128x2xbf16>, tensor<128x256xbf16>) -> tensor<8x256xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xbf16>, %b: tensor<256x128xbf16>) {
  // expected-error@+1 {{dot of 8x128 by 256x128: the contracted dims differ}}
  %c = pallas.dot %a, %b : tensor<8x128xbf16>, tensor<256x128xbf16> -> tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4x8x128xf32>, %b: tensor<2x128x256xf32>) {
  // expected-error@+1 {{dot of 4x8x128 by 2x128x256: the batch dims differ}}
  %c = pallas.dot %a, %b : tensor<4x8x128xf32>, tensor<2x128x256xf32> -> tensor<4x8x256xf32>
  func.return
}

// -----

func.func @f(%a: tensor<32x128xi8>, %b: tensor<128x256xbf16>) {
  // expected-error@+1 {{dot operands have one element type}}
  %c = pallas.dot %a, %b : tensor<32x128xi8>, tensor<128x256xbf16> -> tensor<32x256xf32>
  func.return
}

// -----

// Integer operands accumulate in i32, not f32.
func.func @f(%a: tensor<32x128xi8>, %b: tensor<128x256xi8>) {
  // expected-error@+1 {{dot gives tensor<32x256xi32>, not tensor<32x256xf32>}}
  %c = pallas.dot %a, %b : tensor<32x128xi8>, tensor<128x256xi8> -> tensor<32x256xf32>
  func.return
}

// -----

// pallas.reshape on the host keeps the element type and count.
func.func @forward(%t: tensor<1000x1x256xf32>) -> tensor<1000x256xbf16> {
  // expected-error@+1 {{reshape changes the element type from f32 to bf16}}
  %r = pallas.reshape %t : tensor<1000x1x256xf32> to tensor<1000x256xbf16>
  func.return %r : tensor<1000x256xbf16>
}

// -----

func.func @forward(%t: tensor<1000x1x256xf32>) -> tensor<1000x128xf32> {
  // expected-error@+1 {{reshape from 256000 to 128000 elements}}
  %r = pallas.reshape %t : tensor<1000x1x256xf32> to tensor<1000x128xf32>
  func.return %r : tensor<1000x128xf32>
}

// -----

// ... and in a kernel.
func.func @forward(%x: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %o = pallas.call @k(%x) grid [8]
      in [#pallas.block_spec<[8, 512], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 512], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x512xf32>) -> tensor<64x512xf32>
      kernel(%x_ref: !pallas.ref<8x512xf32, vmem>, %o_ref: !pallas.ref<8x512xf32, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<8x512xf32, vmem> -> tensor<8x512xf32>
    // expected-error@+1 {{reshape from 4096 to 1024 elements}}
    %g = pallas.reshape %v : tensor<8x512xf32> to tensor<8x1x128xf32>
  }
  func.return %o : tensor<64x512xf32>
}

// -----

// pallas.when takes an i1 condition (the generic form reaches the verifier) ...
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @k(%x) grid [4]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [arbitrary]
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    %k = pallas.program_id 0 : i32
    // expected-error@+1 {{operand 'condition' at position 0 does not verify}}
    "pallas.when"(%k) ({
      %v = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
      pallas.store %v, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    }) : (i32) -> ()
  }
  func.return %o : tensor<8x128xf32>
}

// -----

// ... (the custom form resolves the condition as an i1) ...
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @k(%x) grid [4]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [arbitrary]
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    %k = pallas.program_id 0 : i32
    // expected-error@+1 {{operand is used with type i1, but has been previously used or defined with type i32}}
    pallas.when %k {
      %v = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
      pallas.store %v, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    }
  }
  func.return %o : tensor<8x128xf32>
}

// -----

// ... and lives in a kernel.
func.func @forward(%c: i1) {
  // expected-error@+1 {{'pallas.when' expects ancestor op 'pallas.call'}}
  pallas.when %c {
    %z = arith.constant 0 : i32
  }
  func.return
}

// -----

// pallas.read reads scalars from SMEM, one i32 index per ref dim, as the ref's type.
func.func @forward(%idx: tensor<64xi32>, %x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%idx, %x) grid [8] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary]
      : (tensor<64xi32>, tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    %g = pallas.program_id 0 : i32
    // expected-error@+1 {{pallas.read reads scalars from an SMEM ref}}
    %a = pallas.read %x_ref[%g, %g] : !pallas.ref<8x256xf32, vmem> -> f32
    // expected-error@+1 {{2 indices for a rank-1 ref}}
    %b = pallas.read %idx_ref[%g, %g] : !pallas.ref<64xi32, smem> -> i32
    // expected-error@+1 {{reads i32, not i64}}
    %c = pallas.read %idx_ref[%g] : !pallas.ref<64xi32, smem> -> i64
  }
  func.return %o : tensor<64x256xf32>
}

// -----

// Row DMAs copy from a ref left in HBM (`any`) or a VMEM block into VMEM: not from
// SMEM, not into SMEM.
func.func @forward(%t: tensor<1000x256xf32>, %x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %o = pallas.call @k(%t, %x) grid [1]
      in [#pallas.block_spec<any>, #pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<8x256xf32, smem>, !pallas.ref<i32, semaphore>]
      : (tensor<1000x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
      kernel(%t_ref: !pallas.ref<1000x256xf32, any>, %x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %srows: !pallas.ref<8x256xf32, smem>, %sem: !pallas.ref<i32, semaphore>) {
    %r = arith.constant 3 : i32
    pallas.dma_start %x_ref[%r], %rows[0], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{a row DMA copies from an `any` or `vmem` ref into a `vmem` ref}}
    pallas.dma_start %srows[%r], %rows[0], %sem : !pallas.ref<8x256xf32, smem>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{a row DMA copies from an `any` or `vmem` ref into a `vmem` ref}}
    pallas.dma_wait %t_ref[%r], %srows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, smem>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<8x256xf32>
}

// -----

// A row DMA signals a DMA semaphore, not a VMEM scratch ref.
func.func @forward(%t: tensor<1000x256xf32>) -> tensor<8x256xf32> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, vmem>]
      : (tensor<1000x256xf32>) -> tensor<8x256xf32>
      kernel(%t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, vmem>) {
    %r = arith.constant 3 : i32
    // expected-error@+1 {{a row DMA signals a rank-0 i32 `semaphore` ref}}
    pallas.dma_start %t_ref[%r], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, vmem>
  }
  func.return %o : tensor<8x256xf32>
}

// -----

// A source row and a destination row have the same trailing dims and element type.
func.func @forward(%t: tensor<1000x128xf32>, %u: tensor<1000x256xbf16>) -> tensor<8x256xf32> {
  %o = pallas.call @k(%t, %u) grid [1]
      in [#pallas.block_spec<any>, #pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<1000x128xf32>, tensor<1000x256xbf16>) -> tensor<8x256xf32>
      kernel(%t_ref: !pallas.ref<1000x128xf32, any>, %u_ref: !pallas.ref<1000x256xbf16, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %r = arith.constant 3 : i32
    // expected-error@+1 {{rows of !pallas.ref<1000x128xf32, any> do not fit rows of !pallas.ref<8x256xf32, vmem>: same trailing dims and type needed}}
    pallas.dma_start %t_ref[%r], %rows[0], %sem : !pallas.ref<1000x128xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{rows of !pallas.ref<1000x256xbf16, any> do not fit rows of !pallas.ref<8x256xf32, vmem>: same trailing dims and type needed}}
    pallas.dma_start %u_ref[%r], %rows[1], %sem : !pallas.ref<1000x256xbf16, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<8x256xf32>
}

// -----

// The destination row is a row of the VMEM buffer.
func.func @forward(%t: tensor<1000x256xf32>) -> tensor<8x256xf32> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<1000x256xf32>) -> tensor<8x256xf32>
      kernel(%t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %r = arith.constant 3 : i32
    // expected-error@+1 {{row 8 is outside !pallas.ref<8x256xf32, vmem>}}
    pallas.dma_wait %t_ref[%r], %rows[8], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<8x256xf32>
}

// -----

func.func @forward(%t: !pallas.ref<1000x256xf32, any>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>, %r: i32) {
  // expected-error@+1 {{'pallas.dma_start' expects ancestor op 'pallas.call'}}
  pallas.dma_start %t[%r], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
  func.return
}

// -----

// A DMA semaphore in `scratch` is a rank-0 ref (`pltpu.SemaphoreType.DMA(())`).
func.func @forward(%idx: tensor<64xi32>, %t: tensor<1000x256xf32>) -> tensor<64x256xf32> {
  // expected-error@+1 {{scratch_shapes[1]: a DMA semaphore is a rank-0 i32 ref}}
  %out = pallas.call @gather(%idx, %t) grid [8] prefetch 1
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<8xi32, semaphore>]
      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sems: !pallas.ref<8xi32, semaphore>) {
  }
  func.return %out : tensor<64x256xf32>
}

// -----

// A semaphore is not a block: no block spec lives in memory space semaphore.
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @k(%x) grid [1]
      // expected-error@+1 {{a block spec cannot be in memory space semaphore}}
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0), semaphore>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, semaphore>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
  }
  func.return %o : tensor<8x128xf32>
}

// -----

func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @k(%x) grid [1]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel] scratch [!pallas.ref<i32, semaphore>]
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    // expected-error@+1 {{load cannot touch a semaphore ref}}
    %v = pallas.load %sem[...] : !pallas.ref<i32, semaphore> -> tensor<i32>
  }
  func.return %o : tensor<8x128xf32>
}

// -----

// pallas.xla_call of a kernel that is not an xla.func.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) attributes {target = #ta<target xla>} {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    ta.store %v, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}
func.func @forward(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{@k is not an xla.func}}
  %o = pallas.xla_call @k(%x) : (tensor<64xf32>) -> tensor<64xf32>
  func.return %o : tensor<64xf32>
}

// -----

// pallas.xla_call passes and gets exactly the function's types.
xla.func @k(%x: tensor<64xf32>) -> tensor<64xf32> {
  %xb = xla.buffer %x : tensor<64xf32> to tensor<64xf32>
  xla.return %xb : tensor<64xf32>
}
func.func @forward(%x: tensor<64xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{@k has type (tensor<64xf32>) -> tensor<64xf32>, called with (tensor<64xf32>) -> tensor<8x8xf32>}}
  %o = pallas.xla_call @k(%x) : (tensor<64xf32>) -> tensor<8x8xf32>
  func.return %o : tensor<8x8xf32>
}

// -----

// One operand per function argument.
xla.func @k(%x: tensor<64xf32>) -> tensor<64xf32> {
  %xb = xla.buffer %x : tensor<64xf32> to tensor<64xf32>
  xla.return %xb : tensor<64xf32>
}
func.func @forward(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error@+1 {{@k has type (tensor<64xf32>) -> tensor<64xf32>, called with (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>}}
  %o = pallas.xla_call @k(%x, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %o : tensor<64xf32>
}

// -----

// An element-indexed window must lie inside the array: rows 2 to 4 of a dim of 4.
func.func @forward(%x: tensor<2x4x16x128xf32>) -> tensor<2x3x16x128xf32> {
  // expected-error@+1 {{in_specs[0]: element offset 1 ranges over [2, 2] but windows of 3 must fit in the dim of 4}}
  %out = pallas.call @leading_slice(%x) grid [2]
      in [#pallas.block_spec<[1, 3, 16, 128], (d0) -> (d0, 2, 0, 0), element>]
      out [#pallas.block_spec<[1, 3, 16, 128], (d0) -> (d0, 0, 0, 0)>]
      semantics [parallel]
      : (tensor<2x4x16x128xf32>) -> tensor<2x3x16x128xf32>
      kernel(%x_ref: !pallas.ref<1x3x16x128xf32, vmem>, %o_ref: !pallas.ref<1x3x16x128xf32, vmem>) {
  }
  func.return %out : tensor<2x3x16x128xf32>
}

// -----

// Element offsets name every dim: an element-indexed spec has no squeezed dims.
func.func @forward(%x: tensor<2x4x16x128xf32>) -> tensor<2x3x16x128xf32> {
  // expected-error@+2 {{an element-indexed block spec has no squeezed dims and no prefetched symbols}}
  %out = pallas.call @leading_slice(%x) grid [2]
      in [#pallas.block_spec<[squeezed, 3, 16, 128], (d0) -> (d0, 1, 0, 0), element>]
      out [#pallas.block_spec<[1, 3, 16, 128], (d0) -> (d0, 0, 0, 0)>]
      semantics [parallel]
      : (tensor<2x4x16x128xf32>) -> tensor<2x3x16x128xf32>
      kernel(%x_ref: !pallas.ref<3x16x128xf32, vmem>, %o_ref: !pallas.ref<1x3x16x128xf32, vmem>) {
  }
  func.return %out : tensor<2x3x16x128xf32>
}

// -----

// A copy of P packed rows lands in a slab of a (R, P, ...) destination.
func.func @forward(%t: tensor<1000x256xbf16>) -> tensor<8x256xbf16> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xbf16, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<1000x256xbf16>) -> tensor<8x256xbf16>
      kernel(%t_ref: !pallas.ref<1000x256xbf16, any>, %o_ref: !pallas.ref<8x256xbf16, vmem>, %rows: !pallas.ref<8x256xbf16, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %r = arith.constant 6 : i32
    // expected-error@+1 {{a copy of 2 rows lands in a slab of a (R, 2, ...) destination, not !pallas.ref<8x256xbf16, vmem>}}
    pallas.dma_start %t_ref[%r], %rows[0], %sem {rows = 2 : i64} : !pallas.ref<1000x256xbf16, any>, !pallas.ref<8x256xbf16, vmem>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<8x256xbf16>
}

// -----

// A row DMA write copies a row of a VMEM buffer into an array left in HBM (`any`).
func.func @forward(%t: tensor<1000x256xf32>) -> tensor<1000x256xf32> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<any>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [0 -> 0]
      : (tensor<1000x256xf32>) -> tensor<1000x256xf32>
      kernel(%t_in: !pallas.ref<1000x256xf32, any>, %t_hbm: !pallas.ref<1000x256xf32, any>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %r = arith.constant 3 : i32
    pallas.dma_write_start %rows[0], %t_hbm[%r], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{a row DMA write copies from a `vmem` ref into an `any` ref}}
    pallas.dma_write_start %rows[0], %rows[%r], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{a row DMA write copies from a `vmem` ref into an `any` ref}}
    pallas.dma_write_wait %t_in[0], %t_hbm[%r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<1000x256xf32>
}

// -----

// A row DMA write shares the rules of a read (`verify_row_copy`): a DMA semaphore, rows
// that fit (same trailing dims and type), a source row inside the VMEM buffer, a row dim
// after the leading indices.
func.func @forward(%t: tensor<1000x256xf32>) -> tensor<1000x256xf32> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<any>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>, !pallas.ref<i32, vmem>] aliases [0 -> 0]
      : (tensor<1000x256xf32>) -> tensor<1000x256xf32>
      kernel(%t_in: !pallas.ref<1000x256xf32, any>, %t_hbm: !pallas.ref<1000x256xf32, any>, %rows: !pallas.ref<8x256xf32, vmem>, %narrow: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>, %flag: !pallas.ref<i32, vmem>) {
    %r = arith.constant 3 : i32
    // expected-error@+1 {{a row DMA signals a rank-0 i32 `semaphore` ref}}
    pallas.dma_write_start %rows[0], %t_hbm[%r], %flag : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, vmem>
    // expected-error@+1 {{rows of !pallas.ref<8x128xf32, vmem> do not fit rows of !pallas.ref<1000x256xf32, any>: same trailing dims and type needed}}
    pallas.dma_write_start %narrow[0], %t_hbm[%r], %sem : !pallas.ref<8x128xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{row 8 is outside !pallas.ref<8x256xf32, vmem>}}
    pallas.dma_write_wait %rows[8], %t_hbm[%r], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
    // expected-error@+1 {{a row DMA copies rows: !pallas.ref<1000x256xf32, any> needs a dim after its 2 leading indices, and the VMEM buffer !pallas.ref<8x256xf32, vmem> a rank >= 1}}
    pallas.dma_write_start %rows[0], %t_hbm at [%r, %r] [%r], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<1000x256xf32>
}

// -----

func.func @forward(%t: !pallas.ref<1000x256xf32, any>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>, %r: i32) {
  // expected-error@+1 {{'pallas.dma_write_start' expects ancestor op 'pallas.call'}}
  pallas.dma_write_start %rows[0], %t[%r], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
  func.return
}

// -----

// A row copy within VMEM moves rows of 32-bit data between VMEM refs: a table left in
// HBM needs a DMA, and a packed 16-bit row is no whole sublane.
func.func @forward(%t: tensor<100x128xf32>, %u: tensor<100x128xbf16>) -> tensor<8x128xf32> {
  %o = pallas.call @k(%t, %u) grid [1]
      in [#pallas.block_spec<any>, #pallas.block_spec<[100, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x128xf32, vmem>, !pallas.ref<8x128xbf16, vmem>, !pallas.ref<8x64xf32, vmem>]
      : (tensor<100x128xf32>, tensor<100x128xbf16>) -> tensor<8x128xf32>
      kernel(%t_ref: !pallas.ref<100x128xf32, any>, %u_ref: !pallas.ref<100x128xbf16, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>, %rows: !pallas.ref<8x128xf32, vmem>, %half: !pallas.ref<8x128xbf16, vmem>, %narrow: !pallas.ref<8x64xf32, vmem>) {
    %r = arith.constant 3 : i32
    // expected-error@+1 {{pallas.copy_row copies between `vmem` refs}}
    pallas.copy_row %t_ref[%r], %rows[0] : !pallas.ref<100x128xf32, any>, !pallas.ref<8x128xf32, vmem>
    // expected-error@+1 {{pallas.copy_row copies rows of 32-bit data, not bf16}}
    pallas.copy_row %u_ref[%r], %half[0] : !pallas.ref<100x128xbf16, vmem>, !pallas.ref<8x128xbf16, vmem>
    // expected-error@+1 {{rows of !pallas.ref<8x128xf32, vmem> do not fit rows of !pallas.ref<8x64xf32, vmem>: same trailing dims and type needed}}
    pallas.copy_row %rows[%r], %narrow[0] : !pallas.ref<8x128xf32, vmem>, !pallas.ref<8x64xf32, vmem>
    // expected-error@+1 {{row 8 is outside !pallas.ref<8x128xf32, vmem>}}
    pallas.copy_row %o_ref[%r], %rows[8] : !pallas.ref<8x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<8x128xf32>
}

// -----

// A loop's bounds: 0 <= lower < upper.
func.func @forward(%t: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x256xf32>) -> tensor<8x256xf32>
      kernel(%t_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    // expected-error@+1 {{a loop runs from 0 <= lower < upper, not 4 to 4}}
    pallas.loop %r = 4 to 4 {
    }
  }
  func.return %o : tensor<8x256xf32>
}

// -----

// A loop's body takes its index, an i32, and only that (generic form).
func.func @forward(%t: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %o = pallas.call @k(%t) grid [1]
      in [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x256xf32>) -> tensor<8x256xf32>
      kernel(%t_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    // expected-error@+1 {{a loop's body takes its i32 index, and only that}}
    "pallas.loop"() <{lower = 0 : i64, upper = 8 : i64}> ({
    ^bb0(%r: index):
    }) : () -> ()
  }
  func.return %o : tensor<8x256xf32>
}

// -----

func.func @forward() {
  // expected-error@+1 {{'pallas.loop' expects ancestor op 'pallas.call'}}
  pallas.loop %r = 0 to 8 {
  }
  func.return
}

// -----

// A dynamic VMEM row is a loop's index, and the rows it reaches are inside the buffer:
// `1 + %r` for %r up to 7 reaches row 8 of an 8-row buffer.
func.func @forward(%idx: tensor<64xi32>, %t: tensor<1000x256xf32>) -> tensor<64x256xf32> {
  %out = pallas.call @gather(%idx, %t) grid [8] prefetch 1
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    pallas.loop %r = 0 to 8 {
      %row = pallas.read %idx_ref[%r] : !pallas.ref<64xi32, smem> -> i32
      // expected-error@+1 {{row 8 is outside !pallas.ref<8x256xf32, vmem>}}
      pallas.dma_start %t_ref[%row], %rows[1 + %r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    }
  }
  func.return %out : tensor<64x256xf32>
}

// -----

func.func @forward(%idx: tensor<64xi32>, %t: tensor<1000x256xf32>) -> tensor<64x256xf32> {
  %out = pallas.call @gather(%idx, %t) grid [8] prefetch 1
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %m1 = arith.constant -1 : i32
    %row = pallas.read %idx_ref[%m1] : !pallas.ref<64xi32, smem> -> i32
    // expected-error@+1 {{a dynamic VMEM row is the index of a pallas.loop}}
    pallas.dma_write_start %rows[0 + %m1], %t_ref[%row], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
  }
  func.return %out : tensor<64x256xf32>
}
