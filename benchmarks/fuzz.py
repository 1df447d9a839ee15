"""Differential fuzzing of pallas_ir.compile against eager PyTorch, for as long as asked.

    python benchmarks/fuzz.py [--seconds 600] [--max-steps 6] [--aot] [--program-timeout 120]

The generator is tests/test_frontend_fuzz.py's (pallas_ir.frontend.fuzz): random chains of
views, element-wise ops, gathers and reductions over random shapes and dtypes. Prints
each mismatch or failure with the program that caused it, then a summary; exits 1 if
any. With `--aot`, every distinct module the programs emitted is also AOT-compiled for
v5e by libtpu (in batches, in child processes, after the time is up), and a module the
TPU compiler rejects is a failure too. A program with no result in --program-timeout
seconds is a failure (a hang).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from hypothesis.errors import NonInteractiveExampleWarning

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.frontend.fuzz import build, check, programs
from pallas_ir.tpu_check import aot_compile_many


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--aot", action="store_true", help="AOT-compile for v5e too")
    parser.add_argument(
        "--program-timeout", type=int, default=120, help="seconds before a hang counts"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    strategy = programs(max_steps=args.max_steps)
    end = time.time() + args.seconds
    runs = failures = 0

    def hang(signum, frame):
        raise TimeoutError(f"no result in {args.program_timeout} s")

    signal.signal(signal.SIGALRM, hang)
    emitted: dict[str, tuple] = {}
    while time.time() < end:
        p = strategy.example()
        fn, inputs = build(p, seed=runs)
        runs += 1
        signal.alarm(args.program_timeout)  # a hang is a finding too
        try:
            compiled = pallas_ir.compile(fn, inputs)
            check(compiled(*inputs), fn, inputs, p.describe())
            emitted.setdefault(compiled.source, (p, arg_specs(compiled.module)))
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            failures += 1
            print(f"FAIL {p.describe()}\n  {type(e).__name__}: {str(e).splitlines()[0]}")
        signal.alarm(0)
    if args.aot:
        items = list(emitted.items())
        results = aot_compile_many([(src, specs) for src, (_, specs) in items])
        for (_, (p, _)), r in zip(items, results):
            if not r.ok:
                failures += 1
                print(f"AOT FAIL {p.describe()}\n  {r.message.splitlines()[0][:300]}")
        print(f"{len(items)} distinct modules AOT-compiled for v5e")
    print(f"{runs} programs, {failures} failures in {args.seconds:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
