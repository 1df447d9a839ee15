"""Which scores a `ta.attention` score region masks, as a bound on `j - i`.

raise-attention asks this of the region it builds: the least `c` such that the region
yields -inf at every (b, i, j) with `j - i > c`. That is the op's `causal c`, which lets
the tiler skip the key blocks above the diagonal. The region's index values come from
loads of buffers the caller fills with 0, 1, ..., n - 1 (`ta.is_iota_argument`), so a
load of one at a single dim is that index.

An abstract interpretation of the region, one value per SSA value:
- an integer is a linear form `a*i + b*j + c` (or unknown);
- a predicate is true exactly where `j - i >= k` (`_AtLeast`), `j - i <= k`
  (`_AtMost`), everywhere, nowhere, or unknown;
- a float is the least `c` such that it is -inf wherever `j - i > c` (-inf: everywhere;
  +inf: nothing known).

`addf` of a -inf is taken as -inf: a +inf or NaN added at a masked score (from
non-finite q or k) is dropped, as torch's fused attention kernels drop it, rather
than poisoning the row as the unfused chain would.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import arith_predicate


@dataclass(frozen=True)
class _Linear:
    """a*i + b*j + c."""

    a: int
    b: int
    c: int

    def __add__(self, o: _Linear) -> _Linear:
        return _Linear(self.a + o.a, self.b + o.b, self.c + o.c)

    def scaled(self, k: int) -> _Linear:
        return _Linear(self.a * k, self.b * k, self.c * k)


@dataclass(frozen=True)
class _AtLeast:
    """True exactly where j - i >= k."""

    k: int


@dataclass(frozen=True)
class _AtMost:
    """True exactly where j - i <= k."""

    k: int


_Predicate = _AtLeast | _AtMost | bool | None  # bool: everywhere or nowhere

_EVERYWHERE = -math.inf
_NOTHING = math.inf


def _not(p: _Predicate) -> _Predicate:
    if isinstance(p, _AtLeast):
        return _AtMost(p.k - 1)
    if isinstance(p, _AtMost):
        return _AtLeast(p.k + 1)
    return None if p is None else not p


def _and(p: _Predicate, q: _Predicate) -> _Predicate:
    if p is True or q is False:
        return q
    if q is True or p is False:
        return p
    if isinstance(p, _AtLeast) and isinstance(q, _AtLeast):
        return _AtLeast(max(p.k, q.k))
    if isinstance(p, _AtMost) and isinstance(q, _AtMost):
        return _AtMost(min(p.k, q.k))
    return None


def _or(p: _Predicate, q: _Predicate) -> _Predicate:
    return _not(_and(_not(p), _not(q)))


def _compare(predicate: str, diff: _Linear) -> _Predicate:
    """`diff <predicate> 0` for diff = b*(j - i) + c, as a predicate on j - i."""
    if diff.a != -diff.b or diff.b == 0:
        return None
    b, c = diff.b, diff.c
    # diff >= 0 (sge), diff >= 1 (sgt); sle and slt are those of -diff
    if predicate in ("sle", "slt"):
        b, c = -b, -c
        predicate = "sge" if predicate == "sle" else "sgt"
    if predicate == "sgt":
        c -= 1
    elif predicate != "sge":
        return None
    # b*d + c >= 0
    if b > 0:
        return _AtLeast(-(c // b))  # d >= ceil(-c / b)
    return _AtMost(c // -b)  # d <= floor(c / -b)


def _constant(op: arith.ConstantOp) -> int | float | bool | None:
    value = op.value
    if isinstance(value, IntegerAttr):
        v = value.value.data
        t = value.type
        return bool(v) if isinstance(t, IntegerType) and t.width.data == 1 else v
    if isinstance(value, FloatAttr):
        return value.value.data
    return None


class _Masks:
    """The abstract values of a score region (see the module docstring)."""

    def __init__(self, op: ta.AttentionOp, reads_iota: Callable[[ta.LoadOp], bool]):
        nb = len(op.batch_extents)
        args = op.score.block.args
        self.i_arg, self.j_arg = args[nb], args[nb + 1]
        self.linear: dict[SSAValue, _Linear] = {}
        self.predicate: dict[SSAValue, _Predicate] = {}
        self.masked: dict[SSAValue, float] = {}  # the least c masked above
        for o in op.score.block.ops:
            self.visit(o, reads_iota)

    def bound(self, v: SSAValue) -> float:
        return self.masked.get(v, _NOTHING)

    def index_of(self, load: ta.LoadOp) -> _Linear | None:
        (expr,) = load.map.data.results or (None,)
        if isinstance(expr, AffineConstantExpr):
            return _Linear(0, 0, expr.value)
        if isinstance(expr, AffineDimExpr):
            arg = load.dims[expr.position]
            if arg is self.i_arg:
                return _Linear(1, 0, 0)
            if arg is self.j_arg:
                return _Linear(0, 1, 0)
        return None

    def visit(self, o: Operation, reads_iota: Callable[[ta.LoadOp], bool]) -> None:
        linear, predicate, masked = self.linear, self.predicate, self.masked
        if isinstance(o, ta.LoadOp):
            if reads_iota(o) and (index := self.index_of(o)) is not None:
                linear[o.result] = index
        elif isinstance(o, arith.ConstantOp):
            value = _constant(o)
            if isinstance(value, bool):
                predicate[o.result] = value
            elif isinstance(value, int):
                linear[o.result] = _Linear(0, 0, value)
            elif value == -math.inf:
                masked[o.result] = _EVERYWHERE
        elif isinstance(o, arith.IndexCastOp | arith.ExtSIOp) and o.input in linear:
            linear[o.result] = linear[o.input]
        elif isinstance(o, arith.AddiOp | arith.SubiOp | arith.MuliOp):
            x, y = (linear.get(v) for v in o.operands)
            if x is None or y is None:
                return
            if isinstance(o, arith.AddiOp):
                linear[o.result] = x + y
            elif isinstance(o, arith.SubiOp):
                linear[o.result] = x + y.scaled(-1)
            elif x.a == x.b == 0:
                linear[o.result] = y.scaled(x.c)
            elif y.a == y.b == 0:
                linear[o.result] = x.scaled(y.c)
        elif isinstance(o, arith.CmpiOp):
            x, y = (linear.get(v) for v in o.operands)
            name = arith_predicate(o)
            if x is not None and y is not None and name is not None:
                predicate[o.result] = _compare(name.value, x + y.scaled(-1))
        elif isinstance(o, arith.AndIOp | arith.OrIOp | arith.XOrIOp):
            p, q = (predicate.get(v) for v in o.operands)
            if isinstance(o, arith.AndIOp):
                predicate[o.result] = _and(p, q)
            elif isinstance(o, arith.OrIOp):
                predicate[o.result] = _or(p, q)
            elif q is True or p is True:  # xor with true: not
                predicate[o.result] = _not(p if q is True else q)
        elif isinstance(o, arith.SelectOp):
            p = predicate.get(o.cond)
            a, b = self.bound(o.lhs), self.bound(o.rhs)
            both = max(a, b)
            if p is True or p is False:
                masked[o.result] = a if p else b
            elif isinstance(p, _AtLeast):  # a from j - i >= k on
                masked[o.result] = min(both, max(p.k - 1, a))
            elif isinstance(p, _AtMost):  # b beyond j - i = k
                masked[o.result] = min(both, max(p.k, b))
            else:
                masked[o.result] = both
        elif isinstance(o, arith.AddfOp):
            masked[o.result] = min(self.bound(o.lhs), self.bound(o.rhs))
        elif isinstance(o, arith.MulfOp | arith.DivfOp):
            # -inf times (or over) a positive constant stays -inf
            factors = [(o.lhs, o.rhs)] + ([(o.rhs, o.lhs)] * isinstance(o, arith.MulfOp))
            for x, y in factors:
                c = y.owner
                if (
                    isinstance(c, arith.ConstantOp)
                    and isinstance(value := _constant(c), float)
                    and 0 < value < math.inf
                ):
                    masked[o.result] = self.bound(x)

    def unmasked(self, v: SSAValue, offset: int) -> SSAValue | None:
        """x, when `v` is a select of -inf where j - i > offset and of x elsewhere."""
        o = v.owner
        if not isinstance(o, arith.SelectOp):
            return None
        p = self.predicate.get(o.cond)
        if p == _AtLeast(offset + 1):
            hidden, shown = o.lhs, o.rhs
        elif p == _AtMost(offset):
            hidden, shown = o.rhs, o.lhs
        else:
            return None
        return shown if self.bound(hidden) == _EVERYWHERE else None


def causal_bound(
    op: ta.AttentionOp, reads_iota: Callable[[ta.LoadOp], bool]
) -> int | None:
    """The least c with every score of `j - i > c` masked to -inf by the region, when
    its masks say so and c hides some key from some query; else None. `reads_iota`
    says whether a load reads a buffer whose element k is k."""
    yielded = op.score.block.last_op
    assert isinstance(yielded, ta.YieldOp)  # verified
    c = _Masks(op, reads_iota).bound(yielded.values[0])
    tq, tk = op.sizes.get_values()[:2]
    if c in (_EVERYWHERE, _NOTHING) or c >= tk - 1 or c <= -tq:
        return None  # every score masked, none known, or none hidden
    return int(c)


def without_causal_mask(
    op: ta.AttentionOp, reads_iota: Callable[[ta.LoadOp], bool]
) -> SSAValue | None:
    """x, when the region of an op with `causal c` ends in the mask that `causal c`
    says: `select(j - i > c, -inf, x)`, or `x + select(j - i > c, -inf, 0)` (torch's
    SDPA bias). Yielding x then means the same."""
    offset = op.causal_offset
    yielded = op.score.block.last_op
    assert isinstance(yielded, ta.YieldOp) and offset is not None
    masks = _Masks(op, reads_iota)
    value = yielded.values[0]
    o = value.owner
    if isinstance(o, arith.AddfOp):
        for x, y in ((o.lhs, o.rhs), (o.rhs, o.lhs)):
            zero = masks.unmasked(y, offset)
            if (
                zero is not None
                and isinstance(zero.owner, arith.ConstantOp)
                and _constant(zero.owner) == 0.0
            ):
                return x
    return masks.unmasked(value, offset)
