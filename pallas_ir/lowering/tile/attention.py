"""Tile a `ta.attention` kernel into one flash-attention `tl.kernel`.

The grid walks the batch dims (one point a step), query blocks and, last and
sequential, key blocks. A step computes its (bq, bk) scores on the MXU, the score
region on them, and an online softmax: the running row max (`tl.accumulate <max>`),
the running sum of exponentials and the running (bq, E) product with v, both rescaled
by `exp(previous max - max)` at each key block (`tl.accumulate <sum> ... rescaled`).
The last key block divides the product by the sum and stores it. Nothing of size
(Tq, Tk) reaches HBM.

Blocks are the first of `attention_blocks.block_candidates` (legal for every access:
`tpu_rules.flash_attention_block_choices` that divide the extent, then the whole
extent, then ones that leave a ragged last block) whose step fits VMEM. A
ragged last query block is written only where it is in bounds; a ragged last key block
masks its columns past the extent to -inf and its rows of v to 0.

The operands must be views whose dims are, in order, the batch dims and then (i, d),
(j, d), (j, e) and (i, e) (raise-attention writes them so); score-region loads index
their buffers by single domain dims or constants; one that takes a single element of its
buffer's minor dims is read through a view with unit minor dims (`_unit_dims_view`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from pallas_ir.analysis.attention_blocks import (
    attention_blocks,
    score_load_tiling,
    unit_dims_view,
)
from pallas_ir.diagnostics import PassError, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import (
    SCALAR_ONLY_CASTS,
    ComparePredicate,
    DotPrecision,
    ReductionKind,
    arith_predicate,
)
from pallas_ir.lowering.tile.build import cast_tile, relaunch


def attention_op(kernel: ta.KernelOp) -> ta.AttentionOp | None:
    """The kernel's `ta.attention`, when that (beside in-kernel views) is its body."""
    ops = [o for o in kernel.body.block.ops if not isinstance(o, ta.ReshapeOp)]
    if len(ops) == 1 and isinstance(ops[0], ta.AttentionOp):
        return ops[0]
    return None


def _dim_of(expr: AffineExpr) -> int | None:
    return expr.position if isinstance(expr, AffineDimExpr) else None


class _Builder:
    """Builds the grid body: tiles of the domain's (i, j) plane, (bq, bk)."""

    def __init__(
        self,
        op: ta.AttentionOp,
        bq: int,
        bk: int,
        args: dict[SSAValue, SSAValue],
        grid: tl.GridOp,
    ):
        self.op, self.bq, self.bk, self.args, self.grid = op, bq, bk, args, grid
        self.block = grid.body.block
        self.nb = len(op.batch_extents)
        self.ivs = list(grid.body.block.args)

    def add(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        self.block.add_op(new)
        return new.results[0] if new.results else None  # type: ignore[return-value]

    def splat(self, value: float, t: TensorType) -> SSAValue:
        return self.add(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])))

    def load(
        self, buffer: SSAValue, results: Sequence[AffineExpr], dims: str
    ) -> SSAValue:
        """The block of `buffer` at this step, for map results over the domain dims
        named by `dims` (b..., then i/j/d/e), as its (rows, cols) plane: rows along i
        or j, columns along j, d or e (1 where the map does not vary)."""
        t = buffer.type
        assert isinstance(t, MemRefType)
        tiles = {"i": self.bq, "j": self.bk}
        whole = dict(zip("de", self.op.sizes.get_values()[2:]))
        grid_dim = {"i": self.nb, "j": self.nb + 1}
        offsets: list[AffineExpr] = []
        shape: list[int] = []
        for k, expr in enumerate(results):
            at = _dim_of(expr)
            name = None if at is None else dims[at]
            if name is None:
                assert isinstance(expr, AffineConstantExpr)
                offsets.append(expr)
                shape.append(1)
            elif name == "b":
                offsets.append(AffineDimExpr(at))  # type: ignore[arg-type]
                shape.append(1)
            elif name in tiles:
                offsets.append(AffineDimExpr(grid_dim[name]) * tiles[name])
                shape.append(min(tiles[name], t.get_shape()[k]))
            else:
                offsets.append(AffineConstantExpr(0))
                shape.append(whole[name])
        tile = TensorType(t.element_type, shape)
        v = self.add(
            tl.LoadOp(
                self.args[buffer],
                AffineMapAttr(AffineMap(len(self.ivs), 0, tuple(offsets))),
                self.ivs,
                [],
                tile,
            )
        )
        used = [dims[p] for p in (_dim_of(e) for e in results) if p is not None]
        rows = next((n for n in used if n in "ij" and n != used[-1]), None)
        if rows is None and used and used[-1] == "i":
            rows = "i"
        cols = used[-1] if used and used[-1] != rows else None
        plane = [tiles.get(rows, 1) if rows else 1, 0]
        plane[1] = (tiles.get(cols) or whole.get(cols, 1)) if cols else 1
        if rows and cols and used.index(rows) > used.index(cols):
            raise PassError(self.op, "tile: an attention operand's dims are out of order")
        return self.add(tl.ReshapeOp(v, TensorType(t.element_type, plane)))

    def operand(self, v: SSAValue, shape: Sequence[int]) -> SSAValue:
        t = v.type
        assert isinstance(t, TensorType)
        if list(t.get_shape()) == list(shape):
            return v
        return self.add(tl.BroadcastOp(v, TensorType(t.element_type, list(shape))))


