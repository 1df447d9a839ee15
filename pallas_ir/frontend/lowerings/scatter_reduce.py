"""Reducing scatters: `scatter_reduce` (sum, prod, mean, amax, amin, with or without
the destination's own value), `scatter` with `reduce=` ("add", "multiply") and
`index_reduce` (prod, mean, amax, amin), as `scatter`'s data-dependent writes are
(`lowerings.scatter`): the base copied into a fresh buffer, then one kernel over the
source's points that combines each value into the position its index gives
(`ta.store ... accumulate <sum|prod|max|min>`), which runs on XLA as an
`.at[].add/multiply/max/min`.

Without `include_self` a position some point writes starts from the reduction's
identity instead of the base, and a mean divides by how many points wrote it (plus
one with `include_self`; floor division for integers, as eager): both read a count,
a scatter-add of ones into zeros. A position no point writes keeps the base."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Buffer,
    Index,
    Kernel,
    Value,
    const,
    linear,
    remap,
    storage_value,
)
from pallas_ir.frontend.lowerings.indexing import check_in_range, index_value
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers

aten = torch.ops.aten

_KINDS = {
    "sum": "sum",
    "add": "sum",
    "prod": "prod",
    "multiply": "prod",
    "mean": "sum",
    "amax": "max",
    "amin": "min",
}
"""How each reduction combines a point with what is there (a ReductionKind)."""

_IDENTITY = {
    ("sum", "f32"): 0.0,
    ("prod", "f32"): 1.0,
    ("max", "f32"): -math.inf,
    ("min", "f32"): math.inf,
    ("sum", "f64"): 0.0,
    ("prod", "f64"): 1.0,
    ("max", "f64"): -math.inf,
    ("min", "f64"): math.inf,
    ("sum", "i32"): 0,
    ("prod", "i32"): 1,
    ("max", "i32"): -(2**31),
    ("min", "i32"): 2**31 - 1,
}
"""Where a position starts without `include_self`, by reduction and element type."""

Write = Callable[[Kernel, Index], tuple[SSAValue, AffineExpr]]


def _stored(c: Lowering, value: Value, element: str) -> Buffer:
    """A fresh buffer that a kernel fills with `value`."""
    buf = Buffer.holding(c.prog.fresh("t"), value.shape, element)
    c.buffers.append(buf)
    c.prog.kernel(value, buf)
    return buf


def _reduced(
    c: Lowering,
    base: Value,
    points: tuple[int, ...],
    write: Write,
    reduce: str,
    include_self: bool,
) -> Value:
    """`base` with the value `write` gives at each of `points` combined by `reduce`
    into the flat position it gives."""
    shape, element = base.shape, c.element
    if element == "i1" or reduce not in _KINDS:
        raise c.unsupported(f"reduce={reduce!r} on {c.node.meta['val'].dtype} data")
    kind = _KINDS[reduce]
    count = None
    if reduce == "mean" or not include_self:
        zeros = Value(shape, lambda k, idx: k.constant(0, "i32"), "i32")
        count_buf = _stored(c, zeros, "i32")

        def one(k: Kernel, q: Index) -> tuple[SSAValue, AffineExpr]:
            return k.constant(1, "i32"), write(k, q)[1]

        c.prog.scatter(points, count_buf, one, "sum")
        count = storage_value(count_buf, shape, row_major_strides(shape))

    start = base
    if not include_self:
        identity = _IDENTITY[kind, element]

        def first(k: Kernel, idx: Index) -> SSAValue:
            v = k.cast(base.emit(k, idx), base.element, element)
            hit = k.cmp("sgt", count.emit(k, idx), k.constant(0, "i32"))
            return k.op("arith.select", hit, k.constant(identity, element), v)

        start = Value(shape, first, element)
    out = _stored(c, start, element)
    c.prog.scatter(points, out, write, kind)
    combined = storage_value(out, shape, row_major_strides(shape))
    if reduce != "mean":
        return combined
    assert count is not None

    def mean(k: Kernel, idx: Index) -> SSAValue:
        total = combined.emit(k, idx)
        n = count.emit(k, idx)
        hit = k.cmp("sgt", n, k.constant(0, "i32"))
        if include_self:
            n = k.op("arith.addi", n, k.constant(1, "i32"))
        else:  # a position no point writes divides by 1: it keeps the base
            n = k.op("arith.select", hit, n, k.constant(1, "i32"))
        if element in ("f32", "f64"):
            return k.op("arith.divf", total, k.cast(n, "i32", element))
        return k.op("arith.floordivsi", total, n)

    return Value(shape, mean, element)


def _as_vector(v: Value) -> Value:
    return remap(v, (1,), lambda idx: []) if not v.shape else v


def _scalar(v: Value) -> Value:
    return remap(v, (), lambda idx: [const(0)])


@lowers(
    aten.scatter_reduce.two,
    aten.scatter.reduce,
    aten.scatter.value_reduce,
    runs_on=RunsOn.BOTH,
)
def scatter_reduce(c: Lowering, args) -> Value:
    base, dim, index, src = args[0], int(args[1]), args[2], args[3]
    if c.target is aten.scatter_reduce.two:
        reduce = str(args[4] if len(args) > 4 else c.kwargs["reduce"])
        include_self = bool(c.kwargs.get("include_self", True))
    else:
        reduce, include_self = str(c.kwargs["reduce"]), True
    if not base.shape:  # 0-d: as the one element of a vector
        src = _as_vector(src) if isinstance(src, Value) else src
        vector = [_as_vector(base), 0, _as_vector(index), src]
        one = _scatter_reduce(c, vector, reduce, include_self)
        return _scalar(one)
    return _scatter_reduce(c, [base, dim, index, src], reduce, include_self)


def _scatter_reduce(c: Lowering, args, reduce: str, include_self: bool) -> Value:
    base, dim, index, src = args
    rank = len(base.shape)
    dim %= rank
    if math.prod(index.shape) == 0:
        return base
    check_in_range(c, index, base.shape[dim], False, dim)
    element = c.element
    strides = row_major_strides(base.shape)

    def write(k: Kernel, q: Index) -> tuple[SSAValue, AffineExpr]:
        if isinstance(src, Value):
            v = k.cast(src.emit(k, q), src.element, element)
        else:
            v = k.constant(src, element)
        row = k.symbol(index_value(k, index, q, base.shape[dim], False))
        at = [row if d == dim else q[d] for d in range(rank)]
        return v, linear([e * s for e, s in zip(at, strides)])

    return _reduced(c, base, tuple(index.shape), write, reduce, include_self)


@lowers(aten.index_reduce.default, runs_on=RunsOn.BOTH)
def index_reduce(c: Lowering, args) -> Value:
    base, dim, index, source = args[0], int(args[1]), args[2], args[3]
    reduce = str(args[4] if len(args) > 4 else c.kwargs["reduce"])
    include_self = bool(c.kwargs.get("include_self", True))
    if not base.shape:
        vector = [_as_vector(base), 0, _as_vector(index), _as_vector(source)]
        return _scalar(_index_reduce(c, vector, reduce, include_self))
    return _index_reduce(c, [base, dim, index, source], reduce, include_self)


def _index_reduce(c: Lowering, args, reduce: str, include_self: bool) -> Value:
    base, dim, index, source = args
    rank = len(base.shape)
    dim %= rank
    index = _as_vector(index)
    if math.prod(source.shape) == 0:
        return base
    check_in_range(c, index, base.shape[dim], False, dim)
    element = c.element
    strides = row_major_strides(base.shape)

    def write(k: Kernel, q: Index) -> tuple[SSAValue, AffineExpr]:
        v = k.cast(source.emit(k, q), source.element, element)
        row = k.symbol(index_value(k, index, [q[dim]], base.shape[dim], False))
        at = [row if d == dim else q[d] for d in range(rank)]
        return v, linear([e * s for e, s in zip(at, strides)])

    return _reduced(c, base, tuple(source.shape), write, reduce, include_self)
