"""The op-family tests' programs run on a real TPU: compiled by `pallas_ir.compile`
where JAX sees a TPU (so `interpret` is off and Mosaic's kernels run on the chip), each
checked by its module's own `test_matches_eager` (and topk's stable-order check)
against eager PyTorch on the host CPU; then a few kernels timed against the XLA op
that does the same work. CI has no TPU: this is run by hand on one (the README of
`benchmarks/` says how), and prints a summary and, with `--json`, every result.

    python benchmarks/on_tpu.py [--modules test_scatter,...] [--json results.json]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

MODULES = [
    "test_fused_reductions",
    "test_sorting_and_scans",
    "test_library_calls",
    "test_scatter",
    "test_convolution",
    "test_narrow_dtypes",
    "test_frontend",
    "test_aten_more_ops",
    "test_special_functions",
    "test_rotations",
    "test_diagonals",
]
"""Test modules whose `PROGRAMS` are compiled by their `compiled` fixture and checked
by `test_matches_eager(name, compiled)`-style tests."""

CHECKS = ["test_matches_eager", "test_topk_matches_eager_in_the_stable_order"]


def _fixture_function(fixture):
    get = getattr(fixture, "_get_wrapped_function", None)
    return get() if get is not None else fixture.__wrapped__


def _names(test) -> list[str]:
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize" and mark.args[0] == "name":
            return list(mark.args[1])
    return []


def run_module(name: str) -> list[dict]:
    """Each program of test module `name` compiled for the TPU and checked: one record
    a (test, program), with the first lines of a failure."""
    module = importlib.import_module(name)
    started = time.perf_counter()
    compiled = _fixture_function(module.compiled)()
    compile_s = time.perf_counter() - started
    records = []
    for check in [c for c in CHECKS if hasattr(module, c)]:
        test = getattr(module, check)
        for program in _names(test):
            record = {"module": name, "test": check, "program": program}
            try:
                test(program, compiled)
                record["ok"] = True
            except Exception as e:  # noqa: BLE001 - a failure to report, not to stop at
                record["ok"] = False
                lines = traceback.format_exception_only(type(e), e)
                record["error"] = "".join(lines).strip()[-1500:]
            records.append(record)
    print(
        f"{name}: {sum(r['ok'] for r in records)}/{len(records)} pass "
        f"(compiled {len(compiled)} programs in {compile_s:.0f} s)",
        flush=True,
    )
    return records


def _time(fn, *args, iterations: int = 50) -> float:
    """Device seconds of one call of `fn`: `iterations` calls chained in one jitted loop
    (each call's first input takes one element of the last call's result, so none is
    elided or hoisted). Timing separate calls from Python measures dispatch, about 130 us a call
    on a v5e, not the kernels."""
    import jax
    import jax.numpy as jnp

    def body(_, xs):
        leaves = jax.tree_util.tree_leaves(fn(*xs))
        # 0 for the finite inputs timed, but not foldable to 0 (as `* 0` may be)
        firsts = [jnp.abs(jnp.ravel(leaf)[0].astype(jnp.float32)) for leaf in leaves]
        touch = jnp.minimum(sum(firsts), 0.0)
        first = xs[0]
        corner = (0,) * first.ndim
        changed = first.at[corner].add(touch.astype(first.dtype))
        return (changed, *xs[1:])

    loop = jax.jit(lambda *xs: jax.lax.fori_loop(0, iterations, body, xs))
    jax.block_until_ready(loop(*args))
    started = time.perf_counter()
    jax.block_until_ready(loop(*args))
    return (time.perf_counter() - started) / iterations


def _one_argument(fn, k):
    """`fn(x, k)` as a function of `x` alone (a traced function takes only tensors)."""
    return lambda x: fn(x, k)


def timings(only: list[str]) -> list[dict]:
    """Kernels of ours against the XLA op doing the same work, on the same arrays (the
    cases whose description holds a word of `only`, or all)."""
    import jax
    import jax.numpy as jnp
    import torch

    import pallas_ir

    cases = [
        (
            "topk(softmax(x), 2), x f32[4096, 64] (MoE routing)",
            lambda x: torch.topk(torch.softmax(x, -1), 2),
            lambda x: jax.lax.top_k(jax.nn.softmax(x, axis=-1), 2),
            [(4096, 64)],
        ),
        (
            "softmax(x, -1), x f32[4096, 1024] (one fused kernel)",
            lambda x: torch.softmax(x, -1),
            lambda x: jax.nn.softmax(x, axis=-1),
            [(4096, 1024)],
        ),
        (
            "layer_norm(x), x f32[4096, 1024] (one fused kernel)",
            lambda x: torch.nn.functional.layer_norm(x, (1024,)),
            lambda x: (
                (x - x.mean(-1, keepdims=True))
                * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
            ),
            [(4096, 1024)],
        ),
    ]
    from jax.experimental.pallas.ops.tpu import matmul as expert_matmul

    def expert(x, w):  # jax's example Pallas matmul, as its guide runs it
        return expert_matmul.matmul(x, w, block_shape=(512, 512), block_k=512)

    for n in [1024, 2048, 4096]:
        cases.append(
            (
                f"x @ w, f32[{n}, {n}] (f32 products: Precision.HIGHEST on both sides)",
                lambda x, w: x @ w,
                lambda x, w: jnp.dot(x, w, precision=jax.lax.Precision.HIGHEST),
                [(n, n), (n, n)],
            )
        )
        cases.append(
            (
                f"x @ w, bf16[{n}, {n}] (third: jax's example Pallas matmul)",
                lambda x, w: x @ w,
                lambda x, w: jnp.dot(x, w, preferred_element_type=jnp.float32).astype(
                    x.dtype
                ),
                [(n, n, torch.bfloat16), (n, n, torch.bfloat16)],
                expert,
            )
        )
    cases.append(
        (
            "gelu(x @ w.T + b, tanh), bf16 x[512, 4096], w[1024, 4096] (matmul epilogue)",
            lambda x, w, b: torch.nn.functional.gelu(
                torch.nn.functional.linear(x, w, b), approximate="tanh"
            ),
            lambda x, w, b: jax.nn.gelu(
                jnp.dot(x, w.T, preferred_element_type=jnp.float32) + b, approximate=True
            ).astype(x.dtype),
            [
                (512, 4096, torch.bfloat16),
                (1024, 4096, torch.bfloat16),
                (1024, torch.bfloat16),
            ],
        )
    )
    from attention_programs import (
        attention,
        causal_attention,
        decode_attention,
        rotary_attention,
    )
    from jax.experimental.pallas.ops.tpu import flash_attention as expert_attention

    highest = jax.lax.Precision.HIGHEST

    def xla_attention(q, k, v, causal=False):
        # f32 products at HIGHEST; bf16 ones in bf16 with f32 sums, the weights bf16
        if q.dtype == jnp.float32:
            dot = {"precision": highest}
        else:
            dot = {"preferred_element_type": jnp.float32}
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k, **dot) * 0.125
        if causal:
            t = q.shape[-2]
            s = jnp.where(jnp.triu(jnp.ones((t, t), bool), 1), -jnp.inf, s)
        p = jax.nn.softmax(s, axis=-1).astype(v.dtype)
        return jnp.einsum("bhqk,bhkd->bhqd", p, v, **dot).astype(v.dtype)

    for dtype, lengths, third in [
        (torch.float32, [512, 2048, 4096], "jax's flash_attention, default precision"),
        (torch.bfloat16, [2048, 4096], "jax's flash_attention"),
    ]:
        name = "f32" if dtype == torch.float32 else "bf16"
        for t in lengths:
            for causal in [False, True]:
                cases.append(
                    (
                        (
                            f"attention{' causal' if causal else ''}, {name} q, k, v "
                            f"[2, 4, {t}, 64] (third: {third})"
                        ),
                        causal_attention if causal else attention,
                        functools.partial(xla_attention, causal=causal),
                        [(2, 4, t, 64, dtype)] * 3,
                        functools.partial(
                            expert_attention.flash_attention,
                            causal=causal,
                            sm_scale=0.125,
                        ),
                    )
                )

    def xla_rotary(q, k, v, cos, sin):
        b, t, _ = q.shape
        q, k, v = (x.reshape(b, t, -1, 32).transpose(0, 2, 1, 3) for x in (q, k, v))

        def rotated(x):
            return x * cos + jnp.concatenate([-x[..., 16:], x[..., :16]], -1) * sin

        q, k = rotated(q), jnp.repeat(rotated(k), 4, axis=1)
        v = jnp.repeat(v, 4, axis=1)
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k, precision=highest) / 32**0.5
        s = jnp.where(jnp.triu(jnp.ones((t, t), bool), 1), -jnp.inf, s)
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bhqk,bhkd->bhqd", p, v, precision=highest)

    for t in [512, 2048]:
        cases.append(
            (
                (
                    f"rotary attention (llama: 8 q heads over 2 kv heads, causal), "
                    f"f32 q[2, {t}, 256], k, v [2, {t}, 64]"
                ),
                rotary_attention,
                xla_rotary,
                [(2, t, 256), (2, t, 64), (2, t, 64), (t, 32), (t, 32)],
            )
        )
    for t in [2048, 8192]:
        cases.append(
            (
                f"decode attention, f32 q[2, 4, 1, 64], k, v [2, 4, {t}, 64]",
                decode_attention,
                xla_attention,
                [(2, 4, 1, 64), (2, 4, t, 64), (2, 4, t, 64)],
            )
        )
    for n, k in [(8, 2), (16, 2), (32, 2), (64, 2), (128, 8), (256, 8), (512, 8)]:
        cases.append(
            (
                f"topk(x, {k}), x f32[4096, {n}]",
                _one_argument(torch.topk, k),
                _one_argument(jax.lax.top_k, k),
                [(4096, n)],
            )
        )
    for dtype in [torch.float32, torch.bfloat16]:
        cases.append(
            (
                f"x.diagonal() * 2, x {str(dtype)[6:]}[4096, 4096]",
                lambda x: x.diagonal() * 2,
                lambda x: jnp.diagonal(x) * 2,
                [(4096, 4096, dtype)],
            )
        )
    for n in [32, 64, 128, 256, 512]:
        cases.append(
            (
                f"cumsum(x, -1), x f32[4096, {n}]",
                lambda x: torch.cumsum(x, -1),
                lambda x: jnp.cumsum(x, axis=-1),
                [(4096, n)],
            )
        )
    records = []
    floor = _time(lambda x: x, jnp.zeros((8, 128), jnp.float32))
    print(f"an empty loop step: {floor * 1e6:.1f} us (in each time below)", flush=True)
    for what, fn, reference, shapes, *third in cases:
        if only and not any(word in what for word in only):
            continue
        xs = [
            torch.randn([d for d in s if isinstance(d, int)]).to(
                s[-1] if isinstance(s[-1], torch.dtype) else torch.float32
            )
            for s in shapes
        ]
        k = pallas_ir.compile(fn, xs)
        args = [jax.device_put(a) for a in k.host_arguments(*xs)]
        ours = _time(k._forward, *args)
        xla = _time(jax.jit(reference), *args[: len(xs)])
        record = {"what": what, "pallas_ir_us": ours * 1e6, "xla_us": xla * 1e6}
        record["launches"] = k.source.count("pl.pallas_call(")
        if third:
            record["third_us"] = _time(jax.jit(third[0]), *args[: len(xs)]) * 1e6
        print(
            f"{what}: pallas-ir {ours * 1e6:.1f} us ({record['launches']} launches), "
            f"XLA {xla * 1e6:.1f} us"
            + (f", third {record['third_us']:.1f} us" if third else ""),
            flush=True,
        )
        records.append(record)
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", default=",".join(MODULES))
    parser.add_argument("--json", default="")
    parser.add_argument("--no-timings", action="store_true")
    parser.add_argument("--timings", default="", help="comma-separated words of cases")
    args = parser.parse_args()
    import jax

    print("devices:", jax.devices(), flush=True)
    records = [r for m in args.modules.split(",") if m for r in run_module(m)]
    failed = [r for r in records if not r["ok"]]
    for r in failed:
        print(f"FAILED {r['module']}::{r['test']}[{r['program']}]\n  {r['error']}")
    print(
        f"{len(records) - len(failed)}/{len(records)} checks pass on {jax.devices()[0]}"
    )
    only = [w for w in args.timings.split(",") if w]
    times = [] if args.no_timings else timings(only)
    if args.json:
        Path(args.json).write_text(json.dumps({"checks": records, "timings": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
