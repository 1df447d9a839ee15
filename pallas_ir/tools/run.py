"""`python -m pallas_ir FILE.mlir`: the main job on a ta, tl or pallas module.

Lowers a `ta` module through the whole pipeline (a `tl` module through tl-to-pallas),
prints the emitted Pallas Python, runs it in interpret mode on random inputs and checks
it against the numpy reference interpreter of the input's own level, lowers it for TPU
(Mosaic), and, when libtpu is installed, compiles it for a deviceless TPU. Exit code 1
on any failure.
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
        description="Lower, emit, run (interpret mode) and check a ta, tl or pallas module.",
    )
    parser.add_argument("input", help="a .mlir file holding a ta, tl or pallas module")
    parser.add_argument("--chip", default="v5e", choices=["v5e", "v6e"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-tpu", action="store_true", help="skip the TPU lowering and compile checks"
    )
    args = parser.parse_args(argv)

    import pallas_ir
    from pallas_ir.check import arg_specs, check_interpret
    from pallas_ir.reference import ReferenceError
    from pallas_ir.registry import default_pipeline
    from pallas_ir.tpu_check import aot_compile_for_tpu, libtpu_available, lower_for_tpu

    try:
        with open(args.input, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"error: cannot read {args.input}: {e.strerror}", file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print(
            f"error: cannot read {args.input}: a binary file, not UTF-8 text",
            file=sys.stderr,
        )
        return 1
    try:
        original = pallas_ir.parse(text, args.input)
        pallas_ir.verify(original)
        module = pallas_ir.parse(text, args.input)
        level = _level(module)
        if level != "pallas":
            pipeline = (
                default_pipeline(args.chip)
                if level == "ta"
                else "tl-to-pallas,pallas-legalize-mosaic"
            )
            print(f"# {level} module: lowered with -p {pipeline}\n")
            pallas_ir.run_passes(module, pipeline)
        source = pallas_ir.emit_python(module)
    except pallas_ir.IRError as e:
        print(e, file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - any failure is said with its location
        op = getattr(e, "op", None)
        from pallas_ir.diagnostics import location_of

        where = location_of(op) if op is not None else args.input
        print(f"{where}: error: {e}", file=sys.stderr)
        return 1

    print(source)
    print("# ---- checks " + "-" * 66)
    failed = False
    try:
        if level == "pallas":
            result = check_interpret(module, seed=args.seed)
            errors = result.max_abs_error
        else:
            errors = _check_against_source(original, module, source, args.seed)
        err = ", ".join(f"{e:.3g}" for e in errors)
        print(
            f"# interpret mode vs the {level} reference interpreter: OK (max abs error {err})"
        )
    except AssertionError as e:
        print(f"# interpret mode vs the {level} reference interpreter: MISMATCH\n{e}")
        failed = True
    except ReferenceError as e:
        print(f"# the {level} reference interpreter cannot run it: {e}")
        failed = True
    report = pallas_ir.cost_report(module)
    print(
        f"# modelled HBM traffic: {report.modelled} B, minimum {report.minimum} B, "
        f"ratio {report.ratio:.3f} (pallas-opt --cost-report for the breakdown)"
    )
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


def _level(module) -> str:
    names = {op.name for op in module.walk()}
    if "pallas.call" in names or "pallas.xla_call" in names:
        return "pallas"  # XLA kernels are xla.funcs in a pallas module
    if "ta.kernel" in names:
        return "ta"
    if "tl.kernel" in names:
        return "tl"
    return "pallas"


def _check_against_source(original, lowered, source: str, seed: int) -> list[float]:
    """Run the emitted module in interpret mode and the input's reference interpreter
    on the same random inputs; assert they agree (up to float summation order)."""
    import jax.numpy as jnp
    import numpy as np

    from pallas_ir.check import example_inputs
    from pallas_ir.dialects.common import find_forward
    from pallas_ir.reference import run_forward
    from pallas_ir.reference.verify import forward_inputs
    from pallas_ir.tpu_check import exec_source

    if _level(original) == "ta":
        # What the source program accepts (index buffers inside the tables they
        # index, through any index computation), in the lowered @forward's shapes.
        inputs = forward_inputs(original, find_forward(original), seed)
        shapes = [a.type.get_shape() for a in find_forward(lowered).body.block.args]
        inputs = [a.reshape(s) for a, s in zip(inputs, shapes, strict=True)]
    else:
        inputs = example_inputs(lowered, seed)
    want = run_forward(original, *inputs)
    out = exec_source(source)["forward"](*map(jnp.asarray, inputs), interpret=True)
    got = out if isinstance(out, tuple | list) else (out,)
    errors = []
    for w, g in zip(want, got, strict=True):
        g = np.asarray(g).reshape(w.shape).astype(np.float64)
        low = w.dtype.kind == "f" and w.dtype.itemsize < 4
        tol = (1e-2, 1e-2) if low else (1e-5, 1e-4)
        np.testing.assert_allclose(g, w.astype(np.float64), rtol=tol[0], atol=tol[1])
        errors.append(float(np.max(np.abs(g - w.astype(np.float64)), initial=0)))
    return errors


if __name__ == "__main__":
    sys.exit(main())
