"""Normalisations: layer norm from the variance and mean of its normalised dims (batch
and group norm decompose to reductions before they get here)."""

from __future__ import annotations

import torch

from pallas_ir.frontend.kernel_builder import Value, broadcast_index, chained
from pallas_ir.frontend.lowerings.reductions import variance
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten


@lowers(aten.native_layer_norm.default)
def layer_norm(c: Lowering, args) -> list[Value]:
    """(out, mean, rstd)."""
    x, normalized, weight, bias, eps = args
    dims = list(range(len(x.shape) - len(normalized), len(x.shape)))
    stat_shape = c.shapes[1]
    var, mean = variance(c, [x, dims], {"correction": 0, "keepdim": True}, stat_shape)

    def centered(k, idx):
        return k.op(
            "arith.subf",
            x.emit(k, idx),
            mean.emit(k, broadcast_index(mean, x.shape, idx)),
        )

    def rstd_at(k, idx):
        v = k.op("arith.addf", var.emit(k, idx), k.constant(float(eps)))
        return k.op("math.rsqrt", v)

    rstd = Value(stat_shape, rstd_at, var.element, fused=chained(var))

    def out(k, idx):
        v = k.op(
            "arith.mulf",
            centered(k, idx),
            rstd.emit(k, broadcast_index(rstd, x.shape, idx)),
        )
        if weight is not None:
            v = k.op(
                "arith.mulf", v, weight.emit(k, broadcast_index(weight, x.shape, idx))
            )
        if bias is not None:
            v = k.op("arith.addf", v, bias.emit(k, broadcast_index(bias, x.shape, idx)))
        return v

    # (what `out` fuses: the statistics' reductions too, so its kernel computes them)
    fused = chained(x, mean, rstd, weight, bias)
    return [Value(x.shape, out, var.element, fused=fused), mean, rstd]
