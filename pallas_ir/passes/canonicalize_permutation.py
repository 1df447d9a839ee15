"""canonicalize-permutation: every access becomes a projected permutation in buffer order.

After this pass each index of each `ta.load`/`ta.store` is `d_k + c` or a constant `c`,
and no loop dim reaches two indices of one access. The order in which loop dims reach
buffer dims is the permutation, explicit in the map itself (`(d0, d1) -> (d1, d0)` reads
`x.t()`); the tiler turns it into a permuted block index map and an in-kernel transpose.
There is no separate permutation attribute: it would restate the map.

Two rewrites get there:

1. **Collapsed loop dims are split.** A loop dim that walks several buffer dims shows
   up as `d_k floordiv c` / `d_k mod c` (a loop over the flattened `A*B` elements of a
   permuted tensor reads `x[i floordiv B, i mod B]`). When c divides the extent n, the
   loop dim becomes two, `(n/c, c)`, with `d_k = d_outer * c + d_inner` substituted in
   every map of the loop and the maps simplified (`floordiv c` → `d_outer`, `mod c` →
   `d_inner`). Other uses of the loop variable get `d_outer * c + d_inner` as `arith`
   ops. A split parallel dim stays parallel, a split reduction dim stays a reduction
   dim; the row-major order of the loop's points (and so argmax positions) is kept.
   Repeated until no such division is left.
2. **Linear accesses that are not projected permutations are reinterpreted**, as
   stride-to-reshape does for flat ones, and N-D ones (`(d0, d1 * 2)`) through their
   flat offset: the pass also works directly on frontend output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntegerAttr, ModuleOp, i64
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pallas_ir.affine_analysis import (
    Reinterpretation,
    Rejection,
    Rotation,
    StridedIndex,
    divisions,
    is_division_free,
    linearize,
    rotated,
    simplify,
    without_rotations,
)
from pallas_ir.dialects.common import Interval
from pallas_ir.dialects.tensor_access import (
    LoadOp,
    LoopOp,
    ReduceOp,
    StoreOp,
    root_buffer,
)
from pallas_ir.passes.access_rewrites import (
    AccessOp,
    access_offset,
    describe_access,
    is_canonical_access,
    loop_extent,
    reinterpret_access,
    replace_access,
    rewrite_access_to,
)
from pallas_ir.passes.options import CheckedOptionsPass
from pallas_ir.passes.report import AccessReport, value_name


@dataclass(frozen=True)
class CanonicalizePermutationPass(CheckedOptionsPass):
    """Make every access a projected permutation, splitting collapsed loop dims.

    Considers every `ta.load`/`ta.store` that is not already a projected permutation
    with constant offsets, and every access of a loop whose dims it splits. Each gets one
    remark: `applied` (the new view and index, the split, and which loop dims reach
    which buffer dims when the order differs) or `not applied` (a data-dependent index,
    a `floordiv`/`mod` whose divisor does not divide the loop extent or whose dividend
    is not a loop dim, or what stride-to-reshape refuses: negative or overlapping
    strides, a stride that does not divide the next one). Idempotent.

    Options: none. Splitting a loop dim and reinterpreting storage never change what the
    program computes, so there is nothing to trade off here; block shapes and where a
    transpose happens are the tiler's decisions.
    """

    name = "canonicalize-permutation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            CanonicalizeLoop(AccessReport(self.name)), apply_recursively=False
        ).rewrite_module(op)


def _accesses(loop: LoopOp) -> list[AccessOp]:
    return [op for op in loop.walk() if isinstance(op, LoadOp | StoreOp)]


def _dim_bounds(dims: Sequence[SSAValue]) -> list[Interval | None]:
    out: list[Interval | None] = []
    for d in dims:
        n = loop_extent(d)
        out.append(None if n is None else (0, n - 1))
    return out


@dataclass(frozen=True)
class CanonicalizeLoop(RewritePattern):
    report: AccessReport

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoopOp, rewriter: PatternRewriter) -> None:
        loop = op
        # Why an access cannot be split, said about the map as written: after another
        # access's split, `%i floordiv 3` reads `(%i_outer * 10 + %i_inner) floordiv 3`.
        reasons: dict[Operation, tuple[str, str]] = {}
        for access in _accesses(loop):
            bounds = _dim_bounds(access.dims)
            results = [simplify(r, bounds) for r in access.map.data.results]
            if (reason := _undivided_extent(results, access.dims)) is not None:
                reasons[access] = reason
        splits: list[str] = []  # what happened to the loop, for the remarks
        touched: set[Operation] = set()  # accesses a split rewrote
        while (split := _find_split(loop)) is not None:
            k, c = split
            arg = loop.body.block.args[k]
            n = loop.extents[k]
            splits.append(f"split loop dim {value_name(arg)} ({n}) into ({n // c}, {c})")
            loop, replaced = _split_loop(rewriter, loop, k, c)
            touched = {replaced.get(o, o) for o in touched} | set(replaced.values())
            reasons = {replaced.get(o, o): r for o, r in reasons.items()}
        note = "; ".join(splits) + "; " if splits else ""
        for access in _accesses(loop):
            if access in touched:
                self._canonicalize(rewriter, access, note, reasons.get(access))
            elif not is_canonical_access(
                access.map.data, access.dims, access.buffer.type.get_shape()
            ):
                self._canonicalize(rewriter, access, "", reasons.get(access))

    def _canonicalize(
        self,
        rewriter: PatternRewriter,
        op: AccessOp,
        note: str,
        reason: tuple[str, str] | None,
    ) -> None:
        self.report.seen()
        root = root_buffer(op.buffer)
        map = op.map.data
        bounds = _dim_bounds(op.dims)
        results = [simplify(r, bounds) for r in map.results]
        if any(isinstance(e, AffineSymExpr) for r in results for e in r.dfs()):
            self.report.rejected(
                op, root, "the map uses a data-dependent index", "data-dependent index"
            )
            return
        extents = [loop_extent(d) for d in op.dims]
        unrotated = _unrotated(results, extents)
        if isinstance(unrotated, Rejection):
            self.report.rejected(op, root, unrotated.reason, unrotated.key)
            return
        plain, rotations = unrotated
        simplified = AffineMap(map.num_dims, map.num_symbols, tuple(plain))
        shape = op.buffer.type.get_shape()  # type: ignore[attr-defined]
        final = _rerotated(plain, rotations, shape, op.dims)
        if is_canonical_access(simplified, op.dims, shape) and not isinstance(
            final, Rejection
        ):
            # Already a projected permutation once simplified (typically after a
            # split); a rotation of part of a buffer dim is placed in a view below.
            self.report.applied(
                op, root, note + describe_access(op.buffer.type, final, op.dims)
            )
            if tuple(final) != map.results:
                new_map = AffineMap(map.num_dims, map.num_symbols, tuple(final))
                replace_access(
                    rewriter, op, op.buffer, new_map, list(op.dims), list(op.symbols)
                )
            return
        if not all(is_division_free(r) for r in plain):
            text, key = reason or _division_reason(plain, op.dims)
            self.report.rejected(op, root, text, key)
            return
        offset = access_offset(op, plain)
        assert offset is not None  # division free: checked above
        found = reinterpret_access(op, offset)
        if isinstance(found, Rejection):
            self.report.rejected(op, root, found.reason, found.key)
            return
        found = _with_rotated_dims_apart(found, rotations)
        final = _rerotated(found.results(), rotations, found.shape, op.dims)
        if isinstance(final, Rejection):
            self.report.rejected(op, root, final.reason, final.key)
            return
        rewrite_access_to(rewriter, op, found, self.report, note, final)


def _with_rotated_dims_apart(
    found: Reinterpretation, rotations: dict[int, Rotation]
) -> Reinterpretation:
    """`found` with each buffer dim that a rotated loop dim of extent n walks at `d +
    q * n` split into `(N / n, n)` and indexed `(q, d)` when n divides its extent N
    (`torch.roll(x, 3, 1)[2]` reads row 2 of x viewed `(8, 128)`, not the flat 1024)."""
    shape, indices = list(found.shape), list(found.indices)
    for rot in rotations.values():
        k = next((k for k, i in enumerate(indices) if i.dim == rot.dim), None)
        if k is None:
            continue
        n, index = rot.extent, indices[k]
        if shape[k] == n or shape[k] % n or index.offset % n:
            continue
        shape[k : k + 1] = [shape[k] // n, n]
        indices[k : k + 1] = [
            StridedIndex(None, 1, index.offset // n),
            StridedIndex(rot.dim, 1, 0),
        ]
    return Reinterpretation(tuple(shape), tuple(indices))


def _unrotated(
    results: Sequence[AffineExpr], extents: Sequence[int | None]
) -> tuple[list[AffineExpr], dict[int, Rotation]] | Rejection:
    """The indices with each rotation `(d + c) mod n` of a whole loop dim read as d,
    and the rotations by map dim: the rest of the pass places d in a view as for any
    access, and `_rerotated` rotates the index d lands on. Rejected where a dim is
    read rotated by two amounts, or rotated and not."""
    plain: list[AffineExpr] = []
    rotations: dict[int, Rotation] = {}
    outside: set[int] = set()  # dims read other than rotated
    for r in results:
        expr, found = without_rotations(r, extents)
        plain.append(expr)
        for rot in found:
            if rotations.setdefault(rot.dim, rot) != rot:
                return Rejection(
                    "the map reads one loop dim rotated by two amounts",
                    "two rotations of one dim",
                )
        masked, _ = without_rotations(
            r, extents, as_expr=lambda _: AffineExpr.constant(0)
        )
        outside |= set(masked.used_dims())
    if outside & set(rotations):
        return Rejection(
            "the map reads one loop dim both rotated and not", "rotated and not"
        )
    return plain, rotations


def _rerotated(
    results: Sequence[AffineExpr],
    rotations: dict[int, Rotation],
    shape: Sequence[int],
    dims: Sequence[SSAValue],
) -> list[AffineExpr] | Rejection:
    """Canonical `results` with each rotated dim's index, which must be the dim alone
    on a buffer dim of its extent, rotated again."""
    final = list(results)
    for rot in rotations.values():
        for k, r in enumerate(results):
            lin = linearize(r)
            alone = lin is not None and lin.dims == {rot.dim: 1} and not lin.constant
            if alone and shape[k] == rot.extent:
                final[k] = rotated(rot)
                break
        else:
            return Rejection(
                f"{value_name(dims[rot.dim])} is read rotated by {rot.shift} but does "
                f"not walk a whole buffer dim of {rot.extent} in the view",
                "a rotation that is not of a whole buffer dim",
            )
    return final


def _undivided_extent(
    results: Sequence[AffineExpr], dims: Sequence[SSAValue]
) -> tuple[str, str] | None:
    """`floordiv by 3 does not divide extent 100` for the first `d floordiv c` or
    `d mod c` whose divisor does not divide d's extent (no split can remove it)."""
    for r in results:
        for node in divisions(r):
            if isinstance(node.lhs, AffineDimExpr) and isinstance(
                node.rhs, AffineConstantExpr
            ):
                token, c = node.kind.get_token(), node.rhs.value
                n = loop_extent(dims[node.lhs.position])
                if n is not None and c > 0 and n % c:
                    return (
                        f"{token} by {c} does not divide extent {n}",
                        f"{token} does not divide the extent",
                    )
    return None


