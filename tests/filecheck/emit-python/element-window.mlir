// RUN: pallas-opt %S/../../../examples/pallas/leading_slice.mlir -t python | filecheck %s
// RUN: pallas-opt %S/../../../examples/pallas/leading_slice.mlir -t python > %t.py
// RUN: python -m py_compile %t.py

// An element-indexed block spec: every block dim is `pl.Element(size)` and the index
// map returns element offsets (int32), so the window of x starts at row 1 of dim 1.

// CHECK:      in_specs=[
// CHECK-NEXT:     pl.BlockSpec((pl.Element(1), pl.Element(3), pl.Element(16), pl.Element(128)), lambda i: (i, jnp.int32(1), jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT: ],
// CHECK-NEXT: out_specs=pl.BlockSpec((1, 3, 16, 128), lambda i: (i, jnp.int32(0), jnp.int32(0), jnp.int32(0))),
