"""Differential fuzzing of gradients: random differentiable programs through
`torch.compile(backend="pallas_ir")`, against eager PyTorch, for as long as asked.

    python benchmarks/grad_fuzz.py [--seconds 600] [--max-steps 6] [--direct 0.2]
                                   [--program-timeout 120]

The generator is tests/test_grad_properties.py's (pallas_ir.frontend.grad_fuzz): matrix
products, element-wise math, softmax, norms, reductions, views, gathers and attention
on float32 inputs, some requiring grad. Each program runs forward, then the sum of
squares of its outputs backward; its outputs and every input's gradient are compared
with eager. A fraction (--direct) also runs through `pallas_ir.compile(fn, inputs)`,
which raises instead of falling back. Prints each mismatch, failure, fallback (the ops
the backend ran in eager PyTorch) and UnsupportedError with the program's source and
seed, then a summary that counts the ops run eagerly and the ops unsupported and shows
the slowest program (compile time included); exits 1 on a mismatch or failure. A
program with no result in --program-timeout seconds is a failure (a hang).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import sys
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import torch
from hypothesis.errors import NonInteractiveExampleWarning

import pallas_ir
from pallas_ir.dynamo import EAGER_NOTICE
from pallas_ir.frontend.grad_fuzz import (
    build,
    forward_backward,
    grad_programs,
    make_inputs,
    mismatches,
)


def _dynamo(p, seed):
    """Mismatches and the eager-fallback warnings of `p` under torch.compile."""
    torch._dynamo.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = forward_backward(
            torch.compile(build(p), backend="pallas_ir"), make_inputs(p, seed)
        )
    fallbacks = [
        str(w.message) for w in caught if str(w.message).startswith(EAGER_NOTICE)
    ]
    return mismatches(p, got, seed), fallbacks


def _direct(p, seed):
    """Mismatches of `p` through pallas_ir.compile, or the UnsupportedError it raised."""
    inputs = make_inputs(p, seed)
    try:
        compiled = pallas_ir.compile(build(p), inputs)
        return mismatches(p, forward_backward(compiled, inputs), seed), None
    except pallas_ir.UnsupportedError as e:
        return [], e


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument(
        "--direct", type=float, default=0.2, help="fraction also run by pallas_ir.compile"
    )
    parser.add_argument(
        "--program-timeout", type=int, default=120, help="seconds before a hang counts"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    strategy = grad_programs(max_steps=args.max_steps)
    choose = random.Random(0)
    end = time.time() + args.seconds
    runs = failures = with_fallback = direct_runs = unsupported = 0
    slowest: tuple[float, int, str] = (0.0, 0, "")
    fallen_back: collections.Counter[str] = collections.Counter()
    raised: collections.Counter[str] = collections.Counter()

    def hang(signum, frame):
        raise TimeoutError(f"no result in {args.program_timeout} s")

    signal.signal(signal.SIGALRM, hang)
    while time.time() < end:
        p = strategy.example()
        seed = runs
        start = time.time()
        runs += 1
        signal.alarm(args.program_timeout)  # a hang is a finding too
        try:
            found, fallbacks = _dynamo(p, seed)
            if fallbacks:
                with_fallback += 1
                fallen_back.update(
                    {
                        op.split(":")[0]
                        for f in fallbacks
                        for op in f[len(EAGER_NOTICE) :].split("; ")
                    }
                )
                print(f"FALLBACK (seed {seed})\n{p.source()}  " + "\n  ".join(fallbacks))
            if found:
                failures += 1
                print(
                    f"MISMATCH torch.compile (seed {seed})\n{p.source()}  "
                    + "\n  ".join(found)
                )
            if choose.random() < args.direct:
                direct_runs += 1
                found, error = _direct(p, seed)
                if error is not None:
                    unsupported += 1
                    raised[str(error).split(":")[0]] += 1
                    print(
                        f"UNSUPPORTED pallas_ir.compile (seed {seed})\n{p.source()}  "
                        f"{str(error).splitlines()[0][:400]}"
                    )
                if found:
                    failures += 1
                    print(
                        f"MISMATCH pallas_ir.compile (seed {seed})\n{p.source()}  "
                        + "\n  ".join(found)
                    )
        except Exception as e:  # noqa: BLE001 - every failure is a finding
            failures += 1
            print(
                f"FAIL (seed {seed})\n{p.source()}  {type(e).__name__}: "
                f"{(str(e).strip().splitlines() or [''])[0][:400]}"
            )
        signal.alarm(0)
        slowest = max(slowest, (time.time() - start, seed, p.source()))
        sys.stdout.flush()
    print(
        f"{runs} programs ({direct_runs} also through pallas_ir.compile), "
        f"{failures} failures, {with_fallback} with ops run eagerly, "
        f"{unsupported} unsupported by pallas_ir.compile, in {args.seconds:.0f} s"
    )
    for op, count in fallen_back.most_common():
        print(f"  run eagerly by torch.compile, in {count} programs: {op}")
    for op, count in raised.most_common():
        print(f"  unsupported by pallas_ir.compile, in {count} programs: {op}")
    seconds, seed, source = slowest
    print(f"slowest program: {seconds:.1f} s (seed {seed})\n{source}", end="")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
