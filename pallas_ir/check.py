"""Check a `pallas` module end to end: emit it, run it in JAX's interpret mode on random
inputs, and compare with the numpy reference interpreter; then ask the TPU compiler.

This is the main job of `python -m pallas_ir FILE` and what the end-to-end tests call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from pallas_ir.dialects.common import find_forward
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.emit_python import emit_python
from pallas_ir.reference.inputs import forward_constraints, random_arguments
from pallas_ir.reference.pallas import run_forward
from pallas_ir.tpu_check import ArraySpec, exec_source


def forward_of(module: ModuleOp) -> func.FuncOp:
    forward = find_forward(module)
    if forward is not None:
        return forward
    raise ValueError("the module has no func.func @forward")


def example_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Random arguments for @forward: floats in [-2, 2]; integers that feed block
    indices, row DMAs or XLA accesses stay within the arrays they index, integers that
    divide are nonzero, other integers in [-8, 8)."""
    forward = forward_of(module)
    constraints = forward_constraints(module, forward)
    return random_arguments(forward, constraints, np.random.default_rng(seed))


def arg_specs(module: ModuleOp) -> list[ArraySpec]:
    specs: list[ArraySpec] = []
    for arg in forward_of(module).body.block.args:
        t = arg.type
        assert isinstance(t, TensorType)
        specs.append(ArraySpec(tuple(t.get_shape()), numpy_dtype(t.element_type).name))
    return specs


@dataclass
class InterpretCheck:
    source: str
    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    got: list[np.ndarray]
    max_abs_error: list[float] = field(default_factory=list[float])


def check_interpret(
    module: ModuleOp, seed: int = 0, rtol: float | None = None, atol: float | None = None
) -> InterpretCheck:
    """Run the emitted module with interpret=True and assert it matches the reference."""
    import jax.numpy as jnp

    source = emit_python(module)
    forward = exec_source(source)["forward"]
    inputs = example_inputs(module, seed)
    expected = run_forward(module, *inputs)
    out = forward(*[jnp.asarray(a) for a in inputs], interpret=True)
    got = [np.asarray(o) for o in (out if isinstance(out, tuple | list) else (out,))]
    errors: list[float] = []
    for e, g in zip(expected, got, strict=True):
        low_precision = e.dtype.itemsize < 4 and e.dtype.kind == "f"
        r = rtol if rtol is not None else (2e-2 if low_precision else 1e-5)
        a = atol if atol is not None else (2e-2 if low_precision else 1e-6)
        np.testing.assert_allclose(
            g.astype(np.float64), e.astype(np.float64), rtol=r, atol=a
        )
        errors.append(
            float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)), initial=0))
        )
    return InterpretCheck(source, inputs, expected, got, errors)
