"""Scatters: writes into a copy of a tensor, at positions given by data (`index_put`,
which `index_copy`, `index_add` and `x[i] = v` become; `scatter`, `scatter_add`) or
static (`slice_scatter`; `select_scatter` decomposes to a `where`).

A write of a few points (at most `ELEMENTWISE_POINTS`: the index tensors' broadcast
size of an `index_put`, the index's width along `dim` of a `scatter`) is element-wise:
each element of the result compares its position with every written position and
selects the written value (or combines it, for an accumulating write) where they
match, in the order torch writes them, so it fuses into the kernel that needs the
result (a KV-cache write at one position, nll_loss's backward). So is a write at a
static range (`slice_scatter`) and an `index_put` by a boolean mask with one value per
masked row.

A write into an input the function updates (`x.index_copy_(...)`, a KV-cache write)
where nothing else reads the input is made in place, into the input's own buffer (the
host donates it), at its points however few: no copy, and no element-wise pass over the
whole input.

A larger data-dependent write is two kernels on one buffer: the first copies the base
into it, the second loops over the written points, loads each index (a map symbol) and
stores, or accumulates with `ta.store ... accumulate <sum>`, the source element at the
position it gives, the buffer `inout`. The tiler runs that kernel on XLA (a scatter or
a scatter-add inside the same program). Negative `index_put` indices wrap as torch
wraps them; an index out of range makes the call raise IndexError (`check_in_range`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Buffer,
    Index,
    Kernel,
    Value,
    broadcast_index,
    const,
    linear,
    remap,
    storage_value,
)
from pallas_ir.frontend.lowerings.indexing import check_in_range, index_value
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten

ELEMENTWISE_POINTS = 8
"""The most written points a write selects element-wise: each result element then
compares its position with each of them, which costs less than a second kernel and a
copy of the base while they are few."""

_ADD = {
    "f64": "arith.addf",
    "f32": "arith.addf",
    "i32": "arith.addi",
    "i1": "arith.ori",
}
"""How an accumulating write adds, by element type (bool: or, as torch adds bools)."""


def write_where(
    k: Kernel, element: str, hit: SSAValue, old: SSAValue, new: SSAValue, add: bool
) -> SSAValue:
    """One element-wise write: `new` (added to `old` when `add`) where `hit`, else
    `old`."""
    if add:
        new = k.op(_ADD[element], old, new)
    return k.op("arith.select", hit, new, old)


def written(
    c: Lowering,
    base: Value,
    points: Sequence[int],
    emit,
    accumulate: bool,
) -> Value:
    """The data-dependent write: `base` copied into a fresh buffer, then a kernel over
    `points` storing (or adding) the value `emit(k, idx)` gives at the flat position
    it gives."""
    shape, element = base.shape, c.element
    out = in_place(c)
    if out is None:
        out = Buffer.holding(c.prog.fresh("t"), shape, element)
        c.buffers.append(out)
        c.prog.kernel(base, out)
    kind = None if not accumulate else "max" if element == "i1" else "sum"
    c.prog.scatter(points, out, emit, kind)
    return storage_value(out, shape, row_major_strides(shape))


def in_place(c: Lowering) -> Buffer | None:
    """The buffer of the input this write updates in place (`Program.in_place`),
    where it holds the values the write computes; None where the write goes to a
    copy of its base."""
    into = c.prog.in_place.get(c.node)
    if into is None or (into.host_shape, into.value_element) != (c.shape, c.element):
        return None
    return into


def materialised(c: Lowering, value: Value) -> Value:
    """`value` computed into a buffer of its own, and read from it."""
    out = Buffer.holding(c.prog.fresh("t"), value.shape, value.element)
    c.buffers.append(out)
    c.prog.kernel(value, out)
    return storage_value(out, value.shape, row_major_strides(value.shape))


def _as_vector(v: Value) -> Value:
    """A 0-d value as one of shape (1,)."""
    return remap(v, (1,), lambda idx: []) if not v.shape else v


# ---------------------------------------------------------------------------------------
# index_put: x[i0, i1, ...] = v (or += v)


@lowers(aten.index_put.default, aten._unsafe_index_put.default)
def index_put(c: Lowering, args) -> Value:
    base, values = args[0], args[2]
    accumulate = bool(args[3]) if len(args) > 3 else bool(c.kwargs.get("accumulate"))
    indices = list(args[1]) + [None] * (len(base.shape) - len(args[1]))
    indexed = [d for d, i in enumerate(indices) if i is not None]
    if math.prod(base.shape) == 0:
        return base
    if not indexed:  # x[...] = v: every element written once
        return _everywhere(c, base, values, accumulate)
    if any(indices[d].element == "i1" for d in indexed):
        return _masked_put(c, base, indices, values, accumulate)
    # The points written are those of x[indices]: the index tensors broadcast together
    # (B) take the place of the indexed dims where those are adjacent, and go first
    # otherwise (numpy's rule, as in `index`).
    bcast = tuple(torch.broadcast_shapes(*(indices[d].shape for d in indexed)))
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    kept = [d for d in range(len(base.shape)) if d not in indexed]
    lead = sum(1 for d in kept if d < indexed[0]) if adjacent else 0
    kept_shape = [base.shape[d] for d in kept]
    points = (*kept_shape[:lead], *bcast, *kept_shape[lead:])
    if math.prod(points) == 0:
        return base
    for d in indexed:
        check_in_range(c, indices[d], base.shape[d], True, d)
    element = c.element

    def index_at(k: Kernel, d: int, at: Index) -> SSAValue:
        """The wrapped i32 index into dim d at the broadcast position `at`."""
        i = indices[d]
        return index_value(k, i, broadcast_index(i, bcast, at), base.shape[d], True)

    def source(k: Kernel, point: Index) -> SSAValue:
        v = values.emit(k, broadcast_index(values, points, point))
        return k.cast(v, values.element, element)

    # In place, a write of a few points stays a write of those points: element-wise,
    # it would store every element of the input again.
    if math.prod(bcast) <= ELEMENTWISE_POINTS and in_place(c) is None:

        def emit(k: Kernel, idx: Index) -> SSAValue:
            v = k.cast(base.emit(k, idx), base.element, element)
            at = {d: c.prog.position(k, idx[d], base.shape[d]) for d in indexed}
            rest = [idx[d] for d in kept]
            for j in itertools.product(*map(range, bcast)):
                where = [const(x) for x in j]
                hit = None
                for d in indexed:
                    same = k.cmp("eq", index_at(k, d, where), at[d])
                    hit = same if hit is None else k.op("arith.andi", hit, same)
                assert hit is not None
                w = source(k, [*rest[:lead], *where, *rest[lead:]])
                v = write_where(k, element, hit, v, w, accumulate)
            return v

        return Value(base.shape, emit, element)

    strides = row_major_strides(base.shape)
    n_bcast = len(bcast)
    # The wrapped indices, computed once into buffers of their own: the write then
    # reads each as it is, which makes it a row scatter (indirect-store-to-row-dma)
    # where it writes whole rows.
    wrapped = {d: _wrapped(c, indices[d], base.shape[d]) for d in indexed}

    def emit_write(k: Kernel, point: Index) -> tuple[SSAValue, AffineExpr]:
        where = point[lead : lead + n_bcast]
        rest = iter([*point[:lead], *point[lead + n_bcast :]])
        terms = []
        for d, stride in enumerate(strides):
            if d in indexed:
                i = wrapped[d]
                e = k.symbol(i.emit(k, broadcast_index(i, bcast, where)))
            else:
                e = next(rest)
            terms.append(e * stride)
        return source(k, point), linear(terms)

    return written(c, base, points, emit_write, accumulate)


def _wrapped(c: Lowering, index: Value, n: int) -> Value:
    """`index` with negative entries wrapped into [0, n), in a buffer of its own, made
    once for all the writes that index a dim of size n by it."""
    key = ("wrapped", id(index), n)
    if key not in c.prog.once:
        value = Value(
            index.shape, lambda k, at: index_value(k, index, at, n, True), "i32"
        )
        c.prog.once[key] = (index, materialised(c, value))
    made = c.prog.once[key][1]
    assert isinstance(made, Value)
    return made


def _everywhere(c: Lowering, base: Value, values: Value, accumulate: bool) -> Value:
    """x[...] = v (or += v) with no index tensor: v broadcast to x's shape."""
    element = c.element

    def emit(k: Kernel, idx: Index) -> SSAValue:
        v = values.emit(k, broadcast_index(values, base.shape, idx))
        v = k.cast(v, values.element, element)
        if not accumulate:
            return v
        return k.op(_ADD[element], k.cast(base.emit(k, idx), base.element, element), v)

    return Value(base.shape, emit, element)


