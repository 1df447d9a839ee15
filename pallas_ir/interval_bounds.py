"""Interval bounds of affine expressions over a box of dims and symbols.

Verifiers use them to reject accesses that leave their buffer for every point of a
static iteration domain; `affine_analysis` to simplify index expressions. A utility
below the dialects: it knows affine expressions, not ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

Interval = tuple[int, int]


def expr_bounds(
    expr: AffineExpr, dims: Sequence[Interval | None], symbols: Sequence[Interval | None]
) -> Interval | None:
    """Inclusive bounds of `expr` over the box `dims` x `symbols`; None when unknown."""
    match expr:
        case AffineConstantExpr(value=v):
            return (v, v)
        case AffineDimExpr(position=p):
            return dims[p] if p < len(dims) else None
        case AffineSymExpr(position=p):
            return symbols[p] if p < len(symbols) else None
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            lo_hi = expr_bounds(lhs, dims, symbols)
            r = expr_bounds(rhs, dims, symbols)
            if lo_hi is None or r is None:
                return None
            (a, b), (c, d) = lo_hi, r
            if kind == AffineBinaryOpKind.Add:
                return (a + c, b + d)
            if kind == AffineBinaryOpKind.Mul:
                products = (a * c, a * d, b * c, b * d)
                return (min(products), max(products))
            if c != d or c <= 0:
                return None  # division by a non-constant or non-positive value
            if kind == AffineBinaryOpKind.FloorDiv:
                return (a // c, b // c)
            if kind == AffineBinaryOpKind.CeilDiv:
                return (-(-a // c), -(-b // c))
            if kind == AffineBinaryOpKind.Mod:
                if b - a + 1 >= c or a // c != b // c:
                    return (0, c - 1)
                return (a % c, b % c)
    return None


def map_bounds(
    map: AffineMap, dims: Sequence[Interval | None], symbols: Sequence[Interval | None]
) -> list[Interval | None]:
    return [expr_bounds(e, dims, symbols) for e in map.results]


def loop_bounds_of(
    values: Sequence[SSAValue], extent_of: Callable[[SSAValue], int | None]
) -> list[Interval | None]:
    """Intervals [0, extent - 1] of iteration variables; None where not known."""
    out: list[Interval | None] = []
    for v in values:
        n = extent_of(v)
        out.append(None if n is None or n <= 0 else (0, n - 1))
    return out
