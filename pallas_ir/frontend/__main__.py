"""Write the ta IR of a torch function, for `pallas-opt`:

    python -m pallas_ir.frontend script.py:fn --shapes f32[64,128] i64[8] [-o out.mlir]

Each `--shapes` entry is one argument of `fn` (contiguous, random values): a dtype
(f32, i32, i64, bool) and its sizes. An op the frontend does not lower is reported as
`error: <op>: <reason>` with exit code 1.
"""

from __future__ import annotations

import argparse
import re
import runpy
import sys

import torch

from pallas_ir.frontend.torch_to_ta import UnsupportedError, torch_to_ta

_DTYPES = {
    "f32": torch.float32,
    "bf16": torch.bfloat16,
    "i32": torch.int32,
    "i64": torch.int64,
    "bool": torch.bool,
}


def _example(spec: str) -> torch.Tensor:
    m = re.fullmatch(r"(f32|bf16|i32|i64|bool)\[([0-9, ]*)\]", spec.strip())
    if m is None:
        raise SystemExit(f"error: bad shape '{spec}' (expected like f32[64,128])")
    sizes = [int(n) for n in m.group(2).replace(" ", "").split(",") if n]
    dtype = _DTYPES[m.group(1)]
    if dtype.is_floating_point:
        return torch.randn(*sizes).to(dtype)
    if dtype == torch.bool:
        return torch.rand(*sizes) > 0.5
    return torch.randint(0, 8, sizes, dtype=dtype)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pallas_ir.frontend")
    parser.add_argument("target", help="script.py:function")
    parser.add_argument("--shapes", nargs="*", default=[], help="e.g. f32[64,128] i64[8]")
    parser.add_argument("-o", "--output", help="write the IR here (default: stdout)")
    args = parser.parse_args(argv)
    path, _, name = args.target.rpartition(":")
    if not path or not name:
        print("error: expected script.py:function", file=sys.stderr)
        return 1
    try:
        fn = runpy.run_path(path).get(name)
    except OSError as e:  # no such file, a directory, unreadable
        print(f"error: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the user's script failed to run
        print(f"error: running {path}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if not callable(fn):
        print(f"error: {path} defines no function '{name}'", file=sys.stderr)
        return 1
    try:
        module = torch_to_ta(fn, [_example(s) for s in args.shapes]).module
    except UnsupportedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = str(module) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
