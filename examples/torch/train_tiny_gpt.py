"""Train a 2-layer GPT (`--layers`) for 20 AdamW steps (`--steps`) under
`torch.compile(backend="pallas_ir")` and check its loss curve against eager PyTorch.

    JAX_PLATFORMS=cpu python examples/torch/train_tiny_gpt.py

Token and position embeddings, causal self-attention, an MLP and a cross-entropy loss:
AOTAutograd splits each step into a forward and a backward graph, and pallas_ir compiles
both into Pallas kernels (run in interpret mode without a TPU). The embeddings' backward
is a scatter-add of whole rows: a Pallas row scatter (one row DMA a token).
"""

from __future__ import annotations

import argparse
import copy
import math
import time

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, time_, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, time_, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dim // self.heads)
        causal = torch.tril(torch.ones(time_, time_, dtype=torch.bool))
        attention = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (attention @ v).transpose(1, 2).reshape(batch, time_, dim)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = CausalSelfAttention(dim, heads)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int, context: int, dim: int, heads: int, layers: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.tokens(idx) + self.positions(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def losses(model: nn.Module, batches, steps: int) -> list[float]:
    """The loss at each of `steps` AdamW steps of `model` (compiled or not)."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    curve = []
    for step in range(steps):
        idx, targets = batches[step % len(batches)]
        optimizer.zero_grad()
        loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        curve.append(loss.item())
    return curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    vocab, context = 64, 16
    text = torch.randint(0, vocab, (4 * 8 * context + 1,))
    batches = [
        (
            text[i : i + 8 * context].view(8, context),
            text[i + 1 : i + 1 + 8 * context].view(8, context),
        )
        for i in range(0, 4 * 8 * context, 8 * context)
    ]
    model = TinyGPT(vocab, context, dim=32, heads=2, layers=args.layers)
    eager = copy.deepcopy(model)

    start = time.perf_counter()
    compiled = losses(torch.compile(model, backend="pallas_ir"), batches, args.steps)
    seconds = time.perf_counter() - start
    reference = losses(eager, batches, args.steps)

    for step, (a, b) in enumerate(zip(compiled, reference, strict=True)):
        print(f"step {step:2d}  pallas_ir {a:.6f}  eager {b:.6f}  diff {abs(a - b):.1e}")
    worst = max(abs(a - b) for a, b in zip(compiled, reference, strict=True))
    print(
        f"{args.steps} steps in {seconds:.1f} s (compile included); "
        f"largest loss difference {worst:.1e}"
    )
    if worst > 1e-4:
        raise SystemExit("the loss curve differs from eager by more than 1e-4")


if __name__ == "__main__":
    main()
