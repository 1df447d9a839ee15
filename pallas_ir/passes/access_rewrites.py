"""Access rewrites shared by the ta passes that re-index accesses (stride-to-reshape,
canonicalize-permutation): reading an access's index map, reinterpreting its buffer as
an N-D view made once at kernel start, rewriting the access onto it, and describing it
in remarks. A helper module, not a pass: passes import it, never each other.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr, MemRefType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
)
from xdsl.rewriter import InsertPoint

from pallas_ir.affine_analysis import (
    LinearExpr,
    Reinterpretation,
    Rejection,
    find_reinterpretation,
    linearize,
    rotation,
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


def loop_extent(value: SSAValue) -> int | None:
    """The extent of a `ta.loop` variable; None for anything else."""
    if isinstance(value, BlockArgument) and isinstance(
        loop := value.block.parent_op(), LoopOp
    ):
        return loop.extents[value.index]
    return None


def is_canonical_access(
    map: AffineMap, dims: Sequence[SSAValue], shape: Sequence[int]
) -> bool:
    """Each index is `d + c`, a constant `c`, or a whole dim rotated, `(d + c) mod n`
    with d and the buffer dim (of `shape`, the buffer's) both of extent n; no loop
    variable reaches two indices, and there are no symbols: the form every ta pass
    after this one expects."""
    if map.num_symbols:
        return False
    extents = [loop_extent(d) for d in dims]
    seen: set[SSAValue] = set()
    for expr, n in zip(map.results, shape, strict=True):
        if (r := rotation(expr, extents)) is not None:
            if r.extent != n:
                return False
            if dims[r.dim] in seen:
                return False
            seen.add(dims[r.dim])
            continue
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


def access_offset(
    op: AccessOp, results: Sequence[AffineExpr] | None = None
) -> LinearExpr | None:
    """The row-major offset into `op`'s root storage that its indices (`results`,
    default its map's) select, in map dim positions, map dims bound to the same loop
    variable merged onto the first of them; None if an index is not linear. The same
    in every view of the storage (a `ta.reshape` is a row-major reinterpretation), so
    stride-to-reshape, canonicalize-permutation and the tiler read an access through
    it whatever view it is on."""
    btype = op.buffer.type
    assert isinstance(btype, MemRefType)
    lin = LinearExpr()
    stride = 1
    indices = op.map.data.results if results is None else results
    # Innermost dim first: the order of the dims in the offset is the order in which
    # find_reinterpretation names them in a remark.
    for index, n in zip(reversed(indices), reversed(btype.get_shape()), strict=True):
        term = linearize(index)
        if term is None:
            return None
        lin = lin + term.scaled(stride)
        stride *= n
    first: dict[SSAValue, int] = {}
    merged: dict[int, int] = {}
    for p, c in lin.dims.items():
        q = first.setdefault(op.dims[p], p)
        merged[q] = merged.get(q, 0) + c
    return LinearExpr(merged, lin.symbols, lin.constant)


def reinterpret_access(op: AccessOp, offset: LinearExpr) -> Reinterpretation | Rejection:
    """The N-D view of `op`'s root storage that `offset` (its `access_offset`) walks
    with unit steps."""
    extents: dict[int, int] = {}
    names: dict[int, str] = {}
    for p in offset.dims:
        extent = loop_extent(op.dims[p])
        assert extent is not None  # the ta verifier: dims are loop variables
        extents[p] = extent
        names[p] = value_name(op.dims[p])
    root = root_buffer(op.buffer)
    rtype = root.type
    assert isinstance(rtype, MemRefType)
    return find_reinterpretation(offset, extents, rtype.element_count(), names)


def rewrite_access_to(
    rewriter: PatternRewriter,
    op: AccessOp,
    found: Reinterpretation,
    report: AccessReport,
    note: str = "",
    results: Sequence[AffineExpr] | None = None,
) -> Operation:
    """Replace `op` by the same access on the view `found` describes (at `results`,
    default the view's own indices), say so, and drop a reshape the old access was
    the last user of."""
    root = root_buffer(op.buffer)
    buffer = reshape_at_kernel_start(rewriter, root, found.shape, op)
    results = tuple(found.results() if results is None else results)
    new_map = AffineMap(op.map.data.num_dims, 0, results)
    report.applied(op, root, note + describe_access(buffer.type, results, op.dims))
    return replace_access(rewriter, op, buffer, new_map, list(op.dims), [])


def replace_access(
    rewriter: PatternRewriter,
    op: AccessOp,
    buffer: SSAValue,
    map: AffineMap,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
) -> Operation:
    """`op` with a new buffer, map and operands; attributes, location, result name and
    a store's `accumulate` kept. A `ta.reshape` left without users by the change is
    erased."""
    if isinstance(op, LoadOp):
        new: Operation = LoadOp(buffer, AffineMapAttr(map), dims, symbols)
    else:
        new = StoreOp(op.value, buffer, AffineMapAttr(map), dims, symbols, op.combine)
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
    """`memref<64x128x2xf32> at [%i, %j, 1]` for canonical indices (each `d + c`, `c`
    or `(d + c) mod n`), plus `; loop dims (1, 0) reach buffer dims (0, 1)` when the
    loop dims reach the buffer in another order (dims indexed by a constant are not
    listed)."""
    parts: list[str] = []
    loop_dims: list[int] = []
    buffer_dims: list[int] = []
    extents = [loop_extent(d) for d in dims]
    for k, expr in enumerate(results):
        if (r := rotation(expr, extents)) is not None:
            var = dims[r.dim]
            assert isinstance(var, BlockArgument)  # the ta verifier: a loop variable
            parts.append(f"({value_name(var)} + {r.shift}) mod {r.extent}")
            loop_dims.append(var.index)
            buffer_dims.append(k)
            continue
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
