"""What the tests of op families share: compiling a table of programs, flattening
their results, and the deviceless TPU compile of every module they emitted."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import torch

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.tpu_check import aot_compile_many

Programs = Mapping[str, tuple[Callable, Callable[[], list[torch.Tensor]]]]
"""name → (the function, a maker of its example inputs)."""


def compile_programs(programs: Programs) -> dict[str, tuple]:
    """name → (the compiled function, the function, its inputs), inputs drawn seeded."""
    torch.manual_seed(0)
    return {
        name: (pallas_ir.compile(fn, inputs), fn, inputs)
        for name, (fn, make) in programs.items()
        for inputs in [make()]
    }


def flat(out) -> list[torch.Tensor]:
    """A result (a tensor, or nested tuples and lists of them) as a list of tensors."""
    if isinstance(out, tuple | list):
        return [t for o in out for t in flat(o)]
    return [out]


def assert_like_eager(got, want, **tolerance) -> None:
    """A compiled function's result `got` is eager's `want`: as many tensors, each of
    eager's dtype and shape, its values close (`tolerance` for `assert_close`; NaN
    where eager has NaN, integers exactly)."""
    got, want = flat(got), flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, equal_nan=True, **tolerance)


def aot_failures(compiled: Mapping[str, object], chip: str = "v5e") -> dict[str, str]:
    """name → the TPU compiler's message, for each compiled function (or a tuple whose
    first item is one) whose module does not AOT-compile for `chip`; empty when all do."""
    functions = {n: k[0] if isinstance(k, tuple) else k for n, k in compiled.items()}
    items = [(k.source, arg_specs(k.module)) for k in functions.values()]  # type: ignore[attr-defined]
    results = aot_compile_many(items, chip=chip)
    return {n: r.message for n, r in zip(functions, results, strict=True) if not r.ok}


def library_call_reference(compiled_fn, inputs: list[torch.Tensor]) -> list:
    """The ta reference interpreter's results for a compiled function's ta module on
    `inputs`, after checking the module holds a library call (what it runs on numpy)."""
    from pallas_ir.dialects import tensor_access as ta
    from pallas_ir.reference.ta import run_forward

    module = pallas_ir.parse(compiled_fn.ir["ta"])
    assert any(
        isinstance(op, ta.LibraryCallOp) for kernel in module.ops for op in kernel.walk()
    )
    return run_forward(module, *[t.numpy() for t in inputs])


def ta_reference(compiled_fn, arrays: list[np.ndarray]) -> list:
    """The ta reference interpreter's results for a compiled function's ta module on
    `arrays` (its inputs as the host passes them: contiguous, complex ones as pairs);
    @forward's arguments after them are positions 0..n-1 (iotas)."""
    from pallas_ir.reference.ta import find_forward, run_forward

    module = pallas_ir.parse(compiled_fn.ir["ta"])
    forward = find_forward(module)
    assert forward is not None
    arrays = list(arrays)
    for arg in forward.body.block.args[len(arrays) :]:
        (n,) = arg.type.get_shape()
        arrays.append(np.arange(n, dtype=np.int32))
    return run_forward(module, *arrays)
