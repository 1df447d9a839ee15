"""Views: slice (any step), select, permute, expand, unsqueeze, squeeze, view/reshape,
flip, roll, repeat, diagonal, as_strided, split, alias and clone only rewrite the index
expressions, so they fold into the loads' maps. A reshape of a non-contiguous value
unravels through `floordiv`/`mod`, which canonicalize-permutation splits."""

from __future__ import annotations

import math
import operator

import torch

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Value,
    broadcast_index,
    const,
    ints,
    linear,
    remap,
)
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten


@lowers(aten.alias.default, aten.clone.default, aten.lift_fresh_copy.default)
def alias(c: Lowering, args) -> Value:
    return args[0]


@lowers(aten.permute.default)
def permute(c: Lowering, args) -> Value:
    a, perm = args[0], [d % max(len(args[0].shape), 1) for d in ints(args[1])]
    inverse = [perm.index(d) for d in range(len(perm))]
    return remap(a, c.shape, lambda idx: [idx[inverse[d]] for d in range(len(perm))])


@lowers(aten.slice.Tensor)
def slice_(c: Lowering, args) -> Value:
    a = args[0]
    dim = int(args[1]) if len(args) > 1 else 0
    dim %= len(a.shape)
    start = args[2] if len(args) > 2 and args[2] is not None else 0
    step = args[4] if len(args) > 4 else 1
    start = max(0, start + a.shape[dim] if start < 0 else min(start, a.shape[dim]))

    def index(idx):
        out = list(idx)
        out[dim] = const(start) + idx[dim] * step
        return out

    return remap(a, c.shape, index)


@lowers(aten.select.int)
def select(c: Lowering, args) -> Value:
    a, dim, i = args[0], int(args[1]) % len(args[0].shape), int(args[2])
    i %= a.shape[dim]
    return remap(a, c.shape, lambda idx: [*idx[:dim], const(i), *idx[dim:]])


@lowers(aten.unsqueeze.default)
def unsqueeze(c: Lowering, args) -> Value:
    a, dim = args[0], int(args[1]) % (len(args[0].shape) + 1)
    return remap(a, c.shape, lambda idx: [*idx[:dim], *idx[dim + 1 :]])


@lowers(aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default)
def squeeze(c: Lowering, args) -> Value:
    a = args[0]
    dims = (
        set(range(len(a.shape)))
        if len(args) < 2
        else {d % max(len(a.shape), 1) for d in ints(args[1])}
    )
    dropped = [d for d in range(len(a.shape)) if d in dims and a.shape[d] == 1]

    def index(idx):
        it = iter(idx)
        return [const(0) if d in dropped else next(it) for d in range(len(a.shape))]

    return remap(a, c.shape, index)


@lowers(aten.expand.default)
def expand(c: Lowering, args) -> Value:
    a, shape = args[0], c.shape
    return remap(a, shape, lambda idx: broadcast_index(a, shape, idx))


@lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def view(c: Lowering, args) -> Value:
    a = args[0]
    out_strides = row_major_strides(c.shape)
    in_strides = row_major_strides(a.shape)

    def index(idx):
        flat = linear([e * s for e, s in zip(idx, out_strides)])
        return [(flat // s) % n for s, n in zip(in_strides, a.shape)]

    return remap(a, c.shape, index)


@lowers(aten.flip.default)
def flip(c: Lowering, args) -> Value:
    a = args[0]
    dims = {d % len(a.shape) for d in ints(args[1])} if a.shape else set()
    return remap(
        a,
        c.shape,
        lambda idx: [
            const(n - 1) - i if d in dims else i
            for d, (i, n) in enumerate(zip(idx, a.shape))
        ],
    )


@lowers(aten.roll.default)
def roll(c: Lowering, args) -> Value:
    """`out[j] = a[(j - shift) mod n]` along each rolled dim: a rotation index,
    `(j + r) mod n` with r = -shift mod n, which the tiler reads as a roll of a whole
    dim in the kernel (no dims: the flattened tensor rolls)."""
    a = args[0]
    shifts = ints(args[1])
    dims = ints(args[2]) if len(args) > 2 else []
    if not a.shape or math.prod(a.shape) == 0:
        return a
    if not dims:
        numel = math.prod(a.shape)
        r = -shifts[0] % numel
        out_strides = row_major_strides(a.shape)

        def flat_index(idx):
            flat = (linear([e * s for e, s in zip(idx, out_strides)]) + const(r)) % numel
            return [(flat // s) % n for s, n in zip(out_strides, a.shape)]

        return remap(a, c.shape, flat_index)
    amounts: dict[int, int] = {}
    for shift, d in zip(shifts, dims, strict=True):
        d %= len(a.shape)
        amounts[d] = (amounts.get(d, 0) - shift) % a.shape[d]

    def index(idx):
        return [
            (i + const(amounts[d])) % n if amounts.get(d) else i
            for d, (i, n) in enumerate(zip(idx, a.shape))
        ]

    return remap(a, c.shape, index)


@lowers(aten.repeat.default)
def repeat(c: Lowering, args) -> Value:
    a = args[0]
    lead = len(c.shape) - len(a.shape)
    return remap(
        a,
        c.shape,
        lambda idx: [i % n if n > 1 else const(0) for i, n in zip(idx[lead:], a.shape)],
    )


@lowers(aten.diagonal.default)
def diagonal(c: Lowering, args) -> Value:
    a = args[0]
    offset = int(args[1]) if len(args) > 1 else 0
    d1 = (int(args[2]) if len(args) > 2 else 0) % len(a.shape)
    d2 = (int(args[3]) if len(args) > 3 else 1) % len(a.shape)

    def index(idx):
        rest, i = iter(idx[:-1]), idx[-1]
        out = []
        for d in range(len(a.shape)):
            if d == d1:
                out.append(i + max(-offset, 0))
            elif d == d2:
                out.append(i + max(offset, 0))
            else:
                out.append(next(rest))
        return out

    return remap(a, c.shape, index)


@lowers(aten.as_strided.default)
def as_strided(c: Lowering, args) -> Value:
    """Elements of the storage its operand views, at `storage_offset + sum(i_k *
    stride_k)`: the offset is the storage's (by default the operand's own), so the
    operand's views are followed back to the tensor that owns the storage (an input,
    or a computed value laid out as eager lays it out) and the position is read from
    there."""
    size, stride = ints(args[1]), ints(args[2])
    offset = args[3] if len(args) > 3 else c.kwargs.get("storage_offset")
    base, views = _storage_owner(c, c.node.args[0])
    whole = c.prog.values[base] if views else args[0]
    assert isinstance(whole, Value)
    meta = base.meta["val"]
    source = torch.empty_strided(meta.shape, meta.stride(), device="meta")
    for view in views:  # the operand's place in the owner's storage
        source = _replayed(view, source)
    if offset is None:
        start = source.storage_offset()
    else:  # an offset in the caller's storage: specialised on where an input starts
        start = offset - c.prog.storage_offsets.get(base, 0)
        if base in c.prog.storage_offsets:
            c.prog.specialised_offsets.add(base)
    # The dims that place the owner's elements in its storage, densely.
    held = [(n, st) for n, st in zip(meta.shape, meta.stride()) if n > 1 and st > 0]
    extent = 1 if meta.numel() else 0
    for n, st in sorted(held, key=lambda d: d[1]):
        if st != extent:
            raise c.unsupported(
                "as_strided of a tensor whose storage has gaps or overlaps is not "
                "supported"
            )
        extent *= n
    reach = start + sum((n - 1) * st for n, st in zip(size, stride))
    if 0 not in size and (start < 0 or reach >= extent):
        raise c.unsupported(
            "as_strided reads outside the storage of the tensor it views: "
            f"[{start}, {reach}] of {extent} elements"
        )

    def index(idx):
        flat = linear([i * st for i, st in zip(idx, stride) if st], const(start))
        return [
            (flat // st) % n if n > 1 and st > 0 else const(0)
            for n, st in zip(meta.shape, meta.stride())
        ]

    return remap(whole, c.shape, index)


def _storage_owner(c: Lowering, node: torch.fx.Node) -> tuple[torch.fx.Node, list]:
    """The graph node whose tensor owns the storage `node` views (an input or a
    computed value), and the view nodes from it to `node`, in order. A node the
    program has no value for (`check_node` converts one node alone) is its own
    owner."""
    views: list[torch.fx.Node] = []
    while node in c.prog.values and node.op == "call_function":
        op = node.args[0] if node.target is operator.getitem else node
        if not isinstance(op, torch.fx.Node) or not _is_view(op.target):
            return node, views[::-1]  # a computed value owns its storage
        operands = [*op.args[1:], *op.kwargs.values(), *node.args[1:]]
        if any(isinstance(a, torch.fx.Node) for a in operands):
            raise c.unsupported("as_strided of a view whose size is data")
        views.append(node)
        node = op.args[0]
    return node, views[::-1]


def _is_view(target) -> bool:
    return isinstance(target, torch._ops.OpOverload) and target.is_view


def _replayed(view: torch.fx.Node, t: torch.Tensor) -> torch.Tensor:
    """View node `view` applied to `t` (one result of a multi-result view: `split`)."""
    if view.target is operator.getitem:
        op = view.args[0]
        return op.target(t, *op.args[1:], **op.kwargs)[view.args[1]]
    return view.target(t, *view.args[1:], **view.kwargs)


@lowers(aten.split_with_sizes.default, aten.split.Tensor)
def split(c: Lowering, args) -> list[Value]:
    a = args[0]
    dim = int(args[2]) % len(a.shape) if len(args) > 2 else 0
    out, start = [], 0
    for shape in c.shapes:
        end = start + shape[dim]
        out.append(c.lower(aten.slice.Tensor, [a, dim, start, end, 1], shape=shape))
        start += shape[dim]
    return out