def _masked_put(
    c: Lowering, base: Value, indices: list, values: Value, accumulate: bool
) -> Value:
    """x[mask] = v, element-wise: where the mask holds, v (one value for every masked
    row, broadcast over the dims after the mask), else x."""
    indexed = [d for d, i in enumerate(indices) if i is not None]
    if len(indexed) > 1:
        raise c.unsupported(
            "a boolean mask index with other index tensors has a data-dependent shape"
        )
    (d,) = indexed
    mask = indices[d]
    m = len(mask.shape)
    # The values broadcast to (dims before the mask, masked rows, dims after it): one
    # for every masked row only if they do not vary along the rows.
    rows = (*base.shape[:d], 1, *base.shape[d + m :])
    lead = len(rows) - len(values.shape)
    if lead < 0 or (lead <= d and values.shape[d - lead] != 1):
        raise c.unsupported(
            "a value per masked element under a boolean mask index has a "
            "data-dependent shape"
        )
    element = c.element

    def emit(k: Kernel, idx: Index) -> SSAValue:
        v = k.cast(base.emit(k, idx), base.element, element)
        hit = mask.emit(k, idx[d : d + m])
        row = [*idx[:d], const(0), *idx[d + m :]]
        w = k.cast(
            values.emit(k, broadcast_index(values, rows, row)), values.element, element
        )
        return write_where(k, element, hit, v, w, accumulate)

    return Value(base.shape, emit, element)


