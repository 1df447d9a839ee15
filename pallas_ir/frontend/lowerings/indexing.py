"""Gathers and concatenation. A gather reads the table at an index that is data (a map
symbol), which indirect-load-to-scalar-prefetch turns into row DMAs or scalar prefetch;
`cat` reads every part in bounds and picks one by the position along its dim; parts
that rotate one tensor read it at one rotation index."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from pallas_ir.frontend.kernel_builder import (
    BoundedIndex,
    Failure,
    Kernel,
    Value,
    broadcast_index,
)
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten


def index_value(
    k: Kernel, index: Value, at: Sequence[AffineExpr], n: int, wrap: bool
) -> SSAValue:
    """The index tensor's value at `at`, as i32 (torch's wrap of negative indices into
    a dim of `n` when `wrap`)."""
    v = k.cast(index.emit(k, at), index.element, "i32")
    if wrap:
        negative = k.cmp("slt", v, k.constant(0, "i32"))
        up = k.op("arith.addi", v, k.constant(n, "i32"))
        v = k.op("arith.select", negative, up, v)
    return v


def check_in_range(c: Lowering, index: Value, n: int, wrap: bool, dim: int) -> None:
    """The call raises IndexError, as eager does, when an element of `index` is
    outside a dim of size `n`: [-n, n) where negative indices wrap, else [0, n).
    Without the check a gather would read another row (interpret mode clamps) or, on a
    TPU, DMA from outside the table."""
    low = -n if wrap else 0
    # A second op on the same index over the same range (two caches written at one
    # position) needs no check of its own: where it would fail, the first (earlier,
    # as eager raises) fails.
    key = ("range check", id(index), low, n)
    if key in c.prog.once:
        earlier = c.prog.once[key][1]
        if isinstance(earlier, Failure):  # this op's use of the index is checked too
            c.prog.bounded_indices.append(BoundedIndex(c.node, index, earlier))
        return

    def outside(k: Kernel, idx) -> SSAValue:
        v = k.cast(index.emit(k, idx), index.element, "i32")
        below = k.cmp("slt", v, k.constant(low, "i32"))
        above = k.cmp("sge", v, k.constant(n, "i32"))
        return k.op("arith.ori", below, above)

    as_i32 = Value(
        index.shape,
        lambda k, idx: k.cast(index.emit(k, idx), index.element, "i32"),
        "i32",
    )
    failure = c.prog.check(
        Value(index.shape, outside, "i1"),
        as_i32,
        IndexError,
        str(c.target),
        f"index {{value}} is out of bounds for dimension {dim} with size {n}",
        c.where,
    )
    c.prog.once[key] = (index, failure)
    if failure is not None:  # (what an int64 index outside int32 raises too)
        c.prog.bounded_indices.append(BoundedIndex(c.node, index, failure))


def _row_of(k: Kernel, index: Value, at: Sequence[AffineExpr], n: int, wrap: bool):
    """A data-dependent index: the index tensor's value at `at`, as a map symbol
    (torch's wrap of negative indices when `wrap`)."""
    return k.symbol(index_value(k, index, at, n, wrap), n)


@lowers(aten.embedding.default)
def embedding(c: Lowering, args) -> Value:
    weight, index = args[0], args[1]
    n = len(index.shape)
    check_in_range(c, index, weight.shape[0], False, 0)

    def emit(k, idx):
        row = _row_of(k, index, idx[:n], weight.shape[0], False)
        return weight.emit(k, [row, *idx[n:]])

    return Value(c.shape, emit, weight.element)


@lowers(aten.index_select.default)
def index_select(c: Lowering, args) -> Value:
    x, dim, index = args[0], int(args[1]) % max(len(args[0].shape), 1), args[2]
    if not x.shape:  # of a 0-d tensor: index 0 (or -1) picks its one element
        check_in_range(c, index, 1, False, dim)
        return Value(c.shape, lambda k, idx: x.emit(k, []), x.element)
    check_in_range(c, index, x.shape[dim], False, dim)

    def emit(k, idx):
        row = _row_of(k, index, [idx[dim]], x.shape[dim], False)
        return x.emit(k, [*idx[:dim], row, *idx[dim + 1 :]])

    return Value(c.shape, emit, x.element)


@lowers(aten.gather.default)
def gather(c: Lowering, args) -> Value:
    x, dim, index = args[0], int(args[1]) % max(len(args[0].shape), 1), args[2]
    if not x.shape:  # of a 0-d tensor: index 0 picks its one element
        check_in_range(c, index, 1, False, dim)
        return Value(c.shape, lambda k, idx: x.emit(k, []), x.element)
    check_in_range(c, index, x.shape[dim], False, dim)

    def emit(k, idx):
        row = _row_of(k, index, list(idx), x.shape[dim], False)
        return x.emit(k, [*idx[:dim], row, *idx[dim + 1 :]])

    return Value(c.shape, emit, x.element)


@lowers(aten.index.Tensor)
def index(c: Lowering, args) -> Value:
    """x[i0, i1, ...]: index tensors for the leading dims, broadcast together."""
    x, indices, shape = args[0], args[1], c.shape
    masks = [n for n in c.node.args[1] if isinstance(n, torch.fx.Node)]
    if any(n.meta["val"].dtype == torch.bool for n in masks):
        raise c.unsupported("a boolean mask index has a data-dependent shape")
    # x[:, i, j]: index tensors (broadcast together) on some dims, the others sliced
    # whole. As numpy: the broadcast dims replace the indexed ones where those are
    # adjacent, and go first otherwise.
    indexed = [d for d, i in enumerate(indices) if i is not None]
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    at = indexed[0] if adjacent else 0
    n_kept = len(x.shape) - len(indexed)
    n_bcast = len(shape) - n_kept
    bcast_shape = shape[at : at + n_bcast]
    for d in indexed:
        check_in_range(c, indices[d], x.shape[d], True, d)

    def emit(k, idx):
        bcast = idx[at : at + n_bcast]
        kept = iter([*idx[:at], *idx[at + n_bcast :]])
        full = []
        for d, n in enumerate(x.shape):
            i = indices[d] if d < len(indices) else None
            if i is None:
                full.append(next(kept))
            else:
                full.append(
                    _row_of(k, i, broadcast_index(i, bcast_shape, bcast), n, True)
                )
        return x.emit(k, full)

    return Value(shape, emit, x.element)


_ROTATION_CHAIN = frozenset(
    {
        aten.neg.default,
        aten.mul.Tensor,
        aten.mul.Scalar,
        aten.div.Tensor,
        aten.div.Scalar,
        aten.alias.default,
        aten.clone.default,
        aten._to_copy.default,
        torch.ops.prims.convert_element_type.default,
    }
)
"""Ops of one tensor operand (and Python scalars) that a `cat` part may apply to the
slice it reads, and still be read at a rotated index (they read nothing else)."""


def _rotation(c: Lowering, nodes: Sequence[object], dim: int, n: int) -> int | None:
    """The shift s when the parts are unit-step slices of one tensor of extent n along
    `dim` (each under ops of `_ROTATION_CHAIN`) that each start s after their place:
    part k, at positions [start_k, start_k + m_k), reads the tensor at `(p + s) mod n`
    (rotate-half, `cat([-x[..., h:], x[..., :h]])`, is s = h). None otherwise. (The
    parts' lengths add up to n, the cat's extent, so they are the tensor rotated.)"""
    source, shift, start = None, None, 0
    for node in nodes:
        if not isinstance(node, torch.fx.Node):
            return None
        if node.meta["val"].numel() == 0:
            continue  # cat skips empty parts (a legacy 1-D empty one of any rank)
        m = node.meta["val"].shape[dim]
        while node.target in _ROTATION_CHAIN:
            rest = [*node.args[1:], *node.kwargs.values()]
            if any(isinstance(a, torch.fx.Node) for a in rest):
                return None
            value = c.prog.values.get(node)
            if not isinstance(value, Value) or value.stored is not None:
                return None  # materialised: its buffer holds the part alone
            node = node.args[0]
            if not isinstance(node, torch.fx.Node):
                return None
        if node.target is not aten.slice.Tensor:
            return None
        names = ("self", "dim", "start", "end", "step")  # aten.slice.Tensor's
        given = {**dict(zip(names, node.args)), **node.kwargs}
        base = given["self"]
        rank = len(node.meta["val"].shape)
        step = 1 if given.get("step") is None else given["step"]
        if (
            not isinstance(base, torch.fx.Node)
            or int(given.get("dim") or 0) % rank != dim
        ):
            return None
        if step != 1 or base.meta["val"].shape[dim] != n:
            return None
        value = c.prog.values.get(node)
        if not isinstance(value, Value) or value.stored is not None:
            return None
        first = 0 if given.get("start") is None else given["start"]
        first = max(0, first + n if first < 0 else min(first, n))
        s = (first - start) % n
        if source not in (None, base) or shift not in (None, s):
            return None
        source, shift = base, s
        start += m
    return shift


@lowers(aten.cat.default)
def cat(c: Lowering, args) -> Value:
    shape, element, prog = c.shape, c.element, c.prog
    nodes = c.node.args[0]
    parts = [p for p in args[0] if math.prod(p.shape) > 0]
    dim = (int(args[1]) if len(args) > 1 else 0) % len(shape)
    n = shape[dim]
    # Parts that rotate one tensor read it at one rotation index (each in bounds and
    # the same place): `(p + s) mod n`, an in-register roll, where `(p - start) mod m`
    # would split the dim in two halves.
    shift = _rotation(c, nodes, dim, n) if isinstance(nodes, list | tuple) else None

    def emit(k, idx):
        # Every part is read in bounds at every point (its index taken mod its
        # length, or its slice's source rotated) and the position along `dim` picks
        # the part.
        at = prog.position(k, idx[dim], n)
        value, start = None, 0
        for part in parts:
            m = part.shape[dim]
            local = list(idx)
            if shift is None:
                local[dim] = (idx[dim] - start) % m
            else:  # the slice adds its first position back: `(p + s) mod n`
                local[dim] = (idx[dim] + shift) % n - (start + shift) % n
            v = k.cast(part.emit(k, local), part.element, element)
            if value is None:
                value = v
            else:
                here = k.cmp("sge", at, k.constant(start, "i32"))
                value = k.op("arith.select", here, v, value)
            start += m
        return value

    return Value(shape, emit, element)
