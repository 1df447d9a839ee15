"""Differential fuzzing of pallas_ir.compile against eager PyTorch, for as long as asked.

    python benchmarks/fuzz.py [--seconds 600] [--max-steps 6]

The generator is tests/test_frontend_fuzz.py's (pallas_ir.frontend.fuzz): random chains of
views, element-wise ops, gathers and reductions over random shapes. Prints each
mismatch or failure with the program that caused it, then a summary; exits 1 if any.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from hypothesis.errors import NonInteractiveExampleWarning  # noqa: E402

import pallas_ir  # noqa: E402
from pallas_ir.frontend.fuzz import build, check, programs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--max-steps", type=int, default=6)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    strategy = programs(max_steps=args.max_steps)
    end = time.time() + args.seconds
    runs = failures = 0
    while time.time() < end:
        p = strategy.example()
        fn, inputs = build(p, seed=runs)
        runs += 1
        try:
            check(pallas_ir.compile(fn, inputs)(*inputs), fn, inputs, p.describe())
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            failures += 1
            print(f"FAIL {p.describe()}\n  {type(e).__name__}: {str(e).splitlines()[0]}")
    print(f"{runs} programs, {failures} failures in {args.seconds:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
