"""Attention as users write it in plain torch (B, H, T, D inputs, scale 1/8 for D=64),
shared by the benchmarks that compile it (`traffic.py --frontend`, `on_tpu.py`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v


def causal_attention(q, k, v):
    t = q.shape[-2]
    mask = torch.ones(t, t, dtype=torch.bool).triu(1)
    scores = (q @ k.transpose(-2, -1) * 0.125).masked_fill(mask, float("-inf"))
    return torch.softmax(scores, -1) @ v


def padded_attention(q, k, v, lengths):
    # keys past each batch row's length are padding
    keep = torch.arange(k.shape[-2])[None, :] < lengths[:, None]
    scores = (q @ k.transpose(-2, -1) * 0.125).masked_fill(
        ~keep[:, None, None, :], float("-inf")
    )
    return torch.softmax(scores, -1) @ v


def gqa_attention(q, k, v):
    # grouped-query heads: each k and v head serves q.shape[1] // k.shape[1] q heads
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def decode_attention(q, k, v):
    # one new query against the cached keys and values
    return F.scaled_dot_product_attention(q, k, v)


def decode_step(k_cache, v_cache, k, v, pos, q):
    # a decode step: the new key and value written into the caches in place (donated,
    # a row DMA each), then one new query against them
    k_cache.index_copy_(2, pos, k)
    v_cache.index_copy_(2, pos, v)
    return F.scaled_dot_product_attention(q, k_cache, v_cache)


def rotary_attention(q, k, v, cos, sin):
    # llama's: q (B, T, 8 * 32), k and v (B, T, 2 * 32) as the projections write them;
    # rotary embeddings on q and k, grouped-query heads, causal
    b, t, _ = q.shape
    q, k, v = (x.view(b, t, -1, 32).transpose(1, 2) for x in (q, k, v))

    def rotated(x):
        return x * cos + torch.cat((-x[..., 16:], x[..., :16]), -1) * sin

    return F.scaled_dot_product_attention(
        rotated(q), rotated(k), v, is_causal=True, enable_gqa=True
    )
