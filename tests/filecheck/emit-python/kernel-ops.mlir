// RUN: pallas-opt %s -t python | filecheck %s
// RUN: pallas-opt %s -t python > %t.py
// RUN: python -m py_compile %t.py

// The Python spelling of each kernel op and call clause: SMEM scalar reads, program_id,
// int / `:` / pl.ds indexers (with stride), broadcast, reductions (keepdims, argmax as
// int32), transposes, arith/math on tiles, splat constants, squeezed (None) block dims,
// prefetch-bound index maps, SMEM and ANY specs, scratch shapes, aliases, the VMEM
// limit, two calls in one forward and calls with two outputs.
func.func @forward(%idx: tensor<8xi32>, %x: tensor<64x1x256xf32>, %w: tensor<16x128xf32>, %tab: tensor<8x128xi32>, %h: tensor<1024x128xf32>, %acc: tensor<64x256xf32>, %u: tensor<2048xf32>, %y: tensor<4x8x128xf32>) -> (tensor<64x256xf32>, tensor<8x64x256xf32>, tensor<2048xf32>, tensor<8x128x4xf32>) {
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
    %scale = pallas.load %tab_ref[0, 3] : !pallas.ref<8x128xi32, smem> -> tensor<i32>
    pallas.store %scale, %s_scratch[1] : tensor<i32>, !pallas.ref<4xi32, smem>
    %xr = pallas.load %x_ref[...] : !pallas.ref<1x128xf32, vmem> -> tensor<1x128xf32>
    %xb = pallas.broadcast %xr : tensor<1x128xf32> to tensor<8x128xf32>
    %even = pallas.load %w_ref[ds(0, 8, stride = 2), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
    %low = pallas.load %w_ref[ds(8, 8), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
    %row = pallas.load %w_ref[3, ds(0, 64)] : !pallas.ref<16x128xf32, vmem> -> tensor<64xf32>
    %a = pallas.load %acc_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
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
    pallas.store %n, %o1_ref[:, :] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    pallas.store %row, %o1_ref[0, ds(64, 64)] : tensor<64xf32>, !pallas.ref<8x128xf32, vmem>
  }
  %a, %b = pallas.call @misc(%u, %y) grid [2]
      in [#pallas.block_spec<[1024], (d0) -> (d0)>, #pallas.block_spec<[4, 8, 128], (d0) -> (0, 0, 0)>]
      out [#pallas.block_spec<[1024], (d0) -> (d0)>, #pallas.block_spec<[8, 128, 4], (d0) -> (0, 0, 0)>]
      semantics [arbitrary]
      : (tensor<2048xf32>, tensor<4x8x128xf32>) -> (tensor<2048xf32>, tensor<8x128x4xf32>)
      kernel(%u_ref: !pallas.ref<1024xf32, vmem>, %y_ref: !pallas.ref<4x8x128xf32, vmem>, %a_ref: !pallas.ref<1024xf32, vmem>, %b_ref: !pallas.ref<8x128x4xf32, vmem>) {
    %v = pallas.load %u_ref[...] : !pallas.ref<1024xf32, vmem> -> tensor<1024xf32>
    %zero = arith.constant dense<0.000000e+00> : tensor<1024xf32>
    %relu = arith.maximumf %v, %zero : tensor<1024xf32>
    %th = math.tanh %relu : tensor<1024xf32>
    %mx = arith.minimumf %th, %v : tensor<1024xf32>
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
  func.return %o0, %o1, %a, %b : tensor<64x256xf32>, tensor<8x64x256xf32>, tensor<2048xf32>, tensor<8x128x4xf32>
}

// CHECK-NOT:   import numpy
// CHECK-NOT:   import torch

// Kernel arguments: the prefetch ref, one ref per input and output, then the scratch refs.
// CHECK-LABEL: def fused_kernel(idx_ref, x_ref, w_ref, tab_ref, h_ref, acc_ref, o0_ref, o1_ref, t_scratch, s_scratch):
// CHECK-NEXT:      i = pl.program_id(0)
// CHECK-NEXT:      k = pl.program_id(1)
// CHECK-NEXT:      scale = tab_ref[0, 3]
// CHECK-NEXT:      s_scratch[1] = scale
// CHECK-NEXT:      xr = x_ref[...]
// CHECK-NEXT:      xb = jnp.broadcast_to(xr, (8, 128))
// CHECK-NEXT:      even = w_ref[pl.ds(0, 8, stride=2), :]
// CHECK-NEXT:      low = w_ref[pl.ds(8, 8), :]
// CHECK-NEXT:      row = w_ref[3, pl.ds(0, 64)]
// CHECK-NEXT:      a = acc_ref[...]
// CHECK-NEXT:      two = jnp.full((8, 128), 2.0, jnp.float32)
// CHECK-NEXT:      p = xb * even
// CHECK-NEXT:      q = p + a
// CHECK-NEXT:      q2 = q - low
// CHECK-NEXT:      q3 = q2 / two
// CHECK-NEXT:      r = jax.lax.rsqrt(q3)
// CHECK-NEXT:      e = jnp.exp(r)
// CHECK-NEXT:      m = jnp.max(e, axis=(1,), keepdims=True)
// CHECK-NEXT:      s = jnp.sum(e, axis=(0, 1), keepdims=True)
// CHECK-NEXT:      am = jnp.argmax(e, axis=1, keepdims=True).astype(jnp.int32)
// CHECK-NEXT:      mb = jnp.broadcast_to(m, (8, 128))
// CHECK-NEXT:      n = e / mb
// CHECK-NEXT:      t = n.T
// CHECK-NEXT:      t_scratch[...] = t
// CHECK-NEXT:      o0_ref[...] = q
// CHECK-NEXT:      o1_ref[:, :] = n
// CHECK-NEXT:      o1_ref[0, pl.ds(64, 64)] = row

// CHECK:       @functools.partial(jax.jit, static_argnames=("interpret",))
// CHECK-NEXT:  def fused_call(x0, x1, x2, x3, x4, x5, interpret=False):
// CHECK-NEXT:      return pl.pallas_call(
// CHECK-NEXT:          fused_kernel,
// CHECK-NEXT:          out_shape=(
// CHECK-NEXT:              jax.ShapeDtypeStruct((64, 256), jnp.float32),
// CHECK-NEXT:              jax.ShapeDtypeStruct((8, 64, 256), jnp.float32),
// CHECK-NEXT:          ),
// CHECK-NEXT:          grid_spec=pltpu.PrefetchScalarGridSpec(
// CHECK-NEXT:              num_scalar_prefetch=1,
// CHECK-NEXT:              grid=(8, 2),
// CHECK-NEXT:              in_specs=[
// CHECK-NEXT:                  pl.BlockSpec((None, 1, 128), lambda i, j, idx_ref: (idx_ref[i], jnp.int32(0), j)),
// CHECK-NEXT:                  pl.BlockSpec((16, 128), lambda i, j, idx_ref: (jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT:                  pl.BlockSpec((8, 128), lambda i, j, idx_ref: (jnp.int32(0), jnp.int32(0)), memory_space=pltpu.SMEM),
// CHECK-NEXT:                  pl.BlockSpec(memory_space=pl.ANY),
// CHECK-NEXT:                  pl.BlockSpec((8, 128), lambda i, j, idx_ref: (i, j)),
// CHECK-NEXT:              ],
// CHECK-NEXT:              out_specs=[
// CHECK-NEXT:                  pl.BlockSpec((8, 128), lambda i, j, idx_ref: (i, j)),
// CHECK-NEXT:                  pl.BlockSpec((None, 8, 128), lambda i, j, idx_ref: (i, jnp.int32(0), j)),
// CHECK-NEXT:              ],
// CHECK-NEXT:              scratch_shapes=[pltpu.VMEM((128, 8), jnp.float32), pltpu.SMEM((4,), jnp.int32)],
// CHECK-NEXT:          ),
// CHECK-NEXT:          input_output_aliases={5: 0},
// CHECK-NEXT:          compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary"), vmem_limit_bytes=33554432),
// CHECK-NEXT:          cost_estimate=pl.CostEstimate(flops=4096, transcendentals=1024, bytes_accessed=1048576),
// CHECK-NEXT:          name="fused",
// CHECK-NEXT:          interpret=interpret,
// CHECK-NEXT:      )(x0, x1, x2, x3, x4, x5)

// CHECK-LABEL: def misc_kernel(u_ref, y_ref, a_ref, b_ref):
// CHECK-NEXT:      v = u_ref[...]
// CHECK-NEXT:      zero = jnp.full((1024,), 0.0, jnp.float32)
// CHECK-NEXT:      relu = jnp.maximum(v, zero)
// CHECK-NEXT:      th = jnp.tanh(relu)
// CHECK-NEXT:      mx = jnp.minimum(th, v)
// CHECK-NEXT:      a_ref[...] = mx
// CHECK-NEXT:      yv = y_ref[...]
// CHECK-NEXT:      pr = jnp.prod(yv, axis=(0,), keepdims=True)
// CHECK-NEXT:      mn = jnp.min(yv, axis=(0, 2), keepdims=True)
// CHECK-NEXT:      an = jnp.argmin(yv, axis=2, keepdims=True).astype(jnp.int32)
// CHECK-NEXT:      mnb = jnp.broadcast_to(mn, (4, 8, 128))
// CHECK-NEXT:      d = yv - mnb
// CHECK-NEXT:      dt = jnp.transpose(d, (1, 2, 0))
// CHECK-NEXT:      b_ref[...] = dt

// CHECK:       @functools.partial(jax.jit, static_argnames=("interpret",))
// CHECK-NEXT:  def misc_call(x0, x1, interpret=False):
// CHECK-NEXT:      return pl.pallas_call(
// CHECK-NEXT:          misc_kernel,
// CHECK-NEXT:          out_shape=(
// CHECK-NEXT:              jax.ShapeDtypeStruct((2048,), jnp.float32),
// CHECK-NEXT:              jax.ShapeDtypeStruct((8, 128, 4), jnp.float32),
// CHECK-NEXT:          ),
// CHECK-NEXT:          grid=(2,),
// CHECK-NEXT:          in_specs=[
// CHECK-NEXT:              pl.BlockSpec((1024,), lambda i: (i,)),
// CHECK-NEXT:              pl.BlockSpec((4, 8, 128), lambda i: (jnp.int32(0), jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT:          ],
// CHECK-NEXT:          out_specs=[
// CHECK-NEXT:              pl.BlockSpec((1024,), lambda i: (i,)),
// CHECK-NEXT:              pl.BlockSpec((8, 128, 4), lambda i: (jnp.int32(0), jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT:          ],
// CHECK-NEXT:          compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
// CHECK-NEXT:          name="misc",
// CHECK-NEXT:          interpret=interpret,
// CHECK-NEXT:      )(x0, x1)

// CHECK-LABEL: def forward(idx, x, w, tab, h, acc, u, y, interpret=False):
// CHECK-NEXT:      o0, o1 = fused_call(idx, x, w, tab, h, acc, interpret=interpret)
// CHECK-NEXT:      a, b = misc_call(u, y, interpret=interpret)
// CHECK-NEXT:      return o0, o1, a, b
// CHECK-NOT:   import