# ---------------------------------------------------------------------------------------
# scatter, scatter_add: out[..., index[q], ...] = src[q] (dim `dim` replaced)


@lowers(aten.scatter.value, aten.scatter.src, aten.scatter_add.default)
def scatter(c: Lowering, args) -> Value:
    base, dim, index, src = args[0], int(args[1]), args[2], args[3]
    accumulate = c.target is aten.scatter_add.default
    if not base.shape:  # 0-d: as the one element of a vector
        vector = [_as_vector(base), 0, _as_vector(index)]
        vector.append(_as_vector(src) if isinstance(src, Value) else src)
        one = scatter(c, vector)
        return remap(one, (), lambda idx: [const(0)])
    rank = len(base.shape)
    dim %= rank
    if math.prod(index.shape) == 0:
        return base
    check_in_range(c, index, base.shape[dim], False, dim)
    element = c.element

    def source(k: Kernel, q: Index) -> SSAValue:
        if isinstance(src, Value):
            return k.cast(src.emit(k, q), src.element, element)
        return k.constant(src, element)

    width = index.shape[dim]
    if width <= ELEMENTWISE_POINTS and in_place(c) is None:
        # The index may be shorter than the base along the other dims: positions
        # past it keep the base (and read the index in bounds, wrapped).
        short = [d for d in range(rank) if d != dim and index.shape[d] < base.shape[d]]

        def emit(k: Kernel, idx: Index) -> SSAValue:
            v = k.cast(base.emit(k, idx), base.element, element)
            inside = None
            for d in short:
                at = c.prog.position(k, idx[d], base.shape[d])
                lt = k.cmp("slt", at, k.constant(index.shape[d], "i32"))
                inside = lt if inside is None else k.op("arith.andi", inside, lt)
            q = [idx[d] % index.shape[d] if d in short else idx[d] for d in range(rank)]
            target = c.prog.position(k, idx[dim], base.shape[dim])
            for j in range(width):
                q[dim] = const(j)
                hit = k.cmp(
                    "eq", index_value(k, index, q, base.shape[dim], False), target
                )
                if inside is not None:
                    hit = k.op("arith.andi", hit, inside)
                v = write_where(k, element, hit, v, source(k, q), accumulate)
            return v

        return Value(base.shape, emit, element)

    strides = row_major_strides(base.shape)

    def emit_write(k: Kernel, q: Index) -> tuple[SSAValue, AffineExpr]:
        row = k.symbol(index_value(k, index, q, base.shape[dim], False))
        at = [row if d == dim else q[d] for d in range(rank)]
        return source(k, q), linear([e * s for e, s in zip(at, strides)])

    return written(c, base, index.shape, emit_write, accumulate)


