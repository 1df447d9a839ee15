"""Tile a `ta.attention` kernel into one flash-attention `tl.kernel`.

The grid walks the batch dims (one point a step), query blocks and, last and
sequential, key blocks. A step computes its (bq, bk) scores on the MXU, the score
region on them, and an online softmax: the running row max (`tl.accumulate <max>`),
the running sum of exponentials and the running (bq, E) product with v, both rescaled
by `exp(previous max - max)` at each key block (`tl.accumulate <sum> ... rescaled`).
The last key block divides the product by the sum and stores it. Nothing of size
(Tq, Tk) reaches HBM.

The operands must be views whose dims are, in order, the batch dims and then (i, d),
(j, d), (j, e) and (i, e) (raise-attention writes them so); score-region loads index
their buffers by single domain dims or constants.
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
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

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
from pallas_ir.tpu_rules import (
    LANES,
    PIPELINE_BUFFERS,
    block_dim_legal,
    dot_vmem_bytes,
    vmem_block_bytes,
)

BLOCK_CHOICES = (512, 256, 128)
"""Query and key block sizes tried, largest first (or the whole extent when it is
smaller or no choice divides it)."""


def attention_op(kernel: ta.KernelOp) -> ta.AttentionOp | None:
    """The kernel's `ta.attention`, when that (beside in-kernel views) is its body."""
    ops = [o for o in kernel.body.block.ops if not isinstance(o, ta.ReshapeOp)]
    if len(ops) == 1 and isinstance(ops[0], ta.AttentionOp):
        return ops[0]
    return None


def _bits(t: Attribute) -> int:
    return getattr(t, "bitwidth", 32)


def _choices(extent: int) -> list[int]:
    found = [b for b in BLOCK_CHOICES if b <= extent and extent % b == 0]
    return found or [extent]


def _footprint(op: ta.AttentionOp, bq: int, bk: int) -> int:
    """VMEM of one grid step: the double-buffered q, k, v and out blocks, the running
    max, sum and product, the scores and their exponentials, and both dots."""
    d, e = op.sizes.get_values()[2:]
    bits = _bits(op.out.type.element_type)  # type: ignore[attr-defined]
    f32 = bits == 32
    blocks = sum(
        vmem_block_bytes(shape, bits) for shape in ([bq, d], [bk, d], [bk, e], [bq, e])
    )
    scratch = 2 * vmem_block_bytes([bq, 1], 32) + vmem_block_bytes([bq, e], 32)
    values = 3 * vmem_block_bytes([bq, bk], 32)
    dots = dot_vmem_bytes(bq, bk, d, bits, f32) + dot_vmem_bytes(bq, e, bk, 32, f32)
    return PIPELINE_BUFFERS * blocks + scratch + values + dots


def attention_blocks(op: ta.AttentionOp, budget: int) -> tuple[int, int] | None:
    """(bq, bk): the largest query block, then key block, whose step fits `budget`."""
    tq, tk = op.sizes.get_values()[:2]
    for bq in _choices(tq):
        for bk in _choices(tk):
            if bk != tk and bk % LANES:
                continue  # the scores' lane dim
            if _footprint(op, bq, bk) <= budget:
                return bq, bk
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
    kt = b.add(tl.TransposeOp(k, [1, 0]))
    s = b.add(tl.DotOp(q, kt, precision))
    t = _score_ops(b, s)
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


def _unit_row_view(kernel: ta.KernelOp, op: ta.AttentionOp, load: ta.LoadOp) -> None:
    """A score load that takes one row of its buffer's second-minor dim (a padding
    mask's batch row) reads a view with a unit dim before the last, `(..., A, 1, B)`:
    its block `(1, bk)` is whole there, which a row of A is not (the block rule)."""
    t = load.buffer.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    results = load.map.data.results
    if len(shape) < 2 or shape[-2] == 1:
        return
    at = _dim_of(results[-2])
    names = "b" * len(op.batch_extents) + "ij"
    if at is not None and names[_score_position(load, at)] in "ij":
        return
    view = ta.ReshapeOp(
        load.buffer, MemRefType(t.element_type, [*shape[:-1], 1, shape[-1]])
    )
    view.result.name_hint = load.buffer.name_hint
    kernel.body.block.insert_op_before(view, op)
    m = load.map.data
    load.operands[0] = view.result
    load.map = AffineMapAttr(
        AffineMap(
            m.num_dims, m.num_symbols, (*results[:-1], AffineConstantExpr(0), results[-1])
        )
    )


def _score_position(load: ta.LoadOp, at: int) -> int:
    arg = load.dims[at]
    assert isinstance(arg, BlockArgument)
    return arg.index


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
        raise PassError(op, f"tile: no attention blocks fit the VMEM budget of {budget}")
    bq, bk = blocks
    tq, tk = op.sizes.get_values()[:2]
    for what, (buffer, map) in op.accesses().items():
        t = buffer.type
        assert isinstance(t, MemRefType)
        bits = _bits(t.element_type)
        for n, expr in enumerate(map.data.results):
            at = _dim_of(expr)
            name = None if at is None else op.dim_names()[at]
            size = {"i": bq, "j": bk}.get(name or "", 0)
            if size and not block_dim_legal(
                size, t.get_shape()[n], n, t.get_num_dims(), bits
            ):
                raise PassError(
                    op, f"tile: attention {what} has no legal block of {size} rows"
                )
    for load in [o for o in op.score.block.ops if isinstance(o, ta.LoadOp)]:
        _unit_row_view(kernel, op, load)
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
    extents = [*op.batch_extents, tq // bq, tk // bk]
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
