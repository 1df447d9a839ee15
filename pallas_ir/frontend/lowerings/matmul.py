"""Matrix products: `a @ b` (batched over leading dims) as a materialised sum over k of
products, which tile makes a `tl.dot` on the MXU."""

from __future__ import annotations

import torch

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Buffer,
    Value,
    broadcast_index,
    chained,
    storage_value,
)
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten


@lowers(aten.mm.default, aten.bmm.default, aten.addmm.default)
def matmul(c: Lowering, args) -> Value:
    """The bias of addmm (scaled by beta, the product by alpha) is added by the
    consumers."""
    if c.target is aten.addmm.default:
        bias, a, b = args[0], args[1], args[2]
    else:
        (a, b), bias = args[:2], None
    beta, alpha = c.kwargs.get("beta", 1), c.kwargs.get("alpha", 1)
    shape = c.shape
    full = (*shape, a.shape[-1])

    def product(k, idx):
        *lead, i, j, kk = idx
        lhs = a.emit(k, [*lead, i, kk])
        rhs = b.emit(k, [*lead, kk, j])
        return k.op("arith.mulf", lhs, rhs)

    # float64 is accumulated in float64 (on XLA), everything else in f32
    element = "f64" if c.element == "f64" else "f32"
    buf = Buffer.holding(c.prog.fresh("t"), shape, element)
    c.buffers.append(buf)
    # (no norm's statistics in the product's kernel: they would need whole rows of k)
    c.prog.kernel(Value(full, product, element), buf, [len(shape)], "sum", fuse=False)
    out = storage_value(buf, shape, row_major_strides(shape))
    if bias is None and alpha == 1:
        return out

    def emit(k, idx):
        v = out.emit(k, idx)
        if alpha != 1:
            v = k.op("arith.mulf", v, k.constant(alpha))
        if bias is not None:
            term = bias.emit(k, broadcast_index(bias, shape, idx))
            if beta != 1:
                term = k.op("arith.mulf", term, k.constant(beta))
            v = k.op("arith.addf", v, term)
        return v

    return Value(tuple(shape), emit, element, fused=chained(out, bias))


@lowers(aten.addbmm.default)
def addbmm(c: Lowering, args) -> Value:
    """beta * self + alpha * the sum over the batch of `b1[i] @ b2[i]`: the batched
    product, summed over its batch dim by the kernel that reads it."""
    bias, a, b = args[0], args[1], args[2]
    beta, alpha = c.kwargs.get("beta", 1), c.kwargs.get("alpha", 1)
    batch, shape = a.shape[0], c.shape
    products = c.lower(aten.bmm.default, [a, b], shape=(batch, *shape))
    total = c.lower(aten.sum.dim_IntList, [products, [0]])

    def emit(k, idx):
        v = total.emit(k, idx)
        if alpha != 1:
            v = k.op("arith.mulf", v, k.constant(alpha))
        if beta == 0:  # eager ignores self (NaN included) when beta is 0
            return v
        term = bias.emit(k, broadcast_index(bias, shape, idx))
        if beta != 1:
            term = k.op("arith.mulf", term, k.constant(beta))
        return k.op("arith.addf", v, term)

    return Value(tuple(shape), emit, total.element, fused=chained(total, bias))