# ---------------------------------------------------------------------------------------
# slice_scatter: out[..., start:end:step, ...] = src


@lowers(aten.slice_scatter.default)
def slice_scatter(c: Lowering, args) -> Value:
    base, src = args[0], args[1]
    dim = int(args[2]) if len(args) > 2 else int(c.kwargs.get("dim", 0))
    dim %= len(base.shape)
    step = int(args[5]) if len(args) > 5 else int(c.kwargs.get("step", 1))
    n, m = base.shape[dim], src.shape[dim]
    start = args[3] if len(args) > 3 else c.kwargs.get("start")
    start = 0 if start is None else int(start)
    start = min(max(start + n if start < 0 else start, 0), n)
    if m == 0 or math.prod(base.shape) == 0:
        return base
    last = start + (m - 1) * step  # the last position written
    element, prog = c.element, c.prog

    def emit(k: Kernel, idx: Index) -> SSAValue:
        v = k.cast(base.emit(k, idx), base.element, element)
        # src is read in bounds at every position (its index taken mod its length);
        # the position along `dim` says whether it is written.
        local = list(idx)
        offset = idx[dim] - const(start)
        local[dim] = (offset if step == 1 else offset // step) % m
        w = k.cast(src.emit(k, local), src.element, element)
        at = prog.position(k, idx[dim], n)
        hit = k.op(
            "arith.andi",
            k.cmp("sge", at, k.constant(start, "i32")),
            k.cmp("sle", at, k.constant(last, "i32")),
        )
        if step > 1:
            apart = k.op("arith.subi", at, k.constant(start, "i32"))
            phase = k.op("arith.remsi", apart, k.constant(step, "i32"))
            on_step = k.cmp("eq", phase, k.constant(0, "i32"))
            hit = k.op("arith.andi", hit, on_step)
        return k.op("arith.select", hit, w, v)

    return Value(base.shape, emit, element)


# diagonal_scatter: out.diagonal(offset, dim1, dim2) = src


@lowers(aten.diagonal_scatter.default)
def diagonal_scatter(c: Lowering, args) -> Value:
    base, src = args[0], args[1]
    offset = int(args[2]) if len(args) > 2 else int(c.kwargs.get("offset", 0))
    rank = len(base.shape)
    dim1 = (int(args[3]) if len(args) > 3 else int(c.kwargs.get("dim1", 0))) % rank
    dim2 = (int(args[4]) if len(args) > 4 else int(c.kwargs.get("dim2", 1))) % rank
    length = src.shape[-1] if src.shape else 0
    if length == 0 or math.prod(base.shape) == 0:
        return base
    element, prog = c.element, c.prog
    n1, n2 = base.shape[dim1], base.shape[dim2]
    along = (
        dim1 if offset >= 0 else dim2
    )  # the diagonal's k-th element is at [k, k + offset]

    def emit(k: Kernel, idx: Index) -> SSAValue:
        v = k.cast(base.emit(k, idx), base.element, element)
        # src is read in bounds at every position (k mod its length); whether the
        # position is on the diagonal selects it.
        local = [e for d, e in enumerate(idx) if d not in (dim1, dim2)]
        local.append(idx[along] % length)
        w = k.cast(src.emit(k, local), src.element, element)
        apart = k.op(
            "arith.subi", prog.position(k, idx[dim2], n2), prog.position(k, idx[dim1], n1)
        )
        hit = k.cmp("eq", apart, k.constant(offset, "i32"))
        return k.op("arith.select", hit, w, v)

    return Value(base.shape, emit, element)
