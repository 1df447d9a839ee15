"""Canonicalization patterns of `ta.reshape`."""

from __future__ import annotations

from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pallas_ir.dialects import tensor_access as ta


class ReshapeOfReshape(RewritePattern):
    """`ta.reshape(ta.reshape(x))` is one reshape (view) of `x`: both reinterpret the
    same contiguous row-major storage."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ta.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if isinstance(inner, ta.ReshapeOp):
            rewriter.replace_op(op, ta.ReshapeOp(inner.source, op.result.type))  # type: ignore[arg-type]


class IdentityReshape(RewritePattern):
    """A reshape to the buffer's own type is the buffer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ta.ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.source.type == op.result.type:
            rewriter.replace_op(op, [], [op.source])
