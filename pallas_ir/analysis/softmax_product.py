"""The consumer form of an attention: `sum_j exp(F - M) / L * V`, the softmax weights
times the values, summed (`softmax_product`). raise-attention matches it to fuse the
whole chain, and fuse-epilogues leaves such a kernel to it."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Operation, SSAValue

from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.enums import ReductionKind


def owner(value: SSAValue, kind: type[Operation] | tuple[type[Operation], ...]):
    owner = value.owner
    return owner if isinstance(owner, kind) else None


def widened(value: SSAValue) -> tuple[SSAValue, Attribute | None]:
    """`x` of `extf(x)` and x's type (16-bit data read as f32), else (value, None)."""
    ext = owner(value, arith.ExtFOp)
    return (ext.input, ext.input.type) if ext is not None else (value, None)


def constant(value: SSAValue) -> float | int | None:
    """A scalar `arith.constant`'s value, or None."""
    const = owner(value, arith.ConstantOp)
    if const is None or not isinstance(const.value, FloatAttr | IntegerAttr):
        return None
    return const.value.value.data


@dataclass
class Consumer:
    """C's form: one store of `sum_j w * V` (or `V * w`), `w = exp(F - M) / L`, for
    16-bit data `w` rounded to V's type and V and the sum widened and narrowed, and
    for SDPA `w` zeroed by a row test."""

    store: ta.StoreOp
    score: SSAValue
    mload: ta.LoadOp
    lload: ta.LoadOp
    v: SSAValue
    guard: SSAValue | None
    narrow: Attribute | None
    """The 16-bit type of v, the weights and out (None: f32 throughout)."""


def softmax_product(loop: ta.LoopOp) -> Consumer | None:
    """The loop's form when it is an attention's consumer C, else None."""
    stores = [o for o in loop.body.block.ops if isinstance(o, ta.StoreOp)]
    if len(stores) != 1 or len(loop.reduce_extents) != 1 or stores[0].combine is not None:
        return None
    value = stores[0].value
    trunc = owner(value, arith.TruncFOp)
    out_type = trunc.result.type if trunc is not None else None
    red = owner(trunc.input if trunc is not None else value, ta.ReduceOp)
    if red is None or ReductionKind(red.kind.data) != ReductionKind.SUM:
        return None
    mul = owner(red.value, arith.MulfOp)
    if mul is None:
        return None
    for x, v in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        v, v_type = widened(v)
        x, x_wide = widened(x)
        rounded = owner(x, arith.TruncFOp) if x_wide is not None else None
        if rounded is not None:
            x = rounded.input
        if len({out_type, v_type, x_wide}) != 1 or (x_wide is not None) != (
            rounded is not None
        ):
            continue  # the weights, v and out rounded alike, or none of them
        guard = None
        select = owner(x, arith.SelectOp)
        if select is not None and constant(select.lhs) == 0.0:
            guard, x = select.cond, select.rhs  # _safe_softmax: 0 where all masked
        div = owner(x, arith.DivfOp)
        exp = owner(div.lhs, math.ExpOp) if div else None
        sub = owner(exp.operand, arith.SubfOp) if exp else None
        mload = owner(sub.rhs, ta.LoadOp) if sub else None
        lload = owner(div.rhs, ta.LoadOp) if div else None
        if mload and lload and sub:
            return Consumer(stores[0], sub.lhs, mload, lload, v, guard, out_type)
    return None
