"""Differential fuzzing of pallas_ir against eager PyTorch, for as long as asked.

    python benchmarks/fuzz.py [--seconds 600] [--max-steps 6] [--kinds chain,dag,...]
                              [--aot] [--program-timeout 120] [--seed 0]

The generator is tests/test_frontend_fuzz.py's (pallas_ir.frontend.fuzz): random programs
of the kinds `--kinds` names (all by default; `--list-kinds` prints them), each checked
against eager (results, mutated inputs, aliasing, the exception eager's behaviour calls
for). Every program that does not pass is printed with its source, and a summary per
kind follows: drawn, passed, failed (a wrong answer or exception), crashed (pallas_ir
raised where eager did not), hung (no result in --program-timeout seconds), invalid
(eager rejects the program: a fuzzer bug); then each distinct failure once, with the
smallest program that showed it. With `--aot`, every distinct module the programs
emitted is also AOT-compiled for v5e by libtpu (in child processes, AOT_BATCH modules
at a time as the run goes, the rest when the time is up), and a module the TPU compiler rejects fails its program. Exits 1 if
any program did not pass.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import re
import signal
import sys
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from hypothesis.errors import NonInteractiveExampleWarning

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.dynamo import EAGER_NOTICE
from pallas_ir.frontend.fuzz import (
    KINDS,
    InvalidProgram,
    Mismatch,
    Program,
    check_program,
    programs,
)
from pallas_ir.tpu_check import aot_compile_many

STATUSES = ("passed", "failed", "crashed", "hung", "invalid")


class Hang(BaseException):
    """No result in --program-timeout seconds (a BaseException: pallas_ir's own
    `except Exception` must not swallow it)."""


def _signature(kind: str, status: str, message: str) -> str:
    """What makes two failures the same: kind, status and the first line of the
    message with its numbers and quoted names taken out."""
    first = message.splitlines()[0] if message else ""
    first = re.sub(r" \(at [^)]*\)", "", first)  # where in the program it arose
    first = re.sub(r"-?\d+", "N", first)
    return f"{kind} {status}: {first[:160]}"


def _size(p: Program) -> tuple[int, int]:
    return (len(p.steps), sum(a.shape.__len__() for a in p.args()))


AOT_BATCH = 50
"""Distinct modules AOT-compiled together (one compiler process) while the run goes."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="comma-separated program kinds"
    )
    parser.add_argument("--list-kinds", action="store_true")
    parser.add_argument("--aot", action="store_true", help="AOT-compile for v5e too")
    parser.add_argument(
        "--program-timeout", type=int, default=120, help="seconds before a hang counts"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="first seed of inputs' values (programs vary)"
    )
    args = parser.parse_args(argv)
    if args.list_kinds:
        for kind, what in KINDS.items():
            print(f"{kind:10} {what}")
        return 0
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    warnings.filterwarnings("ignore", module="torch")  # eager fallbacks' notes
    # One kind after the other (a strategy drawing the kind itself favours the first).
    strategies = itertools.cycle(
        [programs(kinds=[k], max_steps=args.max_steps) for k in kinds]
    )
    end = time.time() + args.seconds
    counts = {k: collections.Counter() for k in kinds}
    distinct: dict[str, tuple[Program, int, str, int]] = {}

    def hang(signum, frame):
        raise Hang(f"no result in {args.program_timeout} s")

    def record(p: Program, seed: int, status: str, message: str) -> None:
        counts[p.kind][status] += 1
        if status == "passed":
            return
        detail = "\n".join(message.splitlines()[:8])
        print(f"\n{status.upper()} (inputs of seed {seed}) {detail}")
        print(p.describe())
        key = _signature(p.kind, status, message)
        seen = distinct.get(key)
        n = (seen[3] if seen else 0) + 1
        if seen is None or _size(p) < _size(seen[0]):
            distinct[key] = (p, seed, message, n)
        else:
            distinct[key] = (*seen[:3], n)

    signal.signal(signal.SIGALRM, hang)
    emitted: dict[str, tuple[Program, int, list]] = {}
    pending: list[str] = []  # emitted, not AOT-compiled yet

    def aot_compile_pending() -> None:
        # In batches as the run goes, so that a run cut short has compiled most.
        results = aot_compile_many([(src, emitted[src][2]) for src in pending])
        for src, r in zip(pending, results):
            if not r.ok:
                p, seed, _ = emitted[src]
                counts[p.kind]["passed"] -= 1
                record(p, seed, "failed", f"AOT: {r.message[:300]}")
        pending.clear()
        print(
            f"\n{len(emitted)} distinct modules AOT-compiled for v5e so far", flush=True
        )

    started = time.time()
    runs = 0
    while time.time() < end:
        p = next(strategies).example()
        counts[p.kind]["drawn"] += 1
        seed = args.seed + runs
        runs += 1
        signal.alarm(args.program_timeout)  # a hang is a finding too
        try:
            made = check_program(p, pallas_ir.compile, seed, EAGER_NOTICE)
            signal.alarm(0)
            for compiled in made:
                if compiled.computes and compiled.source not in emitted:
                    specs = arg_specs(compiled.module)
                    emitted[compiled.source] = (p, seed, specs)
                    pending.append(compiled.source)
            record(p, seed, "passed", "")
        except Hang as e:
            record(p, seed, "hung", str(e))
        except Mismatch as e:
            signal.alarm(0)
            record(p, seed, "failed", f"Mismatch: {e}")
        except InvalidProgram as e:
            signal.alarm(0)
            record(p, seed, "invalid", f"InvalidProgram: {e}")
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            signal.alarm(0)
            record(p, seed, "crashed", f"{type(e).__name__}: {e}")
        if args.aot and len(pending) >= AOT_BATCH:
            aot_compile_pending()
    if args.aot and pending:
        aot_compile_pending()
    elapsed = time.time() - started
    print(f"\n{'kind':10} {'drawn':>6} " + " ".join(f"{s:>8}" for s in STATUSES))
    for kind in kinds:
        c = counts[kind]
        print(f"{kind:10} {c['drawn']:6} " + " ".join(f"{c[s]:8}" for s in STATUSES))
    if distinct:
        print(f"\n{len(distinct)} distinct failures (the smallest program of each):")
        for key, (p, seed, message, n) in sorted(distinct.items()):
            detail = "\n".join(message.splitlines()[:8])
            print(f"\n== {key} ({n}x; inputs of seed {seed})\n{detail}\n{p.describe()}")
    failures = sum(c[s] for c in counts.values() for s in STATUSES if s != "passed")
    print(f"\n{runs} programs, {failures} not passed in {elapsed:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