def _score_ops(b: _Builder, scores: SSAValue) -> SSAValue:
    """The score region on the step's (bq, bk) scores."""
    region = b.op.score.block
    nb = b.nb
    dims = "b" * nb + "ij"
    values: dict[SSAValue, SSAValue] = {region.args[nb + 2]: scores}
    constants: dict[SSAValue, arith.ConstantOp] = {}
    plane = [b.bq, b.bk]
    result: SSAValue | None = None
    for op in region.ops:
        if isinstance(op, ta.YieldOp):
            result = values[op.values[0]]
        elif isinstance(op, ta.LoadOp):
            positions = [
                a.index if isinstance(a, BlockArgument) else None for a in op.dims
            ]
            results = []
            for expr in op.map.data.results:
                at = _dim_of(expr)
                if at is None and not isinstance(expr, AffineConstantExpr):
                    raise PassError(op, "tile: a score load indexes by a single dim")
                results.append(expr if at is None else AffineDimExpr(positions[at]))  # type: ignore[arg-type]
            values[op.result] = b.load(op.buffer, results, dims)
        elif isinstance(op, arith.ConstantOp) and not isinstance(
            op.result.type, TensorType
        ):
            constants[op.result] = op
        else:
            shapes = [
                values[o].type.get_shape()  # type: ignore[attr-defined]
                for o in op.operands
                if o in values
            ]
            if not shapes or any(
                o not in values and o not in constants for o in op.operands
            ):
                raise PassError(op, "tile: the score region computes from its block")
            shape = [max(s[k] for s in shapes) for k in range(2)]
            operands = []
            for o in op.operands:
                if o in constants:
                    c = constants[o]
                    attr = c.value
                    assert isinstance(attr, FloatAttr | IntegerAttr)
                    operands.append(
                        b.splat(attr.value.data, TensorType(c.result.type, shape))
                    )
                else:
                    operands.append(b.operand(values[o], shape))
            if isinstance(op, SCALAR_ONLY_CASTS):
                values[op.results[0]] = cast_tile(
                    op,
                    operands[0],
                    shape,
                    b.add,
                    lambda v, elt, at: b.splat(v, TensorType(elt, list(at))),
                )
                continue
            if isinstance(op, arith.SelectOp):
                new = tl.SelectOp(*operands)
            elif isinstance(op, arith.CmpfOp | arith.CmpiOp):
                predicate = arith_predicate(op)
                if predicate is None:
                    raise PassError(op, "tile: a constant comparison is not tiled")
                new = tl.CompareOp(predicate, *operands)
            else:
                new = type(op).create(
                    operands=operands,
                    result_types=[TensorType(r.type, shape) for r in op.results],
                    properties=dict(op.properties),
                    attributes=dict(op.attributes),
                )
            values[op.results[0]] = b.add(new)
    assert result is not None  # verified: the region ends in ta.yield
    return b.operand(result, plane)


