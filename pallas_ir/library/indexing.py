"""Indexing with segments: `embedding_bag`, rows of a table gathered and reduced per
bag, and its backward, as torch computes them."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def bags_of(indices, offsets, bags, padding_idx):
    """The bag of each index (bag b holds the indices from offsets[b] to the next
    offset, the last to the end), `bags` for one in no bag (past the last offset that
    starts a bag, or of index `padding_idx`), and how many indices each bag holds."""
    n = indices.shape[0]
    bag = jnp.searchsorted(offsets, jnp.arange(n), side="right") - 1
    kept = indices != padding_idx if padding_idx >= 0 else jnp.ones((n,), bool)
    bag = jnp.where(kept & (bag < bags), bag, bags)
    count = jax.ops.segment_sum((bag < bags).astype(jnp.int32), bag, num_segments=bags)
    return bag, count


def lib_embedding_bag(
    weight, indices, offsets, *weights, mode, include_last_offset, padding_idx
):
    """`torch.nn.functional.embedding_bag` on 1-D `indices` (`aten._embedding_bag`):
    mode 0 sums each bag's rows (each scaled by its per-sample weight, the operand
    after `offsets` if there is one), 1 averages them, 2 takes their maximum; rows of
    index `padding_idx` (when >= 0) are left out, and a bag with no rows is zeros.
    With `include_last_offset` the last offset ends the last bag. Also eager's other
    results, which its backward reads: the bag of each index, the bag sizes (zeros in
    mode 0) and, in mode 2, the index of each maximum (the first one; 0 for an empty
    bag), else the bag sizes again."""
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    bag, count = bags_of(indices, offsets, bags, padding_idx)
    offset2bag = jnp.searchsorted(offsets, jnp.arange(indices.shape[0]), side="right") - 1
    rows = weight[indices]
    if rows.dtype in (jnp.bfloat16, jnp.float16):  # summed in float32, as eager does
        rows = rows.astype(jnp.float32)
    if weights:
        rows = rows * weights[0][:, None].astype(rows.dtype)
    sizes = jnp.zeros_like(count) if mode == 0 else count
    if mode == 2:
        largest = jax.ops.segment_max(rows, bag, num_segments=bags)
        clipped = jnp.minimum(bag, bags - 1)
        at_max = (bag < bags)[:, None] & (rows == largest[clipped])
        position = jnp.arange(indices.shape[0])[:, None]
        first = jax.ops.segment_min(
            jnp.where(at_max, position, indices.shape[0]), bag, num_segments=bags
        )
        nonempty = count[:, None] > 0
        where_max = jnp.where(
            nonempty, indices[jnp.minimum(first, indices.shape[0] - 1)], 0
        )
        out = jnp.where(nonempty, largest, 0)
        return out.astype(weight.dtype), offset2bag, sizes, where_max
    total = jax.ops.segment_sum(rows, bag, num_segments=bags)
    if mode == 1:
        total = total / jnp.maximum(count, 1)[:, None].astype(total.dtype)
    return total.astype(weight.dtype), offset2bag, sizes, sizes


def lib_embedding_bag_backward(
    grad, indices, offsets, maximum_indices, *weights, num_weights, mode, padding_idx
):
    """`aten._embedding_bag_backward`: the gradient of the table, each bag's gradient
    added into the rows it read (scaled by the per-sample weights, or divided by the
    bag's size for a mean), or, in mode 2, into the rows its maxima came from."""
    bags, width = grad.shape
    bag, count = bags_of(indices, offsets, bags, padding_idx)
    table = jnp.zeros((num_weights, width), grad.dtype)
    if mode == 2:
        taken = jnp.where(count[:, None] > 0, grad, 0)
        columns = jnp.broadcast_to(jnp.arange(width), (bags, width))
        return (table.at[maximum_indices, columns].add(taken),)
    rows = jnp.where((bag < bags)[:, None], grad[jnp.minimum(bag, bags - 1)], 0)
    if weights:
        rows = rows * weights[0][:, None]
    if mode == 1:
        size = jnp.maximum(count, 1)[jnp.minimum(bag, bags - 1)]
        rows = rows / size[:, None].astype(rows.dtype)
    return (table.at[indices].add(rows),)


def lib_nonzero_static(x, *, size, fill_value):
    """`torch.nonzero_static`: the indices of the first `size` nonzero elements of
    `x` in row-major order, one row each, and rows of `fill_value` after them."""
    found = jnp.nonzero(x != 0, size=size, fill_value=fill_value)
    return (jnp.stack(found, axis=-1),)


def lib_segment_reduce(data, extents, *, reduce, offsets, initial=None):
    """`torch.segment_reduce` along axis 0: segment s holds the rows from the sum of
    the lengths before it (`extents`: the lengths, or with `offsets` the offsets,
    one more than the segments) and reduces them by `reduce` (sum, mean, max, min,
    prod) starting from `initial` (None: the reduction's identity; a mean divides
    the sum from `initial` by the length, and is `initial`, or NaN without it, for
    an empty segment). Also whether the lengths are invalid (one negative, a total
    other than the rows, a first offset other than 0: eager raises) and their total."""
    lengths = extents[1:] - extents[:-1] if offsets else extents
    lengths = lengths.astype(jnp.int32)
    segments, rows = lengths.shape[0], data.shape[0]
    ends = jnp.cumsum(lengths)
    ids = jnp.searchsorted(ends, jnp.arange(rows), side="right")
    column = (segments,) + (1,) * (data.ndim - 1)
    if reduce in ("sum", "mean"):
        out = jax.ops.segment_sum(data, ids, num_segments=segments)
        if initial is not None:
            out = out + initial
        if reduce == "mean":
            n = lengths.reshape(column).astype(data.dtype)
            mean = out / n
            out = mean if initial is None else jnp.where(n > 0, mean, initial)
    elif reduce == "prod":
        out = jax.ops.segment_prod(data, ids, num_segments=segments)
        if initial is not None:
            out = out * initial
    else:
        fn = jax.ops.segment_max if reduce == "max" else jax.ops.segment_min
        out = fn(data, ids, num_segments=segments)
        # (a NaN row makes its segment NaN, as eager)
        nan = jax.ops.segment_max(jnp.isnan(data), ids, num_segments=segments)
        out = jnp.where(nan, jnp.nan, out)
        if initial is not None:
            extreme = jnp.maximum if reduce == "max" else jnp.minimum
            out = extreme(out, initial)
    total = jnp.sum(lengths)
    invalid = jnp.any(lengths < 0) | (total != rows)
    if offsets:  # (the first offset starts the data)
        invalid = invalid | (extents[0] != 0)
    return out.astype(data.dtype), invalid, total
