"""Small torch models the tests and benchmarks compile whole."""

from __future__ import annotations

import torch


class TransformerBlock(torch.nn.Module):
    """A pre-norm transformer block: attention with softmax, an MLP with GELU, norms."""

    def __init__(self, d: int = 128, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (
            z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v)
        )
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class LlamaLayer(torch.nn.Module):
    """A llama decoder layer: RMS norms, rotary embeddings on q and k, grouped-query
    causal attention (`heads` query heads sharing `kv_heads` key and value heads), and
    a SwiGLU MLP; no biases."""

    def __init__(
        self,
        d: int = 256,
        heads: int = 8,
        kv_heads: int = 2,
        hidden: int = 688,
        context: int = 128,
    ):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.norm1 = torch.nn.RMSNorm(d, eps=1e-6)
        self.norm2 = torch.nn.RMSNorm(d, eps=1e-6)
        self.q = torch.nn.Linear(d, d, bias=False)
        self.k = torch.nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.v = torch.nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.gate = torch.nn.Linear(d, hidden, bias=False)
        self.up = torch.nn.Linear(d, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, d, bias=False)
        half = torch.arange(0, self.head_dim, 2).float() / self.head_dim
        angles = torch.outer(torch.arange(context).float(), 10000.0**-half)
        angles = torch.cat((angles, angles), -1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def rotated(self, x: torch.Tensor) -> torch.Tensor:
        t, half = x.shape[-2], self.head_dim // 2
        turned = torch.cat((-x[..., half:], x[..., :half]), -1)
        return x * self.cos[:t] + turned * self.sin[:t]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        y = torch.nn.functional.scaled_dot_product_attention(
            self.rotated(q), self.rotated(k), v, is_causal=True, enable_gqa=True
        )
        x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))
