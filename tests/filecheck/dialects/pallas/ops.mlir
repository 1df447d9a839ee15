// RUN: PALLAS_ROUNDTRIP
// RUN: PALLAS_GENERIC_ROUNDTRIP
// RUN: pallas-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC

// Every pallas op and attribute in realistic calls. The printer puts each `in`/`out`
// list on one line and `semantics`, `scratch` and `aliases` on one line; the CHECK
// lines follow that layout (CHECK-SAME continues a line) but state the input's content.

// The elementwise add of examples/pallas/add.mlir: whole-ref loads and stores.
func.func @forward(%x: tensor<512x1024xf32>, %y: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %out = pallas.call @add(%x, %y) grid [4, 2]
      in [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>,
          #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      attributes {cost_estimate = #pallas.cost_estimate<flops = 524288, transcendentals = 0, bytes_accessed = 6291456>}
      : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>
      kernel(%x_ref: !pallas.ref<128x512xf32, vmem>, %y_ref: !pallas.ref<128x512xf32, vmem>, %o_ref: !pallas.ref<128x512xf32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
    %b = pallas.load %y_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
    %c = arith.addf %a, %b : tensor<128x512xf32>
    pallas.store %c, %o_ref[...] : tensor<128x512xf32>, !pallas.ref<128x512xf32, vmem>
  }
  func.return %out : tensor<512x1024xf32>
}

// CHECK-LABEL: func.func @forward(%x: tensor<512x1024xf32>, %y: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
// CHECK-NEXT:    %out = pallas.call @add(%x, %y) grid [4, 2]
// CHECK-NEXT:      in [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>, #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
// CHECK-NEXT:      out [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
// CHECK-NEXT:      semantics [parallel, parallel]
// CHECK-NEXT:      attributes {cost_estimate = #pallas.cost_estimate<flops = 524288, transcendentals = 0, bytes_accessed = 6291456>}
// CHECK-NEXT:      : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>
// CHECK-NEXT:      kernel(%x_ref: !pallas.ref<128x512xf32, vmem>, %y_ref: !pallas.ref<128x512xf32, vmem>, %o_ref: !pallas.ref<128x512xf32, vmem>) {
// CHECK-NEXT:      %a = pallas.load %x_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
// CHECK-NEXT:      %b = pallas.load %y_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
// CHECK-NEXT:      %c = arith.addf %a, %b : tensor<128x512xf32>
// CHECK-NEXT:      pallas.store %c, %o_ref[...] : tensor<128x512xf32>, !pallas.ref<128x512xf32, vmem>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %out : tensor<512x1024xf32>
// CHECK-NEXT:  }

// The generic form keeps every clause in the call's properties; absent optional
// clauses are empty lists, and `[...]` is an empty indexer list.
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "forward", function_type = (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>}> ({
// CHECK-GENERIC:         %out = "pallas.call"(%x, %y) <{kernel_name = "add", grid = array<i64: 4, 2>,
// CHECK-GENERIC-SAME:      in_specs = [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>, #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>],
// CHECK-GENERIC-SAME:      out_specs = [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>],
// CHECK-GENERIC-SAME:      num_scalar_prefetch = 0 : i64,
// CHECK-GENERIC-SAME:      dimension_semantics = [#pallas<dimension_semantics parallel>, #pallas<dimension_semantics parallel>],
// CHECK-GENERIC-SAME:      scratch_shapes = [], input_output_aliases = array<i64>,
// CHECK-GENERIC-SAME:      cost_estimate = #pallas.cost_estimate<flops = 524288, transcendentals = 0, bytes_accessed = 6291456>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%x_ref: !pallas.ref<128x512xf32, vmem>, %y_ref: !pallas.ref<128x512xf32, vmem>, %o_ref: !pallas.ref<128x512xf32, vmem>):
// CHECK-GENERIC-NEXT:      %a = "pallas.load"(%x_ref) <{indexers = []}> : (!pallas.ref<128x512xf32, vmem>) -> tensor<128x512xf32>
// CHECK-GENERIC:           "pallas.store"(%c, %o_ref) <{indexers = []}> : (tensor<128x512xf32>, !pallas.ref<128x512xf32, vmem>) -> ()
// CHECK-GENERIC-NEXT:    }) : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>

// -----

// Every clause at once: one scalar-prefetch operand that chooses the rows of %x
// (a squeezed leading block dim), a whole block, an SMEM block, an `any` operand left
// in HBM, an input aliased to output 0, two results (one with a squeezed dim), VMEM
// and SMEM scratch, both dimension semantics, a cost estimate and a VMEM limit.
// The kernel reads scalars from SMEM, uses program_id, int and `ds` indexers (with
// and without stride), `:` slices, broadcast/reduce/transpose and arith/math on tiles.
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x1x256xf32>, %w: tensor<16x128xf32>, %tab: tensor<8x128xi32>, %h: tensor<1024x128xf32>, %acc: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<8x64x256xf32>) {
  %o0, %o1 = pallas.call @fused(%idx, %x, %w, %tab, %h, %acc) grid [8, 2] prefetch 1
      in [#pallas.block_spec<[squeezed, 1, 128], (d0, d1)[s0] -> (s0, 0, d1), s0 = prefetch0[(d0, d1) -> (d0)]>,
          #pallas.block_spec<[16, 128], (d0, d1) -> (0, 0)>,
          #pallas.block_spec<[8, 128], (d0, d1) -> (0, 0), smem>,
          #pallas.block_spec<any>,
          #pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>,
           #pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, 0, d1)>]
      semantics [parallel, arbitrary]
      scratch [!pallas.ref<128x8xf32, vmem>, !pallas.ref<4xi32, smem>]
      aliases [5 -> 0]
      attributes {cost_estimate = #pallas.cost_estimate<flops = 4096, transcendentals = 1024, bytes_accessed = 1048576>, vmem_limit_bytes = 33554432 : i64}
      : (tensor<8xi32>, tensor<64x1x256xf32>, tensor<16x128xf32>, tensor<8x128xi32>, tensor<1024x128xf32>, tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<8x64x256xf32>)
      kernel(%idx_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<1x128xf32, vmem>, %w_ref: !pallas.ref<16x128xf32, vmem>, %tab_ref: !pallas.ref<8x128xi32, smem>, %h_ref: !pallas.ref<1024x128xf32, any>, %acc_ref: !pallas.ref<8x128xf32, vmem>, %o0_ref: !pallas.ref<8x128xf32, vmem>, %o1_ref: !pallas.ref<8x128xf32, vmem>, %t_scratch: !pallas.ref<128x8xf32, vmem>, %s_scratch: !pallas.ref<4xi32, smem>) {
    %i = pallas.program_id 0 : i32
    %k = pallas.program_id 1 : i32
    %first = pallas.load %idx_ref[0] : !pallas.ref<8xi32, smem> -> tensor<i32>
    %scale = pallas.load %tab_ref[0, 3] : !pallas.ref<8x128xi32, smem> -> tensor<i32>
    pallas.store %scale, %s_scratch[1] : tensor<i32>, !pallas.ref<4xi32, smem>
    %xr = pallas.load %x_ref[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
    %xb = pallas.broadcast %xr : tensor<1x128xf32> to tensor<8x128xf32>
    %even = pallas.load %w_ref[ds(0, 8, stride = 2), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
    %low = pallas.load %w_ref[ds(8, 8), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
    %row = pallas.load %w_ref[3, ds(0, 64)] : !pallas.ref<16x128xf32, vmem> -> tensor<64xf32>
    %a = pallas.load %acc_ref[:, :] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %two = arith.constant dense<2.000000e+00> : tensor<8x128xf32>
    %p = arith.mulf %xb, %even : tensor<8x128xf32>
    %q = arith.addf %p, %a : tensor<8x128xf32>
    %q2 = arith.subf %q, %low : tensor<8x128xf32>
    %q3 = arith.divf %q2, %two : tensor<8x128xf32>
    %r = math.rsqrt %q3 : tensor<8x128xf32>
    %e = math.exp %r : tensor<8x128xf32>
    %m = pallas.reduce <max> %e [1] : tensor<8x128xf32> -> tensor<8x1xf32>
    %s = pallas.reduce <sum> %e [0, 1] : tensor<8x128xf32> -> tensor<1x1xf32>
    %am = pallas.reduce <argmax> %e [1] : tensor<8x128xf32> -> tensor<8x1xi32>
    %mb = pallas.broadcast %m : tensor<8x1xf32> to tensor<8x128xf32>
    %n = arith.divf %e, %mb : tensor<8x128xf32>
    %t = pallas.transpose %n [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
    pallas.store %t, %t_scratch[...] : tensor<128x8xf32>, !pallas.ref<128x8xf32, vmem>
    pallas.store %q, %o0_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    pallas.store %n, %o1_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    pallas.store %row, %o1_ref[0, ds(64, 64)] : tensor<64xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o0, %o1 : tensor<64x256xf32>, tensor<8x64x256xf32>
}

// CHECK-LABEL: func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x1x256xf32>, %w: tensor<16x128xf32>, %tab: tensor<8x128xi32>, %h: tensor<1024x128xf32>, %acc: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<8x64x256xf32>) {
// CHECK-NEXT:    %o0, %o1 = pallas.call @fused(%idx, %x, %w, %tab, %h, %acc) grid [8, 2] prefetch 1
// CHECK-NEXT:      in [#pallas.block_spec<[squeezed, 1, 128], (d0, d1)[s0] -> (s0, 0, d1), s0 = prefetch0[(d0, d1) -> (d0)]>,
// CHECK-SAME:          #pallas.block_spec<[16, 128], (d0, d1) -> (0, 0)>,
// CHECK-SAME:          #pallas.block_spec<[8, 128], (d0, d1) -> (0, 0), smem>,
// CHECK-SAME:          #pallas.block_spec<any>,
// CHECK-SAME:          #pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
// CHECK-NEXT:      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>,
// CHECK-SAME:           #pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, 0, d1)>]
// CHECK-NEXT:      semantics [parallel, arbitrary] scratch [!pallas.ref<128x8xf32, vmem>, !pallas.ref<4xi32, smem>] aliases [5 -> 0]
// CHECK-NEXT:      attributes {cost_estimate = #pallas.cost_estimate<flops = 4096, transcendentals = 1024, bytes_accessed = 1048576>, vmem_limit_bytes = 33554432 : i64}
// CHECK-NEXT:      : (tensor<8xi32>, tensor<64x1x256xf32>, tensor<16x128xf32>, tensor<8x128xi32>, tensor<1024x128xf32>, tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<8x64x256xf32>)
// CHECK-NEXT:      kernel(%idx_ref: !pallas.ref<8xi32, smem>, %x_ref: !pallas.ref<1x128xf32, vmem>, %w_ref: !pallas.ref<16x128xf32, vmem>, %tab_ref: !pallas.ref<8x128xi32, smem>, %h_ref: !pallas.ref<1024x128xf32, any>, %acc_ref: !pallas.ref<8x128xf32, vmem>, %o0_ref: !pallas.ref<8x128xf32, vmem>, %o1_ref: !pallas.ref<8x128xf32, vmem>, %t_scratch: !pallas.ref<128x8xf32, vmem>, %s_scratch: !pallas.ref<4xi32, smem>) {
// CHECK-NEXT:      %i = pallas.program_id 0 : i32
// CHECK-NEXT:      %k = pallas.program_id 1 : i32
// CHECK-NEXT:      %first = pallas.load %idx_ref[0] : !pallas.ref<8xi32, smem> -> tensor<i32>
// CHECK-NEXT:      %scale = pallas.load %tab_ref[0, 3] : !pallas.ref<8x128xi32, smem> -> tensor<i32>
// CHECK-NEXT:      pallas.store %scale, %s_scratch[1] : tensor<i32>, !pallas.ref<4xi32, smem>
// CHECK-NEXT:      %xr = pallas.load %x_ref[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
// CHECK-NEXT:      %xb = pallas.broadcast %xr : tensor<1x128xf32> to tensor<8x128xf32>
// CHECK-NEXT:      %even = pallas.load %w_ref[ds(0, 8, stride = 2), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
// CHECK-NEXT:      %low = pallas.load %w_ref[ds(8, 8), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
// CHECK-NEXT:      %row = pallas.load %w_ref[3, ds(0, 64)] : !pallas.ref<16x128xf32, vmem> -> tensor<64xf32>
// CHECK-NEXT:      %a = pallas.load %acc_ref[:, :] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
// CHECK-NEXT:      %two = arith.constant dense<2.000000e+00> : tensor<8x128xf32>
// CHECK-NEXT:      %p = arith.mulf %xb, %even : tensor<8x128xf32>
// CHECK-NEXT:      %q = arith.addf %p, %a : tensor<8x128xf32>
// CHECK-NEXT:      %q2 = arith.subf %q, %low : tensor<8x128xf32>
// CHECK-NEXT:      %q3 = arith.divf %q2, %two : tensor<8x128xf32>
// CHECK-NEXT:      %r = math.rsqrt %q3 : tensor<8x128xf32>
// CHECK-NEXT:      %e = math.exp %r : tensor<8x128xf32>
// CHECK-NEXT:      %m = pallas.reduce <max> %e [1] : tensor<8x128xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %s = pallas.reduce <sum> %e [0, 1] : tensor<8x128xf32> -> tensor<1x1xf32>
// CHECK-NEXT:      %am = pallas.reduce <argmax> %e [1] : tensor<8x128xf32> -> tensor<8x1xi32>
// CHECK-NEXT:      %mb = pallas.broadcast %m : tensor<8x1xf32> to tensor<8x128xf32>
// CHECK-NEXT:      %n = arith.divf %e, %mb : tensor<8x128xf32>
// CHECK-NEXT:      %t = pallas.transpose %n [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
// CHECK-NEXT:      pallas.store %t, %t_scratch[...] : tensor<128x8xf32>, !pallas.ref<128x8xf32, vmem>
// CHECK-NEXT:      pallas.store %q, %o0_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:      pallas.store %n, %o1_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:      pallas.store %row, %o1_ref[0, ds(64, 64)] : tensor<64xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %o0, %o1 : tensor<64x256xf32>, tensor<8x64x256xf32>
// CHECK-NEXT:  }

// The properties hold the specs (squeezed dims, prefetch bindings, memory spaces),
// the prefetch count, the scratch refs and the aliases as flat (input, output) pairs.
// Indexers are ints (`#builtin.int`) and `#pallas.ds<start, size, stride>`; `:` is the
// full slice ds(0, n, 1).
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "forward"
// CHECK-GENERIC:         %o0, %o1 = "pallas.call"(%idx, %x, %w, %tab, %h, %acc) <{kernel_name = "fused", grid = array<i64: 8, 2>,
// CHECK-GENERIC-SAME:      in_specs = [#pallas.block_spec<[squeezed, 1, 128], (d0, d1)[s0] -> (s0, 0, d1), s0 = prefetch0[(d0, d1) -> (d0)]>, #pallas.block_spec<[16, 128], (d0, d1) -> (0, 0)>, #pallas.block_spec<[8, 128], (d0, d1) -> (0, 0), smem>, #pallas.block_spec<any>, #pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>],
// CHECK-GENERIC-SAME:      out_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>, #pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, 0, d1)>],
// CHECK-GENERIC-SAME:      num_scalar_prefetch = 1 : i64,
// CHECK-GENERIC-SAME:      dimension_semantics = [#pallas<dimension_semantics parallel>, #pallas<dimension_semantics arbitrary>],
// CHECK-GENERIC-SAME:      scratch_shapes = [!pallas.ref<128x8xf32, vmem>, !pallas.ref<4xi32, smem>],
// CHECK-GENERIC-SAME:      input_output_aliases = array<i64: 5, 0>,
// CHECK-GENERIC-SAME:      cost_estimate = #pallas.cost_estimate<flops = 4096, transcendentals = 1024, bytes_accessed = 1048576>,
// CHECK-GENERIC-SAME:      vmem_limit_bytes = 33554432 : i64}> ({
// CHECK-GENERIC:           %i = "pallas.program_id"() <{axis = 0 : i64}> : () -> i32
// CHECK-GENERIC:           %scale = "pallas.load"(%tab_ref) <{indexers = [#builtin.int<0>, #builtin.int<3>]}> : (!pallas.ref<8x128xi32, smem>) -> tensor<i32>
// CHECK-GENERIC:           %xb = "pallas.broadcast"(%xr) : (tensor<1x128xf32>) -> tensor<8x128xf32>
// CHECK-GENERIC-NEXT:      %even = "pallas.load"(%w_ref) <{indexers = [#pallas.ds<0, 8, 2>, #pallas.ds<0, 128, 1>]}> : (!pallas.ref<16x128xf32, vmem>) -> tensor<8x128xf32>
// CHECK-GENERIC-NEXT:      %low = "pallas.load"(%w_ref) <{indexers = [#pallas.ds<8, 8, 1>, #pallas.ds<0, 128, 1>]}>
// CHECK-GENERIC-NEXT:      %row = "pallas.load"(%w_ref) <{indexers = [#builtin.int<3>, #pallas.ds<0, 64, 1>]}>
// CHECK-GENERIC:           %am = "pallas.reduce"(%e) <{kind = "argmax", dims = array<i64: 1>}> : (tensor<8x128xf32>) -> tensor<8x1xi32>
// CHECK-GENERIC:           %t = "pallas.transpose"(%n) <{permutation = array<i64: 1, 0>}> : (tensor<8x128xf32>) -> tensor<128x8xf32>
// CHECK-GENERIC:           "pallas.store"(%row, %o1_ref) <{indexers = [#builtin.int<0>, #pallas.ds<64, 64, 1>]}> : (tensor<64xf32>, !pallas.ref<8x128xf32, vmem>) -> ()

// -----

// Rank-1 and rank-3 blocks, the other reduction kinds, a rank-3 transpose, a
// size-1 broadcast over two dims, a splat constant and more arith/math ops, and a
// discardable attribute on the call next to the properties.
func.func @forward(%x: tensor<2048xf32>, %y: tensor<4x8x128xf32>) -> (tensor<2048xf32>, tensor<8x128x4xf32>) {
  %a, %b = pallas.call @misc(%x, %y) grid [2]
      in [#pallas.block_spec<[1024], (d0) -> (d0)>, #pallas.block_spec<[4, 8, 128], (d0) -> (0, 0, 0)>]
      out [#pallas.block_spec<[1024], (d0) -> (d0)>, #pallas.block_spec<[8, 128, 4], (d0) -> (0, 0, 0)>]
      semantics [arbitrary]
      attributes {note = "misc"}
      : (tensor<2048xf32>, tensor<4x8x128xf32>) -> (tensor<2048xf32>, tensor<8x128x4xf32>)
      kernel(%x_ref: !pallas.ref<1024xf32, vmem>, %y_ref: !pallas.ref<4x8x128xf32, vmem>, %a_ref: !pallas.ref<1024xf32, vmem>, %b_ref: !pallas.ref<8x128x4xf32, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<1024xf32, vmem> -> tensor<1024xf32>
    %zero = arith.constant dense<0.000000e+00> : tensor<1024xf32>
    %relu = arith.maximumf %v, %zero : tensor<1024xf32>
    %t = math.tanh %relu : tensor<1024xf32>
    %mx = arith.minimumf %t, %v : tensor<1024xf32>
    pallas.store %mx, %a_ref[...] : tensor<1024xf32>, !pallas.ref<1024xf32, vmem>
    %yv = pallas.load %y_ref[...] : !pallas.ref<4x8x128xf32, vmem> -> tensor<4x8x128xf32>
    %pr = pallas.reduce <prod> %yv [0] : tensor<4x8x128xf32> -> tensor<1x8x128xf32>
    %mn = pallas.reduce <min> %yv [0, 2] : tensor<4x8x128xf32> -> tensor<1x8x1xf32>
    %an = pallas.reduce <argmin> %yv [2] : tensor<4x8x128xf32> -> tensor<4x8x1xi32>
    %mnb = pallas.broadcast %mn : tensor<1x8x1xf32> to tensor<4x8x128xf32>
    %d = arith.subf %yv, %mnb : tensor<4x8x128xf32>
    %dt = pallas.transpose %d [1, 2, 0] : tensor<4x8x128xf32> -> tensor<8x128x4xf32>
    pallas.store %dt, %b_ref[...] : tensor<8x128x4xf32>, !pallas.ref<8x128x4xf32, vmem>
  }
  func.return %a, %b : tensor<2048xf32>, tensor<8x128x4xf32>
}

// CHECK-LABEL: func.func @forward(%x: tensor<2048xf32>, %y: tensor<4x8x128xf32>) -> (tensor<2048xf32>, tensor<8x128x4xf32>) {
// CHECK-NEXT:    %a, %b = pallas.call @misc(%x, %y) grid [2]
// CHECK-NEXT:      in [#pallas.block_spec<[1024], (d0) -> (d0)>, #pallas.block_spec<[4, 8, 128], (d0) -> (0, 0, 0)>]
// CHECK-NEXT:      out [#pallas.block_spec<[1024], (d0) -> (d0)>, #pallas.block_spec<[8, 128, 4], (d0) -> (0, 0, 0)>]
// CHECK-NEXT:      semantics [arbitrary]
// CHECK-NEXT:      attributes {note = "misc"}
// CHECK-NEXT:      : (tensor<2048xf32>, tensor<4x8x128xf32>) -> (tensor<2048xf32>, tensor<8x128x4xf32>)
// CHECK-NEXT:      kernel(%x_ref: !pallas.ref<1024xf32, vmem>, %y_ref: !pallas.ref<4x8x128xf32, vmem>, %a_ref: !pallas.ref<1024xf32, vmem>, %b_ref: !pallas.ref<8x128x4xf32, vmem>) {
// CHECK-NEXT:      %v = pallas.load %x_ref[...] : !pallas.ref<1024xf32, vmem> -> tensor<1024xf32>
// CHECK-NEXT:      %zero = arith.constant dense<0.000000e+00> : tensor<1024xf32>
// CHECK-NEXT:      %relu = arith.maximumf %v, %zero : tensor<1024xf32>
// CHECK-NEXT:      %t = math.tanh %relu : tensor<1024xf32>
// CHECK-NEXT:      %mx = arith.minimumf %t, %v : tensor<1024xf32>
// CHECK-NEXT:      pallas.store %mx, %a_ref[...] : tensor<1024xf32>, !pallas.ref<1024xf32, vmem>
// CHECK-NEXT:      %yv = pallas.load %y_ref[...] : !pallas.ref<4x8x128xf32, vmem> -> tensor<4x8x128xf32>
// CHECK-NEXT:      %pr = pallas.reduce <prod> %yv [0] : tensor<4x8x128xf32> -> tensor<1x8x128xf32>
// CHECK-NEXT:      %mn = pallas.reduce <min> %yv [0, 2] : tensor<4x8x128xf32> -> tensor<1x8x1xf32>
// CHECK-NEXT:      %an = pallas.reduce <argmin> %yv [2] : tensor<4x8x128xf32> -> tensor<4x8x1xi32>
// CHECK-NEXT:      %mnb = pallas.broadcast %mn : tensor<1x8x1xf32> to tensor<4x8x128xf32>
// CHECK-NEXT:      %d = arith.subf %yv, %mnb : tensor<4x8x128xf32>
// CHECK-NEXT:      %dt = pallas.transpose %d [1, 2, 0] : tensor<4x8x128xf32> -> tensor<8x128x4xf32>
// CHECK-NEXT:      pallas.store %dt, %b_ref[...] : tensor<8x128x4xf32>, !pallas.ref<8x128x4xf32, vmem>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %a, %b : tensor<2048xf32>, tensor<8x128x4xf32>
// CHECK-NEXT:  }

// A discardable attribute stays an attribute; the absent cost estimate and VMEM limit
// are absent from the properties.
// CHECK-GENERIC:         %a, %b = "pallas.call"(%x, %y) <{kernel_name = "misc", grid = array<i64: 2>,
// CHECK-GENERIC-SAME:      dimension_semantics = [#pallas<dimension_semantics arbitrary>], scratch_shapes = [], input_output_aliases = array<i64>}> ({
// CHECK-GENERIC:           %an = "pallas.reduce"(%yv) <{kind = "argmin", dims = array<i64: 2>}> : (tensor<4x8x128xf32>) -> tensor<4x8x1xi32>
// CHECK-GENERIC:           %dt = "pallas.transpose"(%d) <{permutation = array<i64: 1, 2, 0>}> : (tensor<4x8x128xf32>) -> tensor<8x128x4xf32>
// CHECK-GENERIC:         }) {note = "misc"} : (tensor<2048xf32>, tensor<4x8x128xf32>) -> (tensor<2048xf32>, tensor<8x128x4xf32>)

// -----

// Casts, comparisons and selects in a kernel: an i8 block widened to i32 (the TPU has
// no 8-bit arithmetic), compared, chosen and converted back to f32 and bf16.
func.func @forward(%x: tensor<64x256xi8>, %y: tensor<64x256xf32>) -> tensor<64x256xbf16> {
  %out = pallas.call @casts(%x, %y) grid [2]
      in [#pallas.block_spec<[32, 256], (d0) -> (d0, 0)>, #pallas.block_spec<[32, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[32, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xi8>, tensor<64x256xf32>) -> tensor<64x256xbf16>
      kernel(%x_ref: !pallas.ref<32x256xi8, vmem>, %y_ref: !pallas.ref<32x256xf32, vmem>, %o_ref: !pallas.ref<32x256xbf16, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<32x256xi8, vmem> -> tensor<32x256xi8>
    %b = pallas.load %y_ref[...] : !pallas.ref<32x256xf32, vmem> -> tensor<32x256xf32>
    %w = pallas.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
    %z = arith.constant dense<0> : tensor<32x256xi32>
    %neg = pallas.compare <slt> %w, %z : tensor<32x256xi32>
    %abs = arith.subi %z, %w : tensor<32x256xi32>
    %m = pallas.select %neg, %abs, %w : tensor<32x256xi1>, tensor<32x256xi32>
    %f = pallas.convert %m : tensor<32x256xi32> to tensor<32x256xf32>
    %gt = pallas.compare <ogt> %b, %f {note = "max"} : tensor<32x256xf32>
    %r = pallas.select %gt, %b, %f : tensor<32x256xi1>, tensor<32x256xf32>
    %h = pallas.convert %r : tensor<32x256xf32> to tensor<32x256xbf16>
    pallas.store %h, %o_ref[...] : tensor<32x256xbf16>, !pallas.ref<32x256xbf16, vmem>
  }
  func.return %out : tensor<64x256xbf16>
}

// CHECK-LABEL: pallas.call @casts(
// CHECK:           %w = pallas.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
// CHECK-NEXT:      %z = arith.constant dense<0> : tensor<32x256xi32>
// CHECK-NEXT:      %neg = pallas.compare <slt> %w, %z : tensor<32x256xi32>
// CHECK-NEXT:      %abs = arith.subi %z, %w : tensor<32x256xi32>
// CHECK-NEXT:      %m = pallas.select %neg, %abs, %w : tensor<32x256xi1>, tensor<32x256xi32>
// CHECK-NEXT:      %f = pallas.convert %m : tensor<32x256xi32> to tensor<32x256xf32>
// CHECK-NEXT:      %gt = pallas.compare <ogt> %b, %f {note = "max"} : tensor<32x256xf32>
// CHECK-NEXT:      %r = pallas.select %gt, %b, %f : tensor<32x256xi1>, tensor<32x256xf32>
// CHECK-NEXT:      %h = pallas.convert %r : tensor<32x256xf32> to tensor<32x256xbf16>

// CHECK-GENERIC:           %w = "pallas.convert"(%a) : (tensor<32x256xi8>) -> tensor<32x256xi32>
// CHECK-GENERIC:           %neg = "pallas.compare"(%w, %z) <{predicate = "slt"}> : (tensor<32x256xi32>, tensor<32x256xi32>) -> tensor<32x256xi1>
// CHECK-GENERIC:           %m = "pallas.select"(%neg, %abs, %w) : (tensor<32x256xi1>, tensor<32x256xi32>, tensor<32x256xi32>) -> tensor<32x256xi32>
