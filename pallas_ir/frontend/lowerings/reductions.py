"""Reductions (sum, amax, amin, prod, argmax, argmin, any, all; mean, var, norms, max
and min of them).

A `sum`, `prod`, `max` or `min` over a tensor's last dims, of at most
FUSED_REDUCTION_MAX elements a result, is fused (`kernel_builder.fused_reduction`): it
is computed in the kernel that needs it, whose loop reduces over those dims (a softmax,
a norm, a variance is one `ta.loop [rows] reduce [n]`: the statistics stay in
registers and the row is read once). Other reductions, and those no kernel can compute
in its loop, are materialised: their own kernel (`ta.loop [kept] reduce [reduced]`,
the element-wise prologue fused) writes a `ta.alloc` buffer, which later values read as
storage (the epilogue fuses into its consumers)."""

from __future__ import annotations

import math

import torch

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    DTYPES,
    Buffer,
    Value,
    broadcast_index,
    chained,
    fused_reduction,
    ints,
    remap,
    storage_value,
    unreduced,
)
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten

_REDUCE = {
    aten.sum.dim_IntList: "sum",
    aten.amax.default: "max",
    aten.amin.default: "min",
    aten.prod.dim_int: "prod",
    aten.prod.default: "prod",
    aten.argmax.default: "argmax",
    aten.argmin.default: "argmin",
    aten.any.default: "max",
    aten.any.dim: "max",
    aten.any.dims: "max",
    aten.all.default: "min",
    aten.all.dim: "min",
    aten.all.dims: "min",
}


def reduced_dims(a: Value, given) -> list[int]:
    """The dims `given` (all of them when None or []) as sorted non-negative dims. A
    0-d tensor takes dim 0 or -1, as torch, and has no dim to reduce."""
    dims = list(range(len(a.shape))) if given is None or given == [] else ints(given)
    return sorted({d % len(a.shape) for d in dims}) if a.shape else []


FUSED_REDUCTION_MAX = 1 << 16
"""The most elements one result of a fused reduction reduces: a kernel that computes
it holds whole rows of them (a row of 64K float32 is 256 KiB; the tiler fits the row
blocks in VMEM). Longer, the reduction is its own kernel, which the tiler may split
over a sequential grid dim."""

_FUSED_KINDS = frozenset({"sum", "prod", "max", "min"})


@lowers(*_REDUCE)
def reduce(c: Lowering, args) -> Value:
    a = args[0]
    kind = _REDUCE[c.target]
    dims = reduced_dims(a, args[1] if len(args) > 1 else None)
    keep = bool(args[2]) if len(args) > 2 else False
    if kind in ("argmax", "argmin") and not dims:  # of one element (a 0-d tensor)
        return Value(c.shape, lambda k, idx: k.constant(0, "i32"), "i32")
    if any(a.shape[d] == 0 for d in dims) and kind in ("argmax", "argmin"):
        raise c.unsupported("a reduction over an empty dim has no index")
    if c.element == "i1" and a.element != "i1":  # any / all: non-zero is true
        a = c.lower(aten.ne.Scalar, [a, 0], shape=a.shape, element="i1")
    kept = [n for d, n in enumerate(a.shape) if d not in dims]
    trailing = dims == list(range(len(a.shape) - len(dims), len(a.shape)))
    if (
        kind in _FUSED_KINDS
        and dims
        and trailing
        and 0 not in a.shape
        and a.element != "i1"
        and math.prod(a.shape[d] for d in dims) <= FUSED_REDUCTION_MAX
    ):
        stored = fused_reduction(c.prog, c.buffers, a, kind, len(dims), c.element)
    else:
        buf = Buffer.holding(c.prog.fresh("t"), kept, c.element)
        c.buffers.append(buf)
        c.prog.kernel(a, buf, dims, kind)
        stored = storage_value(buf, kept, row_major_strides(kept))
    if not keep:
        return stored
    return remap(
        stored, c.shape, lambda idx: [i for d, i in enumerate(idx) if d not in dims]
    )


@lowers(aten.mean.dim, aten.mean.default)
def mean(c: Lowering, args) -> Value:
    a = args[0]
    dims = reduced_dims(a, args[1] if len(args) > 1 else None)
    n = math.prod(a.shape[d] for d in dims)
    total = c.lower(aten.sum.dim_IntList, [a, dims, *args[2:3]])
    scale = 1.0 / n if n else math.nan  # the mean of no elements is NaN, as eager
    return Value(
        c.shape,
        lambda k, idx: k.op("arith.mulf", total.emit(k, idx), k.constant(scale)),
        total.element,
        fused=chained(total),
    )


@lowers(aten.max.default, aten.min.default)
def extreme(c: Lowering, args) -> Value:
    kind = aten.amax.default if c.target is aten.max.default else aten.amin.default
    return c.lower(kind, [args[0], []], element=c.element)


