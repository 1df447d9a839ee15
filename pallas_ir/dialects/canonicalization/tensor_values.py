"""Canonicalization patterns of the tile-level value ops that `tl` and `pallas` share
(`ReshapeOpBase`, `TransposeOpBase` in `dialects/common.py`): each pattern rebuilds the
op it matches in its own dialect."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pallas_ir.dialects.common import ReshapeOpBase, TransposeOpBase


class ReshapeOfReshape(RewritePattern):
    """`reshape(reshape(x))` is one reshape of `x`: both keep the row-major order of the
    elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOpBase, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if type(inner) is type(op):
            assert isinstance(inner, ReshapeOpBase)
            result = op.result.type
            assert isinstance(result, TensorType)
            rewriter.replace_op(op, type(op)(inner.source, result))


class IdentityReshape(RewritePattern):
    """A reshape to the source's own shape is the source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOpBase, rewriter: PatternRewriter) -> None:
        if op.source.type == op.result.type:
            rewriter.replace_op(op, [], [op.source])


class TransposeOfTranspose(RewritePattern):
    """`transpose(transpose(x, q), p)` is `transpose(x, [q[i] for i in p])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOpBase, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if type(inner) is type(op):
            assert isinstance(inner, TransposeOpBase)
            q = inner.permutation.get_values()
            perm = [q[p] for p in op.permutation.get_values()]
            rewriter.replace_op(op, type(op)(inner.source, perm))


class IdentityTranspose(RewritePattern):
    """A transpose by the identity permutation is its source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOpBase, rewriter: PatternRewriter) -> None:
        perm = list(op.permutation.get_values())
        if perm == list(range(len(perm))):
            rewriter.replace_op(op, [], [op.source])
