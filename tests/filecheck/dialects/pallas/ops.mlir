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
// CHECK-GENERIC:           %am = "pallas.reduce"(%e) <{kind = #pallas<reduction_kind argmax>, dims = array<i64: 1>}> : (tensor<8x128xf32>) -> tensor<8x1xi32>
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
// CHECK-GENERIC:           %an = "pallas.reduce"(%yv) <{kind = #pallas<reduction_kind argmin>, dims = array<i64: 2>}> : (tensor<4x8x128xf32>) -> tensor<4x8x1xi32>
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
// CHECK-GENERIC:           %neg = "pallas.compare"(%w, %z) <{predicate = #pallas<compare_predicate slt>}> : (tensor<32x256xi32>, tensor<32x256xi32>) -> tensor<32x256xi1>
// CHECK-GENERIC:           %m = "pallas.select"(%neg, %abs, %w) : (tensor<32x256xi1>, tensor<32x256xi32>, tensor<32x256xi32>) -> tensor<32x256xi32>

// -----

// The row-DMA gather of examples/pallas/embedding_dma.mlir, with host-side reshapes:
// the (V, 1, D) table is merged to (V, D) before the call and the (64, 256) result split
// into (8, 8, 256) after it. The table stays in HBM (`any`); each grid step reads 8
// indices from SMEM with pallas.read, starts 8 row DMAs into a VMEM scratch buffer that
// signal one scratch DMA semaphore (a rank-0 `semaphore` ref), waits for them, and
// writes the rows as one output block.
func.func @forward(%idx: tensor<64xi32>, %table3: tensor<1000x1x256xf32>) -> tensor<8x8x256xf32> {
  %table = pallas.reshape %table3 : tensor<1000x1x256xf32> to tensor<1000x256xf32>
  %out = pallas.call @gather(%idx, %table) grid [8] prefetch 1
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %g = pallas.program_id 0 : i32
    %eight = arith.constant 8 : i32
    %base = arith.muli %g, %eight : i32
    %c0 = arith.constant 0 : i32
    %i0 = arith.addi %base, %c0 : i32
    %row0 = pallas.read %idx_ref[%i0] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row0], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c1 = arith.constant 1 : i32
    %i1 = arith.addi %base, %c1 : i32
    %row1 = pallas.read %idx_ref[%i1] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row1], %rows[1], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c2 = arith.constant 2 : i32
    %i2 = arith.addi %base, %c2 : i32
    %row2 = pallas.read %idx_ref[%i2] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row2], %rows[2], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c3 = arith.constant 3 : i32
    %i3 = arith.addi %base, %c3 : i32
    %row3 = pallas.read %idx_ref[%i3] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row3], %rows[3], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c4 = arith.constant 4 : i32
    %i4 = arith.addi %base, %c4 : i32
    %row4 = pallas.read %idx_ref[%i4] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row4], %rows[4], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c5 = arith.constant 5 : i32
    %i5 = arith.addi %base, %c5 : i32
    %row5 = pallas.read %idx_ref[%i5] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row5], %rows[5], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c6 = arith.constant 6 : i32
    %i6 = arith.addi %base, %c6 : i32
    %row6 = pallas.read %idx_ref[%i6] : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row6], %rows[6], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %c7 = arith.constant 7 : i32
    %i7 = arith.addi %base, %c7 : i32
    %row7 = pallas.read %idx_ref[%i7] {note = "last"} : !pallas.ref<64xi32, smem> -> i32
    pallas.dma_start %t_ref[%row7], %rows[7], %sem {note = "last"} : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row0], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row1], %rows[1], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row2], %rows[2], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row3], %rows[3], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row4], %rows[4], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row5], %rows[5], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row6], %rows[6], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%row7], %rows[7], %sem {note = "last"} : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    %v = pallas.load %rows[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    pallas.store %v, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
  }
  %out3 = pallas.reshape %out {note = "free: leading dims only"} : tensor<64x256xf32> to tensor<8x8x256xf32>
  func.return %out3 : tensor<8x8x256xf32>
}

