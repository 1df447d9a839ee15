"""FFTs, as ATen's `_fft_r2c`, `_fft_c2c` and `_fft_c2r` compute them, on complex
tensors held as pairs of reals (a trailing dim of 2: real, imaginary). `normalization`
is ATen's: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the number of points transformed."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def as_complex(p):
    """The complex array of pairs `p`."""
    return lax.complex(p[..., 0], p[..., 1])


def as_pairs(z):
    """Complex `z` as pairs of reals."""
    return jnp.stack([jnp.real(z), jnp.imag(z)], axis=-1)


def points(sizes):
    """The number of points of a transform of `sizes` (a product of ints)."""
    n = 1
    for size in sizes:
        n *= size
    return n


def scaled(z, n, normalization):
    """`z` normalized as ATen's `normalization` says for a transform of `n` points."""
    if normalization == 1:
        return z * (1 / n**0.5)
    if normalization == 2:
        return z * (1 / n)
    return z


def lib_fft_r2c(x, *, dim, normalization, onesided):
    """The forward transform of real `x` over `dim`; `onesided` keeps the first half
    (n // 2 + 1) of the last of them, as `rfftn` does."""
    axes = tuple(dim)
    z = jnp.fft.rfftn(x, axes=axes) if onesided else jnp.fft.fftn(x, axes=axes)
    n = points(x.shape[d] for d in axes)
    return (as_pairs(scaled(z, n, normalization)),)


def lib_fft_c2c(p, *, dim, normalization, forward):
    """The forward (or backward, exp(+i...)) transform of complex `p` over `dim`."""
    z, axes = as_complex(p), tuple(dim)
    if forward:
        z = jnp.fft.fftn(z, axes=axes)
    else:  # ifftn without its 1/n
        z = jnp.fft.ifftn(z, axes=axes, norm="forward")
    n = points(p.shape[d] for d in axes)
    return (as_pairs(scaled(z, n, normalization)),)


def lib_fft_c2r(p, *, dim, normalization, last_dim_size):
    """The backward transform of the one-sided complex `p` over `dim`, a real result
    of `last_dim_size` points along the last of them."""
    z, axes = as_complex(p), tuple(dim)
    sizes = [p.shape[d] for d in axes[:-1]] + [last_dim_size]
    x = jnp.fft.irfftn(z, s=sizes, axes=axes, norm="forward")
    return (scaled(x, points(sizes), normalization),)
