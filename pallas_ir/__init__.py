"""pallas-ir: compile PyTorch programs to JAX Pallas kernels through a typed, multi-level IR.

The Python API for building and transforming IR:

```python
import pallas_ir
module = pallas_ir.parse(text)                   # ta, tl or pallas IR, with locations
pallas_ir.verify(module)                         # raises IRError listing every failure
module = pallas_ir.run_passes(module, "cse")     # any registered pipeline
source = pallas_ir.emit_python(module)           # a pallas module as Python source
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ParseError

from pallas_ir.compile_profile import CompileProfile, profile_compiles
from pallas_ir.diagnostics import (
    Diagnostic,
    LocatedParser,
    Location,
    Severity,
    verify_module,
)

__version__ = "0.1.0"

__all__ = [
    "CompileProfile",
    "Diagnostic",
    "IRError",
    "UnsupportedError",
    "compile",
    "cost_report",
    "emit_python",
    "make_context",
    "parse",
    "profile_compiles",
    "run_passes",
    "verify",
]


class IRError(Exception):
    """IR that does not parse, verify or transform; `diagnostics` says where and why."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


def make_context() -> Context:
    """A context that knows builtin, func, arith, math and the ta/tl/pallas dialects."""
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.math import Math

    from pallas_ir.dialects.arith_ext import ARITH_EXTRA_OPS
    from pallas_ir.registry import get_all_dialects

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math):
        ctx.load_dialect(dialect)
    for op in ARITH_EXTRA_OPS:
        ctx.load_op(op)
    for factory in get_all_dialects().values():
        ctx.load_dialect(factory())
    return ctx


def parse(text: str, name: str = "<input>", ctx: Context | None = None) -> ModuleOp:
    """Parse IR (custom or generic syntax); every op gets its `name:line:col`."""
    try:
        return LocatedParser(ctx or make_context(), text, name).parse_module()
    except ParseError as e:
        loc = e.span.get_location()
        raise IRError(
            [Diagnostic(Severity.ERROR, e.msg, Location(name, loc.line, loc.col))]
        ) from None


def verify(module: ModuleOp) -> None:
    if errors := verify_module(module):
        raise IRError(errors)


@functools.cache
def _available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes and pallas-ir's, by name. Found once a process: xDSL's multiverse
    reads every package's entry points, 6 ms a call, and a compile runs 17 stages."""
    from xdsl.universe import Universe

    from pallas_ir.registry import get_all_passes

    return {**Universe.get_multiverse().all_passes, **get_all_passes()}


def run_passes(
    module: ModuleOp,
    pipeline: str,
    ctx: Context | None = None,
    verify_each: bool = True,
) -> ModuleOp:
    """Apply a `-p`-style pipeline in place, verifying after each pass as MLIR's pass
    manager does (`verify_each=False`: the caller verifies)."""
    ctx = ctx or make_context()
    for p in PassPipeline.parse_spec(_available_passes(), pipeline).passes:
        p.apply(ctx, module)
        if verify_each:
            verify(module)
    return module


def emit_python(module: ModuleOp) -> str:
    """The Python source of a verified `pallas` module (see `lowering/emit_python.py`)."""
    from pallas_ir.lowering.emit_python import emit_python as _emit

    return _emit(module)


def cost_report(module: ModuleOp, inputs=None):
    """Modelled HBM bytes, minimum bytes and VMEM/SMEM of every `pallas.call`
    (see `analysis/cost_model.py`); `inputs` gives index data for prefetch maps."""
    from pallas_ir.analysis.cost_model import cost_report as _report

    return _report(module, inputs)


def compile(
    fn,
    example_inputs,
    *,
    chip: str = "v5e",
    interpret: bool | None = None,
    runtime_checks: bool = True,
    cache=True,
):
    """A torch function as Pallas kernels (see `pallas_ir.compiler`); imports torch."""
    from pallas_ir.compiler import compile as compile_torch

    return compile_torch(
        fn,
        example_inputs,
        chip=chip,
        interpret=interpret,
        runtime_checks=runtime_checks,
        cache=cache,
    )


def __getattr__(name: str):
    if name == "UnsupportedError":  # torch is imported only when it is asked for
        from pallas_ir.frontend import UnsupportedError

        return UnsupportedError
    raise AttributeError(name)
