// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s --check-prefix=GONE
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic lowers no asinh, acosh, atanh, erfc, erfcx, lgamma, digamma, i0e, i1e, ndtri,
// bessel_j0, bessel_j1 or zeta: each becomes its float32 expansion
// (special_functions.py), with the values named after the op's result; nextafter (and
// erf_inv) Mosaic lowers, and they stay.
// --verify-semantics runs @forward before and after on random data: the expansions
// compute what the reference's scipy functions do.

func.func @forward(%in0: tensor<8x128xf32>, %in1: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>) {
  %out1 = pallas.call @k2(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out1_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %asinh = math.asinh %v1 : tensor<8x128xf32>
    pallas.store %asinh, %out1_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out3 = pallas.call @k4(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out3_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %acosh = math.acosh %v1 : tensor<8x128xf32>
    pallas.store %acosh, %out3_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out5 = pallas.call @k6(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out5_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %atanh = math.atanh %v1 : tensor<8x128xf32>
    pallas.store %atanh, %out5_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out7 = pallas.call @k8(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out7_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %erfc = special.erfc %v1 : tensor<8x128xf32>
    pallas.store %erfc, %out7_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out9 = pallas.call @k10(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out9_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %erfcx = special.erfcx %v1 : tensor<8x128xf32>
    pallas.store %erfcx, %out9_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out11 = pallas.call @k12(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out11_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %lgamma = special.lgamma %v1 : tensor<8x128xf32>
    pallas.store %lgamma, %out11_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out13 = pallas.call @k14(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out13_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %digamma = special.digamma %v1 : tensor<8x128xf32>
    pallas.store %digamma, %out13_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out15 = pallas.call @k16(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out15_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %i0e = special.i0e %v1 : tensor<8x128xf32>
    pallas.store %i0e, %out15_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out17 = pallas.call @k18(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out17_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %i1e = special.i1e %v1 : tensor<8x128xf32>
    pallas.store %i1e, %out17_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out19 = pallas.call @k20(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out19_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %ndtri = special.ndtri %v1 : tensor<8x128xf32>
    pallas.store %ndtri, %out19_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out21 = pallas.call @k22(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out21_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_j0 = special.bessel_j0 %v1 : tensor<8x128xf32>
    pallas.store %bessel_j0, %out21_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out23 = pallas.call @k24(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out23_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_j1 = special.bessel_j1 %v1 : tensor<8x128xf32>
    pallas.store %bessel_j1, %out23_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out25 = pallas.call @k26(%in0, %in1) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>, #pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 12288>}
    : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %in1_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out25_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %v2 = pallas.load %in1_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %zeta = special.zeta %v1, %v2 : tensor<8x128xf32>
    pallas.store %zeta, %out25_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out27 = pallas.call @k28(%in0, %in1) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>, #pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 12288>}
    : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %in1_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out27_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %v2 = pallas.load %in1_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %nextafter = special.nextafter %v1, %v2 : tensor<8x128xf32>
    pallas.store %nextafter, %out27_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %out1, %out3, %out5, %out7, %out9, %out11, %out13, %out15, %out17, %out19, %out21, %out23, %out25, %out27 : tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>
}

// CHECK:       %asinh_absf = math.absf %v1 : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_prod = arith.mulf %asinh_absf, %asinh_absf : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_c = arith.constant dense<1.000000e+00> : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_sum = arith.addf %asinh_prod, %asinh_c : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_sqrt = math.sqrt %asinh_sum : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_sum_1 = arith.addf %asinh_sqrt, %asinh_c : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_quot = arith.divf %asinh_prod, %asinh_sum_1 : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_sum_2 = arith.addf %asinh_absf, %asinh_quot : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_log1p = math.log1p %asinh_sum_2 : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_log = math.log %asinh_absf : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_c_1 = arith.constant dense<0.693147182> : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_sum_3 = arith.addf %asinh_log, %asinh_c_1 : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_c_2 = arith.constant dense<8.192000e+03> : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_is = pallas.compare <olt> %asinh_absf, %asinh_c_2 : tensor<8x128xf32>
// CHECK-NEXT:  %asinh_pick = pallas.select %asinh_is, %asinh_log1p, %asinh_sum_3 : tensor<8x128xi1>, tensor<8x128xf32>
// CHECK-NEXT:  %asinh = math.copysign %asinh_pick, %v1 : tensor<8x128xf32>
// CHECK-NEXT:  pallas.store %asinh, %out1_8x128_out[...]
// CHECK:       %nextafter = special.nextafter %v1, %v2 : tensor<8x128xf32>

// GONE-NOT:    math.asinh
// GONE-NOT:    math.acosh
// GONE-NOT:    math.atanh
// GONE-NOT:    special.erfc
// GONE-NOT:    special.lgamma
// GONE-NOT:    special.digamma
// GONE-NOT:    special.i0e
// GONE-NOT:    special.i1e
// GONE-NOT:    special.ndtri
// GONE-NOT:    special.bessel_j0
// GONE-NOT:    special.bessel_j1
// GONE-NOT:    special.zeta
