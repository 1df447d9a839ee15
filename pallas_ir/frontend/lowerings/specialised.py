"""Values a program reads back to Python while it is traced: `.item()`, `bool(t)` (a
Python `if` on a tensor, as `gaussian_nll_loss`'s check of its variances), a tensor
`start` of `narrow`, `torch.equal`, `torch.allclose`.

The tracer cannot follow such a value: the Python code after it depends on it.
Dynamo would break the graph there; `pallas_ir.compile` specialises the program on
it instead, as it does on shapes. While tracing, the value is read from the example
inputs (`SCALAR_READ_DECOMPOSITIONS`), and the trace goes on with it as a constant;
the graph keeps a `pallas_ir.specialised_scalar(tensor, value)` node, which the
lowering here turns into a run-time check: a call whose tensor has another value
raises an `UnsupportedError` saying to compile again, never a result computed with
the stale value. Integers and booleans must be equal; a float within 1e-5 of it
(relative, and absolute near 0), since the program's kernels compute it in another
order than eager's CPU kernels did (a sum's last bits). The check is on even with
`runtime_checks=False`: it is what makes the specialised program correct at all.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from pallas_ir.frontend.kernel_builder import Index, Kernel, UnsupportedError, Value
from pallas_ir.frontend.lowerings.registry import Lowering, lowers

aten = torch.ops.aten

_LIBRARY = torch.library.Library("pallas_ir", "DEF")
_LIBRARY.define("specialised_scalar(Tensor value, Scalar traced) -> ()")


def _no_effect(value: torch.Tensor, traced: Any) -> None:
    """Eager: nothing to do (the traced program checks it)."""


_LIBRARY.impl("specialised_scalar", _no_effect, "CompositeExplicitAutograd")
SPECIALISED_SCALAR = torch.ops.pallas_ir.specialised_scalar.default

FLOAT_TOLERANCE = 1e-5
"""How far (relative; absolute below 1) a float read back may move and the
specialised program still be the one for it."""


def _read_scalar(t: torch.Tensor) -> Any:
    """`t.item()` while tracing: the example's value, kept as a constant, and a
    `specialised_scalar` node that checks it at every call."""
    with _disable_current_modes():  # the real tensor under the proxy
        value = t.item()
    SPECIALISED_SCALAR(t, value)
    return value


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape:
        return False
    return bool(_read_scalar((a == b).all()))


def _allclose(
    a: torch.Tensor,
    b: torch.Tensor,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> bool:
    return bool(_read_scalar(torch.isclose(a, b, rtol, atol, equal_nan).all()))


SCALAR_READ_DECOMPOSITIONS = {
    aten._local_scalar_dense.default: _read_scalar,
    aten.equal.default: _equal,
    aten.allclose.default: _allclose,
}
"""The ATen ops that return a Python value computed from tensor data, as the
frontend traces them (`frontend_decompositions`)."""


@lowers(SPECIALISED_SCALAR)
def specialised_scalar(c: Lowering, args: list[Any]) -> list[Value]:
    value, traced = args
    element = value.element
    if element == "i32" and not -(2**31) <= int(traced) < 2**31:
        raise UnsupportedError(
            "aten._local_scalar_dense",
            f"the program reads the value {traced} back to Python, outside the int32 "
            "range the kernels compute int64 data in",
            c.where,
        )

    def changed(k: Kernel, idx: Index) -> Any:
        v = value.emit(k, idx)
        if element in ("i1", "i32"):
            return k.cmp("ne", v, k.constant(traced, element))
        if math.isnan(traced):
            return k.cmp("ord", v, v)  # anything but NaN
        if math.isinf(traced):
            return k.cmp("une", v, k.constant(traced, element))
        allowed = FLOAT_TOLERANCE * max(1.0, abs(traced))
        distance = k.op("math.absf", k.op("arith.subf", v, k.constant(traced, element)))
        return k.cmp("ugt", distance, k.constant(allowed, element))  # NaN: changed

    def shown(k: Kernel, idx: Index) -> Any:
        v = value.emit(k, idx)
        return k.cast(v, "i1", "i32") if element == "i1" else v

    said = int(traced) if isinstance(traced, bool) else traced  # as `{value}` says it
    c.prog.check(
        Value(value.shape, changed, "i1"),
        Value(value.shape, shown, "i32" if element == "i1" else element),
        UnsupportedError,
        "aten._local_scalar_dense",
        f"the program read this tensor's value back to Python while it was traced "
        f"(`.item()`, `bool()`, a Python `if` on it, `torch.equal`) and is specialised "
        f"on {said}; this call's is {{value}}: compile again for it",
        c.where,
        always=True,
    )
    return []
