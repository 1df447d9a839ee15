"""Losses with a recursion no Pallas idiom covers: the CTC loss's alpha recursion."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def log_add(terms):
    """log(sum(exp(terms))) as ATen's CTC kernel computes it: shifted by the largest
    term (by 0 when all are -inf, giving -inf)."""
    top = terms[0]
    for t in terms[1:]:
        top = jnp.maximum(top, t)
    top = jnp.where(top == -jnp.inf, 0, top)
    total = sum(jnp.exp(t - top) for t in terms)
    return jnp.log(total) + top


def lib_ctc_loss(
    log_probs, targets, *lengths, blank, states, input_lengths=None, target_lengths=None
):
    """`aten._ctc_loss` on the CPU: each sequence's negative log likelihood and the
    log alphas (N, T, states) of the recursion over the targets with blanks between
    (`states` = 2 * the longest target + 1). `log_probs` is (T, N, C); `targets` (N,
    S) padded, or 1-d, the targets one after another; the lengths are the params
    where given (lists), else the operands after `targets`."""
    if input_lengths is None:
        input_lengths, target_lengths = lengths
    il = jnp.asarray(input_lengths, jnp.int32).reshape(-1)
    tl = jnp.asarray(target_lengths, jnp.int32).reshape(-1)
    steps, batch = log_probs.shape[0], log_probs.shape[1]
    longest = (states - 1) // 2
    position = jnp.arange(longest)[None, :]
    if targets.ndim == 2:
        within = jnp.clip(position, 0, targets.shape[1] - 1)
        labels = jnp.take_along_axis(
            targets, jnp.broadcast_to(within, (batch, longest)), 1
        )
    else:
        start = jnp.cumsum(tl) - tl
        labels = targets[jnp.clip(start[:, None] + position, 0, targets.shape[0] - 1)]
    s = jnp.arange(states)[None, :]
    # the extended labels: blank, l1, blank, l2, ..., blank
    extended = (
        jnp.where(
            s % 2 == 0,
            blank,
            jnp.take_along_axis(labels, jnp.clip(s // 2, 0, longest - 1), 1),
        )
        if longest
        else jnp.full((batch, states), blank)
    )
    extended = extended.astype(jnp.int32)
    valid = s < 2 * tl[:, None] + 1
    skip = (s > 1) & (extended != jnp.roll(extended, 2, axis=1))
    emit = jnp.take_along_axis(
        log_probs.astype(jnp.float32),
        jnp.broadcast_to(extended, (steps, batch, states)),
        2,
    )  # (T, N, states): each state's label's log probability
    neg_inf = jnp.float32(-jnp.inf)
    first = (s == 0) | ((s == 1) & (tl[:, None] > 0))
    alpha0 = jnp.where(first & valid, emit[0], neg_inf)

    def step(alpha, t):
        shifted1 = jnp.concatenate([jnp.full((batch, 1), neg_inf), alpha[:, :-1]], 1)
        shifted2 = jnp.concatenate([jnp.full((batch, 2), neg_inf), alpha[:, :-2]], 1)
        shifted2 = jnp.where(skip, shifted2, neg_inf)
        new = log_add([alpha, shifted1, shifted2]) + emit[t]
        new = jnp.where(valid, new, neg_inf)
        alpha = jnp.where((t < il)[:, None], new, alpha)
        return alpha, alpha

    last, alphas = lax.scan(step, alpha0, jnp.arange(1, steps))
    history = jnp.concatenate([alpha0[None], alphas], 0)
    end = jnp.take_along_axis(last, (2 * tl)[:, None], 1)[:, 0]
    before = jnp.take_along_axis(last, jnp.maximum(2 * tl - 1, 0)[:, None], 1)[:, 0]
    before = jnp.where(tl > 0, before, neg_inf)
    likelihood = log_add([end, before])
    likelihood = jnp.where(il == 0, jnp.where(tl == 0, 0, neg_inf), likelihood)
    return -likelihood, jnp.moveaxis(history, 0, 1)
