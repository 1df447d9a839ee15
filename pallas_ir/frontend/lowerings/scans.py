"""Scans (`cumsum`, `cumprod`, `cummax`, `cummin`, `logcumsumexp`): library functions
on XLA (`pallas_ir.library.scans`). A float `cumsum` as a masked-sum Pallas kernel was
1.4 to 24 times slower than `lax.cumsum` on a v5e (n = 32 to 512), so none is one
until a kernel can carry a scan (docs/torch.md)."""

from __future__ import annotations

import torch

from pallas_ir.frontend.kernel_builder import (
    UnsupportedError,
    Value,
)
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.frontend.lowerings.sorting import as_rank1, in_rank
from pallas_ir.library import LibraryFn

aten = torch.ops.aten
prims = torch.ops.prims


def _dtype(node_arg) -> torch.dtype | None:
    val = node_arg.meta.get("val") if isinstance(node_arg, torch.fx.Node) else None
    return val.dtype if isinstance(val, torch.Tensor) else None


def in_result_type(c: Lowering, a: Value) -> Value:
    """`a` (the op's first operand) converted to the op's result dtype, as eager
    converts before it scans (`dtype=`, an int's promotion to int64); a conversion's
    checks (a float into int64) come with it."""
    result = c.node.meta["val"]
    result = result[0] if isinstance(result, tuple | list) else result
    if _dtype(c.node.args[0]) == result.dtype:
        return a
    return c.lower(prims.convert_element_type.default, [a, result.dtype], shape=a.shape)


@lowers(aten.cumsum.default, aten.cumprod.default, runs_on=RunsOn.XLA)
def cumulative(c: Lowering, args) -> Value:
    a, dim = args[0], args[1]
    x = as_rank1(in_result_type(c, a))
    dim = dim % len(x.shape)
    sums = c.target == aten.cumsum.default
    fn = LibraryFn.CUMSUM if sums else LibraryFn.CUMPROD
    # An int64 result is computed in int32: checked not to wrap, where it can.
    checked = (
        c.prog.checking
        and c.node.meta["val"].dtype == torch.int64
        and x.element == "i32"
        and x.shape[dim] > 1
    )
    if not checked:
        (result,) = library_call(c, fn, [x], [(x.shape, x.element)], dim=dim)
        return in_rank(result, a.shape)
    result, wrapped, about = library_call(
        c,
        fn,
        [x],
        [(x.shape, "i32"), (x.shape, "i1"), (x.shape, "f32")],
        dim=dim,
        checked=True,
    )
    c.prog.check(
        wrapped,
        about,
        UnsupportedError,
        str(c.target),
        "an int64 result leaves the int32 range the kernels compute int64 data in "
        f"(a cumulative {'sum' if sums else 'product'} of about {{value}})",
        c.where,
    )
    return in_rank(result, a.shape)


@lowers(aten.cummax.default, aten.cummin.default, runs_on=RunsOn.XLA)
def cumextreme(c: Lowering, args) -> list[Value]:
    a, dim = args[0], args[1]
    x = as_rank1(a)
    dim = dim % len(x.shape)
    values, indices = library_call(
        c,
        LibraryFn.CUMEXTREME,
        [x],
        [(x.shape, a.element), (x.shape, "i32")],
        dim=dim,
        largest=c.target == aten.cummax.default,
    )
    return [in_rank(values, a.shape), in_rank(indices, a.shape)]


@lowers(aten.logcumsumexp.default, runs_on=RunsOn.XLA)
def logcumsumexp(c: Lowering, args) -> Value:
    a, dim = args[0], args[1]
    x = as_rank1(a)
    (result,) = library_call(
        c, LibraryFn.LOGCUMSUMEXP, [x], [(x.shape, x.element)], dim=dim % len(x.shape)
    )
    return in_rank(result, a.shape)
