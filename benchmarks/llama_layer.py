"""A llama decoder layer (`pallas_ir.frontend.models.LlamaLayer`: RMS norms, rotary
embeddings, grouped-query causal attention, a SwiGLU MLP) as pallas-ir compiles it,
timed on a TPU against the same layer written in jax (one XLA program), with each
kernel's own device time.

The TPU machine has jax but no torch, so the work is split in two:

    python benchmarks/llama_layer.py emit --out DIR [--dims 256 1024]   # here
    python benchmarks/llama_layer.py time --dir DIR                     # on a TPU

`emit` compiles the layer (8 heads, 2 key-value heads, batch 4, 128 tokens) at each
model dim, prints its launches and modelled HBM bytes, and writes the emitted module
(interpret off) and its arguments and eager's output (`.npz`) to DIR. To compare two
versions of pallas-ir, copy the other's module in beside it as `llama_d1024.base.py`
(any name after the first dot): it is timed with the same `.npz`. `time` checks
each module's output against eager's, times the jitted forward (the best of five runs
of 20 calls) and the jax layer (f32 products at the highest precision, as pallas-ir's
are), and times each kernel alone, 50 calls chained in one jitted `fori_loop`, so that
a kernel's figure is its device time, not the dispatch of a call.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

BATCH, TOKENS, HEADS, KV_HEADS = 4, 128, 8, 2


def emit(out: Path, dims: list[int]) -> None:
    import numpy as np
    import torch

    import pallas_ir
    from pallas_ir.frontend.models import LlamaLayer

    out.mkdir(parents=True, exist_ok=True)
    for d in dims:
        torch.manual_seed(0)
        hidden = 688 if d == 256 else 2 * d
        model = LlamaLayer(d, HEADS, KV_HEADS, hidden, TOKENS).eval()
        x = torch.randn(BATCH, TOKENS, d)
        # the parameters and buffers as inputs, in the order `jax_layer` takes them
        state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
        tensors = [t.detach() for t in state.values()]

        def layer(x, *tensors, model=model, names=tuple(state)):
            return torch.func.functional_call(model, dict(zip(names, tensors)), (x,))

        with torch.no_grad():
            k = pallas_ir.compile(layer, [x, *tensors], cache=False, interpret=False)
            want = model(x)
        report = k.cost_report()
        moved = sum(o.bytes for c in report.calls for o in c.operands)
        print(
            f"d={d}: {len(report.calls)} Pallas launches, {len(report.xla_calls)} XLA, "
            f"{moved / 1e6:.2f} MB modelled"
        )
        arrays = [np.asarray(a) for a in k.host_arguments(x, *tensors)]
        (out / f"llama_d{d}.py").write_text(k.source)
        np.savez(out / f"llama_d{d}.npz", *arrays, want=want.numpy())


def _rms(x, w):
    import jax
    import jax.numpy as jnp

    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * w


def _rotated(x, cos, sin):
    import jax.numpy as jnp

    half = x.shape[-1] // 2
    return x * cos + jnp.concatenate([-x[..., half:], x[..., :half]], -1) * sin


def jax_layer(x, norm1, norm2, wq, wk, wv, wo, wg, wu, wd, cos, sin, *iotas):
    """The layer in jax, with `LlamaLayer`'s parameters in its order."""
    import jax
    import jax.numpy as jnp

    b, t, d = x.shape
    hd = d // HEADS

    def heads(y, n):
        return y.reshape(b, t, n, hd).transpose(0, 2, 1, 3)

    h = _rms(x, norm1)
    q = _rotated(heads(h @ wq.T, HEADS), cos[:t], sin[:t])
    k = _rotated(heads(h @ wk.T, KV_HEADS), cos[:t], sin[:t])
    v = heads(h @ wv.T, KV_HEADS)
    k, v = (jnp.repeat(a, HEADS // KV_HEADS, 1) for a in (k, v))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
    scores = jnp.where(jnp.tril(jnp.ones((t, t), bool)), scores, -jnp.inf)
    y = jax.nn.softmax(scores, -1) @ v
    x = x + y.transpose(0, 2, 1, 3).reshape(b, t, d) @ wo.T
    h = _rms(x, norm2)
    return x + (jax.nn.silu(h @ wg.T) * (h @ wu.T)) @ wd.T


def best(fn, calls: int, runs: int = 5) -> float:
    import jax

    jax.block_until_ready(fn())
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(calls):
            result = fn()
        jax.block_until_ready(result)
        best = min(best, (time.perf_counter() - started) / calls)
    return best * 1e6


def kernel_time(call, args, kwargs) -> float | None:
    """Microseconds of one call of a kernel, 50 chained in a `fori_loop`: the first
    float argument is the loop's carry, and each call's result nudges one element of
    it in place (`.at[0].add`), so no call is hoisted and none pays an extra pass over
    its input (adding a scalar to the whole argument did: 16 MB more of HBM traffic a
    call for a (4096, 1024) f32 input)."""
    import jax
    import jax.numpy as jnp

    floating = [i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.floating)]
    if not floating:
        return None
    j = floating[0]

    def chained(*args):
        def body(n, carried):
            moved = list(args)
            moved[j] = carried
            out = call(*moved, **kwargs)
            out = out[0] if isinstance(out, tuple | list) else out
            # finite and tiny, but depending on the output
            nudge = jnp.nan_to_num(out.reshape(-1)[0].astype(jnp.float32)) * 1e-30
            return carried.at[(0,) * carried.ndim].add(nudge.astype(carried.dtype))

        return jax.lax.fori_loop(0, 50, body, args[j])

    run = jax.jit(chained)
    return best(lambda: run(*args), calls=3, runs=3) / 50


def time_layer(path: Path) -> dict:
    """The record of one emitted layer (see the module docstring)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    # modules of one layer compiled by two versions (`llama_d1024.base.py`) share
    # the layer's arguments and eager's output
    data = np.load(path.with_name(path.name.split(".")[0] + ".npz"))
    args = [jnp.asarray(data[f"arr_{i}"]) for i in range(len(data.files) - 1)]
    want = data["want"]
    ns: dict = {}
    # the module pallas-ir emitted (the TPU machine has no pallas-ir to exec it with)
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102
    forward = jax.jit(lambda *a: ns["forward"](*a, interpret=False))
    error = float(np.max(np.abs(np.asarray(forward(*args)) - want)))
    with jax.default_matmul_precision("highest"):
        reference = jax.jit(jax_layer)
        jax_error = float(np.max(np.abs(np.asarray(reference(*args)) - want)))
        jax_us = best(lambda: reference(*args), calls=20)
    kernels: dict[str, float | None] = {}

    def timed(name: str):
        call = ns[name]

        def run(*a, **kw):
            kernels[name] = kernel_time(call, a, kw)
            return call(*a, **kw)

        return run

    for name in [n for n in ns if n.endswith("_call")]:
        ns[name] = timed(name)
    ns["forward"](*args, interpret=False)  # each kernel timed on its own inputs
    return {
        "layer": path.name.removesuffix(".py"),
        "pallas_ir_us": best(lambda: forward(*args), calls=20),
        "jax_us": jax_us,
        "max_error": error,
        "jax_max_error": jax_error,
        "kernels_us": {k: None if v is None else round(v, 1) for k, v in kernels.items()},
    }


def time_layers(folder: Path) -> list[dict]:
    records = []
    for path in sorted(folder.glob("llama_d*.py")):
        record = time_layer(path)
        print(json.dumps(record), flush=True)
        records.append(record)
    return records


def emit_and_time_parser(
    description: str,
) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command line of a benchmark split in two, as the TPU machine has no torch:
    `emit --out DIR` compiles and writes modules here, `time --dir DIR [--json F]`
    times them on a TPU. Returns the parser and `emit`'s, for its own options."""
    ap = argparse.ArgumentParser(description=description)
    sub = ap.add_subparsers(dest="command", required=True)
    e = sub.add_parser("emit", help="compile and write the modules (needs torch)")
    e.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("time", help="time the written modules (needs a TPU)")
    t.add_argument("--dir", type=Path, required=True)
    t.add_argument("--json", type=Path, help="write the records here too")
    return ap, e


def main(argv: list[str] | None = None) -> int:
    ap, e = emit_and_time_parser(__doc__.split("\n\n")[0])
    e.add_argument("--dims", type=int, nargs="+", default=[256, 1024])
    args = ap.parse_args(argv)
    if args.command == "emit":
        emit(args.out, args.dims)
        return 0
    records = time_layers(args.dir)
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0 if all(r["max_error"] < 1e-4 for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
