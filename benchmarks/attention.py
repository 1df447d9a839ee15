"""Attention: pallas-ir's flash-attention kernel against jax's own,
`jax.experimental.pallas.ops.tpu.flash_attention`, on the same shapes.

Both sides are counted by one rule, the cost model's (`pallas_ir.cost_report`): a
pipelined operand moves its block whenever the block index changes from one grid step
to the next. For pallas-ir that is the compiled program's cost report. For jax the
kernel is traced (`jax.make_jaxpr`, nothing runs) and its `pallas_call`'s grid and
index maps are evaluated at every grid step in order. The minimum is each array read
or written once. Nothing is timed here: `benchmarks/on_tpu.py --timings attention`
times both on a TPU.

    python benchmarks/attention.py                       # B=2, H=4, D=64, T=512, 2048
    python benchmarks/attention.py --lengths 512 2048 8192 --causal
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
import torch

import pallas_ir

sys.path.insert(0, str(Path(__file__).parent))
from attention_programs import attention, causal_attention


def _pallas_call(jaxpr: jex.core.ClosedJaxpr):
    """The one `pallas_call` equation of a traced program (searched through calls)."""
    stack = [jaxpr.jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            if eqn.primitive.name == "pallas_call":
                return eqn
            stack.extend(jex.core.jaxprs_in_params(eqn.params))
    raise SystemExit("jax's flash_attention traced to no pallas_call")


def jax_flash_bytes(b: int, h: int, t: int, d: int, causal: bool) -> int:
    """HBM bytes jax's flash_attention moves for f32 (b, h, t, d) q, k, v."""
    from jax.experimental.pallas.ops.tpu import flash_attention as fa

    shape = jax.ShapeDtypeStruct((b, h, t, d), jnp.float32)
    fn = functools.partial(fa.flash_attention, causal=causal, sm_scale=1 / math.sqrt(d))
    eqn = _pallas_call(jax.make_jaxpr(fn)(shape, shape, shape))
    mapping = eqn.params["grid_mapping"]
    grid = tuple(int(n) for n in mapping.grid)
    points = np.stack(
        [m.reshape(-1) for m in np.meshgrid(*map(np.arange, grid), indexing="ij")], 1
    )
    total = 0
    for bm in mapping.block_mappings:
        block = [
            1 if s is None else int(getattr(s, "block_size", s)) for s in bm.block_shape
        ]
        item = np.dtype(bm.array_aval.dtype).itemsize
        index_map = bm.index_map_jaxpr
        evaluate = jax.jit(jax.vmap(jex.core.jaxpr_as_fun(index_map)))
        blocks = np.stack(
            [
                np.asarray(x)
                for x in evaluate(
                    *(points[:, k].astype(np.int32) for k in range(len(grid)))
                )
            ],
            1,
        )
        moved = np.ones(len(blocks), dtype=bool)
        moved[1:] = (blocks[1:] != blocks[:-1]).any(axis=1)
        total += int(moved.sum()) * math.prod(block) * item
    return total


def pallas_ir_bytes(b: int, h: int, t: int, d: int, causal: bool) -> tuple[int, int, int]:
    """(modelled bytes, minimum bytes, launches) of pallas-ir's compiled attention."""
    qkv = [torch.randn(b, h, t, d) for _ in range(3)]
    k = pallas_ir.compile(causal_attention if causal else attention, qkv)
    report = k.cost_report()
    return report.modelled, report.minimum, k.source.count("pl.pallas_call(")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", type=int, nargs="*", default=[512, 2048])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--causal", action="store_true", help="only the causal form")
    args = ap.parse_args(argv)
    forms = [True] if args.causal else [False, True]
    b, h, d = args.batch, args.heads, args.head_dim
    print(f"attention, f32 q, k, v [{b}, {h}, T, {d}]: HBM bytes (cost model's rule)")
    print(
        f"{'T':>6} {'causal':>6} {'pallas-ir':>12} {'jax flash':>12} {'ratio':>6} "
        f"{'minimum':>12} {'launches':>8}"
    )
    for t in args.lengths:
        for causal in forms:
            ours, minimum, launches = pallas_ir_bytes(b, h, t, d, causal)
            theirs = jax_flash_bytes(b, h, t, d, causal)
            print(
                f"{t:>6} {causal!s:>6} {ours:>12} {theirs:>12} "
                f"{ours / theirs:>6.2f} {minimum:>12} {launches:>8}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
