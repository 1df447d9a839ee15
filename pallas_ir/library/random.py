"""Random numbers: jax's counter-based generator, keyed by a seed the host draws from
torch's default generator at every call (so `torch.manual_seed` makes a compiled
program repeat its draws; the numbers are not eager's, which come from a different
generator). Each random op of a program folds its own number into the key."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def random_key(seed, op):
    """The key of random op number `op` of a program, from the call's seed (two
    int32 words)."""
    key = jax.random.wrap_key_data(seed.astype(jnp.uint32))
    return jax.random.fold_in(key, op)


def lib_uniform(seed, *, op, shape):
    """Uniform on [0, 1), as `torch.rand`."""
    return (jax.random.uniform(random_key(seed, op), tuple(shape), jnp.float32),)


def lib_normal(seed, *, op, shape):
    """Standard normal, as `torch.randn`."""
    return (jax.random.normal(random_key(seed, op), tuple(shape), jnp.float32),)


def lib_randint(seed, *, op, shape, low, high):
    """Integers uniform on [low, high), as `torch.randint`."""
    key = random_key(seed, op)
    return (jax.random.randint(key, tuple(shape), low, high, jnp.int32),)


def lib_randperm(seed, *, op, n):
    """A random permutation of 0 .. n - 1, as `torch.randperm`."""
    return (jax.random.permutation(random_key(seed, op), n).astype(jnp.int32),)


def lib_multinomial(seed, weights, *, op, samples, replacement):
    """`samples` indices per row drawn in proportion to the rows of `weights`, as
    `torch.multinomial` (without replacement: the Gumbel top-k trick, which draws
    distinct indices with the probabilities of successive draws)."""
    key = random_key(seed, op)
    logits = jnp.log(weights)
    if replacement:
        shape = (samples, *weights.shape[:-1])
        drawn = jax.random.categorical(key, logits, axis=-1, shape=shape)
        return (jnp.moveaxis(drawn, 0, -1).astype(jnp.int32),)
    gumbel = jax.random.gumbel(key, weights.shape, jnp.float32)
    _, index = jax.lax.top_k(logits + gumbel, samples)
    return (index.astype(jnp.int32),)
