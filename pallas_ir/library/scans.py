"""Scans (`cumsum`, `cumprod`, `cummax`, `cummin`, `logcumsumexp`) along one dim, as
torch computes them: float data in float32 (eager accumulates bfloat16 in float too)
and float64 data in float64, int data in int32 (the kernels' type for int64 data)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def lib_cumsum(x, *, dim, checked=False):
    """`torch.cumsum` along `dim` of data already in the result's type. With
    `checked` (an int64 result, summed in int32), also whether each step wrapped
    and a float32 estimate of the exact sums: a step wraps exactly where the sum
    before it and the element have one sign and the wrapped sum the other, and some
    step does iff some exact sum is outside int32 (before the first that is, every
    sum is exact)."""
    floating = jnp.issubdtype(x.dtype, jnp.floating)
    if floating:  # (float64 stays float64)
        x = x.astype(jnp.promote_types(x.dtype, jnp.float32))
    sums = lax.cumsum(x, axis=dim)
    if floating:
        return (sums + 0.0,)  # eager starts from +0.0: no -0.0 sum
    if not checked:
        return (sums,)
    before = sums - x
    wrapped = ((before ^ sums) & (x ^ sums)) < 0
    return sums, wrapped, lax.cumsum(x.astype(jnp.float32), axis=dim)


def lib_cumprod(x, *, dim, checked=False):
    """`torch.cumprod` along `dim` of data already in the result's type. With
    `checked` (an int64 result, multiplied in int32), also whether each step wrapped
    and a float32 estimate of the exact products (a step wraps where dividing the
    wrapped product by the element does not give the product before it; the first
    that wraps leaves int32, as for `lib_cumsum`)."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        return (lax.cumprod(x.astype(jnp.promote_types(x.dtype, jnp.float32)), axis=dim),)
    products = lax.cumprod(x, axis=dim)
    if not checked:
        return (products,)
    first = lax.slice_in_dim(jnp.ones_like(products), 0, 1, axis=dim)
    rest = lax.slice_in_dim(products, 0, products.shape[dim] - 1, axis=dim)
    before = lax.concatenate([first, rest], dim)
    minus_one = x == -1
    divisor = jnp.where((x == 0) | minus_one, 1, x)
    wrapped = jnp.where(
        minus_one,
        before == jnp.iinfo(jnp.int32).min,
        (x != 0) & (lax.div(products, divisor) != before),
    )
    return products, wrapped, lax.cumprod(x.astype(jnp.float32), axis=dim)


def lib_cumextreme(x, *, dim, largest):
    """`torch.cummax` (`largest`) or `torch.cummin` along `dim`: the running extreme
    and where it is. As eager's loop: an element replaces the running one when it is
    NaN, or when neither is and it is at least as large (small), so a tie gives the
    later index and NaN sticks at the latest NaN. That is a max over (is NaN, value,
    index) in lexicographic order, so associative: a parallel scan."""
    floating = jnp.issubdtype(x.dtype, jnp.floating)
    if floating:  # (float64 stays float64)
        x = x.astype(jnp.promote_types(x.dtype, jnp.float32))
    index = lax.broadcasted_iota(jnp.int32, x.shape, dim)

    def combine(earlier, later):
        (a, i), (b, j) = earlier, later
        wins = (b >= a) if largest else (b <= a)
        if floating:
            wins = jnp.isnan(b) | (~jnp.isnan(a) & wins)
        return jnp.where(wins, b, a), jnp.where(wins, j, i)

    values, indices = lax.associative_scan(combine, (x, index), axis=dim)
    return values, indices


def lib_logcumsumexp(x, *, dim):
    """`torch.logcumsumexp` along `dim`, in float32 or float64 (NaN propagates, -inf
    terms add nothing)."""
    x = x.astype(jnp.promote_types(x.dtype, jnp.float32))
    return (lax.cumlogsumexp(x, axis=dim),)