// CHECK-LABEL: func.func @forward(%idx: tensor<64xi32>, %table3: tensor<1000x1x256xf32>) -> tensor<8x8x256xf32> {
// CHECK-NEXT:    %table = pallas.reshape %table3 : tensor<1000x1x256xf32> to tensor<1000x256xf32>
// CHECK-NEXT:    %out = pallas.call @gather(%idx, %table) grid [8] prefetch 1
// CHECK-NEXT:      in [#pallas.block_spec<any>]
// CHECK-NEXT:      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
// CHECK-NEXT:      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>]
// CHECK-NEXT:      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
// CHECK-NEXT:      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
// CHECK-NEXT:      %g = pallas.program_id 0 : i32
// CHECK-NEXT:      %eight = arith.constant 8 : i32
// CHECK-NEXT:      %base = arith.muli %g, %eight : i32
// CHECK-NEXT:      %c0 = arith.constant 0 : i32
// CHECK-NEXT:      %i0 = arith.addi %base, %c0 : i32
// CHECK-NEXT:      %row0 = pallas.read %idx_ref[%i0] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row0], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c1 = arith.constant 1 : i32
// CHECK-NEXT:      %i1 = arith.addi %base, %c1 : i32
// CHECK-NEXT:      %row1 = pallas.read %idx_ref[%i1] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row1], %rows[1], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c2 = arith.constant 2 : i32
// CHECK-NEXT:      %i2 = arith.addi %base, %c2 : i32
// CHECK-NEXT:      %row2 = pallas.read %idx_ref[%i2] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row2], %rows[2], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c3 = arith.constant 3 : i32
// CHECK-NEXT:      %i3 = arith.addi %base, %c3 : i32
// CHECK-NEXT:      %row3 = pallas.read %idx_ref[%i3] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row3], %rows[3], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c4 = arith.constant 4 : i32
// CHECK-NEXT:      %i4 = arith.addi %base, %c4 : i32
// CHECK-NEXT:      %row4 = pallas.read %idx_ref[%i4] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row4], %rows[4], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c5 = arith.constant 5 : i32
// CHECK-NEXT:      %i5 = arith.addi %base, %c5 : i32
// CHECK-NEXT:      %row5 = pallas.read %idx_ref[%i5] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row5], %rows[5], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c6 = arith.constant 6 : i32
// CHECK-NEXT:      %i6 = arith.addi %base, %c6 : i32
// CHECK-NEXT:      %row6 = pallas.read %idx_ref[%i6] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row6], %rows[6], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %c7 = arith.constant 7 : i32
// CHECK-NEXT:      %i7 = arith.addi %base, %c7 : i32
// CHECK-NEXT:      %row7 = pallas.read %idx_ref[%i7] {note = "last"} : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_start %t_ref[%row7], %rows[7], %sem {note = "last"} : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row0], %rows[0], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row1], %rows[1], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row2], %rows[2], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row3], %rows[3], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row4], %rows[4], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row5], %rows[5], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row6], %rows[6], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_wait %t_ref[%row7], %rows[7], %sem {note = "last"} : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      %v = pallas.load %rows[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
// CHECK-NEXT:      pallas.store %v, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
// CHECK-NEXT:    }
// CHECK-NEXT:    %out3 = pallas.reshape %out {note = "free: leading dims only"} : tensor<64x256xf32> to tensor<8x8x256xf32>
// CHECK-NEXT:    func.return %out3 : tensor<8x8x256xf32>
// CHECK-NEXT:  }

