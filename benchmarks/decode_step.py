"""A decode step with a KV cache: the new key and value written into the caches, then
one query attending over them, as pallas-ir compiles it, timed on a TPU against the
same step written in jax (one XLA program).

Two forms of the step are compiled: `in_place` writes the caches the function is given
(`index_copy_`: pallas-ir scatters the rows into the donated input arrays), and
`functional` returns new caches (a copy of each, then the rows). The TPU machine has
jax but no torch, so the work is split in two:

    python benchmarks/decode_step.py emit --out DIR [--shape 8 8 4096 128]   # here
    python benchmarks/decode_step.py time --dir DIR                          # on a TPU

`emit` prints each form's launches and modelled HBM bytes (`pallas_ir.cost_report`)
and writes the emitted modules (interpret off) and the shape to DIR. `time` runs each
module and the jax program for a step at one position and compares the attention's
output (to 1e-5) and the caches (exactly), then times 200 steps chained in one jitted
`fori_loop` that carries the caches (each step's caches are the next step's, donated,
so an in-place write stays in place) and prints microseconds a step, the best of five.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path

FORMS = ("in_place", "functional")


def _step_in_place(k_cache, v_cache, k, v, pos, q):
    import torch.nn.functional as F

    k_cache.index_copy_(2, pos, k)
    v_cache.index_copy_(2, pos, v)
    return F.scaled_dot_product_attention(q, k_cache, v_cache)


def _step_functional(k_cache, v_cache, k, v, pos, q):
    import torch.nn.functional as F

    k_cache = k_cache.index_copy(2, pos, k)
    v_cache = v_cache.index_copy(2, pos, v)
    return F.scaled_dot_product_attention(q, k_cache, v_cache), k_cache, v_cache


def emit(out: Path, shape: tuple[int, int, int, int]) -> None:
    import torch

    import pallas_ir

    b, h, s, d = shape
    out.mkdir(parents=True, exist_ok=True)
    (out / "shape.json").write_text(json.dumps(shape))
    for form, fn in zip(FORMS, (_step_in_place, _step_functional), strict=True):
        inputs = [
            torch.randn(b, h, s, d),
            torch.randn(b, h, s, d),
            torch.randn(b, h, 1, d),
            torch.randn(b, h, 1, d),
            torch.tensor([s // 3]),
            torch.randn(b, h, 1, d),
        ]
        k = pallas_ir.compile(fn, inputs, cache=False, interpret=False)
        report = k.cost_report()
        moved = sum(o.bytes for c in report.calls for o in c.operands)
        print(
            f"{form}: {len(report.calls)} Pallas launches, {len(report.xla_calls)} XLA, "
            f"{moved / 1e6:.2f} MB modelled, donated {k.donated}"
        )
        (out / f"{form}.py").write_text(k.source)


def _jax_step(k_cache, v_cache, k, v, pos, q):
    import jax
    import jax.numpy as jnp

    at = pos[0]
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, at, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, at, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    out = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, -1), v_cache)
    return out, k_cache, v_cache


def _module_step(path: Path):
    """The emitted `forward` as (k_cache, v_cache, k, v, pos, q) -> (out, k_cache,
    v_cache), its constant iota inputs supplied."""
    import jax.numpy as jnp

    ns: dict = {}
    # the module pallas-ir emitted (the TPU machine has no pallas-ir to exec it with)
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102
    forward = ns["forward"]
    iotas = [
        jnp.arange(int(n[4:]), dtype=jnp.int32)
        for n in inspect.signature(forward).parameters
        if n.startswith("iota")
    ]

    def step(*args):
        return tuple(forward(*args, *iotas, interpret=False)[:3])

    return step


def time_steps(folder: Path, steps: int = 200) -> list[dict]:
    import jax
    import jax.numpy as jnp

    b, h, s, d = json.loads((folder / "shape.json").read_text())
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    k, v, q = (jax.random.normal(keys[j], (b, h, 1, d)) for j in (2, 3, 4))
    cases = {form: _module_step(folder / f"{form}.py") for form in FORMS}
    cases["jax"] = _jax_step
    records = []
    for name, step in cases.items():
        caches = [jax.random.normal(keys[j], (b, h, s, d)) for j in (0, 1)]
        pos = jnp.array([s // 3], jnp.int32)
        with jax.default_matmul_precision("highest"):
            want = jax.jit(_jax_step)(*caches, k, v, pos, q)
            got = jax.jit(step)(*caches, k, v, pos, q)
        error = float(jnp.max(jnp.abs(got[0] - want[0])))
        caches_equal = all(bool(jnp.array_equal(a, b)) for a, b in zip(got[1:], want[1:]))

        def chained(k_cache, v_cache, step=step):
            def body(n, carry):
                k_cache, v_cache, total = carry
                at = jnp.reshape(n % s, (1,)).astype(jnp.int32)
                out, k_cache, v_cache = step(k_cache, v_cache, k, v, at, q)
                return k_cache, v_cache, total + out[0, 0, 0, 0]

            return jax.lax.fori_loop(0, steps, body, (k_cache, v_cache, jnp.float32(0)))

        run = jax.jit(chained, donate_argnums=(0, 1))
        k_cache, v_cache, total = run(*caches)
        jax.block_until_ready(total)
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            k_cache, v_cache, total = run(k_cache, v_cache)
            jax.block_until_ready(total)
            best = min(best, (time.perf_counter() - started) / steps)
        record = {
            "form": name,
            "us_per_step": best * 1e6,
            "max_error": error,
            "caches_equal": caches_equal,
        }
        print(json.dumps(record), flush=True)
        records.append(record)
    return records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    e = sub.add_parser("emit", help="compile both forms and write their modules")
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--shape", type=int, nargs=4, default=[8, 8, 4096, 128])
    t = sub.add_parser("time", help="time the written modules on a TPU")
    t.add_argument("--dir", type=Path, required=True)
    t.add_argument("--json", type=Path, help="write the records here too")
    args = ap.parse_args(argv)
    if args.command == "emit":
        emit(args.out, tuple(args.shape))
        return 0
    records = time_steps(args.dir)
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0 if all(r["max_error"] < 1e-5 and r["caches_equal"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
