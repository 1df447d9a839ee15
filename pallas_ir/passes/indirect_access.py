"""What the two indirect-access passes share (`indirect-load-to-scalar-prefetch`,
`indirect-store-to-row-dma`): tracing a map symbol to the index load it comes from,
the contiguous N-D view that separates a flat index, and the view itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.affine_analysis import linearize
from pallas_ir.dialects.tensor_access import (
    KernelOp,
    LoadOp,
    LoopOp,
    ReshapeOp,
    StoreOp,
    root_buffer,
)
from pallas_ir.passes.report import value_name

# Ops allowed between an index load and the symbol it feeds: integer casts only. Any
# other arithmetic (e.g. wrapping negative indices) would have to be replayed in the
# BlockSpec index map, which the tiler does not do.
INDEX_CASTS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)


class Rejected(Exception):
    """An access the pass leaves unchanged: `reason` for the remark, `key` for the
    statistics bucket."""

    def __init__(self, reason: str, key: str):
        super().__init__(reason)
        self.reason = reason
        self.key = key


# ---------------------------------------------------------------------------------------
# Affine helpers

Var = tuple[str, int]
"""("d", position) or ("s", position)."""


def linear_terms(expr: AffineExpr) -> tuple[int, dict[Var, int]] | None:
    """`expr` as `const + sum(coeff * var)`; None if it is not linear (floordiv, mod,
    or a product of two non-constants)."""
    form = linearize(expr)
    if form is None:
        return None
    terms: dict[Var, int] = {("d", p): c for p, c in form.dims.items()}
    terms.update({("s", p): c for p, c in form.symbols.items()})
    return form.constant, terms


def var_name(var: Var) -> str:
    return f"{var[0]}{var[1]}"


def var_expr(var: Var) -> AffineExpr:
    return AffineExpr.dimension(var[1]) if var[0] == "d" else AffineExpr.symbol(var[1])


def shape_str(shape: Sequence[int], element: Attribute | None = None) -> str:
    text = "x".join(map(str, shape))
    return f"{text}x{element}" if element is not None else text


@dataclass(frozen=True)
class IndexSource:
    """Where one symbol of a gather comes from."""

    load: LoadOp
    """The `ta.load` of the index buffer."""
    buffer: BlockArgument
    """Its root kernel argument."""


def loop_extent(value: SSAValue) -> int:
    assert isinstance(value, BlockArgument)  # the verifier: dims are loop variables
    loop = value.block.parent_op()
    assert isinstance(loop, LoopOp)
    return loop.extents[value.index]


def trace_symbol(load: LoadOp, k: int, value: SSAValue) -> IndexSource:
    """The index load a symbol operand is a cast of."""
    while isinstance(value.owner, INDEX_CASTS):
        value = value.owner.operands[0]
    owner = value.owner
    if not isinstance(owner, LoadOp):
        what = owner.name if isinstance(owner, Operation) else "a block argument"
        raise Rejected(
            f"symbol s{k} is computed by {what}, not cast from a value loaded from an "
            "index buffer",
            "symbol not loaded from an index buffer",
        )
    if owner.symbols:
        raise Rejected(
            f"symbol s{k} is loaded from {value_name(root_buffer(owner.buffer))}, "
            "which is itself read indirectly",
            "index load is itself indirect",
        )
    buffer = root_buffer(owner.buffer)
    assert isinstance(buffer, BlockArgument)  # the load verifier checks this
    return IndexSource(owner, buffer)


def split_flat(
    expr: AffineExpr, size: int, dims: Sequence[SSAValue]
) -> tuple[tuple[int, ...], list[AffineExpr]]:
    """The contiguous N-D view of a flat buffer in which every term of `expr` indexes
    its own dim: strides are the coefficients, sorted; a dim takes the constant offset
    that falls to its stride; a trailing dim holds what is left below the smallest
    stride. Raises Rejected when the terms do not nest."""
    linear = linear_terms(expr)
    if linear is None:
        raise Rejected(
            f"the flat index {expr} is not linear in the loop dims and symbols",
            "flat index not separable",
        )
    const, terms = linear
    for var, c in terms.items():
        if var[0] == "s" and c == 1:
            raise Rejected(
                f"symbol {var_name(var)} indexes the lane (last, contiguous) dim: "
                "a lane gather has no row to fetch",
                "gather on the lane dim",
            )
    if any(c < 0 for c in terms.values()) or const < 0:
        raise Rejected(
            f"the flat index {expr} has a negative stride or offset",
            "flat index not separable",
        )
    order = sorted(terms.items(), key=lambda t: -t[1])
    for (v1, c1), (v2, c2) in pairwise(order):
        if c1 == c2 or c1 % c2:
            raise Rejected(
                f"strides {c1} of {var_name(v1)} and {c2} of {var_name(v2)} do not "
                "nest: no contiguous N-D view separates the gathered dim",
                "flat index not separable",
            )
    top = order[0][1]
    if size % top:
        raise Rejected(
            f"the table's {size} elements are not a whole number of rows of {top}",
            "flat index not separable",
        )
    strides = [c for _, c in order]
    shape = [size // top] + [a // b for a, b in pairwise(strides)]
    results: list[AffineExpr] = []
    rest = const
    for j, (var, c) in enumerate(order):
        offset, rest = divmod(rest, c)
        if var[0] == "s":
            if offset:
                raise Rejected(
                    f"symbol {var_name(var)} is offset by the constant {offset * c} "
                    f"({offset} x its stride {c})",
                    "gathered index is not a bare symbol",
                )
            results.append(var_expr(var))
            continue
        last = offset + loop_extent(dims[var[1]]) - 1
        if last >= shape[j]:
            raise Rejected(
                f"{var_name(var)} reaches {last} along a dim of {shape[j]} with "
                f"stride {c}: the access crosses rows",
                "flat index not separable",
            )
        e = var_expr(var)
        results.append(e + offset if offset else e)
    if strides[-1] > 1:
        shape.append(strides[-1])
        results.append(AffineExpr.constant(rest))
    return tuple(shape), results


def nd_view(
    map_: AffineMap, mtype: MemRefType, dims: Sequence[SSAValue]
) -> tuple[tuple[int, ...], list[AffineExpr], bool]:
    """The access `map_` of a buffer of `mtype` on its N-D view: the view's shape, the
    index per dim, and whether the buffer needs a `ta.reshape` to it (a flat buffer's
    view is `split_flat`'s; an N-D buffer is its own)."""
    if mtype.get_num_dims() == 1:
        shape, results = split_flat(map_.results[0], mtype.get_shape()[0], dims)
        return shape, results, True
    return tuple(mtype.get_shape()), list(map_.results), False


def view_before_loop(
    kernel: KernelOp, access: LoadOp | StoreOp, shape: tuple[int, ...]
) -> SSAValue:
    """The buffer of `access` viewed as `shape`: an existing `ta.reshape` in the kernel
    body if there is one, else a new one right before the access's loop."""
    source = access.buffer
    mtype = source.type
    assert isinstance(mtype, MemRefType)
    want = MemRefType(mtype.element_type, shape)
    loop = access.parent_op()
    while not isinstance(loop, LoopOp):
        assert loop is not None  # ta accesses verify they are inside a ta.loop
        loop = loop.parent_op()
    for op in kernel.body.block.ops:
        if op is loop:
            break
        if isinstance(op, ReshapeOp) and op.source is source and op.result.type == want:
            return op.result
    reshape = ReshapeOp(source, want)
    if source.name_hint:
        # Named as stride-to-reshape names its views: `%emb_1000x256`.
        reshape.result.name_hint = f"{source.name_hint}_{shape_str(shape)}"
    reshape.location = access.location
    Rewriter.insert_op(reshape, InsertPoint.before(loop))
    return reshape.result
