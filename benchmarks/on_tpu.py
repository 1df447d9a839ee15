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
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

MODULES = [
    "test_sorting_and_scans",
    "test_library_calls",
    "test_scatter",
    "test_convolution",
    "test_narrow_dtypes",
    "test_frontend",
    "test_aten_more_ops",
    "test_special_functions",
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


def _time(fn, *args, repeats: int = 50) -> float:
    """Mean seconds of one call of jitted `fn` (after a warm-up call)."""
    import jax

    jax.block_until_ready(fn(*args))
    started = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - started) / repeats


def _one_argument(fn, k):
    """`fn(x, k)` as a function of `x` alone (a traced function takes only tensors)."""
    return lambda x: fn(x, k)


def timings() -> list[dict]:
    """Kernels of ours against the XLA op doing the same work, on the same arrays."""
    import jax
    import jax.numpy as jnp
    import torch

    import pallas_ir

    cases = [
        (
            "topk(softmax(x), 2), x f32[4096, 64] (MoE routing)",
            lambda x: torch.topk(torch.softmax(x, -1), 2),
            lambda x: jax.lax.top_k(jax.nn.softmax(x, axis=-1), 2),
            (4096, 64),
        ),
    ]
    for n, k in [(8, 2), (64, 2), (128, 8), (256, 8), (512, 8)]:
        cases.append(
            (
                f"topk(x, {k}), x f32[4096, {n}]",
                _one_argument(torch.topk, k),
                _one_argument(jax.lax.top_k, k),
                (4096, n),
            )
        )
    for n in [32, 128, 512]:
        cases.append(
            (
                f"cumsum(x, -1), x f32[4096, {n}]",
                lambda x: torch.cumsum(x, -1),
                lambda x: jnp.cumsum(x, axis=-1),
                (4096, n),
            )
        )
    records = []
    for what, fn, reference, shape in cases:
        x = torch.randn(shape)
        k = pallas_ir.compile(fn, [x])
        args = [jax.device_put(a) for a in k.host_arguments(x)]
        ours = _time(k._forward, *args)
        xla = _time(jax.jit(reference), jnp.asarray(x.numpy()))
        record = {"what": what, "pallas_ir_us": ours * 1e6, "xla_us": xla * 1e6}
        record["launches"] = k.source.count("pl.pallas_call(")
        print(
            f"{what}: pallas-ir {ours * 1e6:.1f} us ({record['launches']} launches), "
            f"XLA {xla * 1e6:.1f} us",
            flush=True,
        )
        records.append(record)
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", default=",".join(MODULES))
    parser.add_argument("--json", default="")
    parser.add_argument("--no-timings", action="store_true")
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
    times = [] if args.no_timings else timings()
    if args.json:
        Path(args.json).write_text(json.dumps({"checks": records, "timings": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
