"""Random arguments for `@forward` at any level, and which interpreter runs it.

Random data must be data the program gives a meaning to: an integer that indexes a
table (a ta load's symbol, a tl tile start or gather row, a pallas block index or row
DMA, an XLA access) stays inside the table at every level, and an integer that divides
is not 0. The constraints are found in each kernel and carried through the host ops of
`@forward` (reshapes, converts) back to its arguments."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import BlockArgument, SSAValue

from pallas_ir.dialects import pallas
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import KernelOpBase
from pallas_ir.reference import pallas as pallas_reference
from pallas_ir.reference import ta as ta_reference
from pallas_ir.reference import tl as tl_reference
from pallas_ir.reference.ops import divisor_arguments, random_array


def is_pallas_level(forward: func.FuncOp) -> bool:
    """Whether @forward is a pallas program (its arrays are tensors; ta and tl pass
    memrefs), to be run by the pallas interpreter."""
    types = [*forward.function_type.inputs.data, *forward.function_type.outputs.data]
    return any(op.dialect_name() == "pallas" for op in forward.walk()) or any(
        isinstance(t, TensorType) for t in types
    )


@dataclass
class InputConstraints:
    limits: dict[int, int] = field(default_factory=dict[int, int])
    """@forward argument -> exclusive upper bound of its values (it holds indices)."""
    nonzero: set[int] = field(default_factory=set[int])
    """@forward arguments whose values divide."""

    def add(
        self,
        forward: func.FuncOp,
        args: Sequence[SSAValue],
        limits: dict[int, int],
        nonzero: set[int],
    ) -> None:
        """Record a launch's or call's constraints on its operands `args`."""
        for index in {*limits, *nonzero}:
            value = args[index]
            # Host reshapes and converts keep the values.
            while isinstance(
                value.owner, ta.ReshapeOp | pallas.ReshapeOp | pallas.ConvertOp
            ):
                value = value.owner.source
            if not (
                isinstance(value, BlockArgument) and value.block is forward.body.block
            ):
                continue
            if index in limits:
                old = self.limits.get(value.index, limits[index])
                self.limits[value.index] = min(old, limits[index])
            if index in nonzero:
                self.nonzero.add(value.index)


def forward_constraints(module: ModuleOp, forward: func.FuncOp) -> InputConstraints:
    """What the random arguments of @forward must respect, from every kernel it launches
    (ta or tl), every call it makes (pallas or XLA) and its own arithmetic."""
    kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, KernelOpBase)}
    found = InputConstraints()
    # Host arithmetic may divide by an argument too.
    found.nonzero |= {
        a.index
        for a in divisor_arguments(forward, lambda _: None)
        if a.block is forward.body.block
    }
    for op in forward.walk():
        if isinstance(op, ta.LaunchOp):
            kernel = kernels.get(op.callee.string_value())
            if isinstance(kernel, ta.KernelOp):
                limits = ta_reference.index_limits(kernel)
                nonzero = ta_reference.divisor_args(kernel)
            elif isinstance(kernel, tl.KernelOp):
                limits = tl_reference.index_limits(kernel)
                nonzero = tl_reference.divisor_args(kernel)
            else:
                continue
            found.add(forward, op.args, limits, nonzero)
        elif isinstance(op, pallas.CallOp | pallas.XlaCallOp):
            found.add(
                forward,
                op.args,
                pallas_reference.call_index_limits(op),
                pallas_reference.call_divisors(op),
            )
    return found


def random_arguments(
    forward: func.FuncOp, constraints: InputConstraints, rng: np.random.Generator
) -> list[np.ndarray]:
    return [
        np.arange(a.type.get_shape()[0], dtype=np.int32)  # type: ignore[attr-defined]
        if ta.is_iota_argument(a)  # what the caller passes there
        else random_array(
            a.type, rng, constraints.limits.get(a.index), a.index in constraints.nonzero
        )
        for a in forward.body.block.args
    ]


def forward_inputs(module: ModuleOp, forward: func.FuncOp, seed: int) -> list[np.ndarray]:
    """Random @forward arguments for `--verify-semantics`: floats in [-2, 2], integers
    in [-8, 8), but indices inside the tables they index and divisors nonzero."""
    rng = np.random.default_rng([seed, zlib.crc32(b"forward")])
    return random_arguments(forward, forward_constraints(module, forward), rng)
