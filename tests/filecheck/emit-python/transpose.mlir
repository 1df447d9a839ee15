// RUN: pallas-opt %S/../../../examples/pallas/transpose.mlir -t python | filecheck %s
// RUN: pallas-opt %S/../../../examples/pallas/transpose.mlir -t python > %t.py
// RUN: python -m py_compile %t.py

// examples/pallas/transpose.mlir as Python: input block (i, j) is written to output
// block (j, i), and the kernel transposes the tile (`.T` for a 2-D [1, 0] permutation).

// CHECK-NOT:   import numpy
// CHECK-NOT:   import torch

// CHECK-LABEL: def transpose_kernel(x_ref, o_ref):
// CHECK-NEXT:      t = x_ref[...]
// CHECK-NEXT:      tt = t.T
// CHECK-NEXT:      o_ref[...] = tt

// CHECK-LABEL: @functools.partial(jax.jit, static_argnames=("interpret",))
// CHECK-NEXT:  def transpose_call(x0, interpret=False):
// CHECK-NEXT:      return pl.pallas_call(
// CHECK-NEXT:          transpose_kernel,
// CHECK-NEXT:          out_shape=jax.ShapeDtypeStruct((384, 256), jnp.float32),
// CHECK-NEXT:          grid=(2, 3),
// CHECK-NEXT:          in_specs=[
// CHECK-NEXT:              pl.BlockSpec((128, 128), lambda i, j: (i, j)),
// CHECK-NEXT:          ],
// CHECK-NEXT:          out_specs=pl.BlockSpec((128, 128), lambda i, j: (j, i)),
// CHECK-NEXT:          compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
// CHECK-NEXT:          cost_estimate=pl.CostEstimate(flops=0, transcendentals=0, bytes_accessed=786432),
// CHECK-NEXT:          name="transpose",
// CHECK-NEXT:          interpret=interpret,
// CHECK-NEXT:      )(x0)

// CHECK-LABEL: def forward(x, interpret=False):
// CHECK-NEXT:      out = transpose_call(x, interpret=interpret)
// CHECK-NEXT:      return out
// CHECK-NOT:   import
