"""Tensors made from scalars: full, zeros/ones like another, arange, and the
uninitialised `empty` family (zeros are as good as any contents)."""

from __future__ import annotations

import torch

from pallas_ir.frontend.kernel_builder import Value, is_float
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten

EMPTY = {
    aten.empty_permuted.default,
    aten.empty.memory_format,
    aten.empty_like.default,
    aten.empty_strided.default,
}


@lowers(*EMPTY)
def empty(c: Lowering, args) -> Value:  # contents undefined: zeros are as good as any
    element = c.element
    return Value(c.shape, lambda k, idx: k.constant(0, element), element)


_SCALAR_TENSOR = {aten.scalar_tensor.default, torch.ops.prims.scalar_tensor.default}


@lowers(aten.full.default, aten.full_like.default, *_SCALAR_TENSOR)
def full(c: Lowering, args) -> Value:
    value = args[0] if c.target in _SCALAR_TENSOR else args[1]
    element = c.element
    return Value(c.shape, lambda k, idx: k.constant(value, element), element)


@lowers(aten.zeros_like.default, aten.ones_like.default)
def zeros_or_ones_like(c: Lowering, args) -> Value:
    value = 1 if c.target is aten.ones_like.default else 0
    element = c.element
    return Value(c.shape, lambda k, idx: k.constant(value, element), element)


@lowers(aten.arange.start_step, aten.arange.default, aten.arange.start)
def arange(c: Lowering, args) -> Value:
    target, element, prog = c.target, c.element, c.prog
    start = args[0] if target is not aten.arange.default else 0
    step = args[2] if target is aten.arange.start_step and len(args) > 2 else 1
    n = c.shape[0]

    def emit(k, idx):
        i = k.cast(prog.position(k, idx[0], n), "i32", element)
        mul, add = (
            ("arith.mulf", "arith.addf")
            if is_float(element)
            else ("arith.muli", "arith.addi")
        )
        v = k.op(mul, i, k.constant(step, element))
        return k.op(add, v, k.constant(start, element))

    return Value(c.shape, emit, element)
