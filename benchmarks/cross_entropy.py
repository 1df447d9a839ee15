"""Cross-entropy (`F.cross_entropy(x, y)`, mean over the rows) as pallas-ir compiles
it, timed on a TPU against the same loss in jax (one XLA program).

The TPU machine has jax but no torch, so the work is split in two:

    python benchmarks/cross_entropy.py emit --out DIR [--shapes 4096x1024 ...]  # here
    python benchmarks/cross_entropy.py time --dir DIR                           # TPU

`emit` compiles the loss at each `ROWSxCLASSES` shape, prints its launches and
modelled HBM bytes against the logits' size, and writes the emitted module (interpret
off) as `ce_ROWSxCLASSES.py`. To compare two versions of pallas-ir, run `emit` with
the other on PYTHONPATH and a suffix (`--suffix .base`): both are timed. `time` runs
each module on random logits and labels, checks its loss against jax's, and times
both: 50 calls chained in one jitted `fori_loop`, each call reading the whole of the
logits, which the last call's loss nudged in one element, so the figure is device
time, not the dispatch of a call. It prints the HBM floor of one read of the logits
beside them (the chained loop hides part of the traffic, so read the figures against
each other).
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

SHAPES = ["512x256", "4096x1024", "16384x256", "8192x4096", "4096x32000", "4096x50257"]


def emit(out: Path, shapes: list[str], suffix: str) -> None:
    import torch
    import torch.nn.functional as F

    import pallas_ir

    out.mkdir(parents=True, exist_ok=True)
    for shape in shapes:
        rows, classes = map(int, shape.split("x"))
        torch.manual_seed(0)
        x, y = torch.randn(rows, classes), torch.randint(0, classes, (rows,))
        k = pallas_ir.compile(
            lambda x, y: F.cross_entropy(x, y), [x, y], cache=False, interpret=False
        )
        report = k.cost_report()
        moved = sum(o.bytes for c in report.calls for o in c.operands)
        xla = sum(c.read + c.written for c in report.xla_calls)
        print(
            f"{shape}: {len(report.calls)} Pallas launches, {len(report.xla_calls)} "
            f"XLA, {moved + xla} B modelled for {rows * classes * 4} B of logits"
        )
        (out / f"ce_{shape}{suffix}.py").write_text(k.source)


def time_modules(folder: Path, json_out: Path | None) -> None:
    import jax
    import jax.numpy as jnp
    from llama_layer import kernel_time  # the same chained loop as the llama layer's

    def reference(x, y):
        lse = jax.nn.logsumexp(x, -1)
        return jnp.mean(lse - jnp.take_along_axis(x, y[:, None], -1)[:, 0])

    rows_out = []
    for path in sorted(glob.glob(str(folder / "ce_*.py"))):
        name = Path(path).name.removesuffix(".py")
        rows, classes = map(int, name.split(".")[0][3:].split("x"))
        x = jax.random.normal(jax.random.key(0), (rows, classes), jnp.float32)
        y = jax.random.randint(jax.random.key(1), (rows,), 0, classes, jnp.int32)
        namespace: dict = {}
        exec(compile(Path(path).read_text(), path, "exec"), namespace)  # noqa: S102

        def ours(x, y, forward=namespace["forward"]):
            out = forward(x, y, interpret=False)
            return out[0] if isinstance(out, tuple | list) else out

        error = float(jnp.abs(jax.jit(ours)(x, y) - jax.jit(reference)(x, y)))
        row = {
            "name": name,
            "error": error,
            "pallas_ir_us": round(kernel_time(ours, (x, y), {}), 1),
            "xla_us": round(kernel_time(reference, (x, y), {}), 1),
            "hbm_floor_us": round(rows * classes * 4 / 819e3, 1),  # v5e: 819 GB/s
        }
        print(json.dumps(row), flush=True)
        rows_out.append(row)
    if json_out is not None:
        json_out.write_text(json.dumps(rows_out, indent=1))


def main() -> None:
    from llama_layer import emit_and_time_parser

    parser, e = emit_and_time_parser(__doc__.splitlines()[0])
    e.add_argument("--shapes", nargs="+", default=SHAPES)
    e.add_argument("--suffix", default="", help="e.g. .base for another version")
    args = parser.parse_args()
    if args.command == "emit":
        emit(args.out, args.shapes, args.suffix)
    else:
        time_modules(args.dir, args.json)


if __name__ == "__main__":
    main()
