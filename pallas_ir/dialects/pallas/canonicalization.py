"""Canonicalization patterns of `pallas` ops, run by xDSL's `-p canonicalize` through
each op's `HasCanonicalizationPatternsTrait` (as `xdsl.transforms.canonicalization_patterns`
does for xDSL's dialects). Each folds a value-level no-op or a pair of ops into one."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pallas_ir.dialects.pallas.ops import ReshapeOp, TransposeOp


class FoldIdentityReshape(RewritePattern):
    """`pallas.reshape %v : T to T` is `%v`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.source.type == op.result.type:
            rewriter.replace_all_uses_with(op.result, op.source)
            rewriter.erase(op)


class FoldReshapeOfReshape(RewritePattern):
    """A reshape of a reshape is one reshape: both keep the row-major element order."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if not isinstance(inner, ReshapeOp):
            return
        result = op.result.type
        assert isinstance(result, TensorType)
        rewriter.replace(op, ReshapeOp(inner.source, result))


class FoldIdentityTranspose(RewritePattern):
    """`pallas.transpose %v [0, 1, ...]` is `%v`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.permutation.get_values()
        if tuple(perm) == tuple(range(len(perm))):
            rewriter.replace_all_uses_with(op.result, op.source)
            rewriter.erase(op)


class FoldTransposeOfTranspose(RewritePattern):
    """Two transposes are one: result dim i of `transpose(transpose(v, p), q)` is dim
    `p[q[i]]` of `v`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if not isinstance(inner, TransposeOp):
            return
        p, q = inner.permutation.get_values(), op.permutation.get_values()
        rewriter.replace(op, TransposeOp(inner.source, [p[i] for i in q]))
