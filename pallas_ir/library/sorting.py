"""Sorting and selection, as torch computes them: values with their int indices."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def sort_keys(x, descending):
    """Keys that `lax.sort` orders as torch orders `x` (ascending, stable): NaN is
    larger than every number, -0.0 equals 0.0; descending reverses that order exactly
    (`~` for ints, which has no overflow at the most negative value)."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        nan = jnp.isnan(x)
        value = jnp.where(nan | (x == 0), 0, x)
        group = nan.astype(jnp.int32)
        return (-group, -value) if descending else (group, value)
    value = x.astype(jnp.int32)
    return (~value,) if descending else (value,)


def lib_sort(x, *, dim, descending, stable):
    """`torch.sort`: the values along `dim` in order and where each came from. Ties
    keep their order, which is what eager gives for `stable=True`, and for the default
    sort on the CPU too."""
    del stable  # lax.sort is stable
    x = jnp.moveaxis(x, dim, -1)
    axis = x.ndim - 1
    keys = sort_keys(x, descending)
    index = lax.broadcasted_iota(jnp.int32, x.shape, axis)
    index = lax.sort((*keys, index), dimension=axis, num_keys=len(keys))[-1]
    values = jnp.take_along_axis(x, index, axis=axis)
    return jnp.moveaxis(values, -1, dim), jnp.moveaxis(index, -1, dim)


def lib_topk(x, *, k, dim, largest, sorted):
    """`torch.topk`: the `k` largest (or smallest) along `dim`, in order, with their
    indices (NaN counts as the largest, as in eager)."""
    del sorted  # always sorted, as eager's CPU result is
    values, index = lib_sort(x, dim=dim, descending=largest, stable=True)
    take = [slice(None)] * x.ndim
    take[dim] = slice(0, k)
    return values[tuple(take)], index[tuple(take)]
