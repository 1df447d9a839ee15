"""Views: slice (any step), select, permute, expand, unsqueeze, squeeze, view/reshape,
flip, repeat, diagonal, as_strided, split, alias and clone only rewrite the index
expressions, so they fold into the loads' maps. A reshape of a non-contiguous value
unravels through `floordiv`/`mod`, which canonicalize-permutation splits."""

from __future__ import annotations

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
    a, perm = args[0], ints(args[1])
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
    a, dims = args[0], {d % len(args[0].shape) for d in ints(args[1])}
    return remap(
        a,
        c.shape,
        lambda idx: [
            const(n - 1) - i if d in dims else i
            for d, (i, n) in enumerate(zip(idx, a.shape))
        ],
    )


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
    a, size, stride = args[0], ints(args[1]), ints(args[2])
    source = c.node.args[0].meta["val"]
    offset = (args[3] if len(args) > 3 and args[3] is not None else 0) - (
        source.storage_offset()
    )
    reach = offset + sum((n - 1) * st for n, st in zip(size, stride))
    if not source.is_contiguous() or offset < 0 or reach >= max(source.numel(), 1):
        raise c.unsupported(
            "as_strided is supported on contiguous data, within its elements"
        )
    in_strides = row_major_strides(a.shape)

    def index(idx):
        flat = linear([i * st for i, st in zip(idx, stride) if st], const(offset))
        return [(flat // st) % n for st, n in zip(in_strides, a.shape)]

    return remap(a, c.shape, index)


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
