"""Sorting and selection (`sort`, `topk`): library functions on XLA
(`pallas_ir.library.sorting`)."""

from __future__ import annotations

import torch

from pallas_ir.frontend.kernel_builder import Value, const, remap
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def _as_rank1(a: Value) -> Value:
    """A 0-d value as a 1-element vector (a dim to sort along, as eager treats it)."""
    return remap(a, (1,), lambda idx: []) if not a.shape else a


@lowers(aten.sort.default, aten.sort.stable, runs_on=RunsOn.XLA)
def sort(c: Lowering, args) -> list[Value]:
    a = args[0]
    if c.target == aten.sort.stable:
        stable = bool(c.kwargs.get("stable") or False)
        dim = c.kwargs.get("dim", -1)
        descending = bool(c.kwargs.get("descending", False))
    else:
        dim = args[1] if len(args) > 1 else c.kwargs.get("dim", -1)
        descending = bool(args[2] if len(args) > 2 else c.kwargs.get("descending", False))
        stable = False
    x = _as_rank1(a)
    dim = dim % len(x.shape)
    values, indices = library_call(
        c,
        LibraryFn.SORT,
        [x],
        [(x.shape, a.element), (x.shape, "i32")],
        dim=dim,
        descending=descending,
        stable=stable,
    )
    return [_scalar(values, a.shape), _scalar(indices, a.shape)]


@lowers(aten.topk.default, runs_on=RunsOn.XLA)
def topk(c: Lowering, args) -> list[Value]:
    a, k = args[0], int(args[1])
    dim = args[2] if len(args) > 2 else c.kwargs.get("dim", -1)
    largest = bool(args[3] if len(args) > 3 else c.kwargs.get("largest", True))
    x = _as_rank1(a)
    dim = dim % len(x.shape)
    shape = list(x.shape)
    shape[dim] = k
    values, indices = library_call(
        c,
        LibraryFn.TOPK,
        [x],
        [(shape, a.element), (shape, "i32")],
        k=k,
        dim=dim,
        largest=largest,
        sorted=True,
    )
    return [_scalar(values, a.shape), _scalar(indices, a.shape)]


def _scalar(v: Value, shape) -> Value:
    """`v` (a 1-element vector for a 0-d operand) in the operand's rank."""
    return v if shape else remap(v, (), lambda idx: [const(0)])