// The generic form: the scratch semaphore is an ordinary scratch ref; a DMA's operands
// are (src, src row, dst, sem) with the destination row a property.
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "forward", function_type = (tensor<64xi32>, tensor<1000x1x256xf32>) -> tensor<8x8x256xf32>}> ({
// CHECK-GENERIC:         %table = "pallas.reshape"(%table3) : (tensor<1000x1x256xf32>) -> tensor<1000x256xf32>
// CHECK-GENERIC-NEXT:    %out = "pallas.call"(%idx, %table) <{kernel_name = "gather", grid = array<i64: 8>, in_specs = [#pallas.block_spec<any>],
// CHECK-GENERIC-SAME:      num_scalar_prefetch = 1 : i64,
// CHECK-GENERIC-SAME:      scratch_shapes = [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>], input_output_aliases = array<i64>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>):
// CHECK-GENERIC:           %row0 = "pallas.read"(%idx_ref, %i0) : (!pallas.ref<64xi32, smem>, i32) -> i32
// CHECK-GENERIC-NEXT:      "pallas.dma_start"(%t_ref, %row0, %rows, %sem) <{dst_row = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1>}> : (!pallas.ref<1000x256xf32, any>, i32, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>) -> ()
// CHECK-GENERIC:           %row7 = "pallas.read"(%idx_ref, %i7) {note = "last"} : (!pallas.ref<64xi32, smem>, i32) -> i32
// CHECK-GENERIC-NEXT:      "pallas.dma_start"(%t_ref, %row7, %rows, %sem) <{dst_row = 7 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1>}> {note = "last"} : (!pallas.ref<1000x256xf32, any>, i32, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>) -> ()
// CHECK-GENERIC-NEXT:      "pallas.dma_wait"(%t_ref, %row0, %rows, %sem) <{dst_row = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1>}> : (!pallas.ref<1000x256xf32, any>, i32, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>) -> ()
// CHECK-GENERIC:           "pallas.dma_wait"(%t_ref, %row7, %rows, %sem) <{dst_row = 7 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1>}> {note = "last"} : (!pallas.ref<1000x256xf32, any>, i32, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>) -> ()
// CHECK-GENERIC:         %out3 = "pallas.reshape"(%out) {note = "free: leading dims only"} : (tensor<64x256xf32>) -> tensor<8x8x256xf32>

// -----


// A bf16 matmul with the contraction over the last (arbitrary) grid dim: the output
// block stays in VMEM across k, is zeroed under pallas.when at k = 0 and accumulates
// pallas.dot's f32 products; a second call keeps a lane-wise running row maximum,
// reshaping each (8, 512) block into 128-lane groups and back in the kernel.
func.func @forward(%x: tensor<256x512xbf16>, %w: tensor<512x256xbf16>, %y: tensor<64x4096xf32>) -> (tensor<256x256xf32>, tensor<64x128xf32>) {
  %o = pallas.call @matmul(%x, %w) grid [2, 2, 4]
      in [#pallas.block_spec<[128, 128], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[128, 128], (d0, d1, d2) -> (d2, d1)>]
      out [#pallas.block_spec<[128, 128], (d0, d1, d2) -> (d0, d1)>]
      semantics [parallel, parallel, arbitrary]
      : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xf32>
      kernel(%x_ref: !pallas.ref<128x128xbf16, vmem>, %w_ref: !pallas.ref<128x128xbf16, vmem>, %o_ref: !pallas.ref<128x128xf32, vmem>) {
    %k = pallas.program_id 2 : i32
    %zero = arith.constant 0 : i32
    %first = arith.cmpi eq, %k, %zero : i32
    pallas.when %first {
      %z = arith.constant dense<0.0> : tensor<128x128xf32>
      pallas.store %z, %o_ref[...] : tensor<128x128xf32>, !pallas.ref<128x128xf32, vmem>
    }
    %a = pallas.load %x_ref[...] : !pallas.ref<128x128xbf16, vmem> -> tensor<128x128xbf16>
    %b = pallas.load %w_ref[...] : !pallas.ref<128x128xbf16, vmem> -> tensor<128x128xbf16>
    %c = pallas.dot %a, %b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    %acc = pallas.load %o_ref[...] : !pallas.ref<128x128xf32, vmem> -> tensor<128x128xf32>
    %s = arith.addf %acc, %c : tensor<128x128xf32>
    pallas.store %s, %o_ref[...] : tensor<128x128xf32>, !pallas.ref<128x128xf32, vmem>
  }
  %m = pallas.call @lane_max(%y) grid [8, 8]
      in [#pallas.block_spec<[8, 512], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, 0)>]
      semantics [parallel, arbitrary]
      : (tensor<64x4096xf32>) -> tensor<64x128xf32>
      kernel(%y_ref: !pallas.ref<8x512xf32, vmem>, %m_ref: !pallas.ref<8x128xf32, vmem>) {
    %v = pallas.load %y_ref[...] : !pallas.ref<8x512xf32, vmem> -> tensor<8x512xf32>
    %g = pallas.reshape %v : tensor<8x512xf32> to tensor<8x4x128xf32>
    %r = pallas.reduce <max> %g [1] : tensor<8x4x128xf32> -> tensor<8x1x128xf32>
    %p = pallas.reshape %r : tensor<8x1x128xf32> to tensor<8x128xf32>
    %k = pallas.program_id 1 : i32
    %zero = arith.constant 0 : i32
    %first = arith.cmpi eq, %k, %zero : i32
    %later = arith.cmpi ne, %k, %zero : i32
    pallas.when %first attributes {note = "init"} {
      pallas.store %p, %m_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    }
    pallas.when %later {
      %old = pallas.load %m_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
      %new = arith.maximumf %old, %p : tensor<8x128xf32>
      pallas.store %new, %m_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    }
  }
  func.return %o, %m : tensor<256x256xf32>, tensor<64x128xf32>
}

// `dense<0.0>` comes back as `dense<0.000000e+00>`; `attributes {...}` on pallas.when
// stays in that spelling.
// CHECK-LABEL: func.func @forward(%x: tensor<256x512xbf16>, %w: tensor<512x256xbf16>, %y: tensor<64x4096xf32>) -> (tensor<256x256xf32>, tensor<64x128xf32>) {
// CHECK-NEXT:    %o = pallas.call @matmul(%x, %w) grid [2, 2, 4]
// CHECK-NEXT:      in [#pallas.block_spec<[128, 128], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[128, 128], (d0, d1, d2) -> (d2, d1)>]
// CHECK-NEXT:      out [#pallas.block_spec<[128, 128], (d0, d1, d2) -> (d0, d1)>]
// CHECK-NEXT:      semantics [parallel, parallel, arbitrary]
// CHECK-NEXT:      : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xf32>
// CHECK-NEXT:      kernel(%x_ref: !pallas.ref<128x128xbf16, vmem>, %w_ref: !pallas.ref<128x128xbf16, vmem>, %o_ref: !pallas.ref<128x128xf32, vmem>) {
// CHECK-NEXT:      %k = pallas.program_id 2 : i32
// CHECK-NEXT:      %zero = arith.constant 0 : i32
// CHECK-NEXT:      %first = arith.cmpi eq, %k, %zero : i32
// CHECK-NEXT:      pallas.when %first {
// CHECK-NEXT:        %z = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
// CHECK-NEXT:        pallas.store %z, %o_ref[...] : tensor<128x128xf32>, !pallas.ref<128x128xf32, vmem>
// CHECK-NEXT:      }
// CHECK-NEXT:      %a = pallas.load %x_ref[...] : !pallas.ref<128x128xbf16, vmem> -> tensor<128x128xbf16>
// CHECK-NEXT:      %b = pallas.load %w_ref[...] : !pallas.ref<128x128xbf16, vmem> -> tensor<128x128xbf16>
// CHECK-NEXT:      %c = pallas.dot %a, %b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
// CHECK-NEXT:      %acc = pallas.load %o_ref[...] : !pallas.ref<128x128xf32, vmem> -> tensor<128x128xf32>
// CHECK-NEXT:      %s = arith.addf %acc, %c : tensor<128x128xf32>
// CHECK-NEXT:      pallas.store %s, %o_ref[...] : tensor<128x128xf32>, !pallas.ref<128x128xf32, vmem>
// CHECK-NEXT:    }
// CHECK-NEXT:    %m = pallas.call @lane_max(%y) grid [8, 8]
// CHECK-NEXT:      in [#pallas.block_spec<[8, 512], (d0, d1) -> (d0, d1)>]
// CHECK-NEXT:      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, 0)>]
// CHECK-NEXT:      semantics [parallel, arbitrary]
// CHECK-NEXT:      : (tensor<64x4096xf32>) -> tensor<64x128xf32>
// CHECK-NEXT:      kernel(%y_ref: !pallas.ref<8x512xf32, vmem>, %m_ref: !pallas.ref<8x128xf32, vmem>) {
// CHECK-NEXT:      %v = pallas.load %y_ref[...] : !pallas.ref<8x512xf32, vmem> -> tensor<8x512xf32>
// CHECK-NEXT:      %g = pallas.reshape %v : tensor<8x512xf32> to tensor<8x4x128xf32>
// CHECK-NEXT:      %r = pallas.reduce <max> %g [1] : tensor<8x4x128xf32> -> tensor<8x1x128xf32>
// CHECK-NEXT:      %p = pallas.reshape %r : tensor<8x1x128xf32> to tensor<8x128xf32>
// CHECK-NEXT:      %k = pallas.program_id 1 : i32
// CHECK-NEXT:      %zero = arith.constant 0 : i32
// CHECK-NEXT:      %first = arith.cmpi eq, %k, %zero : i32
// CHECK-NEXT:      %later = arith.cmpi ne, %k, %zero : i32
// CHECK-NEXT:      pallas.when %first attributes {note = "init"} {
// CHECK-NEXT:        pallas.store %p, %m_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:      }
// CHECK-NEXT:      pallas.when %later {
// CHECK-NEXT:        %old = pallas.load %m_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
// CHECK-NEXT:        %new = arith.maximumf %old, %p : tensor<8x128xf32>
// CHECK-NEXT:        pallas.store %new, %m_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %o, %m : tensor<256x256xf32>, tensor<64x128xf32>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "forward", function_type = (tensor<256x512xbf16>, tensor<512x256xbf16>, tensor<64x4096xf32>) -> (tensor<256x256xf32>, tensor<64x128xf32>)}> ({
// CHECK-GENERIC:         %o = "pallas.call"(%x, %w) <{kernel_name = "matmul", grid = array<i64: 2, 2, 4>,
// CHECK-GENERIC:           %first = "arith.cmpi"(%k, %zero) <{predicate = 0 : i64}> : (i32, i32) -> i1
// CHECK-GENERIC-NEXT:      "pallas.when"(%first) ({
// CHECK-GENERIC-NEXT:        %z = "arith.constant"() <{value = dense<0.000000e+00> : tensor<128x128xf32>}> : () -> tensor<128x128xf32>
// CHECK-GENERIC-NEXT:        "pallas.store"(%z, %o_ref) <{indexers = []}> : (tensor<128x128xf32>, !pallas.ref<128x128xf32, vmem>) -> ()
// CHECK-GENERIC-NEXT:      }) : (i1) -> ()
// CHECK-GENERIC:           %c = "pallas.dot"(%a, %b) : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xf32>
// CHECK-GENERIC:         %m = "pallas.call"(%y) <{kernel_name = "lane_max", grid = array<i64: 8, 8>,
// CHECK-GENERIC:           %g = "pallas.reshape"(%v) : (tensor<8x512xf32>) -> tensor<8x4x128xf32>
// CHECK-GENERIC-NEXT:      %r = "pallas.reduce"(%g) <{kind = #pallas<reduction_kind max>, dims = array<i64: 1>}> : (tensor<8x4x128xf32>) -> tensor<8x1x128xf32>
// CHECK-GENERIC-NEXT:      %p = "pallas.reshape"(%r) : (tensor<8x1x128xf32>) -> tensor<8x128xf32>
// CHECK-GENERIC:           "pallas.when"(%first) ({
// CHECK-GENERIC-NEXT:        "pallas.store"(%p, %m_ref) <{indexers = []}> : (tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>) -> ()
// CHECK-GENERIC-NEXT:      }) {note = "init"} : (i1) -> ()
// CHECK-GENERIC-NEXT:      "pallas.when"(%later) ({
// CHECK-GENERIC-NEXT:        %old = "pallas.load"(%m_ref) <{indexers = []}> : (!pallas.ref<8x128xf32, vmem>) -> tensor<8x128xf32>

// -----


// Integer operands accumulate in i32 (an int8 matmul).
func.func @forward(%x: tensor<64x256xi8>, %w: tensor<256x128xi8>) -> tensor<64x128xi32> {
  %o = pallas.call @matmul_i8(%x, %w) grid [2]
      in [#pallas.block_spec<[32, 256], (d0) -> (d0, 0)>, #pallas.block_spec<[256, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[32, 128], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xi8>, tensor<256x128xi8>) -> tensor<64x128xi32>
      kernel(%x_ref: !pallas.ref<32x256xi8, vmem>, %w_ref: !pallas.ref<256x128xi8, vmem>, %o_ref: !pallas.ref<32x128xi32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<32x256xi8, vmem> -> tensor<32x256xi8>
    %b = pallas.load %w_ref[...] : !pallas.ref<256x128xi8, vmem> -> tensor<256x128xi8>
    %c = pallas.dot %a, %b {note = "int8 MXU"} : tensor<32x256xi8>, tensor<256x128xi8> -> tensor<32x128xi32>
    pallas.store %c, %o_ref[...] : tensor<32x128xi32>, !pallas.ref<32x128xi32, vmem>
  }
  func.return %o : tensor<64x128xi32>
}

// CHECK-LABEL: func.func @forward(%x: tensor<64x256xi8>, %w: tensor<256x128xi8>) -> tensor<64x128xi32> {
// CHECK-NEXT:    %o = pallas.call @matmul_i8(%x, %w) grid [2]
// CHECK-NEXT:      in [#pallas.block_spec<[32, 256], (d0) -> (d0, 0)>, #pallas.block_spec<[256, 128], (d0) -> (0, 0)>]
// CHECK-NEXT:      out [#pallas.block_spec<[32, 128], (d0) -> (d0, 0)>]
// CHECK-NEXT:      semantics [parallel]
// CHECK-NEXT:      : (tensor<64x256xi8>, tensor<256x128xi8>) -> tensor<64x128xi32>
// CHECK-NEXT:      kernel(%x_ref: !pallas.ref<32x256xi8, vmem>, %w_ref: !pallas.ref<256x128xi8, vmem>, %o_ref: !pallas.ref<32x128xi32, vmem>) {
// CHECK-NEXT:      %a = pallas.load %x_ref[...] : !pallas.ref<32x256xi8, vmem> -> tensor<32x256xi8>
// CHECK-NEXT:      %b = pallas.load %w_ref[...] : !pallas.ref<256x128xi8, vmem> -> tensor<256x128xi8>
// CHECK-NEXT:      %c = pallas.dot %a, %b {note = "int8 MXU"} : tensor<32x256xi8>, tensor<256x128xi8> -> tensor<32x128xi32>
// CHECK-NEXT:      pallas.store %c, %o_ref[...] : tensor<32x128xi32>, !pallas.ref<32x128xi32, vmem>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %o : tensor<64x128xi32>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "forward", function_type = (tensor<64x256xi8>, tensor<256x128xi8>) -> tensor<64x128xi32>}> ({
// CHECK-GENERIC:           %c = "pallas.dot"(%a, %b) {note = "int8 MXU"} : (tensor<32x256xi8>, tensor<256x128xi8>) -> tensor<32x128xi32>

// -----

// pallas.iota: jax.lax.broadcasted_iota plus an i32 offset.
// CHECK-LABEL: func.func @forward
// CHECK:         %j = pallas.iota %off dim 1 : i32 -> tensor<8x128xi32>
// CHECK-GENERIC: "pallas.iota"(%off) <{dim = 1 : i64}> : (i32) -> tensor<8x128xi32>
func.func @forward(%x: tensor<64x256xi32>) -> tensor<64x256xi32> {
  %o = pallas.call @iota(%x) grid [8, 2]
      in [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xi32>) -> tensor<64x256xi32>
      kernel(%x_ref: !pallas.ref<8x128xi32, vmem>, %o_ref: !pallas.ref<8x128xi32, vmem>) {
    %g = pallas.program_id 1 : i32
    %c = arith.constant 128 : i32
    %off = arith.muli %g, %c : i32
    %j = pallas.iota %off dim 1 : i32 -> tensor<8x128xi32>
    pallas.store %j, %o_ref[...] : tensor<8x128xi32>, !pallas.ref<8x128xi32, vmem>
  }
  func.return %o : tensor<64x256xi32>
}

// -----

// pallas.xla_call: an xla.func (what tl-to-pallas makes of a kernel the tiler handed
// to XLA), called from @forward.
// CHECK-LABEL: xla.func @flip
// CHECK-SAME:      attributes {part = #xla<part kernel>}
// CHECK:         %o = pallas.xla_call @flip(%x) : (tensor<64xf32>) -> tensor<64xf32>
// CHECK-GENERIC: "pallas.xla_call"(%x) <{callee = @flip}> : (tensor<64xf32>) -> tensor<64xf32>
xla.func @flip(%x: tensor<64xf32>) -> tensor<64xf32> {
  %xb = xla.buffer %x : tensor<64xf32> to tensor<64xf32>
  %ob = xla.zeros : tensor<64xf32>
  %i = xla.iota 0 : tensor<64xindex>
  %at = xla.flat_index affine_map<(d0) -> (63 - d0)> (%i) [] in [64] : tensor<64xindex>
  %v = xla.take %xb[%at] : tensor<64xf32>, tensor<64xindex> -> tensor<64xf32>
  %to = xla.flat_index affine_map<(d0) -> (d0)> (%i) [] in [64] : tensor<64xindex>
  %ob_1 = xla.scatter %v, %ob[%to] : tensor<64xf32>, tensor<64xf32>, tensor<64xindex>
  xla.return %ob_1 : tensor<64xf32>
}
func.func @forward(%x: tensor<64xf32>) -> tensor<64xf32> {
  %o = pallas.xla_call @flip(%x) : (tensor<64xf32>) -> tensor<64xf32>
  func.return %o : tensor<64xf32>
}

// -----

// Row DMAs with a leading index: rows 0 and 2 of x[b] for x: f32[4, 16, 128], the
// strided read x[:, ::2, :] of one grid step.
// CHECK-LABEL: func.func @forward(%x: tensor<4x16x128xf32>)
// CHECK:         pallas.dma_start %x_hbm at [%b] [%r0], %rows[0], %sem : !pallas.ref<4x16x128xf32, any>, !pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK:         pallas.dma_wait %x_hbm at [%b] [%r2], %rows[1], %sem
// CHECK-GENERIC: "pallas.dma_start"(%x_hbm, %b, %r0, %rows, %sem) <{dst_row = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1>}>
func.func @forward(%x: tensor<4x16x128xf32>) -> tensor<4x2x128xf32> {
  %o = pallas.call @rows3d(%x) grid [4]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[1, 2, 128], (d0) -> (d0, 0, 0)>]
      semantics [parallel] scratch [!pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<4x16x128xf32>) -> tensor<4x2x128xf32>
      kernel(%x_hbm: !pallas.ref<4x16x128xf32, any>, %o_ref: !pallas.ref<1x2x128xf32, vmem>, %rows: !pallas.ref<2x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %b = pallas.program_id 0 : i32
    %r0 = arith.constant 0 : i32
    %r2 = arith.constant 2 : i32
    pallas.dma_start %x_hbm at [%b] [%r0], %rows[0], %sem : !pallas.ref<4x16x128xf32, any>, !pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_start %x_hbm at [%b] [%r2], %rows[1], %sem : !pallas.ref<4x16x128xf32, any>, !pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %x_hbm at [%b] [%r0], %rows[0], %sem : !pallas.ref<4x16x128xf32, any>, !pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %x_hbm at [%b] [%r2], %rows[1], %sem : !pallas.ref<4x16x128xf32, any>, !pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>
    %v = pallas.load %rows[...] : !pallas.ref<2x128xf32, vmem> -> tensor<2x128xf32>
    %w = pallas.reshape %v : tensor<2x128xf32> to tensor<1x2x128xf32>
    pallas.store %w, %o_ref[...] : tensor<1x2x128xf32>, !pallas.ref<1x2x128xf32, vmem>
  }
  func.return %o : tensor<4x2x128xf32>
}

// -----

// A copy of a sublane of packed bf16 rows: rows 6 and 7 of t (the pair holding row 7)
// land in slab 0 of a (2, 2, 256) buffer; `{rows = 2}` is the slab height. An
// element-indexed output spec writes the slab to out[1].
// CHECK-LABEL: func.func @forward(%t: tensor<1000x256xbf16>)
// CHECK:         out [#pallas.block_spec<[1, 2, 256], (d0) -> (1, 0, 0), element>]
// CHECK:         pallas.dma_start %t_ref[%r], %rows[0], %sem {rows = 2 : i64} : !pallas.ref<1000x256xbf16, any>, !pallas.ref<2x2x256xbf16, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:    pallas.dma_wait %t_ref[%r], %rows[0], %sem {rows = 2 : i64}
// CHECK-GENERIC: "pallas.dma_start"(%t_ref, %r, %rows, %sem) <{dst_row = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1>}> {rows = 2 : i64}
func.func @forward(%t: tensor<1000x256xbf16>) -> tensor<4x2x256xbf16> {
  %o = pallas.call @pairs(%t) grid [1]
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[1, 2, 256], (d0) -> (1, 0, 0), element>]
      semantics [arbitrary] scratch [!pallas.ref<2x2x256xbf16, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<1000x256xbf16>) -> tensor<4x2x256xbf16>
      kernel(%t_ref: !pallas.ref<1000x256xbf16, any>, %o_ref: !pallas.ref<1x2x256xbf16, vmem>, %rows: !pallas.ref<2x2x256xbf16, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %r = arith.constant 6 : i32
    pallas.dma_start %t_ref[%r], %rows[0], %sem {rows = 2 : i64} : !pallas.ref<1000x256xbf16, any>, !pallas.ref<2x2x256xbf16, vmem>, !pallas.ref<i32, semaphore>
    pallas.dma_wait %t_ref[%r], %rows[0], %sem {rows = 2 : i64} : !pallas.ref<1000x256xbf16, any>, !pallas.ref<2x2x256xbf16, vmem>, !pallas.ref<i32, semaphore>
    %v = pallas.load %rows[0, :, :] : !pallas.ref<2x2x256xbf16, vmem> -> tensor<2x256xbf16>
    %w = pallas.reshape %v : tensor<2x256xbf16> to tensor<1x2x256xbf16>
    pallas.store %w, %o_ref[...] : tensor<1x2x256xbf16>, !pallas.ref<1x2x256xbf16, vmem>
  }
  func.return %o : tensor<4x2x256xbf16>
}

// -----

// The KV-cache update that tl-to-pallas makes of a tl.scatter: the cache stays in HBM,
// passed in `any` and aliased to an `any` output (what no row reaches keeps its value).
// Each step stores its 2 new rows to a VMEM scratch and writes row r to
// cache[b, pos[2 s + r]] by DMA, waiting before the next row. %pos holds 3 positions,
// so row 1 is written only where 2 s + 1 < 3.
func.func @forward(%pos: tensor<3xi32>, %new: tensor<2x2x2x128xf32>, %cache: tensor<2x64x128xf32>) -> tensor<2x64x128xf32> {
  %out = pallas.call @kv(%pos, %new, %cache) grid [2, 2] prefetch 1
      in [#pallas.block_spec<[squeezed, squeezed, 2, 128], (d0, d1) -> (d0, d1, 0, 0)>, #pallas.block_spec<any>]
      out [#pallas.block_spec<any>]
      semantics [parallel, arbitrary] scratch [!pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [2 -> 0]
      : (tensor<3xi32>, tensor<2x2x2x128xf32>, tensor<2x64x128xf32>) -> tensor<2x64x128xf32>
      kernel(%pos_ref: !pallas.ref<3xi32, smem>, %new_ref: !pallas.ref<2x128xf32, vmem>, %cache_in: !pallas.ref<2x64x128xf32, any>, %cache_hbm: !pallas.ref<2x64x128xf32, any>, %rows: !pallas.ref<2x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %v = pallas.load %new_ref[...] : !pallas.ref<2x128xf32, vmem> -> tensor<2x128xf32>
    pallas.store %v, %rows[...] : tensor<2x128xf32>, !pallas.ref<2x128xf32, vmem>
    %b = pallas.program_id 0 : i32
    %s = pallas.program_id 1 : i32
    %two = arith.constant 2 : i32
    %m = arith.muli %s, %two : i32
    %row0 = pallas.read %pos_ref[%m] : !pallas.ref<3xi32, smem> -> i32
    pallas.dma_write_start %rows[0], %cache_hbm at [%b] [%row0], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
    pallas.dma_write_wait %rows[0], %cache_hbm at [%b] [%row0], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
    %one = arith.constant 1 : i32
    %m1 = arith.addi %m, %one : i32
    %three = arith.constant 3 : i32
    %inside = arith.cmpi slt, %m1, %three : i32
    pallas.when %inside {
      %row1 = pallas.read %pos_ref[%m1] : !pallas.ref<3xi32, smem> -> i32
      pallas.dma_write_start %rows[1], %cache_hbm at [%b] [%row1], %sem {note = "last"} : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
      pallas.dma_write_wait %rows[1], %cache_hbm at [%b] [%row1], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
    }
  }
  func.return %out : tensor<2x64x128xf32>
}

// -----

// Without leading indices: row 3 of a VMEM buffer to row %r of a 2-D array in HBM.
func.func @forward(%t: tensor<1000x256xf32>, %x: tensor<8x256xf32>, %r: tensor<1xi32>) -> tensor<1000x256xf32> {
  %o = pallas.call @put(%r, %x, %t) grid [1] prefetch 1
      in [#pallas.block_spec<[8, 256], (d0) -> (0, 0)>, #pallas.block_spec<any>]
      out [#pallas.block_spec<any>]
      semantics [arbitrary] scratch [!pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [2 -> 0]
      : (tensor<1xi32>, tensor<8x256xf32>, tensor<1000x256xf32>) -> tensor<1000x256xf32>
      kernel(%r_ref: !pallas.ref<1xi32, smem>, %x_ref: !pallas.ref<8x256xf32, vmem>, %t_in: !pallas.ref<1000x256xf32, any>, %t_hbm: !pallas.ref<1000x256xf32, any>, %rows: !pallas.ref<8x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    pallas.store %v, %rows[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
    %c0 = arith.constant 0 : i32
    %row = pallas.read %r_ref[%c0] : !pallas.ref<1xi32, smem> -> i32
    pallas.dma_write_start %rows[3], %t_hbm[%row], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
    pallas.dma_write_wait %rows[3], %t_hbm[%row], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
  }
  func.return %o : tensor<1000x256xf32>
}

// CHECK-LABEL: pallas.call @kv(%pos, %new, %cache) grid [2, 2] prefetch 1
// CHECK-NEXT:      in [#pallas.block_spec<[squeezed, squeezed, 2, 128], (d0, d1) -> (d0, d1, 0, 0)>, #pallas.block_spec<any>]
// CHECK-NEXT:      out [#pallas.block_spec<any>]
// CHECK-NEXT:      semantics [parallel, arbitrary] scratch [!pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [2 -> 0]
// CHECK:           %row0 = pallas.read %pos_ref[%m] : !pallas.ref<3xi32, smem> -> i32
// CHECK-NEXT:      pallas.dma_write_start %rows[0], %cache_hbm at [%b] [%row0], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_write_wait %rows[0], %cache_hbm at [%b] [%row0], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK:           pallas.when %inside {
// CHECK-NEXT:        %row1 = pallas.read %pos_ref[%m1] : !pallas.ref<3xi32, smem> -> i32
// CHECK-NEXT:        pallas.dma_write_start %rows[1], %cache_hbm at [%b] [%row1], %sem {note = "last"} : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:        pallas.dma_write_wait %rows[1], %cache_hbm at [%b] [%row1], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      }

// CHECK-LABEL: pallas.call @put
// CHECK:           pallas.dma_write_start %rows[3], %t_hbm[%row], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      pallas.dma_write_wait %rows[3], %t_hbm[%row], %sem : !pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>

// The generic form: operands src, dst, the leading indices, the row, the semaphore; the
// source row is a property.
// CHECK-GENERIC:   "pallas.dma_write_start"(%rows, %cache_hbm, %b, %row0, %sem) <{src_row = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1>}> : (!pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, i32, i32, !pallas.ref<i32, semaphore>) -> ()
// CHECK-GENERIC:   "pallas.dma_write_wait"(%rows, %cache_hbm, %b, %row1, %sem) <{src_row = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1>}> : (!pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, i32, i32, !pallas.ref<i32, semaphore>) -> ()
// CHECK-GENERIC:   "pallas.dma_write_start"(%rows, %t_hbm, %row, %sem) <{src_row = 3 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 0, 1, 1>}> : (!pallas.ref<8x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, i32, !pallas.ref<i32, semaphore>) -> ()

// -----

// Row copies within VMEM (`pallas.copy_row`): lookups in a table resident in VMEM, one
// row of 32-bit data at a dynamic index through registers, with no DMA or semaphore;
// with leading indices, a row of `tab_ref[h]`.
func.func @forward(%idx: tensor<16xi32>, %tab: tensor<4x100x128xf32>) -> tensor<8x128xf32> {
  %o = pallas.call @rows(%idx, %tab) grid [1] prefetch 1
      in [#pallas.block_spec<[4, 100, 128], (d0) -> (0, 0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      semantics [parallel] scratch [!pallas.ref<8x128xf32, vmem>]
      : (tensor<16xi32>, tensor<4x100x128xf32>) -> tensor<8x128xf32>
      kernel(%idx_ref: !pallas.ref<16xi32, smem>, %tab_ref: !pallas.ref<4x100x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>, %rows: !pallas.ref<8x128xf32, vmem>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %h = pallas.read %idx_ref[%c0] : !pallas.ref<16xi32, smem> -> i32
    %row = pallas.read %idx_ref[%c1] : !pallas.ref<16xi32, smem> -> i32
    pallas.copy_row %tab_ref at [%h] [%row], %rows[0] : !pallas.ref<4x100x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>
    pallas.copy_row %tab_ref at [%c1] [%row], %rows[7] {note = "last"} : !pallas.ref<4x100x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>
    %v = pallas.load %rows[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    pallas.store %v, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<8x128xf32>
}

// CHECK-LABEL: pallas.call @rows(%idx, %tab) grid [1] prefetch 1
// CHECK:           pallas.copy_row %tab_ref at [%h] [%row], %rows[0] : !pallas.ref<4x100x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>
// CHECK-NEXT:      pallas.copy_row %tab_ref at [%c1] [%row], %rows[7] {note = "last"} : !pallas.ref<4x100x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>

// The generic form: operands src, the leading indices, the row, dst and its dynamic
// row (none here); the destination row's static part is a property.
// CHECK-GENERIC:   "pallas.copy_row"(%tab_ref, %h, %row, %rows) <{dst_row = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (!pallas.ref<4x100x128xf32, vmem>, i32, i32, !pallas.ref<8x128xf32, vmem>) -> ()

// -----

// A loop over the rows (`pallas.loop`, `@pl.loop(0, 8)`): one row's copies at the loop's
// index, `%rows[0 + %r]` (a static part plus the index), instead of one copy per row:
// the row DMA gather's starts, then its waits, and a row write from the rows at
// `2 + %r`, the static part first.
func.func @forward(%idx: tensor<64xi32>, %t: tensor<1000x256xf32>) -> tensor<64x256xf32> {
  %out = pallas.call @gather(%idx, %t) grid [8] prefetch 1
      in [#pallas.block_spec<any>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [arbitrary] scratch [!pallas.ref<10x256xf32, vmem>, !pallas.ref<i32, semaphore>]
      : (tensor<64xi32>, tensor<1000x256xf32>) -> tensor<64x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1000x256xf32, any>, %o_ref: !pallas.ref<8x256xf32, vmem>, %rows: !pallas.ref<10x256xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %g = pallas.program_id 0 : i32
    %eight = arith.constant 8 : i32
    %base = arith.muli %g, %eight : i32
    pallas.loop %r = 0 to 8 {
      %at = arith.addi %base, %r : i32
      %row = pallas.read %idx_ref[%at] : !pallas.ref<64xi32, smem> -> i32
      pallas.dma_start %t_ref[%row], %rows[0 + %r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<10x256xf32, vmem>, !pallas.ref<i32, semaphore>
    }
    pallas.loop %r = 0 to 8 attributes {note = "waits"} {
      %at = arith.addi %base, %r : i32
      %row = pallas.read %idx_ref[%at] : !pallas.ref<64xi32, smem> -> i32
      pallas.dma_wait %t_ref[%row], %rows[0 + %r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<10x256xf32, vmem>, !pallas.ref<i32, semaphore>
    }
    pallas.loop %r = 6 to 8 {
      pallas.dma_write_start %rows[2 + %r], %t_ref[%r], %sem : !pallas.ref<10x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
      pallas.dma_write_wait %rows[2 + %r], %t_ref[%r], %sem : !pallas.ref<10x256xf32, vmem>, !pallas.ref<1000x256xf32, any>, !pallas.ref<i32, semaphore>
    }
    %v = pallas.load %rows[ds(0, 8), :] : !pallas.ref<10x256xf32, vmem> -> tensor<8x256xf32>
    pallas.store %v, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
  }
  func.return %out : tensor<64x256xf32>
}

// CHECK-LABEL: pallas.call @gather(%idx, %t) grid [8] prefetch 1
// CHECK:           pallas.loop %r = 0 to 8 {
// CHECK-NEXT:        %at = arith.addi %base, %r : i32
// CHECK-NEXT:        %row = pallas.read %idx_ref[%at] : !pallas.ref<64xi32, smem> -> i32
// CHECK-NEXT:        pallas.dma_start %t_ref[%row], %rows[0 + %r], %sem : !pallas.ref<1000x256xf32, any>, !pallas.ref<10x256xf32, vmem>, !pallas.ref<i32, semaphore>
// CHECK-NEXT:      }
// CHECK-NEXT:      pallas.loop %r_1 = 0 to 8 attributes {note = "waits"} {
// CHECK:             pallas.dma_wait %t_ref[%row_1], %rows[0 + %r_1], %sem
// CHECK-NEXT:      }
// CHECK-NEXT:      pallas.loop %r_2 = 6 to 8 {
// CHECK-NEXT:        pallas.dma_write_start %rows[2 + %r_2], %t_ref[%r_2], %sem
// CHECK-NEXT:        pallas.dma_write_wait %rows[2 + %r_2], %t_ref[%r_2], %sem
// CHECK-NEXT:      }

// The generic form: the bounds are properties, the index the body's block argument;
// the dynamic row is the row op's last ref operand but the semaphore.
// CHECK-GENERIC:   "pallas.loop"() <{lower = 0 : i64, upper = 8 : i64}> ({
// CHECK-GENERIC-NEXT: ^bb0(%r: i32):
// CHECK-GENERIC:     "pallas.dma_start"(%t_ref, %row, %rows, %r, %sem) <{dst_row = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1>}>
// CHECK-GENERIC:     "pallas.dma_write_start"(%rows, %r_2, %t_ref, %r_2, %sem) <{src_row = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1>}>

// -----

// torch.roll(x, 3, 1): each (8, 256) block rotated in the kernel (`pltpu.roll`).
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @roll(%x) grid [8]
      in [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<8x256xf32, vmem>, %o_ref: !pallas.ref<8x256xf32, vmem>) {
    %t = pallas.load %x_ref[...] : !pallas.ref<8x256xf32, vmem> -> tensor<8x256xf32>
    %r = pallas.roll %t by 3 along 1 : tensor<8x256xf32>
    pallas.store %r, %o_ref[...] : tensor<8x256xf32>, !pallas.ref<8x256xf32, vmem>
  }
  func.return %o : tensor<64x256xf32>
}

// CHECK-LABEL: pallas.call @roll
// CHECK:         %r = pallas.roll %t by 3 along 1 : tensor<8x256xf32>
// CHECK-GENERIC: %r = "pallas.roll"(%t) <{shift = 3 : i64, dim = 1 : i64}> : (tensor<8x256xf32>) -> tensor<8x256xf32>
