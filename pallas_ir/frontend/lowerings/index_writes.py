"""Reads and writes at flat positions: `take` (a gather at flat indices), `put` (an
`index_put` on the flattened tensor), `as_strided_scatter` (a write through the
strided view's flat positions), `masked_scatter` (the source's elements taken in
order by the mask's running count: a cumsum on XLA, then an element-wise gather),
`masked_select` by a mask the program computes from constants alone (its size is
then known: the positions of its set elements, a `nonzero_static` on XLA, then a
gather) and `nonzero_static`.

A position is read at run time as one map symbol per dim of the tensor read (its
flat position divided by the dim's stride, modulo its size), the form the gather
passes take."""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Index,
    Kernel,
    Value,
    broadcast_index,
    const,
    linear,
    remap,
)
from pallas_ir.frontend.lowerings.indexing import check_in_range, index_value
from pallas_ir.frontend.lowerings.library import filled, library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.frontend.lowerings.scatter import ELEMENTWISE_POINTS, written
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def flat(v: Value) -> Value:
    """`v` in row-major order, as a vector (a 0-d value: of one element)."""
    strides = row_major_strides(v.shape)
    n = math.prod(v.shape)
    return remap(
        v, (n,), lambda idx: [(idx[0] // s) % d for s, d in zip(strides, v.shape)]
    )


def unflat(v: Value, shape: tuple[int, ...]) -> Value:
    """The vector `v` seen in `shape`, row-major."""
    strides = row_major_strides(shape)
    return remap(v, shape, lambda idx: [linear([e * s for e, s in zip(idx, strides)])])


def at_flat(k: Kernel, v: Value, position: SSAValue) -> SSAValue:
    """The element of `v` at the i32 row-major `position` (data: one map symbol a
    dim)."""
    idx = []
    for d, (s, n) in enumerate(zip(row_major_strides(v.shape), v.shape)):
        i = position if s == 1 else k.op("arith.divsi", position, k.constant(s, "i32"))
        if d > 0:
            i = k.op("arith.remsi", i, k.constant(n, "i32"))
        idx.append(k.symbol(i))
    return v.emit(k, idx)


def _mask_as_i32(mask: Value, shape: tuple[int, ...]) -> Value:
    """The bool `mask`, broadcast to `shape`, as 0/1 data."""

    def emit(k: Kernel, idx: Index) -> SSAValue:
        m = mask.emit(k, broadcast_index(mask, shape, idx))
        return k.cast(m, mask.element, "i32")

    return Value(shape, emit, "i32")


def _arg(c: Lowering, args, i: int, name: str, default=None):
    return args[i] if len(args) > i else c.kwargs.get(name, default)


@lowers(aten.take.default)
def take(c: Lowering, args) -> Value:
    x, index = args[0], args[1]
    n = math.prod(x.shape)
    if math.prod(index.shape) == 0:
        return filled(c.shape, x.element)
    check_in_range(c, index, n, True, 0)

    def emit(k: Kernel, idx: Index) -> SSAValue:
        return at_flat(k, x, index_value(k, index, idx, n, True))

    return Value(c.shape, emit, x.element)


@lowers(aten.put.default, runs_on=RunsOn.BOTH)
def put(c: Lowering, args) -> Value:
    base, index, source = args[0], args[1], args[2]
    accumulate = bool(_arg(c, args, 3, "accumulate", False))
    n = math.prod(base.shape)
    if n == 0 or math.prod(index.shape) == 0:
        return base
    if math.prod(source.shape) != math.prod(index.shape):
        raise c.unsupported("source and index have different numbers of elements")
    put_flat = [flat(base), [flat(index)], flat(source), accumulate]
    return unflat(c.lower(aten.index_put.default, put_flat, shape=(n,)), c.shape)


@lowers(aten.as_strided_scatter.default, runs_on=RunsOn.BOTH)
def as_strided_scatter(c: Lowering, args) -> Value:
    base, src = args[0], args[1]
    size = [int(s) for s in _arg(c, args, 2, "size")]
    stride = [int(s) for s in _arg(c, args, 3, "stride")]
    offset = int(_arg(c, args, 4, "storage_offset", None) or 0)
    held = c.node.args[0].meta["val"]  # type: ignore[union-attr]
    if not held.is_contiguous():
        # (eager writes through the strides of the copy it makes of it)
        raise c.unsupported("an input that is not contiguous")
    n, points = math.prod(base.shape), tuple(size)
    if n == 0 or math.prod(points) == 0:
        return base
    element = c.element

    def position(q) -> int:
        return offset + sum(i * s for i, s in zip(q, stride))

    def source(k: Kernel, q: Index) -> SSAValue:
        return k.cast(src.emit(k, q), src.element, element)

    based = flat(base)
    if math.prod(points) <= ELEMENTWISE_POINTS:
        # each element compares its position with each written one, in eager's order
        def emit(k: Kernel, idx: Index) -> SSAValue:
            v = k.cast(based.emit(k, idx), based.element, element)
            at = c.prog.position(k, idx[0], n)
            for q in itertools.product(*map(range, points)):
                hit = k.cmp("eq", at, k.constant(position(q), "i32"))
                w = source(k, [const(i) for i in q])
                v = k.op("arith.select", hit, w, v)
            return v

        return unflat(Value((n,), emit, element), c.shape)

    places = offset + sum(
        np.arange(d, dtype=np.int64).reshape(
            [-1 if j == i else 1 for j in range(len(size))]
        )
        * s
        for i, (d, s) in enumerate(zip(size, stride))
    )
    if np.unique(places).size < math.prod(points):
        # XLA's scatter leaves the order of writes to one place unspecified.
        raise c.unsupported(
            f"the view writes some places more than once and has more than "
            f"{ELEMENTWISE_POINTS} points: eager's result is its loop's last write"
        )

    def emit_write(k: Kernel, q: Index) -> tuple[SSAValue, AffineExpr]:
        return source(k, q), linear([e * s for e, s in zip(q, stride)], const(offset))

    return unflat(written(c, based, points, emit_write, False), c.shape)


@lowers(aten.masked_scatter.default, runs_on=RunsOn.BOTH)
def masked_scatter(c: Lowering, args) -> Value:
    base, mask, source = args[0], args[1], args[2]
    shape, element = c.shape, c.element
    n, available = math.prod(shape), math.prod(source.shape)
    if n == 0:
        return filled(shape, element)
    ones = _mask_as_i32(mask, shape)
    (running,) = library_call(c, LibraryFn.CUMSUM, [flat(ones)], [((n,), "i32")], dim=0)
    counted = unflat(running, shape)  # how many set elements up to here, this one too

    def hit_at(k: Kernel, idx: Index) -> SSAValue:
        return k.cmp("ne", ones.emit(k, idx), k.constant(0, "i32"))

    def short(k: Kernel, idx: Index) -> SSAValue:
        beyond = k.cmp("sgt", counted.emit(k, idx), k.constant(available, "i32"))
        return k.op("arith.andi", hit_at(k, idx), beyond)

    c.prog.check(
        Value(shape, short, "i1"),
        counted,
        RuntimeError,
        str(c.target),
        f"the mask sets {{value}} or more elements, the source has {available}",
        c.where,
    )

    def emit(k: Kernel, idx: Index) -> SSAValue:
        v = k.cast(base.emit(k, broadcast_index(base, shape, idx)), base.element, element)
        if available == 0:
            return v
        taken = k.op("arith.subi", counted.emit(k, idx), k.constant(1, "i32"))
        taken = k.op("arith.maxsi", taken, k.constant(0, "i32"))
        taken = k.op("arith.minsi", taken, k.constant(available - 1, "i32"))
        w = k.cast(at_flat(k, source, taken), source.element, element)
        return k.op("arith.select", hit_at(k, idx), w, v)

    return Value(shape, emit, element)


def _reads_inputs(node: torch.fx.Node) -> bool:
    """Whether `node`'s value depends on the program's inputs (or captured tensors)
    or on a random draw: else the trace computed it from constants alone, and it is
    the same at every call."""
    seen: set[torch.fx.Node] = set()
    pending = [node]
    while pending:
        n = pending.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op in ("placeholder", "get_attr"):
            return True
        tags = getattr(n.target, "tags", ())
        if torch.Tag.nondeterministic_seeded in tags:
            return True
        pending.extend(n.all_input_nodes)
    return False


@lowers(aten.masked_select.default, runs_on=RunsOn.BOTH)
def masked_select(c: Lowering, args) -> Value:
    x, mask = args[0], args[1]
    if _reads_inputs(c.node.args[1]):  # type: ignore[arg-type]
        raise c.unsupported(
            "data-dependent output shape: its size depends on the values of its "
            "input, and a compiled program has fixed shapes (torch.compile runs it "
            "in eager)"
        )
    (count,) = c.shape
    if count == 0:
        return filled(c.shape, x.element)
    shape = tuple(torch.broadcast_shapes(tuple(x.shape), tuple(mask.shape)))
    ones = flat(_mask_as_i32(mask, shape))
    (found,) = library_call(
        c,
        LibraryFn.NONZERO_STATIC,
        [ones],
        [((count, 1), "i32")],
        size=count,
        fill_value=0,
    )
    spread = remap(x, shape, lambda idx: broadcast_index(x, shape, idx))

    def emit(k: Kernel, idx: Index) -> SSAValue:
        return at_flat(k, spread, found.emit(k, [idx[0], const(0)]))

    return Value(c.shape, emit, x.element)


@lowers(aten.nonzero_static.default, runs_on=RunsOn.XLA)
def nonzero_static(c: Lowering, args) -> Value:
    x = args[0]
    size = int(_arg(c, args, 1, "size"))
    fill_value = int(_arg(c, args, 2, "fill_value", -1))
    (found,) = library_call(
        c,
        LibraryFn.NONZERO_STATIC,
        [x],
        [(c.shape, "i32")],
        size=size,
        fill_value=fill_value,
    )
    return found
