"""A language model's head in training: `loss = F.cross_entropy(x @ w.T, y)` and its
gradients `dx`, `dw`, as pallas-ir compiles the whole step (one program), checked
against libtpu for both chips and timed on a TPU against the same step in jax (one
XLA program, `jax.value_and_grad`, f32 products at `precision=HIGHEST`, as torch's).

The TPU machine has jax but no torch, so the work is split in two:

    python benchmarks/lm_head.py emit --out DIR [--shapes 512x768x50257 ...] [--aot]
    python benchmarks/lm_head.py time --dir DIR                                 # TPU

`emit` compiles the step at each `TOKENSxDIMxCLASSES` shape, its data float32 or
(`--dtype bfloat16`, modules named `lm_SHAPE_bfloat16.py`) bfloat16 as autocast runs
it: the product in bfloat16, the loss in float32. It prints its launches and
modelled HBM bytes against the floor (x, w and y read once; dx and dw written once),
and writes the emitted module (interpret off) as `lm_TOKENSxDIMxCLASSES.py`, with the
program's constants (the arrays its `forward` takes after the data) beside it. With
`--aot` it also compiles every kernel with libtpu for v5e and v6e (deviceless) and
prints what failed. `time` runs each module on random data, compares the loss and
both gradients with jax's, and times both: 50 steps chained in one jitted
`fori_loop` (`llama_layer.kernel_time`), so the figure is device time.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

SHAPES = ["512x768x50257", "2048x768x32000", "4096x1024x32000"]


def _step(x, w, y):
    import torch
    import torch.nn.functional as F

    def loss(x, w, y):
        # bfloat16 data as autocast runs it: the product in bfloat16, the loss in float32
        return F.cross_entropy((x @ w.t()).float(), y)

    (dx, dw), value = torch.func.grad_and_value(loss, argnums=(0, 1))(x, w, y)
    return value, dx, dw


def emit(out: Path, shapes: list[str], aot: bool, dtype: str) -> None:
    import numpy as np
    import torch

    import pallas_ir
    from pallas_ir.check import arg_specs
    from pallas_ir.tpu_check import aot_compile_many

    out.mkdir(parents=True, exist_ok=True)
    for shape in shapes:
        tokens, dim, classes = map(int, shape.split("x"))
        torch.manual_seed(0)
        x, w = torch.randn(tokens, dim), torch.randn(classes, dim) * dim**-0.5
        x, w = x.to(getattr(torch, dtype)), w.to(getattr(torch, dtype))
        y = torch.randint(0, classes, (tokens,))
        k = pallas_ir.compile(_step, [x, w, y], cache=False, interpret=False)
        report = k.cost_report()
        moved = sum(o.bytes for c in report.calls for o in c.operands)
        moved += sum(c.read + c.written for c in report.xla_calls)
        floor = 2 * (tokens * dim + classes * dim) * x.element_size() + tokens * 4 + 4
        line = (
            f"{shape}: {len(report.calls)} Pallas launches, {len(report.xla_calls)} XLA, "
            f"{moved / 1e6:.1f} MB modelled, floor {floor / 1e6:.1f} MB "
            f"(logits {tokens * classes * 4 / 1e6:.1f} MB)"
        )
        if aot:
            specs = arg_specs(k.module)
            for chip in ("v5e", "v6e"):
                (result,) = aot_compile_many([(k.source, specs)], chip=chip)
                line += f", {chip} " + ("compiles" if result.ok else result.message)
        print(line, flush=True)
        name = f"lm_{shape}" + ("" if dtype == "float32" else f"_{dtype}")
        (out / f"{name}.py").write_text(k.source)
        constants = [np.asarray(a) for a in k.host_arguments(x, w, y)[3:]]
        np.savez(out / f"{name}.npz", *constants)


def time_modules(folder: Path) -> list[dict]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from llama_layer import kernel_time

    def loss(x, w, y):
        logits = jnp.dot(x, w.T, precision=jax.lax.Precision.HIGHEST).astype(jnp.float32)
        lse = jax.nn.logsumexp(logits, -1)
        return jnp.mean(lse - jnp.take_along_axis(logits, y[:, None], -1)[:, 0])

    def reference(x, w, y):
        value, (dx, dw) = jax.value_and_grad(loss, argnums=(0, 1))(x, w, y)
        return value, dx, dw

    rows_out = []
    for path in sorted(glob.glob(str(folder / "lm_*.py"))):
        name = Path(path).name.removesuffix(".py")
        shape, _, dtype = name[3:].partition("_")
        tokens, dim, classes = map(int, shape.split("x"))
        dtype = jnp.dtype(dtype or "float32")
        x = jax.random.normal(jax.random.key(0), (tokens, dim), dtype)
        w = (jax.random.normal(jax.random.key(1), (classes, dim)) * dim**-0.5).astype(
            dtype
        )
        y = jax.random.randint(jax.random.key(2), (tokens,), 0, classes, jnp.int32)
        data = np.load(Path(path).with_suffix(".npz"))
        args = [x, w, y, *(jnp.asarray(data[f"arr_{i}"]) for i in range(len(data.files)))]
        namespace: dict = {}
        exec(compile(Path(path).read_text(), path, "exec"), namespace)  # noqa: S102

        def ours(*args, forward=namespace["forward"]):
            return tuple(forward(*args, interpret=False))[:3]  # then its label checks

        got, want = jax.jit(ours)(*args), jax.jit(reference)(x, w, y)
        errors = [
            float(jnp.max(jnp.abs(g.astype(jnp.float32) - r.astype(jnp.float32))))
            for g, r in zip(got, want, strict=True)
        ]
        row = {
            "name": name,
            "loss_error": errors[0],
            "dx_error": errors[1],
            "dw_error": errors[2],
            "pallas_ir_us": round(kernel_time(ours, tuple(args), {}), 1),
            "xla_us": round(kernel_time(reference, (x, w, y), {}), 1),
        }
        print(json.dumps(row), flush=True)
        rows_out.append(row)
    return rows_out


def main() -> None:
    from llama_layer import emit_and_time_parser

    parser, e = emit_and_time_parser(__doc__.splitlines()[0])
    e.add_argument("--shapes", nargs="+", default=SHAPES)
    e.add_argument("--aot", action="store_true", help="compile for v5e and v6e too")
    e.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    args = parser.parse_args()
    if args.command == "time":
        rows = time_modules(args.dir)
        if args.json is not None:
            args.json.write_text(json.dumps(rows, indent=1))
        return
    emit(args.out, args.shapes, args.aot, args.dtype)


if __name__ == "__main__":
    main()
