"""stride-to-reshape: flat strided accesses become N-D accesses on a reshaped buffer.

A `ta.load`/`ta.store` on a rank-1 buffer whose flat offset is linear in the loop dims,
with constant strides that fit a contiguous row-major N-D view of the storage, is
rewritten to index that view, one index per dim:

```mlir
// out = x[:, 1::2] * 2 for x: f32[64, 256]
%v = ta.load %x[affine_map<(d0, d1) -> (d0 * 256 + d1 * 2 + 1)>](%i, %j) : memref<16384xf32>
// becomes
%x_64x128x2 = ta.reshape %x : memref<16384xf32> to memref<64x128x2xf32>   // at kernel start
%v = ta.load %x_64x128x2[affine_map<(d0, d1) -> (d0, d1, 1)>](%i, %j) : memref<64x128x2xf32>
```

The shape is `find_reinterpretation`'s (see `affine_analysis`): each loop dim walks one
buffer dim with unit step, a step k becomes a split `(n, k)` indexed by a constant,
constant offsets become per-dim offsets, and loop dims may reach buffer dims in any
order (the map then is a permutation, which canonicalize-permutation and the tiler
read as is). Where no such view exists, a stride of `w + 1` on the innermost walk is a
diagonal of the (..., h, w) view: one loop dim on its last two dims (`x.diagonal()`:
`(d0 * 257)` on 65536 elements is `(d0, d0)` on 256x256). The access rewrites it shares with canonicalize-permutation are in
`access_rewrites`. The offset is `access_rewrites.access_offset`'s and the view's
indices are `decompose_on_shape`'s: the tiler reads the access through the same two
functions, decomposing the same offset on the shape the host holds the storage in.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir.affine import AffineSymExpr
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pallas_ir.affine_analysis import Rejection
from pallas_ir.dialects.tensor_access import (
    LoadOp,
    StoreOp,
    root_buffer,
)
from pallas_ir.passes.access_rewrites import (
    access_offset,
    is_canonical_access,
    reinterpret_access,
    rewrite_access_to,
)
from pallas_ir.passes.options import CheckedOptionsPass
from pallas_ir.passes.report import AccessReport


@dataclass(frozen=True)
class StrideToReshapePass(CheckedOptionsPass):
    """Rewrite flat strided accesses to N-D accesses on a `ta.reshape`d buffer.

    Considers every `ta.load`/`ta.store` on a rank-1 buffer that is not already one
    unit-step index of a loop dim (plus a constant); each gets one remark, `applied`
    (with the new view and index) or `not applied` (negative or overlapping strides,
    a stride that does not divide the next one or the storage, a data-dependent index,
    floordiv/mod: see canonicalize-permutation for those). Accesses on N-D buffers are
    not considered. Idempotent.

    Options: none. The rewrite keeps the program's meaning and picks one canonical
    view per access; TPU-specific choices (such as avoiding a reshape that changes the
    last two dims, an HBM relayout copy on TPU) belong to the tiler, which sees every
    access of the kernel at once.
    """

    name = "stride-to-reshape"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            FlatAccessToReshape(AccessReport(self.name)), apply_recursively=False
        ).rewrite_module(op)


@dataclass(frozen=True)
class FlatAccessToReshape(RewritePattern):
    report: AccessReport

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp | StoreOp, rewriter: PatternRewriter) -> None:
        btype = op.buffer.type
        assert isinstance(btype, MemRefType)  # the operand constraint
        if btype.get_num_dims() != 1 or is_canonical_access(
            op.map.data, op.dims, btype.get_shape()
        ):
            return
        self.report.seen()
        root = root_buffer(op.buffer)
        (expr,) = op.map.data.results
        if any(isinstance(e, AffineSymExpr) for e in expr.dfs()):
            self.report.rejected(
                op, root, "the map uses a data-dependent index", "data-dependent index"
            )
            return
        offset = access_offset(op)
        if offset is None:
            self.report.rejected(
                op,
                root,
                "the map is not linear in the loop dims (floordiv/mod; "
                "canonicalize-permutation splits such loop dims)",
                "not linear in the loop dims",
            )
            return
        found = reinterpret_access(op, offset)
        if isinstance(found, Rejection):
            self.report.rejected(op, root, found.reason, found.key)
            return
        rewrite_access_to(rewriter, op, found, self.report)


# ---------------------------------------------------------------------------------------
# Helpers shared with canonicalize-permutation
