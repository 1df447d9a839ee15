// RUN: pallas-opt %S/../../../examples/pallas/add.mlir -t python | filecheck %s
// RUN: pallas-opt %S/../../../examples/pallas/add.mlir -t python > %t.py
// RUN: python -m py_compile %t.py

// examples/pallas/add.mlir as Python: a kernel that adds two (128, 512) blocks, a
// jitted pallas_call over a (4, 2) grid whose three block specs all take block (i, j),
// and the forward that calls it.
// The module imports only jax and Pallas.

// CHECK-NOT:   import numpy
// CHECK-NOT:   import torch
// CHECK:       import functools
// CHECK-EMPTY:
// CHECK-NEXT:  import jax
// CHECK-NEXT:  import jax.numpy as jnp
// CHECK-NEXT:  from jax.experimental import pallas as pl
// CHECK-NEXT:  from jax.experimental.pallas import tpu as pltpu
// CHECK-NOT:   import

// CHECK-LABEL: def add_kernel(x_ref, y_ref, o_ref):
// CHECK-NEXT:      a = x_ref[...]
// CHECK-NEXT:      b = y_ref[...]
// CHECK-NEXT:      c = a + b
// CHECK-NEXT:      o_ref[...] = c

// CHECK-LABEL: @functools.partial(jax.jit, static_argnames=("interpret",))
// CHECK-NEXT:  def add_call(x0, x1, interpret=False):
// CHECK-NEXT:      return pl.pallas_call(
// CHECK-NEXT:          add_kernel,
// CHECK-NEXT:          out_shape=jax.ShapeDtypeStruct((512, 1024), jnp.float32),
// CHECK-NEXT:          grid=(4, 2),
// CHECK-NEXT:          in_specs=[
// CHECK-NEXT:              pl.BlockSpec((128, 512), lambda i, j: (i, j)),
// CHECK-NEXT:              pl.BlockSpec((128, 512), lambda i, j: (i, j)),
// CHECK-NEXT:          ],
// CHECK-NEXT:          out_specs=pl.BlockSpec((128, 512), lambda i, j: (i, j)),
// CHECK-NEXT:          compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
// CHECK-NEXT:          cost_estimate=pl.CostEstimate(flops=524288, transcendentals=0, bytes_accessed=6291456),
// CHECK-NEXT:          name="add",
// CHECK-NEXT:          interpret=interpret,
// CHECK-NEXT:      )(x0, x1)

// CHECK-LABEL: def forward(x, y, interpret=False):
// CHECK-NEXT:      out = add_call(x, y, interpret=interpret)
// CHECK-NEXT:      return out
// CHECK-NOT:   import
