"""PyTorch's OpInfo database through `pallas_ir.compile`, against eager.

    python benchmarks/opinfo.py [--dtypes float32,bfloat16,int32] [--samples 3]
                                [--ops substr,...] [--jobs 1] [--json out.json]
                                [--sample-timeout 120] [--aot v5e,v6e]

Every op of `op_db` (those whose name or `name.variant` contains one of `--ops`'
substrings, if given) in each dtype of `--dtypes` it supports on the CPU, on its first
`--samples` samples (seeded: the same in every run), is compiled, run and compared with
eager (pallas_ir.frontend.opinfo_sweep), in `--jobs` worker processes. Prints a line
per op as it finishes, then per family and dtype the ops that pass, are unsupported,
wrong (a silent wrong result) or error (an exception other than UnsupportedError), time
out, or that eager rejects on every sample (`eager_err`, not counted); the ATen ops
with no lowering, by how many OpInfo ops each blocks; the other unsupported reasons;
and every wrong and error sample with its message. `--json` writes every sample's
result. With `--aot CHIPS`, every distinct Pallas program of a passing sample (by its
emitted source and argument specs) is then compiled ahead of time for each chip, with
no TPU (pallas_ir.tpu_check.aot_compile_many: libtpu, in child processes of
`AOT_BATCH` programs each, float64 programs with x64 in their own), and per chip
the programs compiled, passed and failed are printed, each failure with its ops and
libtpu's message; the JSON then has each sample's outcome per chip (`aot`). The
programs are those the sweep compiled (for v5e). Exits 1 if any op is wrong or errs,
or any program fails to compile.
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
from pallas_ir.tpu_check import (
    SUPPORTED_CHIPS,
    TpuCheckResult,
    aot_compile_many,
    libtpu_available,
)

COLUMNS = ("pass", "unsupported", "wrong", "error", "timeout", "eager_error")

AOT_BATCH = 50
"""Programs per libtpu child: a crash there re-runs only the rest of its batch."""


@dataclasses.dataclass
class Program:
    """One distinct emitted Pallas module and the samples (ops) that emit it."""

    source: str
    specs: list[tuple[tuple[int, ...], str]]
    float64: bool
    ops: list[str] = dataclasses.field(default_factory=list)

    @property
    def key(self) -> tuple:
        return program_key(self.source, self.specs)


def program_key(source: str, specs) -> tuple:
    return source, tuple((tuple(shape), dtype) for shape, dtype in specs)


def _programs(results: list[OpResult]) -> list[Program]:
    """The distinct Pallas programs of the passing samples, in the sweep's order."""
    found: dict[tuple, Program] = {}
    for r in results:
        for s in r.samples:
            if not s.source:
                continue
            key = program_key(s.source, s.arg_specs)
            p = found.setdefault(key, Program(s.source, s.arg_specs, s.float64))
            name = f"{r.dtype} {r.op}"
            if name not in p.ops:
                p.ops.append(name)
    return list(found.values())


def _aot(programs: list[Program], chip: str) -> list[TpuCheckResult]:
    """Each program AOT-compiled for `chip`, in batches of AOT_BATCH per child."""
    out: list[TpuCheckResult | None] = [None] * len(programs)
    started = time.time()
    done = 0
    for x64 in (False, True):
        chosen = [i for i, p in enumerate(programs) if p.float64 == x64]
        for first in range(0, len(chosen), AOT_BATCH):
            batch = chosen[first : first + AOT_BATCH]
            got = aot_compile_many(
                [(programs[i].source, programs[i].specs) for i in batch],
                chip=chip,
                x64=x64,
            )
            for i, r in zip(batch, got, strict=True):
                out[i] = r
            done += len(batch)
            failed = sum(not r.ok for r in out if r is not None)
            print(
                f"[aot {chip} {done}/{len(programs)} {time.time() - started:6.0f}s] "
                f"{failed} failed",
                flush=True,
            )
    return [r for r in out if r is not None]


def _aot_report(
    chip: str, programs: list[Program], got: list[TpuCheckResult]
) -> list[str]:
    failures = [(p, r) for p, r in zip(programs, got, strict=True) if not r.ok]
    passed = len(programs) - len(failures)
    lines = [
        f"\n== AOT compile for {chip}: {len(programs)} programs, {passed} pass, "
        + f"{len(failures)} fail"
    ]
    for p, r in failures:
        lines.append(f"{', '.join(p.ops)}  ({r.stage})")
        lines.extend(f"    {line}" for line in r.message.splitlines()[:6])
    return lines


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
    parser.add_argument(
        "--aot", default="", help="comma-separated TPU chips to AOT-compile for"
    )
    args = parser.parse_args()
    dtypes = [d for d in args.dtypes.split(",") if d]
    unknown = [d for d in dtypes if d not in DTYPES]
    if unknown:
        parser.error(f"unknown dtypes {unknown}: choose from {', '.join(DTYPES)}")
    chips = [c for c in args.aot.split(",") if c]
    unknown = [c for c in chips if c not in SUPPORTED_CHIPS]
    if unknown:
        parser.error(f"unknown chips {unknown}: choose from {', '.join(SUPPORTED_CHIPS)}")
    if chips and not libtpu_available():
        parser.error("--aot needs libtpu (the `test` extra installs it)")
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
    # per program (`program_key`), per chip: "pass" or the failure message
    aot: dict[tuple, dict[str, str]] = {}

    def as_json(r: OpResult) -> dict:
        row = dataclasses.asdict(r) | {"status": r.status}
        for s, d in zip(r.samples, row["samples"], strict=True):
            if s.source and aot:
                d["aot"] = aot.get(program_key(s.source, s.arg_specs), {})
        return row

    def save() -> None:
        if args.json:
            with open(args.json, "w") as f:
                json.dump([as_json(r) for r in results], f, indent=1)

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
    print(f"\n{len(results)} ops in {time.time() - started:.0f} s", flush=True)
    aot_failed = False
    if chips:
        programs = _programs(results)
        print(f"\n{len(programs)} distinct Pallas programs to AOT-compile", flush=True)
        reports = []
        for chip in chips:
            got = _aot(programs, chip)
            for p, r in zip(programs, got, strict=True):
                aot.setdefault(p.key, {})[chip] = "pass" if r.ok else r.message
            aot_failed |= not all(r.ok for r in got)
            reports.extend(_aot_report(chip, programs, got))
        save()
        print("\n".join(reports))
        print(f"\nsweep and AOT compile in {time.time() - started:.0f} s")
    wrong = any(r.status in ("wrong", "error") for r in results)
    return 1 if wrong or aot_failed else 0


if __name__ == "__main__":
    sys.exit(main())
