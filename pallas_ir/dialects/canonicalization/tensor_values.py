"""Canonicalization patterns of the tile-level value ops that `tl` and `pallas` share
(`ReshapeOpBase`, `TransposeOpBase` in `dialects/common.py`): each pattern rebuilds the
op it matches in its own dialect."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pallas_ir.dialects.common import (
    ELEMENTWISE_DIALECTS,
    BroadcastOpBase,
    CompareOpBase,
    ConvertOpBase,
    IotaOpBase,
    ReshapeOpBase,
    SelectOpBase,
    TransposeOpBase,
)


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
            rewriter.replace(op, type(op)(inner.source, result))


class IdentityReshape(RewritePattern):
    """A reshape to the source's own shape is the source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOpBase, rewriter: PatternRewriter) -> None:
        if op.source.type == op.result.type:
            rewriter.replace(op, [], [op.source])


class TransposeOfTranspose(RewritePattern):
    """`transpose(transpose(x, q), p)` is `transpose(x, [q[i] for i in p])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOpBase, rewriter: PatternRewriter) -> None:
        inner = op.source.owner
        if type(inner) is type(op):
            assert isinstance(inner, TransposeOpBase)
            q = inner.permutation.get_values()
            perm = [q[p] for p in op.permutation.get_values()]
            rewriter.replace(op, type(op)(inner.source, perm))


class IdentityTranspose(RewritePattern):
    """A transpose by the identity permutation is its source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOpBase, rewriter: PatternRewriter) -> None:
        perm = list(op.permutation.get_values())
        if perm == list(range(len(perm))):
            rewriter.replace(op, [], [op.source])


def _dropped_unit_dims(shape: Sequence[int]) -> list[int]:
    """The dims `SqueezeUnitDims` drops from a tile of `shape`: its unit dims but the
    last, first ones first, down to rank 2 (Mosaic's layouts are 2-D; a rank-1 value
    gains nothing)."""
    units = [i for i, n in enumerate(shape[:-1]) if n == 1]
    return units[: max(len(shape) - 2, 0)]


def _without(shape: Sequence[int], dims: Sequence[int]) -> list[int]:
    return [n for i, n in enumerate(shape) if i not in dims]


def _tile_shape(v: SSAValue) -> list[int] | None:
    t = v.type
    return list(t.get_shape()) if isinstance(t, TensorType) else None


def _squeezable(op: Operation) -> bool:
    """An element-wise op or broadcast whose result has unit dims to drop: the same op
    on the tiles without them computes the same elements."""
    if not op.operands or len(op.results) != 1:
        return False
    shape = _tile_shape(op.results[0])
    if shape is None or not _dropped_unit_dims(shape):
        return False
    if isinstance(op, BroadcastOpBase):
        return True
    if not (
        isinstance(op, CompareOpBase | SelectOpBase | ConvertOpBase)
        or op.dialect_name() in ELEMENTWISE_DIALECTS
    ):
        return False
    return all(_tile_shape(v) == shape for v in op.operands)


def _iota_without_unit_dims(v: SSAValue, user: Operation) -> int | None:
    """The dim of iota `v` on the tile element-wise `user` rebuilds it at (without the
    unit dims `user` drops), or None: `v` is no iota, or `user` drops its dim (or is
    a broadcast, whose source keeps other dims)."""
    iota = v.owner
    if not isinstance(iota, IotaOpBase) or isinstance(user, BroadcastOpBase):
        return None
    shape = _tile_shape(v)
    assert shape is not None
    dropped, dim = _dropped_unit_dims(shape), iota.dim.value.data
    if dim in dropped:
        return None
    return dim - sum(d < dim for d in dropped)


def _agree(producer: Operation, user: Operation) -> bool:
    """Whether `user` takes `producer`'s result at the shape `producer` is rebuilt
    with: an element-wise user drops the same dims; a broadcast drops its result's
    unit dims from its source, which may differ ((1, 8, 1, 128) to (4, 8, 1, 128) keeps
    (1, 8, 128) of a source rebuilt as (8, 128))."""
    source = _tile_shape(producer.results[0])
    assert source is not None
    if not isinstance(user, BroadcastOpBase):
        return True
    result = _tile_shape(user.results[0])
    assert result is not None
    return _without(source, _dropped_unit_dims(source)) == _without(
        source, _dropped_unit_dims(result)
    )


def _splat(v: SSAValue) -> arith.ConstantOp | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(
        op.value, DenseIntOrFPElementsAttr
    ):
        return op if op.value.is_splat() else None
    return None