@lowers(aten.max.dim, aten.min.dim)
def extreme_and_index(c: Lowering, args) -> list[Value]:  # (values, indices)
    x, dim = args[0], int(args[1])
    keep = bool(args[2]) if len(args) > 2 else False
    value, index = (
        (aten.amax.default, aten.argmax.default)
        if c.target is aten.max.dim
        else (aten.amin.default, aten.argmin.default)
    )
    shapes = c.shapes
    element = DTYPES[c.node.meta["val"][0].dtype]
    return [
        c.lower(value, [x, [dim], keep], shape=shapes[0], element=element),
        c.lower(index, [x, dim, keep], shape=shapes[1], element="i32"),
    ]


def variance(c: Lowering, args, kwargs, shape) -> tuple[Value, Value]:
    """torch.var's value and the mean it is taken about: sum((x - mean)^2) / (N -
    correction) over the reduced dims."""
    a = args[0]
    dims = reduced_dims(a, args[1] if len(args) > 1 else kwargs.get("dim"))
    correction = kwargs.get("correction", 1)
    if c.node.target is aten.var.dim:  # var(x, dim, unbiased, keepdim)
        correction = int(args[2]) if len(args) > 2 else 1
        keep = bool(args[3]) if len(args) > 3 else kwargs.get("keepdim", False)
    else:
        correction = 1 if correction is None else correction
        keep = kwargs.get("keepdim", False)
    kept_shape = tuple(1 if d in dims else n for d, n in enumerate(a.shape))
    mean = c.lower(aten.mean.dim, [a, dims, True], shape=kept_shape)

    def square(k, idx):
        centred = k.op(
            "arith.subf",
            a.emit(k, idx),
            mean.emit(k, broadcast_index(mean, a.shape, idx)),
        )
        return k.op("arith.mulf", centred, centred)

    element = "f64" if a.element == "f64" else "f32"
    total = c.lower(
        aten.sum.dim_IntList,
        [Value(a.shape, square, element, fused=chained(a, mean)), dims, keep],
        shape=shape,
        element=element,
    )
    n = math.prod(a.shape[d] for d in dims)
    scale = 1.0 / (n - correction) if n > correction else math.nan

    def var(k, idx):
        return k.op("arith.mulf", total.emit(k, idx), k.constant(scale))

    if keep:
        return Value(shape, var, element, fused=chained(total)), mean
    return Value(shape, var, element, fused=chained(total)), remap(
        mean, shape, lambda idx: unreduced(idx, dims, len(a.shape))
    )


@lowers(aten.var.correction, aten.var.dim)
def var(c: Lowering, args) -> Value:
    return variance(c, args, c.kwargs, c.shape)[0]


@lowers(aten.var_mean.correction)
def var_mean(c: Lowering, args) -> list[Value]:
    var, mean = variance(c, args, c.kwargs, c.shapes[0])
    return [var, mean]


@lowers(aten.linalg_vector_norm.default)
def vector_norm(c: Lowering, args) -> Value:
    a, kwargs = args[0], c.kwargs
    order = args[1] if len(args) > 1 else kwargs.get("ord", 2)
    dims = args[2] if len(args) > 2 else kwargs.get("dim")
    keep = args[3] if len(args) > 3 else kwargs.get("keepdim", False)
    dims = list(range(len(a.shape))) if dims is None else ints(dims)
    element = "f64" if a.element == "f64" else "f32"

    def magnitude(k, idx):
        return k.op("math.absf", a.emit(k, idx))

    if order in (math.inf, -math.inf):
        kind = aten.amax.default if order > 0 else aten.amin.default
        return c.lower(kind, [Value(a.shape, magnitude, element), dims, keep])
    if not isinstance(order, int | float):
        raise c.unsupported(f"ord={order} is not supported")
    if order == 0:  # the count of non-zero elements, as a float

        def nonzero(k, idx):
            x = a.emit(k, idx)
            return k.cast(k.cmp("une", x, k.constant(0.0)), "i1", element)

        return c.lower(
            aten.sum.dim_IntList, [Value(a.shape, nonzero, element), dims, keep]
        )

    def powered(k, idx):
        if order == 1:
            return magnitude(k, idx)
        if order == 2:
            x = a.emit(k, idx)
            return k.op("arith.mulf", x, x)
        return k.op("math.powf", magnitude(k, idx), k.constant(order))

    total = c.lower(aten.sum.dim_IntList, [Value(a.shape, powered, element), dims, keep])

    def root(k, idx):
        v = total.emit(k, idx)
        if order == 1:
            return v
        if order == 2:
            return k.op("math.sqrt", v)
        return k.op("math.powf", v, k.constant(1.0 / order))

    return Value(c.shape, root, element, fused=chained(total))
