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
    is_float,
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

    floats = is_float(c.element)
    if not floats and c.node.meta["val"].dtype == torch.int64:
        # int64 data is computed in int32 with each op's wrap checked; a sum of
        # products has no such check yet
        raise c.unsupported(
            "an int64 matrix product would be summed in int32, and its overflow is not "
            "checked (int32 operands are exact, as eager wraps them too)"
        )

    def product(k, idx):
        *lead, i, j, kk = idx
        lhs = a.emit(k, [*lead, i, kk])
        rhs = b.emit(k, [*lead, kk, j])
        return k.op("arith.mulf" if floats else "arith.muli", lhs, rhs)

    # float64 is accumulated in float64 (on XLA), other floats in f32; integers in
    # their own type, as eager does
    element = c.element if c.element == "f64" or not floats else "f32"
    buf = Buffer.holding(c.prog.fresh("t"), shape, element)
    c.buffers.append(buf)
    # (no norm's statistics in the product's kernel: they would need whole rows of k)
    c.prog.kernel(Value(full, product, element), buf, [len(shape)], "sum", fuse=False)
    out = storage_value(buf, shape, row_major_strides(shape))
    if bias is None and alpha == 1:
        return out

    mul, add = ("arith.mulf", "arith.addf") if floats else ("arith.muli", "arith.addi")
    constants = "f32" if floats else element

    def emit(k, idx):
        v = out.emit(k, idx)
        if alpha != 1:
            v = k.op(mul, v, k.constant(alpha, constants))
        if bias is not None:
            term = bias.emit(k, broadcast_index(bias, shape, idx))
            if beta != 1:
                term = k.op(mul, term, k.constant(beta, constants))
            v = k.op(add, v, term)
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