def _division_reason(
    results: Sequence[AffineExpr], dims: Sequence[SSAValue]
) -> tuple[str, str]:
    if (reason := _undivided_extent(results, dims)) is not None:
        return reason
    node = next(n for r in results for n in divisions(r))
    token = node.kind.get_token()
    return (
        f"{_expr_text(node, dims)} is not a split of a loop dim",
        f"{token} of something other than a loop dim",
    )


def _expr_text(expr: AffineExpr, dims: Sequence[SSAValue]) -> str:
    """`expr` with loop variable names for dims: `(%i + 1) floordiv 4`."""
    match expr:
        case AffineDimExpr(position=p):
            return value_name(dims[p])
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            return f"({_expr_text(lhs, dims)} {kind.get_token()} {_expr_text(rhs, dims)})"
    return str(expr)


# ---------------------------------------------------------------------------------------
# Splitting collapsed loop dims


def _find_split(loop: LoopOp) -> tuple[int, int] | None:
    """The (loop dim, divisor) to split next: the smallest c with `d_k floordiv c` or
    `d_k mod c` in some map of the loop, 1 < c < extent, and c dividing the extent."""
    block = loop.body.block
    extents = loop.extents
    found: set[tuple[int, int]] = set()
    for access in _accesses(loop):
        bounds = _dim_bounds(access.dims)
        for r in access.map.data.results:
            for node in divisions(simplify(r, bounds)):
                if (
                    node.kind in (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.Mod)
                    and isinstance(node.lhs, AffineDimExpr)
                    and isinstance(node.rhs, AffineConstantExpr)
                ):
                    var = access.dims[node.lhs.position]
                    if not isinstance(var, BlockArgument) or var.block is not block:
                        continue
                    n, c = extents[var.index], node.rhs.value
                    if 1 < c < n and n % c == 0:
                        found.add((var.index, c))
    return min(found, key=lambda kc: (kc[1], kc[0])) if found else None


