"""Attention as users write it in plain torch (B, H, T, D inputs, scale 1/8 for D=64),
shared by the benchmarks that compile it (`traffic.py --frontend`, `on_tpu.py`)."""

from __future__ import annotations

import torch


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v


def causal_attention(q, k, v):
    t = q.shape[-2]
    mask = torch.ones(t, t, dtype=torch.bool).triu(1)
    scores = (q @ k.transpose(-2, -1) * 0.125).masked_fill(mask, float("-inf"))
    return torch.softmax(scores, -1) @ v
