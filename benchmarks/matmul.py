"""Matrix products: pallas-ir's tiles against jax's example Pallas matmul.

For each shape and dtype, `x @ w` is written as a ta kernel (a sum over k of products,
the form the frontend builds; bf16 operands are widened to f32 and the product summed in
f32) and lowered twice for the chip: once with the tile policy's sizes, once with the
blocks of `jax.experimental.pallas.ops.tpu.matmul` (512 x 512 output blocks, k 512,
written as `tile_sizes` on the loop). The same cost model (`pallas_ir.cost_report`)
counts both: HBM bytes, their ratio to the minimum (each operand read once, the output
written once), and the policy's roofline time (`tile/policy.py: roofline`). Nothing runs
or is timed here; `benchmarks/on_tpu.py --modules matmul` times them on a TPU.

    python benchmarks/matmul.py                 # v5e, 1024 to 8192, f32 and bf16
    python benchmarks/matmul.py --chip v6e
    python benchmarks/matmul.py --sizes 4096 --dtypes f32
"""

from __future__ import annotations

import argparse
import sys

import pallas_ir
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.lowering.tile import set_tile_sizes
from pallas_ir.registry import default_pipeline

JAX_EXAMPLE_BLOCKS = (512, 512, 512)
"""(block m, block n, block k) of jax's example kernel, as its docs' guide runs it."""


def matmul_ta(m: int, n: int, k: int, dtype: str) -> str:
    """`x @ w` for x: (m, k), w: (k, n) of `dtype`, the output in f32."""
    load = f"memref<{m}x{k}x{dtype}>", f"memref<{k}x{n}x{dtype}>"
    out = f"memref<{m}x{n}xf32>"
    widen = (
        ""
        if dtype == "f32"
        else (
            "    %xw = arith.extf %x : bf16 to f32\n    %yw = arith.extf %y : bf16 to f32\n"
        )
    )
    a, b = ("%x", "%y") if dtype == "f32" else ("%xw", "%yw")
    return f"""
ta.kernel @matmul(%a: {load[0]} {{role = "in"}}, %b: {load[1]} {{role = "in"}}, %c: {out} {{role = "out"}}) {{
  ta.loop [{m}, {n}] reduce [{k}] (%i, %j, %k) {{
    %x = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : {load[0]}
    %y = ta.load %b[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : {load[1]}
{widen}    %p = arith.mulf {a}, {b} : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : {out}
  }}
}}
func.func @forward(%a: {load[0]}, %b: {load[1]}) -> {out} {{
  %c = ta.alloc : {out}
  ta.launch @matmul(%a, %b, %c) : {load[0]}, {load[1]}, {out}
  func.return %c : {out}
}}
"""


def lower(text: str, chip: str, blocks: tuple[int, int, int] | None):
    module = pallas_ir.parse(text)
    if blocks is not None:
        (loop,) = [op for op in module.walk() if isinstance(op, ta.LoopOp)]
        set_tile_sizes(loop, blocks)
    pallas_ir.run_passes(module, default_pipeline(chip))
    return module, pallas_ir.cost_report(module)


def describe(report) -> tuple[str, int, int]:
    (call,) = report.calls
    return "x".join(map(str, call.grid)), report.modelled, call.vmem_bytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", default="v5e", choices=["v5e", "v6e"])
    parser.add_argument("--sizes", default="1024,2048,4096,8192")
    parser.add_argument("--dtypes", default="f32,bf16")
    args = parser.parse_args(argv)
    print(
        f"{'case':<16} {'grid':>10} {'MB':>9} {'ratio':>6} {'VMEM MiB':>8} | "
        f"{'jax grid':>10} {'MB':>9} {'ratio':>6} | ours/jax"
    )
    for dtype in args.dtypes.split(","):
        for size in map(int, args.sizes.split(",")):
            text = matmul_ta(size, size, size, dtype)
            _, ours = lower(text, args.chip, None)
            _, jax_blocks = lower(text, args.chip, JAX_EXAMPLE_BLOCKS)
            grid, modelled, vmem = describe(ours)
            jgrid, jmodelled, _ = describe(jax_blocks)
            print(
                f"{dtype} {size}^3{'':<{9 - len(str(size))}} {grid:>10} "
                f"{modelled / 1e6:>9.1f} {modelled / ours.minimum:>6.2f} "
                f"{vmem / 2**20:>8.1f} | {jgrid:>10} {jmodelled / 1e6:>9.1f} "
                f"{jmodelled / ours.minimum:>6.2f} | {modelled / jmodelled:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