def _within(b: _Builder, dim: int, extent: int) -> SSAValue:
    """Whether each key of this step's block (along `dim` of a (1, bk) or (bk, 1)
    tile) is one of the `extent` keys."""
    shape = [1, b.bk] if dim == 1 else [b.bk, 1]
    start = AffineMap(len(b.ivs), 0, (AffineDimExpr(b.nb + 1) * b.bk,))
    keys = b.add(tl.IotaOp(dim, AffineMapAttr(start), b.ivs, TensorType(i32, shape)))
    bound = b.splat(extent, TensorType(i32, shape))  # type: ignore[arg-type]
    return b.add(tl.CompareOp(ComparePredicate.SLT, keys, bound))


def _hidden(b: _Builder, offset: int) -> SSAValue:
    """Whether each score of this step's (bq, bk) block has j > i + offset (`causal`)."""
    n = len(b.ivs)
    rows = AffineMap(n, 0, (AffineDimExpr(b.nb) * b.bq + offset,))
    cols = AffineMap(n, 0, (AffineDimExpr(b.nb + 1) * b.bk,))
    i = b.add(tl.IotaOp(0, AffineMapAttr(rows), b.ivs, TensorType(i32, [b.bq, 1])))
    j = b.add(tl.IotaOp(1, AffineMapAttr(cols), b.ivs, TensorType(i32, [1, b.bk])))
    plane = [b.bq, b.bk]
    return b.add(
        tl.CompareOp(ComparePredicate.SGT, b.operand(j, plane), b.operand(i, plane))
    )