def _split_loop(
    rewriter: PatternRewriter, loop: LoopOp, k: int, c: int
) -> tuple[LoopOp, dict[Operation, Operation]]:
    """Replace `loop` by one whose dim k (extent n) is two dims (n/c, c); return it and
    the accesses rewritten for it (old op -> new op)."""
    n_par = len(loop.parallel_extents)
    par, red = list(loop.parallel_extents), list(loop.reduce_extents)
    n = loop.extents[k]
    if k < n_par:
        par[k : k + 1] = [n // c, c]
    else:
        red[k - n_par : k - n_par + 1] = [n // c, c]
    new = LoopOp(par, red)
    new.attributes.update(loop.attributes)
    new.location = loop.location
    rewriter.insert(new, InsertPoint.before(loop))

    old_args = loop.body.block.args
    new_args = new.body.block.args
    outer, inner = new_args[k], new_args[k + 1]
    for i, a in enumerate(old_args):
        if a.name_hint:
            if i == k:
                outer.name_hint, inner.name_hint = (
                    f"{a.name_hint}_outer",
                    f"{a.name_hint}_inner",
                )
            else:
                new_args[i if i < k else i + 1].name_hint = a.name_hint

    # d_k = d_outer * c + d_inner for whatever else uses the loop variable.
    cst = arith.ConstantOp(IntegerAttr(c, IndexType()))
    mul = arith.MuliOp(outer, cst.result)
    add = arith.AddiOp(mul.result, inner)
    add.result.name_hint = old_args[k].name_hint
    for o in (cst, mul, add):
        o.location = loop.location
    rewriter.insert([cst, mul, add], InsertPoint.at_start(new.body.block))
    values = [*new_args[:k], add.result, *new_args[k + 2 :]]
    rewriter.inline_block(loop.body.block, InsertPoint.at_end(new.body.block), values)
    rewriter.erase(loop)
    for o in new.body.block.ops:
        if isinstance(o, ReduceOp) and o.over is not None:
            # a reduction over dim k reduces over both of its parts; later dims move
            over = [
                [d] if d < k else [k, k + 1] if d == k else [d + 1]
                for d in o.over.get_values()
            ]
            o.over = DenseArrayBase.from_list(i64, [d for ds in over for d in ds])

    rewritten: dict[Operation, Operation] = {}
    for access in {use.operation: None for use in add.result.uses}:
        if isinstance(access, LoadOp | StoreOp) and any(
            d is add.result for d in access.dims
        ):
            rewritten[access] = _substitute_split(
                rewriter, access, add.result, outer, inner, c
            )
    if not add.result.uses:
        for o in (add, mul, cst):
            rewriter.erase(o)
    return new, rewritten


def _substitute_split(
    rewriter: PatternRewriter,
    op: AccessOp,
    old: SSAValue,
    outer: SSAValue,
    inner: SSAValue,
    c: int,
) -> Operation:
    """`op` with each dim bound to `old` replaced by the pair (outer, inner) and
    `d = d_outer * c + d_inner` substituted and simplified in its map."""
    map = op.map.data
    dims: list[SSAValue] = []
    exprs: list[AffineExpr] = []
    for d in op.dims:
        if d is old:
            p = len(dims)
            dims += [outer, inner]
            exprs.append(AffineExpr.dimension(p) * c + AffineExpr.dimension(p + 1))
        else:
            exprs.append(AffineExpr.dimension(len(dims)))
            dims.append(d)
    symbols = [AffineExpr.symbol(q) for q in range(map.num_symbols)]
    bounds = _dim_bounds(dims)
    results = tuple(
        simplify(r.replace_dims_and_symbols(exprs, symbols), bounds) for r in map.results
    )
    new_map = AffineMap(len(dims), map.num_symbols, results)
    return replace_access(rewriter, op, op.buffer, new_map, dims, list(op.symbols))
