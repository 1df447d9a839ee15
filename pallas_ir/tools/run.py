"""`python -m pallas_ir FILE.mlir`: the main job on a pallas module.

Prints the emitted Pallas Python, runs it in interpret mode on random inputs and checks
it against the numpy reference interpreter, lowers it for TPU (Mosaic), and, when
libtpu is installed, compiles it for a deviceless TPU. Exit code 1 on any failure.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pallas_ir",
        description="Emit, run (interpret mode) and check a pallas-dialect module.",
    )
    parser.add_argument("input", help="a .mlir file holding a pallas module")
    parser.add_argument("--chip", default="v5e", choices=["v5e", "v6e"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-tpu", action="store_true", help="skip the TPU lowering and compile checks"
    )
    args = parser.parse_args(argv)

    import pallas_ir
    from pallas_ir.check import arg_specs, check_interpret
    from pallas_ir.tpu_check import aot_compile_for_tpu, libtpu_available, lower_for_tpu

    try:
        with open(args.input, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"error: cannot read {args.input}: {e.strerror}", file=sys.stderr)
        return 1
    try:
        module = pallas_ir.parse(text, args.input)
        pallas_ir.verify(module)
        source = pallas_ir.emit_python(module)
    except pallas_ir.IRError as e:
        print(e, file=sys.stderr)
        return 1
    except Exception as e:
        op = getattr(e, "op", None)
        from pallas_ir.diagnostics import location_of

        where = location_of(op) if op is not None else args.input
        print(f"{where}: error: {e}", file=sys.stderr)
        return 1

    print(source)
    print("# ---- checks " + "-" * 66)
    failed = False
    try:
        result = check_interpret(module, seed=args.seed)
        err = ", ".join(f"{e:.3g}" for e in result.max_abs_error)
        print(f"# interpret mode vs numpy reference: OK (max abs error {err})")
    except AssertionError as e:
        print(f"# interpret mode vs numpy reference: MISMATCH\n{e}")
        failed = True
    if not args.no_tpu:
        specs = arg_specs(module)
        low = lower_for_tpu(source, specs, chip=args.chip)
        print(f"# TPU lowering (Mosaic, {args.chip}): {'OK' if low.ok else 'FAILED'}")
        if not low.ok:
            print(low.message)
            failed = True
        elif libtpu_available():
            aot = aot_compile_for_tpu(source, specs, chip=args.chip)
            print(
                f"# TPU compile (libtpu, deviceless {args.chip}): {'OK' if aot.ok else 'FAILED'}"
            )
            if not aot.ok:
                print(aot.message)
                failed = True
        else:
            print("# TPU compile: skipped (pip install 'pallas-ir[test]' brings libtpu)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