def _live_blocks(b: _Builder) -> AffineMap | None:
    """With `causal c`, the key blocks that hold a key some query of the step's query
    block sees (j <= i + c for some i, j of the block): where
    `qi * bq + bq - 1 + c - kj * bk >= 0`, the condition of the step's `tl.when`. None
    when every step is live, or when some query block sees no key of the first key
    block (its accumulators start there: `tl.when` must run at kj = 0)."""
    c = b.op.causal_offset
    if c is None or c < 1 - b.bq:
        return None
    tk = b.op.sizes.get_values()[1]
    if b.bq - 1 + c >= (-(-tk // b.bk) - 1) * b.bk:
        return None  # the first query block already sees the last key block
    qi, kj = AffineDimExpr(b.nb), AffineDimExpr(b.nb + 1)
    return AffineMap(len(b.ivs), 0, (qi * b.bq + (b.bq - 1 + c) - kj * b.bk,))


def _body(b: _Builder) -> None:
    op = b.op
    nb = b.nb
    dims = "b" * nb + "ijde"
    f32 = Float32Type()
    bq, bk = b.bq, b.bk
    e = op.sizes.get_values()[3]
    precision = (
        DotPrecision.HIGHEST
        if isinstance(op.out.type.element_type, Float32Type)  # type: ignore[attr-defined]
        else None
    )
    q = b.load(op.q, op.q_map.data.results, dims)
    k = b.load(op.k, op.k_map.data.results, dims)
    v = b.load(op.v, op.v_map.data.results, dims)
    live = _live_blocks(b)
    grid_body = b.block
    if live is not None:  # the step's work goes in a tl.when
        b.block = Block()
    kt = b.add(tl.TransposeOp(k, [1, 0]))
    s = b.add(tl.DotOp(q, kt, precision))
    t = _score_ops(b, s)
    tk = op.sizes.get_values()[1]
    c = op.causal_offset
    if c is not None or tk % bk:  # -inf as log 0 (see below on -inf constants)
        neg_inf = b.add(math.LogOp(b.splat(0.0, TensorType(f32, [1, 1]))))
    if c is not None:
        t = b.add(tl.SelectOp(_hidden(b, c), b.operand(neg_inf, [bq, bk]), t))
    if tk % bk:
        # A ragged last key block: its columns past tk score -inf and its rows of v,
        # whatever the padding holds, are 0 (a 0 weight times a NaN would be NaN).
        t = b.add(
            tl.SelectOp(
                b.operand(_within(b, 1, tk), [bq, bk]), t, b.operand(neg_inf, [bq, bk])
            )
        )
        v_type = v.type
        assert isinstance(v_type, TensorType)
        v = b.add(
            tl.SelectOp(b.operand(_within(b, 0, tk), [bk, e]), v, b.splat(0.0, v_type))
        )
    row = TensorType(f32, [bq, 1])
    m = b.add(tl.AccumulateOp(ReductionKind.MAX, b.add(tl.ReduceOp("max", t, [1]))))
    m_prev = b.add(tl.PreviousOp(m))
    # A row every key so far masked has max -inf: exponentials against 0 instead are
    # 0, where -inf - -inf would be NaN (a fully masked row still ends 0 / 0 = NaN).
    # (m - m is NaN exactly where m is infinite or NaN: no -inf constant, which
    # xDSL 0.75 reads back from text as 4.29e9.)
    zero = b.splat(0.0, row)
    masked = b.add(tl.CompareOp(ComparePredicate.UNE, b.add(arith.SubfOp(m, m)), zero))
    m_safe = b.add(tl.SelectOp(masked, zero, m))
    alpha = b.add(math.ExpOp(b.add(arith.SubfOp(m_prev, m_safe))))
    p = b.add(math.ExpOp(b.add(arith.SubfOp(t, b.operand(m_safe, [bq, bk])))))
    l_sum = b.add(tl.ReduceOp("sum", p, [1]))
    total = b.add(tl.AccumulateOp(ReductionKind.SUM, l_sum, alpha))
    if precision is None:  # bf16 data: the MXU takes the probabilities as bf16
        p = b.add(tl.ConvertOp(p, TensorType(v.type.element_type, [bq, bk])))  # type: ignore[attr-defined]
    pv = b.add(tl.DotOp(p, v, precision))
    acc = b.add(tl.AccumulateOp(ReductionKind.SUM, pv, b.operand(alpha, [bq, e])))
    if live is not None:
        b.block.add_op(tl.YieldOp(total, acc))
        when = tl.WhenOp(AffineMapAttr(live), b.ivs, Region(b.block))
        when.location = op.location
        grid_body.add_op(when)
        b.block = grid_body
        total, acc = when.results
    last = Block()
    b_last = _Builder(op, bq, bk, b.args, b.grid)
    b_last.block = last
    out = b_last.add(arith.DivfOp(acc, b_last.operand(total, [bq, e])))
    if op.zero_masked_rows is not None:
        # every score of the row -inf: every exponential 0, and only then, as the
        # row's largest is exp(0) = 1 otherwise
        zero = b_last.splat(0.0, TensorType(f32, [bq, e]))
        empty = b_last.add(
            tl.CompareOp(
                ComparePredicate.OEQ, total, b_last.splat(0.0, TensorType(f32, [bq, 1]))
            )
        )
        empty = b_last.operand(empty, [bq, e])
        out = b_last.add(tl.SelectOp(empty, zero, out))
    out_t = op.out.type
    assert isinstance(out_t, MemRefType)
    if out_t.element_type != f32:
        out = b_last.add(tl.ConvertOp(out, TensorType(out_t.element_type, [bq, e])))
    results = op.out_map.data.results
    shape = [
        1 if dims[p] == "b" else (bq if dims[p] == "i" else e)
        for p in (_dim_of(x) for x in results)
        if p is not None
    ]
    out = b_last.add(tl.ReshapeOp(out, TensorType(out_t.element_type, shape)))
    offsets = [
        AffineDimExpr(p)
        if dims[p] == "b"  # type: ignore[index]
        else AffineDimExpr(nb) * bq
        if dims[p] == "i"  # type: ignore[index]
        else AffineConstantExpr(0)
        for p in (_dim_of(x) for x in results)
    ]
    store = tl.StoreOp(
        out,
        b.args[op.out],
        AffineMapAttr(AffineMap(len(b.ivs), 0, tuple(offsets))),
        b.ivs,
    )
    store.location = op.location
    last.add_op(store)
    b.add(tl.OnLastStepOp(Region(last)))


def _unit_dims_view(kernel: ta.KernelOp, op: ta.AttentionOp, load: ta.LoadOp) -> None:
    """Read a score load that takes one element of its buffer's minor dims through the
    view with unit minor dims (`attention_blocks.unit_dims_view`)."""
    t = load.buffer.type
    assert isinstance(t, MemRefType)
    tiled = [w in ("i", "j") for w in score_load_tiling(op, load)]
    found = unit_dims_view(list(t.get_shape()), list(load.map.data.results), tiled)
    if found is None:
        return
    shape, results = found
    view = ta.ReshapeOp(load.buffer, MemRefType(t.element_type, shape))
    view.result.name_hint = load.buffer.name_hint
    kernel.body.block.insert_op_before(view, op)
    m = load.map.data
    load.operands[0] = view.result
    load.map = AffineMapAttr(AffineMap(m.num_dims, m.num_symbols, tuple(results)))


def tile_attention(
    module: ModuleOp, kernel: ta.KernelOp, op: ta.AttentionOp, budget: int
) -> None:
    """Replace `kernel` by its flash-attention `tl.kernel` (see the module docstring).
    Raises a located `PassError` when no blocks fit `budget` or an operand is not in
    the form above."""
    if (error := op.view_form_error()) is not None:
        raise PassError(op, f"tile: {error}")
    blocks = attention_blocks(op, budget)
    if blocks is None:
        raise PassError(
            op,
            "tile: no attention blocks legal for every access fit the VMEM budget of "
            f"{budget}",
        )
    bq, bk = blocks
    tq, tk = op.sizes.get_values()[:2]
    for load in [o for o in op.score.block.ops if isinstance(o, ta.LoadOp)]:
        _unit_dims_view(kernel, op, load)
    args = list(kernel.body.block.args)
    views = [o for o in kernel.body.block.ops if isinstance(o, ta.ReshapeOp)]
    roles = [kernel.role_of(a).value for a in args]
    roles += [kernel.role_of(ta.root_buffer(v.result)).value for v in views]  # type: ignore[union-attr]
    types = [a.type for a in args] + [v.result.type for v in views]
    new_kernel = tl.KernelOp(kernel.sym_name.data, types, roles)
    kblock = new_kernel.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip([*args, *(v.result for v in views)], kblock.args):
        mapping[old] = new
        new.name_hint = old.name_hint
    extents = [*op.batch_extents, -(-tq // bq), -(-tk // bk)]
    semantics = [tl.GridSemantics.PARALLEL] * (len(extents) - 1)
    grid = tl.GridOp(extents, [*semantics, tl.GridSemantics.SEQUENTIAL])
    for n, iv in enumerate(grid.body.block.args):
        iv.name_hint = "ijklmn"[n] if n < 6 else f"g{n}"
    kblock.add_op(grid)
    _body(_Builder(op, bq, bk, mapping, grid))
    kept = [n for n, a in enumerate(kblock.args) if a.uses]
    for a in [a for a in kblock.args if not a.uses]:
        kblock.erase_arg(a)
    new_kernel.set_roles([roles[n] for n in kept])
    new_kernel.location = kernel.location
    emit_remark(
        op,
        f"tile: @{kernel.sym_name.data}: flash attention, blocks (q {bq}, kv {bk}), "
        f"grid {extents} (the key blocks sequential)",
    )
    module.body.block.insert_op_after(new_kernel, kernel)
    relaunch(module, kernel, views, [], kept)
    module.body.block.erase_op(kernel)
