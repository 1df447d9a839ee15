"""PyTorch's OpInfo database through `pallas_ir.compile`, against eager.

    python benchmarks/opinfo.py [--dtypes float32,bfloat16,int32] [--samples 3]
                                [--ops substr,...] [--jobs 1] [--json out.json]
                                [--sample-timeout 120]

Every op of `op_db` (those whose name or `name.variant` contains one of `--ops`'
substrings, if given) in each dtype of `--dtypes` it supports on the CPU, on its first
`--samples` samples (seeded: the same in every run), is compiled, run and compared with
eager (pallas_ir.frontend.opinfo_sweep), in `--jobs` worker processes. Prints a line
per op as it finishes, then per family and dtype the ops that pass, are unsupported,
wrong (a silent wrong result) or error (an exception other than UnsupportedError), time
out, or that eager rejects on every sample (`eager_err`, not counted); the ATen ops
with no lowering, by how many OpInfo ops each blocks; the other unsupported reasons;
and every wrong and error sample with its message. `--json` writes every sample's
result. Exits 1 if any op is wrong or errs.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pallas_ir
from pallas_ir.frontend.opinfo_sweep import (
    DTYPES,
    FAMILIES,
    OpResult,
    all_op_ids,
    sweep,
    work_items,
)

COLUMNS = ("pass", "unsupported", "wrong", "error", "timeout", "eager_error")


def _table(results: list[OpResult], dtype: str) -> list[str]:
    rows = [r for r in results if r.dtype == dtype]
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    pallas: collections.Counter = collections.Counter()
    for r in rows:
        counts[r.family][r.status] += 1
        pallas[r.family] += r.status == "pass" and r.pallas
    names = ("ops", "pass", "unsupp", "wrong", "error", "timeout", "eager_err")
    head = f"{'family':22}" + "".join(f"{n:>10}" for n in names) + f"{'pallas':>10}"
    lines = [f"\n== {dtype}: {len(rows)} ops", head]
    total: collections.Counter = collections.Counter()
    for fam in [*FAMILIES, *sorted(set(counts) - set(FAMILIES))]:
        c = counts.get(fam)
        if not c:
            continue
        total.update(c)
        total["pallas"] += pallas[fam]
        cells = [sum(c.values()), *(c[s] for s in COLUMNS), pallas[fam]]
        lines.append(f"{fam:22}" + "".join(f"{v:>10}" for v in cells))
    cells = [
        sum(total[s] for s in COLUMNS),
        *(total[s] for s in COLUMNS),
        total["pallas"],
    ]
    lines.append(f"{'total':22}" + "".join(f"{v:>10}" for v in cells))
    counted = sum(total[s] for s in COLUMNS if s != "eager_error")
    if counted:
        lines.append(
            f"{total['pass']} of {counted} ops pass ({100 * total['pass'] / counted:.1f}%;"
            f" eager rejects every sample of {total['eager_error']} more); "
            f"{total['pallas']} of the passing launch a pallas_call on every sample"
        )
    return lines


def _blockers(results: list[OpResult]) -> tuple[list[str], list[str]]:
    """The ATen ops with no lowering and the other unsupported reasons, each with the
    OpInfo ops (of any dtype) it stops on some sample."""
    missing: dict[str, set[str]] = collections.defaultdict(set)
    reasons: dict[str, set[str]] = collections.defaultdict(set)
    for r in results:
        for s in r.samples:
            if s.status != "unsupported":
                continue
            if s.missing:
                missing[s.missing].add(r.op)
            else:
                reasons[s.key].add(r.op)

    def ranked(table: dict[str, set[str]]) -> list[str]:
        out = []
        for key, ops in sorted(table.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            shown = ", ".join(sorted(ops)[:8]) + (", ..." if len(ops) > 8 else "")
            out.append(f"{len(ops):5}  {key}  [{shown}]")
        return out

    return ranked(missing), ranked(reasons)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--ops", default="", help="comma-separated substrings")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default="")
    parser.add_argument("--sample-timeout", type=float, default=120)
    args = parser.parse_args()
    dtypes = [d for d in args.dtypes.split(",") if d]
    unknown = [d for d in dtypes if d not in DTYPES]
    if unknown:
        parser.error(f"unknown dtypes {unknown}: choose from {', '.join(DTYPES)}")
    ops = all_op_ids()
    if args.ops:
        wanted = [w for w in args.ops.split(",") if w]
        ops = [o for o in ops if any(w in o for w in wanted)]
    items = work_items(ops, dtypes)
    if not items:
        print("no op matches", file=sys.stderr)
        return 1
    print(f"{len(items)} (op, dtype) pairs, {args.samples} samples each", flush=True)
    started = time.time()
    results: list[OpResult] = []

    def save() -> None:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(
                    [dataclasses.asdict(r) | {"status": r.status} for r in results],
                    f,
                    indent=1,
                )

    for r in sweep(
        items, pallas_ir.compile, args.samples, args.jobs, args.sample_timeout
    ):
        results.append(r)
        detail = " ".join(s.status for s in r.samples)
        print(
            f"[{len(results)}/{len(items)} {time.time() - started:6.0f}s] "
            f"{r.dtype:8} {r.op:45} {r.status:11} {'pallas' if r.pallas else '':6} {detail}",
            flush=True,
        )
        if len(results) % 25 == 0:
            save()
    save()
    for dtype in dtypes:
        print("\n".join(_table(results, dtype)))
    missing, reasons = _blockers(results)
    print("\n== ATen ops with no lowering, by the OpInfo ops they stop")
    print("\n".join(missing) or "none")
    print("\n== other unsupported reasons, by the OpInfo ops they stop")
    print("\n".join(reasons) or "none")
    bad = [
        (r, s)
        for r in results
        for s in r.samples
        if s.status in ("wrong", "error", "timeout")
    ]
    for status in ("wrong", "error", "timeout"):
        cases = [(r, s) for r, s in bad if s.status == status]
        print(f"\n== {status}: {len(cases)} samples")
        for r, s in cases:
            print(
                f"{r.dtype} {r.op} {s.description}\n    {s.message.replace(chr(10), ' / ')}"
            )
    print(f"\n{len(results)} ops in {time.time() - started:.0f} s")
    return 1 if any(r.status in ("wrong", "error") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
