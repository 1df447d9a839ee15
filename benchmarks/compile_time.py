"""Compile time of pallas_ir against torch.compile with Inductor's Pallas backend.

    python benchmarks/compile_time.py [--filter REGEX] [--warm-calls 5]

Both systems get the same programs, in the same process, one after the other:

- `cold`: `pallas_ir.compile(fn, inputs)` plus the first call, against
  `torch.compile(fn)` with `torch._inductor.config.cpu_backend = "pallas"` plus its
  first call (dynamo reset and Inductor's on-disk caches off before each program, so
  every compile is from scratch);
- `warm`: the median of `--warm-calls` later calls of each.

Both run their kernels in Pallas interpret mode on this CPU (no TPU), and both outputs
are checked against eager PyTorch. Inductor's Pallas backend calls ATen for matmuls
(`extern_kernels.mm`); pallas_ir emits them as Pallas kernels. Prints per-program times
and ratios (pallas_ir / Inductor; below 1 means pallas_ir is faster) and ends with the
median ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import torch
import torch._inductor.config as inductor_config

import pallas_ir
from pallas_ir.frontend.models import TransformerBlock

F = torch.nn.functional


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def _programs():
    torch.manual_seed(0)
    block = TransformerBlock().eval()
    return {
        "elementwise_chain": (
            lambda x, y: torch.tanh(x * 2 - y) + torch.exp(-x.abs()) / (1 + y * y),
            [_randn(256, 512), _randn(256, 512)],
        ),
        "broadcast_bias_relu": (
            lambda x, b: torch.relu(x + b) * 0.5,
            [_randn(512, 384), _randn(384)],
        ),
        "strided_slices": (
            lambda x: x[::2, 1::3, :] * 3 + x[1::2, ::3, :],
            [_randn(16, 30, 128)],
        ),
        "permute_3d": (lambda x: x.permute(2, 0, 1) * 2, [_randn(8, 128, 256)]),
        "reductions": (
            lambda x: (x.sum(0), x.amax(1), x.mean(dim=(0, 2))),
            [_randn(16, 32, 128)],
        ),
        "softmax": (lambda x: torch.softmax(x, dim=-1), [_randn(256, 512)]),
        "layer_norm": (
            lambda x, g, h: F.layer_norm(x, (256,), g, h),
            [_randn(128, 256), _randn(256), _randn(256)],
        ),
        "rms_norm": (
            lambda x, w: F.rms_norm(x, (256,), w, eps=1e-6),
            [_randn(128, 256), _randn(256)],
        ),
        "linear_gelu": (
            lambda x, w, b: F.gelu(F.linear(x, w, b)),
            [_randn(128, 256), _randn(512, 256), _randn(512)],
        ),
        "embedding": (
            lambda i, w: F.embedding(i, w) * 2,
            [torch.randint(0, 1000, (64,)), _randn(1000, 128)],
        ),
        "transformer_block": (block, [_randn(2, 16, 128)]),
    }


def _timed(call):
    start = time.perf_counter()
    out = call()
    return out, time.perf_counter() - start


def _warm(call, n: int) -> float:
    times = []
    for _ in range(n):
        times.append(_timed(call)[1])
    return statistics.median(times)


def _check(got, fn, inputs) -> None:
    with torch.no_grad():
        want = fn(*inputs)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def _pallas_ir(fn, inputs, warm_calls: int) -> tuple[float, float]:
    """pallas_ir.compile plus the first call, and the median warm call, in seconds."""
    with torch.no_grad():
        start = time.perf_counter()
        ours = pallas_ir.compile(fn, inputs)
        out = ours(*inputs)
        cold = time.perf_counter() - start
        _check(out, fn, inputs)
        return cold, _warm(lambda: ours(*inputs), warm_calls)


def _inductor(fn, inputs, warm_calls: int) -> tuple[float, float]:
    """torch.compile (Inductor, Pallas backend) plus the first call, and the median
    warm call, in seconds."""
    torch._dynamo.reset()
    with torch.no_grad():
        theirs = torch.compile(fn)  # compiles at the first call
        out, cold = _timed(lambda: theirs(*inputs))
        _check(out, fn, inputs)
        return cold, _warm(lambda: theirs(*inputs), warm_calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only programs matching this regex")
    parser.add_argument("--warm-calls", type=int, default=5)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    inductor_config.cpu_backend = "pallas"
    inductor_config.fx_graph_cache = False
    inductor_config.autotune_local_cache = False

    # One untimed program through each system first, so that neither pays for
    # importing and initialising JAX, dynamo or Inductor inside a timed program.
    for system in (_pallas_ir, _inductor):
        system(lambda x: x + 1, [torch.ones(8, 128)], 1)
    print(
        f"{'program':22} {'pallas_ir cold s':>16} {'inductor cold s':>16} {'ratio':>6}"
        f" {'pallas_ir warm ms':>17} {'inductor warm ms':>16} {'ratio':>6}"
    )
    cold_ratios, warm_ratios, failures = [], [], 0
    for name, (fn, inputs) in _programs().items():
        if not re.search(args.filter, name):
            continue
        times = []
        for system in (_pallas_ir, _inductor):
            try:
                times.append(system(fn, inputs, args.warm_calls))
            except Exception as e:  # noqa: BLE001 - a system that cannot compile it: said, not timed
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                print(f"{name:22} {system.__name__[1:]} failed: {first[:150]}")
                failures += 1
        if len(times) < 2:
            continue
        (ours_cold, ours_warm), (theirs_cold, theirs_warm) = times
        cold, warm = ours_cold / theirs_cold, ours_warm / theirs_warm
        cold_ratios.append(cold)
        warm_ratios.append(warm)
        print(
            f"{name:22} {ours_cold:16.2f} {theirs_cold:16.2f} {cold:6.2f}"
            f" {ours_warm * 1e3:17.1f} {theirs_warm * 1e3:16.1f} {warm:6.3f}",
            flush=True,
        )
    if not cold_ratios:
        print("no program matches", args.filter)
        return 1
    print(
        f"median ratio (pallas_ir / inductor): cold {statistics.median(cold_ratios):.2f},"
        f" warm {statistics.median(warm_ratios):.3f} over {len(cold_ratios)} programs"
        f" ({failures} failed compiles, not counted)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
