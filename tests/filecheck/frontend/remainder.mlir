// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:remainder --shapes 'f32[8,128]' 'f32[8,128]' | filecheck %s
// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:remainder --shapes 'f32[8,128]' 'f32[8,128]' | pallas-opt -p 'split-kernel-loops,stride-to-reshape,canonicalize-permutation,indirect-load-to-scalar-prefetch,tile-policy{chip=v5e},xla-outline{chip=v5e},tile{chip=v5e},tl-to-pallas{chip=v5e},pallas-legalize-mosaic' -t python | filecheck %s --check-prefix=PY

// torch.remainder of floats as torch's CPU kernel: the exact truncated remainder (C's
// fmod, `arith.remf`), plus the divisor where it is non-zero and its sign differs from
// the divisor's. Not x - floor(x / y) * y, which is off at multiples (2.0999999 % 0.7).

// CHECK:      %[[X:\w+]] = ta.load
// CHECK-NEXT: %[[Y:\w+]] = ta.load
// CHECK-NEXT: %[[R:\w+]] = arith.remf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[ZERO:\w+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RNEG:\w+]] = arith.cmpf olt, %[[R]], %[[ZERO]] : f32
// CHECK-NEXT: %[[YNEG:\w+]] = arith.cmpf olt, %[[Y]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DIFFER:\w+]] = arith.xori %[[RNEG]], %[[YNEG]] : i1
// CHECK-NEXT: %[[NONZERO:\w+]] = arith.cmpf une, %[[R]], %[[ZERO]] : f32
// CHECK-NEXT: %[[FIX:\w+]] = arith.andi %[[NONZERO]], %[[DIFFER]] : i1
// CHECK-NEXT: %[[SHIFTED:\w+]] = arith.addf %[[R]], %[[Y]] : f32
// CHECK-NEXT: %[[OUT:\w+]] = arith.select %[[FIX]], %[[SHIFTED]], %[[R]] : f32
// CHECK-NEXT: ta.store %[[OUT]]

// In the emitted kernel, arith.remf is jax.lax.rem (which Mosaic lowers).
// PY:      [[R:\w+]] = jax.lax.rem([[X:\w+]], [[Y:\w+]])
// PY:      jnp.where({{\w+}}, {{\w+}}, [[R]])
