"""fold-iota-indices: an index read from an iota argument is the loop index itself.

The frontend passes the values of loop indices (`torch.arange`: the positions a learned
position embedding is read at, a causal mask's rows and columns) as @forward arguments
marked `{ta.iota}`, whose element k holds k (`ta.is_iota_argument`). A data-dependent
index computed from loads of such arguments alone, through casts, adds, subtractions,
multiplications by constants and selects the loop ranges decide (the wrap of a negative
index, which a position never takes), is an affine function of the loop dims, so the
access is a direct one:

```mlir
%p = ta.load %iota128[affine_map<(d0, d1, d2) -> (d1)>](%l0, %l1, %l2) : memref<128xi32>
%i = arith.index_cast %p : i32 to index
%e = ta.load %pos[affine_map<(d0, d1, d2)[s0] -> (s0 * 128 + d2)>](%l0, %l1, %l2)[%i] : memref<16384xf32>
// becomes
%e = ta.load %pos[affine_map<(d0, d1, d2) -> (d1 * 128 + d2)>](%l0, %l1, %l2) : memref<16384xf32>
```

The indirect-access passes then leave it alone (no index array computed on XLA and
prefetched to SMEM, no row gather), fusion compares it as a plain access, and the tiler
gives it a block. It runs first, on the frontend's kernels. A symbol whose value is not
such a form is left as it was (nothing to say: the access reads data).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineSymExpr
from xdsl.rewriter import Rewriter

from pallas_ir.affine_analysis import simplify
from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import arith_predicate, find_forward
from pallas_ir.interval_bounds import Interval, expr_bounds
from pallas_ir.passes.options import CheckedOptionsPass

_COMPARE = {
    "eq": lambda lo, hi: True if lo == hi == 0 else (False if lo > 0 or hi < 0 else None),
    "ne": lambda lo, hi: False if lo == hi == 0 else (True if lo > 0 or hi < 0 else None),
    "slt": lambda lo, hi: True if hi < 0 else (False if lo >= 0 else None),
    "sle": lambda lo, hi: True if hi <= 0 else (False if lo > 0 else None),
    "sgt": lambda lo, hi: True if lo > 0 else (False if hi <= 0 else None),
    "sge": lambda lo, hi: True if lo >= 0 else (False if hi < 0 else None),
}
"""`lhs <predicate> rhs` from the range [lo, hi] of lhs - rhs: True, False, or None
where the range does not decide it."""


class _Indices:
    """The values of a loop body's integers that loads of iota arguments compute, as
    affine expressions of the loop's variables (d_k: the k-th)."""

    def __init__(self, loop: ta.LoopOp, iota: set[SSAValue]):
        self.loop = loop
        self.iota = iota
        self.bounds: list[Interval | None] = [(0, n - 1) for n in loop.extents]
        self.exprs: dict[SSAValue, AffineExpr | None] = {}

    def expr(self, value: SSAValue) -> AffineExpr | None:
        if value not in self.exprs:
            self.exprs[value] = self._expr(value)
        return self.exprs[value]

    def _expr(self, value: SSAValue) -> AffineExpr | None:
        o = value.owner
        if isinstance(o, ta.LoadOp):
            return self._iota_element(o)
        if isinstance(o, arith.ConstantOp):
            v = o.value
            if isinstance(v, IntegerAttr) and not _is_bool(v.type):
                return AffineConstantExpr(v.value.data)
            return None
        if isinstance(o, arith.IndexCastOp | arith.ExtSIOp):
            return self.expr(o.operands[0])
        if isinstance(o, arith.AddiOp | arith.SubiOp | arith.MuliOp):
            a, b = self.expr(o.lhs), self.expr(o.rhs)
            if a is None or b is None:
                return None
            if isinstance(o, arith.AddiOp):
                return a + b
            if isinstance(o, arith.SubiOp):
                return a - b
            if isinstance(b, AffineConstantExpr):
                return a * b.value
            return b * a.value if isinstance(a, AffineConstantExpr) else None
        if isinstance(o, arith.SelectOp):
            taken = self.truth(o.cond)
            if taken is None:
                return None
            return self.expr(o.lhs if taken else o.rhs)
        return None

    def _iota_element(self, load: ta.LoadOp) -> AffineExpr | None:
        """The flat index a load of an iota argument reads: the value it reads."""
        if load.symbols or ta.root_buffer(load.buffer) not in self.iota:
            return None
        body = self.loop.body.block
        if any(not (isinstance(d, BlockArgument) and d.owner is body) for d in load.dims):
            return None
        at = [AffineDimExpr(d.index) for d in load.dims]  # type: ignore[attr-defined]
        shape = load.buffer.type.get_shape()  # type: ignore[attr-defined]
        flat: AffineExpr = AffineConstantExpr(0)
        for n, index in zip(shape, load.map.data.results, strict=True):
            flat = flat * n + index.replace_dims_and_symbols(at, [])
        return simplify(flat, self.bounds)

    def truth(self, value: SSAValue) -> bool | None:
        """A predicate's value at every point, where the loop ranges decide it."""
        o = value.owner
        if isinstance(o, arith.ConstantOp) and isinstance(o.value, IntegerAttr):
            return bool(o.value.value.data) if _is_bool(o.value.type) else None
        if isinstance(o, arith.CmpiOp):
            decide = _COMPARE.get(arith_predicate(o))
            a, b = self.expr(o.lhs), self.expr(o.rhs)
            if decide is None or a is None or b is None:
                return None
            span = expr_bounds(simplify(a - b, self.bounds), self.bounds, [])
            return None if span is None else decide(*span)
        if isinstance(o, arith.XOrIOp | arith.AndIOp | arith.OrIOp):
            a, b = self.truth(o.lhs), self.truth(o.rhs)
            if a is None or b is None:
                return None
            if isinstance(o, arith.XOrIOp):
                return a != b
            return (a and b) if isinstance(o, arith.AndIOp) else (a or b)
        return None


