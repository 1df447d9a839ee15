"""Compile time of pallas_ir against torch.compile with Inductor's Pallas backend.

    python benchmarks/compile_time.py [--filter REGEX] [--warm-calls 5]
    python benchmarks/compile_time.py --profile      # where the seconds go
    python benchmarks/compile_time.py --processes    # the on-disk cache, across processes
    python benchmarks/compile_time.py --throughput   # the pass pipeline at 1k, 10k, 100k ops

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
median ratios. pallas_ir compiles with its on-disk cache off here (every compile from
scratch, as Inductor's).

`--profile` splits the cold compile (plus the first call) of the tiny GPT's training
step (`examples/torch/train_tiny_gpt.py`: forward, loss and backward under
`torch.compile(backend="pallas_ir")`) and of the nanoGPT block into phases
(`pallas_ir.profile_compiles`): torch's trace, the frontend, each pass, emit, exec,
jax's export (trace and lowering), lowering and the XLA compile. What the phases leave
of the wall time is dynamo and AOTAutograd.

`--processes` runs each of those two programs in a fresh process twice, sharing an
empty on-disk cache: the first process compiles, the second reads what the first
wrote. Each child times its compile plus first call (imports not included).

`--throughput` runs the pass pipeline (and the emitter) on ta modules of about 1k, 10k
and 100k ops (`--sizes`): stacks of nanoGPT blocks, each layer with its own weights, as
the frontend writes them. It prints ta ops per second next to xDSL's own parse and print
of the same module, and their ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

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
        ours = pallas_ir.compile(fn, inputs, cache=False)
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


def _tiny_gpt_step():
    """The example's tiny GPT (2 layers) under torch.compile: one training step's
    forward, loss and backward, as a function of nothing."""
    path = Path(__file__).parent.parent / "examples" / "torch" / "train_tiny_gpt.py"
    spec = importlib.util.spec_from_file_location("train_tiny_gpt", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    torch.manual_seed(0)
    vocab, context = 64, 16
    model = example.TinyGPT(vocab, context, dim=32, heads=2, layers=2)
    idx = torch.randint(0, vocab, (8, context))
    targets = torch.randint(0, vocab, (8, context))
    compiled = torch.compile(model, backend="pallas_ir")

    def step():
        compiled(idx, targets).backward()

    return step


def _block_call():
    """The nanoGPT block compiled by pallas_ir and called once, without grad."""
    torch.manual_seed(0)
    block = TransformerBlock().eval()
    x = _randn(2, 16, 128)

    def call():
        with torch.no_grad():
            pallas_ir.compile(block, [x])(x)

    return call


_WHOLE_PROGRAMS = {
    "tiny_gpt_train_step": _tiny_gpt_step,
    "transformer_block": _block_call,
}


def _profile(names: list[str]) -> None:
    """Each program's cold compile and first call, by phase (the cache off)."""
    os.environ["PALLAS_IR_CACHE"] = "0"
    _block_call()()  # imports and jax's first compile, untimed
    for name in names:
        run = _WHOLE_PROGRAMS[name]()
        torch._dynamo.reset()
        start = time.perf_counter()
        with pallas_ir.profile_compiles() as profile:
            run()
        wall = time.perf_counter() - start
        print(f"\n{name}: {wall:.2f} s cold (compile and first call)")
        print(profile.table())
        print(f"{'dynamo, AOTAutograd and the rest':32}  {wall - profile.total():7.3f}")


def _child(name: str) -> None:
    """One program's compile and first call in this process: its seconds as JSON."""
    x = torch.ones(8, 128)  # imports and jax's first compile, untimed
    pallas_ir.compile(lambda x: x + 1, [x], cache=False)(x)
    run = _WHOLE_PROGRAMS[name]()
    start = time.perf_counter()
    with pallas_ir.profile_compiles() as profile:
        run()
    seconds = time.perf_counter() - start
    print(profile.table(), file=sys.stderr)
    print(json.dumps({"seconds": seconds, "cache_hits": profile.cache_hits}))


def _processes(names: list[str]) -> None:
    """Each program compiled in a fresh process, then read back from the on-disk cache
    in a second one."""
    print(f"{'program':22} {'1st process s':>14} {'2nd process s':>14} {'ratio':>6}")
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "PALLAS_IR_CACHE_DIR": cache, "PALLAS_IR_CACHE": "1"}
            runs = []
            for _ in range(2):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", name],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        first, second = (r["seconds"] for r in runs)
        print(
            f"{name:22} {first:14.2f} {second:14.2f} {second / first:6.2f}"
            f"  ({runs[1]['cache_hits']} programs from the cache)",
            flush=True,
        )


def _stack_ta(layers: int) -> str:
    """The ta module of `layers` nanoGPT blocks (d = 64, 2 heads) on x[1, 16, 64]."""
    from pallas_ir.frontend import torch_to_ta

    torch.manual_seed(0)
    model = torch.nn.Sequential(*(TransformerBlock(64, 2) for _ in range(layers))).eval()
    with torch.no_grad():
        return str(torch_to_ta(model, [_randn(1, 16, 64)]).module)


def _throughput(sizes: list[int]) -> None:
    """Seconds of the pipeline against xDSL's parse + print, at each size."""
    from pallas_ir.compiler import run_pipeline
    from pallas_ir.registry import default_pipeline

    def ops(text: str) -> int:
        return sum(1 for _ in pallas_ir.parse(text).walk())

    per_layer = ops(_stack_ta(2)) - ops(_stack_ta(1))
    pipeline = default_pipeline("v5e")
    print(
        f"{'ta ops':>8} {'layers':>6} {'parse+print s':>13} {'pipeline s':>10}"
        f" {'emit s':>7} {'ops/s':>8} {'ratio':>6}"
    )
    for size in sizes:
        layers = max(1, round(size / per_layer))
        text = _stack_ta(layers)
        start = time.perf_counter()
        module = pallas_ir.parse(text)
        str(module)
        parse_print = time.perf_counter() - start
        count = sum(1 for _ in module.walk())
        start = time.perf_counter()
        run_pipeline(module, pipeline)
        passes = time.perf_counter() - start
        start = time.perf_counter()
        pallas_ir.emit_python(module)
        emit = time.perf_counter() - start
        print(
            f"{count:8d} {layers:6d} {parse_print:13.2f} {passes:10.2f} {emit:7.2f}"
            f" {count / passes:8.0f} {passes / parse_print:6.2f}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only programs matching this regex")
    parser.add_argument("--warm-calls", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="phases of a cold compile")
    parser.add_argument("--processes", action="store_true", help="the on-disk cache")
    parser.add_argument("--throughput", action="store_true", help="pipeline vs size")
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="ta ops, for --throughput"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    whole = [n for n in _WHOLE_PROGRAMS if re.search(args.filter, n)]
    if args.child:
        _child(args.child)
        return 0
    if args.profile:
        _profile(whole)
        return 0
    if args.processes:
        _processes(whole)
        return 0
    if args.throughput:
        _throughput([int(n) for n in args.sizes.split(",")])
        return 0
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
