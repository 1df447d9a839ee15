"""Canonicalization patterns of `tl.reshape` and `tl.transpose`."""

from __future__ import annotations

from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pallas_ir.dialects import tiled_loop as tl


class ReshapeOfReshape(RewritePattern):
    """`tl.reshape(tl.reshape(x))` is one reshape of `x`: both keep the row-major
    order of the elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tl.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if isinstance(inner, tl.ReshapeOp):
            rewriter.replace_op(op, tl.ReshapeOp(inner.source, op.result.type))  # type: ignore[arg-type]


class IdentityReshape(RewritePattern):
    """A reshape to the source's own shape is the source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tl.ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.source.type == op.result.type:
            rewriter.replace_op(op, [], [op.source])


class TransposeOfTranspose(RewritePattern):
    """`tl.transpose(tl.transpose(x, q), p)` is `tl.transpose(x, [q[i] for i in p])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tl.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if isinstance(inner, tl.TransposeOp):
            q = inner.permutation.get_values()
            perm = [q[p] for p in op.permutation.get_values()]
            rewriter.replace_op(op, tl.TransposeOp(inner.source, perm))


class IdentityTranspose(RewritePattern):
    """A transpose by the identity permutation is its source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tl.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = list(op.permutation.get_values())
        if perm == sorted(perm):
            rewriter.replace_op(op, [], [op.source])
