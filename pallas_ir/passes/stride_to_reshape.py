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
read as is). The helpers at the end of this module are shared with
canonicalize-permutation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap, AffineSymExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pallas_ir.affine_analysis import (
    LinearExpr,
    Reinterpretation,
    Rejection,
    find_reinterpretation,
    linearize,
)
from pallas_ir.dialects.tensor_access import (
    KernelOp,
    LoadOp,
    LoopOp,
    ReshapeOp,
    StoreOp,
    root_buffer,
)
from pallas_ir.passes.report import AccessReport, value_name

AccessOp = LoadOp | StoreOp


@dataclass(frozen=True)
class StrideToReshapePass(ModulePass):
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
        if btype.get_num_dims() != 1 or is_canonical_access(op.map.data, op.dims):
            return
        self.report.seen()
        root = root_buffer(op.buffer)
        (expr,) = op.map.data.results
        if any(isinstance(e, AffineSymExpr) for e in expr.dfs()):
            self.report.rejected(
                op, root, "the map uses a data-dependent index", "data-dependent index"
            )
            return
        offset = linearize(expr)
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


def loop_extent(value: SSAValue) -> int | None:
    """The extent of a `ta.loop` variable; None for anything else."""
    if isinstance(value, BlockArgument) and isinstance(
        loop := value.block.parent_op(), LoopOp
    ):
        return loop.extents[value.index]
    return None


def is_canonical_access(map: AffineMap, dims: Sequence[SSAValue]) -> bool:
    """Each index is `d + c` or a constant `c`, no loop variable reaches two indices,
    and there are no symbols: the form every ta pass after this one expects."""
    if map.num_symbols:
        return False
    seen: set[SSAValue] = set()
    for expr in map.results:
        lin = linearize(expr)
        if lin is None or lin.symbols:
            return False
        if not lin.dims:
            continue
        if len(lin.dims) != 1:
            return False
        ((p, c),) = lin.dims.items()
        if c != 1 or dims[p] in seen:
            return False
        seen.add(dims[p])
    return True


def reinterpret_access(op: AccessOp, offset: LinearExpr) -> Reinterpretation | Rejection:
    """The N-D view of `op`'s root storage that `offset` (a flat offset in map dim
    positions) walks with unit steps. Map dims bound to the same loop variable are
    merged onto the first of them."""
    first: dict[SSAValue, int] = {}
    merged: dict[int, int] = {}
    for p, c in offset.dims.items():
        q = first.setdefault(op.dims[p], p)
        merged[q] = merged.get(q, 0) + c
    extents: dict[int, int] = {}
    names: dict[int, str] = {}
    for p in merged:
        extent = loop_extent(op.dims[p])
        assert extent is not None  # the ta verifier: dims are loop variables
        extents[p] = extent
        names[p] = value_name(op.dims[p])
    root = root_buffer(op.buffer)
    rtype = root.type
    assert isinstance(rtype, MemRefType)
    return find_reinterpretation(
        LinearExpr(merged, offset.symbols, offset.constant),
        extents,
        rtype.element_count(),
        names,
    )


def rewrite_access_to(
    rewriter: PatternRewriter,
    op: AccessOp,
    found: Reinterpretation,
    report: AccessReport,
    note: str = "",
) -> Operation:
    """Replace `op` by the same access on the view `found` describes, say so, and drop
    a reshape the old access was the last user of."""
    root = root_buffer(op.buffer)
    buffer = reshape_at_kernel_start(rewriter, root, found.shape, op)
    new_map = AffineMap(op.map.data.num_dims, 0, tuple(found.results()))
    report.applied(
        op, root, note + describe_access(buffer.type, found.results(), op.dims)
    )
    return replace_access(rewriter, op, buffer, new_map, list(op.dims), [])


def replace_access(
    rewriter: PatternRewriter,
    op: AccessOp,
    buffer: SSAValue,
    map: AffineMap,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
) -> Operation:
    """`op` with a new buffer, map and operands; attributes, location and result name
    kept. A `ta.reshape` left without users by the change is erased."""
    if isinstance(op, LoadOp):
        new: Operation = LoadOp(buffer, AffineMapAttr(map), dims, symbols)
    else:
        new = StoreOp(op.value, buffer, AffineMapAttr(map), dims, symbols)
    new.attributes.update(op.attributes)
    new.location = op.location
    old_buffer = op.buffer
    rewriter.replace(op, new)
    erase_dead_reshapes(rewriter, old_buffer)
    return new


def erase_dead_reshapes(rewriter: PatternRewriter, value: SSAValue) -> None:
    while isinstance(owner := value.owner, ReshapeOp) and not value.uses:
        value = owner.source
        rewriter.erase(owner)


def reshape_at_kernel_start(
    rewriter: PatternRewriter, root: SSAValue, shape: Sequence[int], user: Operation
) -> SSAValue:
    """`root` viewed with `shape`: `root` itself when it has that shape, else the
    kernel's `ta.reshape` of `root` to it, created after the reshapes that open the
    kernel body if there is none yet (one per buffer and shape)."""
    rtype = root.type
    assert isinstance(rtype, MemRefType) and isinstance(root, BlockArgument)
    if tuple(rtype.get_shape()) == tuple(shape):
        return root
    target = MemRefType(rtype.element_type, shape)
    kernel = root.block.parent_op()
    assert isinstance(kernel, KernelOp)  # the ta verifier: accessed roots are arguments
    block = kernel.body.block
    anchor = user
    while anchor.parent_op() is not kernel:  # the user's top-level ancestor (its loop)
        parent = anchor.parent_op()
        assert parent is not None
        anchor = parent
    last_leading: Operation | None = None
    leading = True
    for top in block.ops:
        if top is anchor:
            break
        if isinstance(top, ReshapeOp):
            if top.source is root and top.result.type == target:
                return top.result
            if leading:
                last_leading = top
        else:
            leading = False
    reshape = ReshapeOp(root, target)
    reshape.location = user.location
    reshape.result.name_hint = (
        f"{value_name(root).removeprefix('%')}_{'x'.join(map(str, shape))}"
    )
    where = (
        InsertPoint.after(last_leading)
        if last_leading is not None
        else InsertPoint.at_start(block)
    )
    rewriter.insert(reshape, where)
    return reshape.result


def describe_access(
    btype: Attribute, results: Sequence[AffineExpr], dims: Sequence[SSAValue]
) -> str:
    """`memref<64x128x2xf32> at [%i, %j, 1]` for canonical indices (each `d + c` or
    `c`), plus `; loop dims (1, 0) reach buffer dims (0, 1)` when the loop dims reach
    the buffer in another order (dims indexed by a constant are not listed)."""
    parts: list[str] = []
    loop_dims: list[int] = []
    buffer_dims: list[int] = []
    for k, expr in enumerate(results):
        lin = linearize(expr)
        assert lin is not None and len(lin.dims) <= 1  # canonical: d + c or c
        if not lin.dims:
            parts.append(str(lin.constant))
            continue
        ((p, _),) = lin.dims.items()
        var = dims[p]
        assert isinstance(var, BlockArgument)  # the ta verifier: a loop variable
        name = value_name(var)
        parts.append(f"{name} + {lin.constant}" if lin.constant else name)
        loop_dims.append(var.index)
        buffer_dims.append(k)
    text = f"{btype} at [{', '.join(parts)}]"
    if loop_dims != sorted(loop_dims):
        text += (
            f"; loop dims ({', '.join(map(str, loop_dims))}) reach buffer dims "
            f"({', '.join(map(str, buffer_dims))})"
        )
    return text
