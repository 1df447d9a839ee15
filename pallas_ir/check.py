"""Check a `pallas` module end to end: emit it, run it in JAX's interpret mode on random
inputs, and compare with the numpy reference interpreter; then ask the TPU compiler.

This is the main job of `python -m pallas_ir FILE` and what the end-to-end tests call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import BlockArgument
from xdsl.ir.affine import AffineSymExpr

from pallas_ir.dialects import pallas
from pallas_ir.dialects.common import find_forward
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.emit_python import emit_python
from pallas_ir.reference.pallas import run_forward
from pallas_ir.reference.xla import index_limits
from pallas_ir.tpu_check import ArraySpec, exec_source


def forward_of(module: ModuleOp) -> func.FuncOp:
    forward = find_forward(module)
    if forward is not None:
        return forward
    raise ValueError("the module has no func.func @forward")


def _prefetch_bounds(module: ModuleOp) -> dict[int, int]:
    """For each forward argument used as scalar prefetch, the exclusive upper bound
    that keeps every block index it feeds inside its array."""
    forward = forward_of(module)
    bounds: dict[int, int] = {}

    def bound(call: pallas.CallOp | pallas.XlaCallOp, p: int, limit: int) -> None:
        arg = call.args[p]
        while isinstance(arg.owner, pallas.ConvertOp | pallas.ReshapeOp):
            arg = arg.owner.source  # e.g. int64 indices converted on the host
        if isinstance(arg, BlockArgument) and arg.block is forward.body.block:
            bounds[arg.index] = min(bounds.get(arg.index, limit), limit)

    for call in forward.walk():
        if isinstance(call, pallas.XlaCallOp) and (function := call.function()):
            # The xla reference's bounds for the function's index arguments.
            for p, limit in index_limits(function).items():
                bound(call, p, limit)
        if not isinstance(call, pallas.CallOp):
            continue
        operands = [*call.block_args, *call.outs]
        for value, spec in zip(operands, [*call.in_specs.data, *call.out_specs.data]):
            t = value.type
            assert isinstance(t, TensorType)
            for k, e in enumerate(spec.map.results):
                if isinstance(e, AffineSymExpr):
                    p, _ = spec.prefetch[e.position]
                    bound(call, p, -(-t.get_shape()[k] // (spec.shape[k] or 1)))
        # Row DMAs read the row (and the leading indices) prefetched indices name.
        for dma in call.walk():
            if not isinstance(dma, pallas.DmaStartOp):
                continue
            src = dma.src.type
            for k, value in enumerate([*dma.src_lead, dma.src_row]):
                # (A slab of packed rows starts at P * (index / P).)
                while isinstance(value.owner, arith.MuliOp | arith.DivSIOp):
                    value = value.owner.lhs
                if not isinstance(value.owner, pallas.ReadOp):
                    continue
                ref = value.owner.ref
                # The index ref is a prefetch operand or a streamed input (G3c):
                # either way ref k is call operand k.
                if isinstance(ref, BlockArgument) and ref.index < len(call.args):
                    bound(call, ref.index, src.get_shape()[k])  # type: ignore[attr-defined]
    return bounds


def example_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Random arguments for @forward: floats in [-2, 2]; integers that feed block
    indices stay within the blocks they choose, other integers in [-8, 8)."""
    rng = np.random.default_rng(seed)
    bounds = _prefetch_bounds(module)
    arrays: list[np.ndarray] = []
    for i, arg in enumerate(forward_of(module).body.block.args):
        t = arg.type
        assert isinstance(t, TensorType)
        shape, dtype = t.get_shape(), numpy_dtype(t.element_type)
        if isinstance(t.element_type, IntegerType):
            if t.element_type.width.data == 1:
                a = rng.integers(0, 2, shape).astype(bool)
            elif i in bounds:
                a = rng.integers(0, bounds[i], shape).astype(dtype)
            else:
                a = rng.integers(-8, 8, shape).astype(dtype)
        else:
            a = rng.uniform(-2, 2, shape).astype(dtype)
        arrays.append(a)
    return arrays


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