def _is_bool(t: object) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def _erase_dead(value: SSAValue) -> None:
    """The ops that computed an index nothing reads any more."""
    o = value.owner
    if not isinstance(o, Operation) or any(r.uses for r in o.results):
        return
    if not isinstance(o, ta.LoadOp) and o.dialect_name() != "arith":
        return
    operands = list(o.operands) if not isinstance(o, ta.LoadOp) else []
    Rewriter.erase_op(o)
    for x in operands:
        _erase_dead(x)


def _fold(access: ta.LoadOp | ta.StoreOp, indices: _Indices) -> bool:
    """Put the loop-index values of the access's symbols into its map; whether any."""
    exprs = [indices.expr(s) for s in access.symbols]
    if all(e is None for e in exprs):
        return False
    dims = list(access.dims)
    body = indices.loop.body.block.args
    used = {p for e in exprs if e is not None for p in ta.dims_of(e)}
    if any(body[p] not in dims for p in used):
        return False  # (a loop var the access does not take as a map dim)
    at = [
        AffineDimExpr(dims.index(v)) if v in dims else AffineConstantExpr(0) for v in body
    ]
    kept: list[SSAValue] = []
    replacements: list[AffineExpr] = []
    for s, e in zip(access.symbols, exprs, strict=True):
        if e is None:
            replacements.append(AffineSymExpr(len(kept)))
            kept.append(s)
        else:
            replacements.append(e.replace_dims_and_symbols(at, []))
    m = access.map.data
    new_map = m.replace_dims_and_symbols(
        [AffineDimExpr(k) for k in range(m.num_dims)], replacements, m.num_dims, len(kept)
    )
    if isinstance(access, ta.LoadOp):
        new: ta.LoadOp | ta.StoreOp = ta.LoadOp(
            access.buffer, AffineMapAttr(new_map), dims, kept
        )
    else:
        new = ta.StoreOp(
            access.value,
            access.buffer,
            AffineMapAttr(new_map),
            dims,
            kept,
            access.accumulate.data if access.accumulate else None,
        )
    new.attributes.update(access.attributes)
    if not kept:
        new.attributes.pop(ta.GATHER_ATTR, None)
    new.location = access.location
    old_symbols = list(access.symbols)
    Rewriter.replace_op(access, new)
    for s in old_symbols:
        _erase_dead(s)
    emit_remark(
        new,
        f"fold-iota-indices: {len(exprs) - len(kept)} of the access's data-dependent "
        "indices are loop indices (read from ta.iota arguments): a direct access",
    )
    return True


@dataclass(frozen=True)
class FoldIotaIndicesPass(CheckedOptionsPass):
    """Replace each data-dependent index that is an affine function of loop indices
    read from `{ta.iota}` arguments by that function (see the module docstring). Each
    rewritten access gets a remark and counts under `indices folded` in
    `--pass-statistics`.

    Options: none.
    """

    name = "fold-iota-indices"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if find_forward(op) is None:
            return
        launches = ta.launches_by_kernel(op)
        for kernel in [k for k in op.ops if isinstance(k, ta.KernelOp)]:
            iota: set[SSAValue] = set(
                ta.iota_bound_arguments(kernel, launches.get(kernel.sym_name.data, []))
            )
            if not iota:
                continue
            for loop in [o for o in kernel.walk() if isinstance(o, ta.LoopOp)]:
                indices = _Indices(loop, iota)
                accesses = [
                    o
                    for o in loop.body.block.ops
                    if isinstance(o, ta.LoadOp | ta.StoreOp) and o.symbols
                ]
                for access in accesses:
                    if _fold(access, indices):
                        count(self.name, "indices folded")
