// RUN: pallas-opt %S/../../../examples/pallas/embedding.mlir -t python | filecheck %s
// RUN: pallas-opt %S/../../../examples/pallas/embedding.mlir -t python > %t.py
// RUN: python -m py_compile %t.py

// examples/pallas/embedding.mlir as Python: the indices are a scalar-prefetch operand,
// so the call takes a PrefetchScalarGridSpec with num_scalar_prefetch=1, and every
// index map receives the prefetched ref after the grid index. The table's block index
// is idx_ref[i]; the squeezed dim is None; constant block indices are int32.

// CHECK-NOT:   import numpy
// CHECK-NOT:   import torch

// CHECK-LABEL: def embedding_kernel(idx_ref, t_ref, o_ref):
// CHECK-NEXT:      row = t_ref[...]
// CHECK-NEXT:      o_ref[...] = row

// CHECK-LABEL: @functools.partial(jax.jit, static_argnames=("interpret",))
// CHECK-NEXT:  def embedding_call(x0, x1, interpret=False):
// CHECK-NEXT:      return pl.pallas_call(
// CHECK-NEXT:          embedding_kernel,
// CHECK-NEXT:          out_shape=jax.ShapeDtypeStruct((64, 1, 256), jnp.float32),
// CHECK-NEXT:          grid_spec=pltpu.PrefetchScalarGridSpec(
// CHECK-NEXT:              num_scalar_prefetch=1,
// CHECK-NEXT:              grid=(64,),
// CHECK-NEXT:              in_specs=[
// CHECK-NEXT:                  pl.BlockSpec((None, 1, 256), lambda i, idx_ref: (idx_ref[i], jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT:              ],
// CHECK-NEXT:              out_specs=pl.BlockSpec((None, 1, 256), lambda i, idx_ref: (i, jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT:          ),
// CHECK-NEXT:          compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
// CHECK-NEXT:          cost_estimate=pl.CostEstimate(flops=0, transcendentals=0, bytes_accessed=131328),
// CHECK-NEXT:          name="embedding",
// CHECK-NEXT:          interpret=interpret,
// CHECK-NEXT:      )(x0, x1)

// CHECK-LABEL: def forward(idx, table, interpret=False):
// CHECK-NEXT:      out = embedding_call(idx, table, interpret=interpret)
// CHECK-NEXT:      return out
// CHECK-NOT:   import