class SqueezeUnitDims(RewritePattern):
    """Element-wise compute on tiles with unit dims, between reshapes, runs on the
    tiles without them. Loop-space conversion gives each value a dim per loop dim, 1
    where it does not vary: in a matrix product's kernel the prologue of the (m, k)
    factor is (m, 1, k), and Mosaic pads each unit second-minor dim to 8 sublanes (8x
    the vregs: cross-entropy's weight gradient at 512 tokens and 50257 classes spilled
    130 MB on a v6e).

    Matched at a reshape of such a value. The component of squeezable ops it belongs to
    (`_squeezable`, connected through their operands and uses, in one block) is rebuilt
    without its unit dims (`_dropped_unit_dims`) when it is closed: every operand from
    outside is a reshape, a splat constant or an iota along a dim it keeps (a mask's
    indices), and every use outside is a reshape, so the reshapes fold
    (`ReshapeOfReshape`) and no new layout change is left. Otherwise nothing
    changes."""

    MAX_OPS = 256
    """The largest component rebuilt (the search runs from every reshape)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOpBase, rewriter: PatternRewriter) -> None:
        start = op.source.owner
        if not isinstance(start, Operation) or not _squeezable(start):
            return
        members = self._component(start)
        if members is None:
            return
        block = start.parent_block()
        assert block is not None
        order = {o: i for i, o in enumerate(block.ops)}
        squeezed: dict[SSAValue, SSAValue] = {}
        """Each value of the component without its dropped dims."""
        outside: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        """Each operand from outside at each shape a member takes it (made once,
        before its first use)."""
        reshape = type(op)
        for member in sorted(members, key=order.__getitem__):
            result = member.results[0]
            shape = _tile_shape(result)
            assert shape is not None
            dropped = _dropped_unit_dims(shape)
            operands: list[SSAValue] = []
            for v in member.operands:
                if v in squeezed:
                    operands.append(squeezed[v])
                    continue
                key = (v, tuple(_without(_tile_shape(v) or [], dropped)))
                if key not in outside:
                    outside[key] = self._outside(v, key[1], reshape, rewriter, member)
                operands.append(outside[key])
            elt = result.type.element_type  # type: ignore[attr-defined]
            new = type(member).create(
                operands=operands,
                result_types=[TensorType(elt, _without(shape, dropped))],
                properties=dict(member.properties),
                attributes=dict(member.attributes),
            )
            rewriter.insert(new, InsertPoint.before(member))
            new.results[0].name_hint = result.name_hint
            squeezed[result] = new.results[0]
        for member in members:
            old, new_value = member.results[0], squeezed[member.results[0]]
            for use in list(old.uses):
                user = use.operation
                if user in members:
                    continue
                assert isinstance(user, ReshapeOpBase)
                if user.result.type == new_value.type:
                    rewriter.replace(user, [], [new_value])
                else:
                    rewriter.replace(user, reshape(new_value, user.result.type))
        for member in sorted(members, key=order.__getitem__, reverse=True):
            rewriter.erase(member)

    def _component(self, start: Operation) -> set[Operation] | None:
        """The closed component of squeezable ops around `start`, or None."""
        block = start.parent_block()
        members, todo = {start}, [start]
        while todo:
            op = todo.pop()
            for v in op.operands:
                owner = v.owner
                if isinstance(owner, Operation) and _squeezable(owner):
                    if owner.parent_block() is not block or not _agree(owner, op):
                        return None
                    if owner in members:
                        continue
                    members.add(owner)
                    todo.append(owner)
                elif not (
                    isinstance(owner, ReshapeOpBase)
                    or _splat(v) is not None
                    or _iota_without_unit_dims(v, op) is not None
                ):
                    return None
            for use in op.results[0].uses:
                user = use.operation
                if isinstance(user, ReshapeOpBase):
                    continue
                if (
                    not _squeezable(user)
                    or user.parent_block() is not block
                    or not _agree(op, user)
                ):
                    return None
                if user in members:
                    continue
                members.add(user)
                todo.append(user)
            if len(members) > self.MAX_OPS:
                return None
        return members

    @staticmethod
    def _outside(
        v: SSAValue,
        shape: Sequence[int],
        reshape: type[ReshapeOpBase],
        rewriter: PatternRewriter,
        member: Operation,
    ) -> SSAValue:
        """An operand from outside the component at `shape` (without the unit dims
        `member` drops): a splat constant or an iota made anew, a reshape's source
        reshaped."""
        t = v.type
        assert isinstance(t, TensorType)
        want = TensorType(t.element_type, list(shape))
        if (dim := _iota_without_unit_dims(v, member)) is not None:
            iota = v.owner
            assert isinstance(iota, IotaOpBase)
            new = iota.along(dim, want)
        elif (const := _splat(v)) is not None:
            value = DenseIntOrFPElementsAttr.from_list(
                want,
                [const.value.get_values()[0]],  # type: ignore[union-attr]
            )
            new = arith.ConstantOp(value)
        else:
            owner = v.owner
            assert isinstance(owner, ReshapeOpBase)
            if owner.source.type == want:
                return owner.source
            new = reshape(owner.source, want)
        rewriter.insert(new, InsertPoint.before(member))
        return new.results[0]
