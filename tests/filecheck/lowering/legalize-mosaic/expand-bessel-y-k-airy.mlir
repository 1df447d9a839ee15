// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s --check-prefix=GONE
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic lowers no Bessel function of the second kind (Y0, Y1, K0, K1, and K0, K1
// scaled) nor Airy's Ai: each becomes torch's float32 algorithm (special_functions.py:
// Cephes' rational and Chebyshev approximations, Y on J's expansion, K on I's, Ai's
// power series unrolled to its 12 masked steps), its values named after the op's result.
// --verify-semantics runs @forward before and after on random data: the expansions
// compute what the reference's scipy functions do.

func.func @forward(%in0: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>) {
  %out1 = pallas.call @k2(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out1_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_y0 = special.bessel_y0 %v1 : tensor<8x128xf32>
    pallas.store %bessel_y0, %out1_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out3 = pallas.call @k4(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out3_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_y1 = special.bessel_y1 %v1 : tensor<8x128xf32>
    pallas.store %bessel_y1, %out3_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out5 = pallas.call @k6(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out5_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_k0 = special.bessel_k0 %v1 : tensor<8x128xf32>
    pallas.store %bessel_k0, %out5_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out7 = pallas.call @k8(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out7_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_k1 = special.bessel_k1 %v1 : tensor<8x128xf32>
    pallas.store %bessel_k1, %out7_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out9 = pallas.call @k10(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out9_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_k0e = special.bessel_k0e %v1 : tensor<8x128xf32>
    pallas.store %bessel_k0e, %out9_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out11 = pallas.call @k12(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out11_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %bessel_k1e = special.bessel_k1e %v1 : tensor<8x128xf32>
    pallas.store %bessel_k1e, %out11_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %out13 = pallas.call @k14(%in0) grid [1, 1]
    in [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    out [#pallas.block_spec<[8, 128], (d0, d1) -> (0, 0)>]
    semantics [parallel, parallel]
    attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 1024, bytes_accessed = 8192>}
    : (tensor<8x128xf32>) -> tensor<8x128xf32>
    kernel(%in0_8x128_ref: !pallas.ref<8x128xf32, vmem>, %out13_8x128_out: !pallas.ref<8x128xf32, vmem>) {
    %v1 = pallas.load %in0_8x128_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    %airy_ai = special.airy_ai %v1 : tensor<8x128xf32>
    pallas.store %airy_ai, %out13_8x128_out[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %out1, %out3, %out5, %out7, %out9, %out11, %out13 : tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>
}

// GONE-NOT: special.

// Y0 near 0: the rational function plus 2/pi log(x) J0(x); Y0 is one select of the
// near and far forms, stored.
// CHECK:      %bessel_y0_log = math.log %bessel_y0_pick : tensor<8x128xf32>
// CHECK:      %bessel_y0 = pallas.select %bessel_y0_is, %bessel_y0_pick_7, %bessel_y0_quot_12
// CHECK-NEXT: pallas.store %bessel_y0, %out1_8x128_out[...]
// CHECK:      %bessel_y1 = pallas.select
// CHECK-NEXT: pallas.store %bessel_y1, %out3_8x128_out[...]
// CHECK:      %bessel_k0_exp = math.exp %bessel_k0_pick : tensor<8x128xf32>
// CHECK:      %bessel_k0 = pallas.select
// CHECK-NEXT: pallas.store %bessel_k0, %out5_8x128_out[...]
// CHECK:      %bessel_k1 = pallas.select
// CHECK-NEXT: pallas.store %bessel_k1, %out7_8x128_out[...]
// CHECK:      %bessel_k0e = pallas.select
// CHECK-NEXT: pallas.store %bessel_k0e, %out9_8x128_out[...]
// CHECK:      %bessel_k1e = pallas.select
// CHECK-NEXT: pallas.store %bessel_k1e, %out11_8x128_out[...]
// Ai below -2.09: sin and cos of zeta + pi/4; NaN at +-inf, the last select.
// CHECK:      %airy_ai_sin = math.sin
// CHECK:      %airy_ai = pallas.select %airy_ai_is_15, %airy_ai_c_101, %airy_ai_pick_49
// CHECK-NEXT: pallas.store %airy_ai, %out13_8x128_out[...]
