"""Build a `tl.kernel` from a `ta.kernel` and its `TilePlan`: a `tl.grid` of whole-tile
loads, compute and stores, in loop space (one tensor dim per loop dim); then each launch
passes the views and host storage the tiles read."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from pallas_ir.analysis.cost_model import body_vmem_bytes
from pallas_ir.diagnostics import PassError, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import (
    ELEMENTWISE_DIALECTS,
    SCALAR_ONLY_CASTS,
    ComparePredicate,
    DotPrecision,
    ReductionKind,
    ReshapeHasCanonicalizationPatterns,
    TransposeHasCanonicalizationPatterns,
    arith_predicate,
)
from pallas_ir.lowering.tile.access import (
    Access,
    Storage,
    epilogue_ops,
    lookup_dims,
    mxu_factors,
    scatter_lookup,
    totals,
)
from pallas_ir.lowering.tile.legality import rows_by_dma
from pallas_ir.lowering.tile.policy import Rejection, TilePlan


@dataclass
class Emitter:
    loop: ta.LoopOp
    plan: TilePlan
    buffers: dict[SSAValue, SSAValue]
    """ta buffer value → tl.kernel argument."""
    block: Block
    values: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    constants: dict[tuple[Attribute, tuple[int, ...]], SSAValue] = field(
        default_factory=dict[tuple[Attribute, tuple[int, ...]], SSAValue]
    )
    scalar_constants: dict[SSAValue, arith.ConstantOp] = field(
        default_factory=dict[SSAValue, arith.ConstantOp]
    )
    epilogue: set[Operation] = field(default_factory=set[Operation])
    """The ops computing from the reductions' results (`access.epilogue_ops`), on tiles
    of the parallel dims only."""
    waits: bool = False
    """The reduction is split and the epilogue waits for its totals: `tl.accumulate`
    and `tl.on_last_step` (otherwise a split reduction's stores accumulate)."""
    on_parallel_dims: bool = False
    """A matrix product's kernel: values that do not vary along the reduced dims (a
    residual added after the product) are tiles of the parallel dims only, as the
    product's result is; with a unit minor dim each element would take a lane tile."""
    totals: set[Operation] = field(default_factory=set[Operation])
    """The reductions a split cuts (`access.totals`): every one, or, with per-row
    reductions (`ta.reduce ... over`), those over the split dim; the per-row ones are
    whole in each block."""
    order: list[int] = field(default_factory=list[int])
    """The loop dims in the order of the tiles' dims (`value_order`): the loop's own
    order, or reduced dims moved before the parallel dims they precede in the block
    the kernel reads most, so that they are reduced where they lie."""

    def __post_init__(self) -> None:
        self.order = list(range(self.rank))

    @property
    def position(self) -> dict[int, int]:
        """Loop dim → its dim in the tiles."""
        return {l: p for p, l in enumerate(self.order)}

    @property
    def n_par(self) -> int:
        return len(self.loop.parallel_extents)

    def reduced_positions(self, reduce: ta.ReduceOp | None = None) -> list[int]:
        """The tiles' dims of the loop's reduction dims, or of those `reduce` combines
        over."""
        dims = range(self.n_par, self.rank) if reduce is None else reduce.reduced_dims()
        return sorted(self.position[l] for l in dims)

    def in_tile_order(self, per_loop_dim: Sequence[int]) -> list[int]:
        """A list indexed by loop dim, in the order of the tiles' dims."""
        return [per_loop_dim[l] for l in self.order]

    def parallel_shape(self, shape: Sequence[int]) -> list[int]:
        """A tile's shape on the parallel dims only (its reduced dims are 1)."""
        return [shape[self.position[l]] for l in range(self.n_par)]

    def from_parallel_shape(self, shape: Sequence[int]) -> list[int]:
        """A tile of the parallel dims only as a tile of every loop dim."""
        full = [1] * self.rank
        for l, n in enumerate(shape):
            full[self.position[l]] = n
        return full

    @property
    def accesses(self) -> dict[Operation, Access]:
        return self.plan.accesses

    @property
    def dma(self) -> dict[Operation, Access]:
        return self.plan.dma

    @property
    def skip(self) -> set[Operation]:
        return self.plan.skip

    @property
    def resident(self) -> dict[Operation, int]:
        """Gathers whose table stays whole in VMEM (G4)."""
        return self.plan.resident

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    @property
    def rank(self) -> int:
        return len(self.plan.tiles)

    def offsets(self, access: Access) -> AffineMapAttr:
        """Element offsets of the tile at grid point (g...): `g * tile + c`, or `c` where
        the whole extent is one tile."""
        n_grid = len(self.plan.grid)
        results: list[AffineExpr] = []
        gathered = {b: j for j, (b, _) in enumerate(access.gathers)}
        for b, (l, c) in enumerate(access.dims):
            if b in gathered:
                results.append(AffineSymExpr(gathered[b]))
            elif l is None or l >= len(self.plan.grid) or self.plan.grid[l] == 1:
                results.append(AffineConstantExpr(c))
            else:
                results.append(
                    AffineDimExpr(l) * (self.plan.tiles[l] * access.step(b)) + c
                )
        return AffineMapAttr(AffineMap(n_grid, len(gathered), tuple(results)))

    def tile_shape(self, access: Access) -> list[int]:
        extents = self.loop.extents
        return [
            1 if l is None else min(self.plan.tiles[l], extents[l])
            for l, _ in access.dims
        ]

    def loop_shape(self, access: Access) -> list[int]:
        """The loop-space shape of an access's tile (1 where the loop dim is unused)."""
        used = access.loop_to_buffer()
        return [
            min(self.plan.tiles[l], self.loop.extents[l]) if l in used else 1
            for l in self.order
        ]

    def full_shape(self) -> list[int]:
        """The tile sizes, by loop dim."""
        return [min(t, e) for t, e in zip(self.plan.tiles, self.loop.extents)]

    def value_order(self) -> list[int]:
        """The order of the tiles' dims (`order`). The loop's order puts its reduced
        dims last, on the lanes: right for a row's statistics, but a reduction along a
        block's leading dim (a column sum, a bias gradient) would transpose every block
        and pad a short reduced dim to 128 lanes. So each reduced dim the largest read
        walks goes before the first parallel dim that follows it in that read's block
        (when the read's lane dim stays last), where it is summed in place (on a v5e, a (4096, 1024) f32 column sum: 25.6 us
        transposed, 15.7 in place; (8, 128, 128) summed over 8: 13.2 and 4.0). Kernels
        with a matrix product (`on_parallel_dims`), gathers, or an index of several
        reduced dims keep the loop's order."""
        n_par, identity = self.n_par, list(range(self.rank))
        reduced = set(range(n_par, self.rank))
        several_index = len(reduced) > 1 and any(
            isinstance(op, ta.ReduceOp) and ReductionKind(op.kind.data).returns_index
            for op in self.loop.body.block.ops
        )
        if (
            not reduced
            or self.dma
            or self.resident
            or several_index
            or any(a.gathers for a in self.accesses.values())
        ):
            return identity
        if ta.has_partial_reductions(self.loop):
            # rows reduced whole, then along the rows: as they lie
            return self.unread_last_dims_first()
        walked = self.largest_read_dims(
            [a for a in self.accesses.values() if reduced & set(a.loop_to_buffer())]
        )
        if not walked:
            return identity

        def place(l: int) -> tuple[int, int, int]:
            if l < n_par:
                return (l, 1, l)
            after = walked[walked.index(l) + 1 :] if l in walked else []
            follows = [p for p in after if p < n_par]
            return (follows[0] if follows else n_par, 0, l)

        order = sorted(identity, key=place)
        # The parallel dims keep their loop order (a tile of the parallel dims only is
        # a reshape of a full one), and the read's lane dim stays the tiles' last: a
        # unit parallel dim the read does not walk would land on the lanes (128x in
        # VMEM: `einsum('kn,k->n')`'s loop [1, n, 1] reduce [k] ran out of it).
        assert [l for l in order if l < n_par] == list(range(n_par))
        return order if order[-1] == walked[-1] else identity

    def unread_last_dims_first(self) -> list[int]:
        """The loop's order, but for trailing reduced dims no access walks (a sum over
        a broadcast: an int64 input held expanded, summed along the expanded dim in
        words): on the lanes they would give every value read a unit lane dim, 128x
        its size in VMEM (a fuzzed (128, 128, 3) kernel asked v5e for 16.2 MiB of
        scoped VMEM), so they go first, reduced across whole vregs, when the largest
        read's lane dim is then last."""
        identity = list(range(self.rank))
        walked = {l for a in self.accesses.values() for l in a.loop_to_buffer()}
        unread = []
        for l in reversed(range(self.n_par, self.rank)):
            if l in walked:
                break
            unread.insert(0, l)
        lanes = self.largest_read_dims(list(self.accesses.values()))
        if not unread or not lanes:
            return identity
        order = [*unread, *(l for l in identity if l not in unread)]
        return order if order[-1] == lanes[-1] else identity

    def largest_read_dims(self, accesses: Sequence[Access]) -> list[int]:
        """The loop dims the largest load among `accesses` walks, in its buffer's
        order (its lane dim last); empty when none is a load."""
        reads = [a for a in accesses if not a.is_store]
        if not reads:
            return []
        largest = max(reads, key=lambda a: math.prod(self.tile_shape(a)) * a.bits)
        return [l for l, _ in largest.dims if l is not None]

    def tensor(self, like: SSAValue, shape: Sequence[int]) -> TensorType:
        t = like.type
        elt = t.element_type if isinstance(t, TensorType) else t
        if isinstance(elt, IndexType):
            elt = i32  # loop indices are i32 tiles (TPU kernels have no 64-bit types)
        return TensorType(elt, list(shape))

    def reshape(self, v: SSAValue, shape: Sequence[int]) -> SSAValue:
        assert isinstance(v.type, TensorType)
        if list(v.type.get_shape()) == list(shape):
            return v
        return self.add(tl.ReshapeOp(v, self.tensor(v, shape)))

    def broadcast(self, v: SSAValue, shape: Sequence[int]) -> SSAValue:
        assert isinstance(v.type, TensorType)
        if list(v.type.get_shape()) == list(shape):
            return v
        return self.add(tl.BroadcastOp(v, self.tensor(v, shape)))

    def grid_ivs(self) -> Sequence[SSAValue]:
        grid = self.block.parent_op()
        while not isinstance(grid, tl.GridOp):
            assert grid is not None
            grid = grid.parent_op()
        return grid.body.block.args

    def load(self, access: Access) -> SSAValue:
        op = access.op
        assert isinstance(op, ta.LoadOp)
        tile = TensorType(op.result.type, self.tile_shape(access))
        if access.merged_into is not None:
            # The argument's lanes, split into the view's (a, b, ...) in registers.
            shape = self.tile_shape(access)
            k = access.merged_dims
            v = self.add(
                tl.LoadOp(
                    self.buffers[access.merged_into],
                    self.merged_offsets(access),
                    self.grid_ivs(),
                    [],
                    TensorType(op.result.type, [*shape[:-k], math.prod(shape[-k:])]),
                )
            )
            return self.to_loop_space(
                self.rolled(self.reshape(v, shape), access), access, tile
            )
        symbols = [self.scalar_index(index) for _, index in access.gathers]
        v = self.add(
            tl.LoadOp(
                self.buffers[access.buffer],
                self.offsets(access),
                self.grid_ivs(),
                symbols,
                tile,
                list(access.steps) if any(st > 1 for st in access.steps) else None,
            )
        )
        if access.diagonal:
            return self.diagonal_of(v, access, tile)
        return self.to_loop_space(self.rolled(v, access), access, tile)

    def diagonal_of(self, v: SSAValue, access: Access, tile: TensorType) -> SSAValue:
        """The diagonal of a diagonal load's (..., t, t) block `v`, into loop space:
        each row's element on the diagonal kept (a select of the rest to 0), summed
        down the rows: a (..., 1, t) tile along the lanes, which the loop dim walks.
        The sum is of 32-bit integers: narrower data is widened first (exactly), and
        floats are summed as their bits (an integer sum of one nonzero term is that
        term), so -0.0 and NaN come through as they are (a float sum starts from
        +0.0, jnp.sum's, which turns a -0.0 into +0.0)."""
        shape = tile.get_shape()
        rank = len(shape)
        elt = tile.element_type
        reduced = [*shape[:-2], 1, shape[-1]]
        wide = elt
        if isinstance(elt, AnyFloat | IntegerType) and elt.bitwidth < 32:
            wide = f32 if isinstance(elt, AnyFloat) else i32
            v = self.add(tl.ConvertOp(v, TensorType(wide, shape)))
        if isinstance(wide, AnyFloat):
            v = self.add(arith.BitcastOp(v, TensorType(i32, shape)))
        word = v.type.element_type  # type: ignore[attr-defined]
        rows = self.add(
            tl.IotaOp(rank - 2, self.zero_map(), self.grid_ivs(), TensorType(i32, shape))
        )
        lanes = self.add(
            tl.IotaOp(rank - 1, self.zero_map(), self.grid_ivs(), TensorType(i32, shape))
        )
        on = self.add(tl.CompareOp(ComparePredicate.EQ, rows, lanes))
        zero = self.add(
            arith.ConstantOp(
                DenseIntOrFPElementsAttr.from_list(TensorType(word, shape), [0])
            )
        )
        kept = self.add(tl.SelectOp(on, v, zero))
        diagonal = self.add(tl.ReduceOp(ReductionKind.SUM, kept, [rank - 2]))
        if isinstance(wide, AnyFloat):
            diagonal = self.add(arith.BitcastOp(diagonal, TensorType(wide, reduced)))
        if wide != elt:
            diagonal = self.add(tl.ConvertOp(diagonal, TensorType(elt, reduced)))
        *lead, (_, row_offset), lane = access.dims
        along_lanes = replace(access, dims=(*lead, (None, row_offset), lane))
        return self.to_loop_space(diagonal, along_lanes, TensorType(elt, reduced))

    def zero_map(self) -> AffineMapAttr:
        """The offset map of an iota counted from the block's start."""
        n_grid = len(self.plan.grid)
        return AffineMapAttr(AffineMap(n_grid, 0, (AffineConstantExpr(0),)))

    def rolled(self, v: SSAValue, access: Access) -> SSAValue:
        """The loaded tile `v` of `access` (in buffer order), each dim the access
        reads at `(d + c) mod n` rolled by n - c (legality: the dim is whole)."""
        assert isinstance(v.type, TensorType)
        for b, n in enumerate(v.type.get_shape()):
            if c := access.rotation(b):
                v = self.add(tl.RollOp(v, n - c, b))
        return v

    def gather_rows(self, access: Access) -> SSAValue:
        """A gather by row DMAs: `tl.gather` of the rows the lookups of this grid step
        name (see `row_gather`), then into loop space like any tile."""
        indices = [index for _, index in access.gathers]
        found = lookup_dims(indices[0])
        assert found is not None  # row_gather checked
        lookup, coefficients, constant = found
        rows = self.plan.tiles[lookup]
        # Bags taken several per step (see row_gather): their rows follow each other.
        bags = [l for l in coefficients if l != lookup and self.plan.tiles[l] > 1]
        for l in bags:
            assert coefficients[l] == rows  # row_gather checked: consecutive bags
        per_bag = rows
        rows *= math.prod(self.plan.tiles[l] for l in bags)
        # The step's first lookup: grid index times tile along each dim (1 but for the
        # lookup dim's `rows`), times the dim's coefficient.
        first: AffineExpr = AffineConstantExpr(constant)
        extents = self.loop.extents
        for l, c in sorted(coefficients.items()):
            if self.plan.tiles[l] < extents[l]:  # a whole dim has no grid index
                first = first + AffineDimExpr(l) * (c * self.plan.tiles[l])
        start = AffineMap(len(self.plan.grid), 0, (first,))
        op = access.op
        assert isinstance(op, ta.LoadOp)
        picked = len(indices)
        tile = TensorType(op.result.type, [rows, *access.shape[picked:]])
        v = self.add(
            tl.GatherOp(
                self.buffers[access.buffer],
                # read flat (see lookup_dims)
                [self.buffers[ta.root_buffer(i.buffer)] for i in indices],
                AffineMapAttr(start),
                self.grid_ivs(),
                tile,
            )
        )
        if op in self.resident:
            v.owner.attributes["table"] = StringAttr("vmem")  # type: ignore[union-attr]
        lead = [(l, 0) for l in bags] + [(lookup, 0)]
        lead_shape = [self.plan.tiles[l] for l in bags] + [per_bag]
        if bags:
            v = self.reshape(v, [*lead_shape, *access.shape[picked:]])
            tile = TensorType(op.result.type, [*lead_shape, *access.shape[picked:]])
        walked = replace(
            access,
            shape=(*lead_shape, *access.shape[picked:]),
            dims=(*lead, *access.dims[picked:]),
            gathers=(),
        )
        return self.to_loop_space(v, walked, tile)

    def to_loop_space(self, v: SSAValue, access: Access, tile: TensorType) -> SSAValue:
        """Buffer order → loop order: drop constant dims, transpose, add unused loop dims."""
        walked = [(b, l) for b, (l, _) in enumerate(access.dims) if l is not None]
        position = self.position
        order = sorted(range(len(walked)), key=lambda k: position[walked[k][1]])
        if order != list(range(len(walked))):
            v = self.reshape(v, [tile.get_shape()[b] for b, _ in walked])
            v = self.add(tl.TransposeOp(v, order))
        # Dropping and adding unit dims keeps the row-major order: one reshape (onto
        # the parallel dims only, in a matrix product's kernel, for a tile that does not
        # vary along the reduced ones: `on_parallel_dims`).
        shape = self.loop_shape(access)
        if (
            self.on_parallel_dims
            and _is_32_bit(tile.element_type)
            and not set(access.loop_to_buffer()) - set(range(self.n_par))
        ):
            shape = self.parallel_shape(shape)
        return self.reshape(v, shape)

    def scalar_index(self, index: ta.LoadOp) -> SSAValue:
        """Read a gather index at this grid point: its loop dims have one-element tiles,
        so each is the grid index of the same position."""
        n_grid = len(self.plan.grid)
        positions = [d.index for d in index.dims]  # type: ignore[attr-defined]
        results = [
            e.replace_dims_and_symbols([AffineDimExpr(p) for p in positions], [])
            for e in index.map.data.results
        ]
        index_map = AffineMapAttr(AffineMap(n_grid, 0, tuple(results)))
        buffer = self.buffers[index.buffer]
        read = self.add(tl.ScalarLoadOp(buffer, index_map, self.grid_ivs()))
        read.name_hint = index.result.name_hint
        return read

    def scatter_rows(self, access: Access, v: SSAValue) -> None:
        """A row scatter: the stored value as the (rows, W) tile of this grid step's
        lookups, written by `tl.scatter` to the rows the prefetched indices pick."""
        op = access.op
        assert isinstance(op, ta.StoreOp)
        _, index = access.gathers[0]
        lookup, coefficients, constant = scatter_lookup(access)
        *lead, _, lane = access.dims
        walked = replace(access, dims=(*lead, (lookup, 0), lane), gathers=())
        tile = self.to_buffer_order(walked, v)
        rows = self.reshape(tile, self.tile_shape(walked)[-2:])
        n_grid = len(self.plan.grid)
        offsets = self.offsets(walked).data.results
        # The step's first index: its grid index times the tile along each dim the
        # index is read along (1 but for the lookup dim's rows), times the coefficient.
        first: AffineExpr = AffineConstantExpr(constant)
        for l, c in sorted(coefficients.items()):
            if self.plan.tiles[l] < self.loop.extents[l]:  # a whole dim has no index
                first = first + AffineDimExpr(l) * (c * self.plan.tiles[l])
        self.add(
            tl.ScatterOp(
                rows,
                self.buffers[access.buffer],
                AffineMapAttr(AffineMap(n_grid, 0, tuple(offsets[: len(lead)]))),
                self.buffers[ta.root_buffer(index.buffer)],
                AffineMapAttr(AffineMap(n_grid, 0, (first,))),
                self.grid_ivs(),
                op.combine,
            )
        )

    def to_buffer_order(self, access: Access, v: SSAValue) -> SSAValue:
        """A value in loop space as the tile the access stores: loop order → buffer
        order, unused loop dims dropped."""
        op = access.op
        assert isinstance(v.type, TensorType)
        used = access.loop_to_buffer()
        shape = list(v.type.get_shape())
        position = self.position
        for l in range(self.rank):
            if l not in used and shape[position[l]] != 1:
                raise PassError(
                    op,
                    f"tile: the stored value varies along loop dim {l}, which the "
                    "store's index does not use",
                )
        v = self.broadcast(v, self.loop_shape(access))
        walked = sorted(used.items(), key=lambda kv: kv[1])  # (loop dim, buffer dim)
        loop_order = sorted(used, key=position.__getitem__)
        perm = [loop_order.index(l) for l, _ in walked]
        if perm != list(range(len(perm))):
            tile = self.loop_shape(access)
            v = self.reshape(v, [tile[position[l]] for l in loop_order])
            v = self.add(tl.TransposeOp(v, perm))
        return self.reshape(v, self.tile_shape(access))

    def merged_offsets(self, access: Access) -> AffineMapAttr:
        """The offsets of an access through a lane-split view (`merged_into`) in the
        argument it splits: the view's split dims are one, whole in the tile after the
        first, so the offset along them is the first one's times the elements of the
        rest."""
        m = self.offsets(access).data
        k = access.merged_dims
        inner = math.prod(access.shape[-k + 1 :])
        results = (*m.results[:-k], m.results[-k] * inner)
        return AffineMapAttr(AffineMap(m.num_dims, m.num_symbols, results))

    def store(self, access: Access, v: SSAValue) -> None:
        op = access.op
        assert isinstance(op, ta.StoreOp)
        v = self.to_buffer_order(access, v)
        offsets = self.offsets(access)
        if access.merged_into is None:
            buffer = self.buffers[access.buffer]
        else:
            # The view's split dims (a, b, ...) are the argument's a * b * ... lanes.
            shape = self.tile_shape(access)
            k = access.merged_dims
            v = self.reshape(v, [*shape[:-k], math.prod(shape[-k:])])
            buffer = self.buffers[access.merged_into]
            offsets = self.merged_offsets(access)
        # A reduction split over sequential grid dims stores partial results that
        # the store combines (the value is a ta.reduce result: `split_dim` checked).
        accumulate = None
        if self.plan.sequential and not self.waits and op.value.owner in self.totals:
            accumulate = ReductionKind(op.value.owner.kind.data)
        self.add(tl.StoreOp(v, buffer, offsets, self.grid_ivs(), accumulate=accumulate))

    def iota(self, l: int, rank: int | None = None, dim: int | None = None) -> SSAValue:
        """Loop index `l` as an i32 tile: the indices this grid step covers along it,
        in loop space (or along `dim` of a tile of `rank` dims)."""
        t = self.full_shape()[l]
        dim = self.position[l] if dim is None else dim
        shape = [1] * (self.rank if rank is None else rank)
        shape[dim] = t
        in_grid = l < len(self.plan.grid) and self.plan.grid[l] > 1
        offset = AffineDimExpr(l) * t if in_grid else AffineConstantExpr(0)
        start = AffineMapAttr(AffineMap(len(self.plan.grid), 0, (offset,)))
        v = self.add(tl.IotaOp(dim, start, self.grid_ivs(), TensorType(i32, shape)))
        v.name_hint = self.loop.body.block.args[l].name_hint
        return v

    def makes_dot(self, mul: Operation) -> bool:
        """Whether `dot_dims` will find a matrix product in `mul`, from the loop dims
        its factors vary along and the tile sizes (before they are emitted)."""
        full = self.full_shape()
        xs, ys = (
            {l for l in ta.varying_dims(v, self.loop) if full[l] > 1}
            for v in mul.operands
        )
        return self.dot_dims_of(xs, ys, mul) is not None

    def dot_dims(self, mul: Operation) -> tuple[int | None, int, int, int] | None:
        """(batch, m, n, k) when `mul` multiplies an (m, k) tile by a (k, n) tile in loop
        space, both also along at most one batch dim (None without), and is summed over
        the reduction dims (several are one merged k; `k` the last): a matrix product,
        batched or not."""
        shapes = [self.shape_of(v) for v in mul.operands]
        if any(sh is None for sh in shapes):
            return None
        sx, sy = shapes  # type: ignore[misc]
        xs = {l for l, n in enumerate(sx) if n > 1}
        ys = {l for l, n in enumerate(sy) if n > 1}
        return self.dot_dims_of(xs, ys, mul)

    def dot_dims_of(
        self, xs: set[int], ys: set[int], mul: Operation
    ) -> tuple[int | None, int, int, int] | None:
        """`dot_dims` for factors varying (with tiles over 1) along `xs` and `ys`, over
        the reduction dims whose tiles are over 1 (a split dim of tile 1 is summed
        over the grid). Float rows of several dims merge (Mosaic reshapes (h, t, d) to
        (h * t, d) for any t: compiled for v5e and v6e at t = 3, 5, 7, 12, 64, 200, f32
        and bf16)."""
        full = self.full_shape()
        reduce_dims = range(len(self.loop.parallel_extents), self.rank)
        wide = [l for l in reduce_dims if full[l] > 1]
        return ta.matmul_dims(xs, ys, wide, isinstance(mul, arith.MuliOp))

    def dot(self, mul: Operation, reduce: ta.ReduceOp) -> SSAValue:
        """The reduction of a product as `tl.dot` (the MXU), in loop space."""
        b, m, n, k = self.dot_dims(mul)  # type: ignore[misc]
        x, y = (self.values[v] for v in mxu_factors(mul))
        ragged = self.ragged_split() if reduce in self.totals else None
        full = self.full_shape()
        batch = [] if b is None else [b]

        def arranged(v: SSAValue, dims: list[int]) -> SSAValue:
            # The tile's dims in loop order, then transposed into `dims`' order.
            order = sorted(dims)
            v = self.reshape(v, [full[l] for l in order])
            perm = [order.index(l) for l in dims]
            if perm != sorted(perm):
                v = self.add(tl.TransposeOp(v, perm))
            if ragged is None:
                return v
            # The MXU sums the padding of a ragged last k part: zero it, in the dot's
            # layout (where a (k, n) block is as it was loaded: the transposes to loop
            # space and back cancel).
            return self.masked(v, ragged, ReductionKind.SUM, axis=dims.index(ragged))

        ks = [l for l in range(len(self.loop.parallel_extents), self.rank) if full[l] > 1]
        sx, sy = (self.shape_of(v) for v in mul.operands)
        ms = sorted(
            {l for l, e in enumerate(sx) if e > 1}
            - {l for l, e in enumerate(sy) if e > 1}
        )
        lead = [full[l] for l in batch]
        if len(ks) == 1 and ms == [m]:
            a, bt = arranged(x, [*batch, m, k]), arranged(y, [*batch, k, n])
        else:
            # Several reduction dims are one k, and several row dims one m, merged
            # row-major in registers (`tl.reshape`s Mosaic does): (t, h, d) to
            # (t, h * d), (h, t, d) to (h * t, d).
            rows, depth = (math.prod(full[l] for l in dims) for dims in (ms, ks))
            a = self.reshape(arranged(x, [*batch, *ms, *ks]), [*lead, rows, depth])
            bt = self.reshape(arranged(y, [*batch, n, *ks]), [*lead, full[n], depth])
            bt = self.add(
                tl.TransposeOp(bt, [*range(len(batch)), len(batch) + 1, len(batch)])
            )
        # ta's product of f32 values is an f32 product; the MXU's default is one
        # bfloat16 pass (errors of 1e-1 measured on a v5e), so say so in the IR.
        f32 = isinstance(a.type.element_type, Float32Type)  # type: ignore[attr-defined]
        c = self.add(tl.DotOp(a, bt, DotPrecision.HIGHEST if f32 else None))
        if ms != [m]:
            c = self.reshape(c, [*lead, *(full[l] for l in ms), full[n]])
        dims = [*batch, *ms, n]
        order = sorted(dims)
        if order != dims:
            c = self.add(tl.TransposeOp(c, [dims.index(l) for l in order]))
        shape = [full[l] if l in dims else 1 for l in range(self.rank)]
        c = self.reshape(c, shape)
        want = reduce.result.type
        t = c.type
        assert isinstance(t, TensorType)
        if t.element_type != want:
            c = self.add(tl.ConvertOp(c, TensorType(want, shape)))
        return c

    def operand(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """A loop-space operand of `shape`: scalar constants are splatted, smaller
        tiles broadcast."""
        if value in self.scalar_constants:
            const = self.scalar_constants[value]
            key = (const.value, tuple(shape))
            if key not in self.constants:
                splat = DenseIntOrFPElementsAttr.from_list(
                    self.tensor(const.result, shape), [_scalar(const.value)]
                )
                self.constants[key] = self.add(arith.ConstantOp(splat))
            return self.constants[key]
        v = self.values[value]
        have = v.type.get_shape()  # type: ignore[attr-defined]
        if len(have) > len(shape):  # into the epilogue: the reduced dims are 1
            v = self.reshape(v, self.parallel_shape(have))
        elif len(have) < len(shape):  # a tile on the parallel dims, into loop space
            v = self.reshape(v, self.from_parallel_shape(have))
        return self.broadcast(v, shape)

    def shape_of(self, value: SSAValue) -> list[int] | None:
        if value in self.scalar_constants:
            return None
        if value not in self.values:
            if isinstance(value, BlockArgument) and value.block is self.loop.body.block:
                self.values[value] = self.iota(value.index)
            else:
                owner = value.owner
                where = owner if isinstance(owner, Operation) else self.loop
                raise PassError(where, "tile: a value from outside the loop")
        t = self.values[value].type
        assert isinstance(t, TensorType)
        return list(t.get_shape())

    def splat(self, value: int, elt: IntegerType, shape: Sequence[int]) -> SSAValue:
        key = (IntegerAttr(value, elt), tuple(shape))
        if key not in self.constants:
            attr = DenseIntOrFPElementsAttr.from_list(
                TensorType(elt, list(shape)), [value]
            )
            self.constants[key] = self.add(arith.ConstantOp(attr))
        return self.constants[key]

    def cast(self, op: Operation, v: SSAValue, shape: Sequence[int]) -> SSAValue:
        """An arith integer cast of a tile (`cast_tile`)."""
        return cast_tile(op, v, shape, self.add, self.splat)

    def emit(self) -> None:
        """Emit the loop body's ops in order, each by the handler for its kind (see
        `_HANDLERS`); a reduction of a product that is a matrix product is one `tl.dot`."""
        contractions = {
            op: mul
            for op in self.loop.body.block.ops
            if (mul := ta.contraction(op)) is not None
        }
        products = set(contractions.values())
        self.on_parallel_dims = any(self.makes_dot(mul) for mul in products)
        if not self.on_parallel_dims:
            self.order = self.value_order()
        as_dot: set[Operation] = set()
        n_par = len(self.loop.parallel_extents)
        split = any(
            t < e for t, e in list(zip(self.plan.tiles, self.loop.extents))[n_par:]
        )
        self.epilogue = set(epilogue_ops(self.loop) or ())
        self.waits = split and bool(self.epilogue)
        self.totals = set(totals(self.loop))
        body = list(self.loop.body.block.ops)
        # The epilogue runs after everything else (nothing else uses what it
        # computes), in tl.on_last_step when it waits.
        body = [op for op in body if op not in self.epilogue] + [
            op for op in body if op in self.epilogue
        ]
        for op in body:
            if op in self.skip:
                continue  # an index read and its casts: gathers read it as a scalar
            waiting = isinstance(self.block.parent_op(), tl.OnLastStepOp)
            if self.waits and op in self.epilogue and not waiting:
                last_step = tl.OnLastStepOp(Region(Block()))
                self.add(last_step)
                self.block = last_step.body.block
            if op in products and self.on_parallel_dims and self.dot_dims(op) is not None:
                as_dot.add(op)  # emitted as a dot by the reduction that consumes it
                continue
            if op in contractions and contractions[op] in as_dot:
                dot = self.dot(contractions[op], op)
                self.values[op.results[0]] = self.running_total(op, dot)
                continue
            handler = _HANDLERS.get(type(op))
            if handler is None and op.dialect_name() in ELEMENTWISE_DIALECTS:
                handler = Emitter.emit_elementwise
            if handler is None:
                raise PassError(op, f"tile: '{op.name}' is not tiled yet")
            handler(self, op)

    def emit_load(self, op: ta.LoadOp) -> None:
        if op in self.dma:
            self.values[op.result] = self.gather_rows(self.dma[op])
        else:
            self.values[op.result] = self.load(self.accesses[op])
        self.values[op.result].name_hint = op.result.name_hint

    def emit_store(self, op: ta.StoreOp) -> None:
        shape = self.shape_of(op.value) or [1] * self.rank
        if isinstance(op.value.owner, ta.ReduceOp) and len(shape) == self.rank:
            # a reduction reduced without a parallel dim is stored along it
            reduced = self.reduced_positions()
            full = self.in_tile_order(self.full_shape())
            shape = [n if p in reduced else full[p] for p, n in enumerate(shape)]
        if len(shape) < self.rank:  # an epilogue's value: back to loop space
            v = self.reshape(self.values[op.value], self.from_parallel_shape(shape))
            self.store(self.accesses[op], v)
            return
        if op in self.dma:
            self.scatter_rows(self.dma[op], self.operand(op.value, shape))
        else:
            self.store(self.accesses[op], self.operand(op.value, shape))

    def emit_reduce(self, op: ta.ReduceOp) -> None:
        n_par = self.n_par
        reduce_dims = self.reduced_positions(op)
        full = self.in_tile_order(self.full_shape())
        shape = full
        natural = self.shape_of(op.value)
        kind = ReductionKind(op.kind.data)
        if not self.plan.sequential and natural is not None and len(natural) == self.rank:
            # A value that does not vary along a parallel dim is reduced without it:
            # a row statistic in a matrix product's prologue is (m, 1), not (m, n).
            shape = [full[p] if p in reduce_dims else n for p, n in enumerate(natural)]
        if op.partial:
            # Nor along the reduction dims it does not combine over: a row's loss
            # summed over the rows is (1, m, 1), not broadcast along the row's lanes.
            kept = set(self.reduced_positions()) - set(reduce_dims)
            have = natural if natural is not None and len(natural) == self.rank else None
            shape = [
                (have[p] if have else 1) if p in kept else n for p, n in enumerate(shape)
            ]
        if kind.idempotent and natural is not None and len(natural) == self.rank:
            # Nor is a max or min broadcast along the reduced dims it does not vary
            # along (Mosaic has no lane broadcast of a (..., 128, 1) value to reduce).
            shape = [natural[p] if p in reduce_dims else n for p, n in enumerate(shape)]
        source = self.operand(op.value, shape)
        if op in self.totals and (ragged := self.ragged_split()) is not None:
            source = self.masked(source, ragged, kind)
        if kind.returns_index and len(reduce_dims) > 1:
            # argmax/argmin of a split reduction: its dims are the last ones (the
            # loop's order: `value_order`), so merging them row-major gives torch's
            # flat position.
            merged = [*shape[:n_par], math.prod(full[n_par:])]
            r = tl.ReduceOp(kind, self.reshape(source, merged), [n_par])
            self.add(r)
            value = self.reshape(r.result, [*shape[:n_par], *[1] * len(reduce_dims)])
        else:
            r = tl.ReduceOp(kind, source, reduce_dims)
            value = self.add(r)
        self.values[op.result] = self.running_total(op, value)

    def ragged_split(self) -> int | None:
        """The split reduction dim whose last tile runs past its end, if any (a loop
        of per-row reductions reduced again: `access.split_masked`)."""
        for l in range(self.n_par, self.rank):
            t, e = self.plan.tiles[l], self.loop.extents[l]
            if t < e and e % t:
                return l
        return None

    def masked(
        self, v: SSAValue, l: int, kind: ReductionKind, axis: int | None = None
    ) -> SSAValue:
        """`v` with its points past the end of loop dim `l` (the padding of the dim's
        last tile, which holds whatever the block read there) set to `kind`'s
        identity, so that a reduction over them changes nothing. `v` is in loop
        space, or has loop dim `l` along `axis`."""
        t = v.type
        assert isinstance(t, TensorType)
        shape = list(t.get_shape())
        index = self.iota(l) if axis is None else self.iota(l, len(shape), axis)
        end = self.splat(self.loop.extents[l], i32, index.type.get_shape())  # type: ignore[attr-defined]
        inside = self.add(tl.CompareOp(ComparePredicate.SLT, index, end))
        identity = DenseIntOrFPElementsAttr.from_list(
            TensorType(t.element_type, shape), [kind.identity(t.element_type)]
        )
        fill = self.add(arith.ConstantOp(identity))
        return self.add(tl.SelectOp(self.broadcast(inside, shape), v, fill))

    def running_total(self, op: ta.ReduceOp, partial: SSAValue) -> SSAValue:
        """A reduction's value in the tile: the step's partial result, or, when an
        epilogue waits for it, its `tl.accumulate` total over the split dim."""
        value = partial
        if self.waits and op in self.totals:
            # on the parallel dims, as the epilogue computes (the reduced dims are 1)
            kept = self.reshape(partial, self.parallel_shape(partial.type.get_shape()))  # type: ignore[attr-defined]
            value = self.add(tl.AccumulateOp(ReductionKind(op.kind.data), kept))
        value.name_hint = op.result.name_hint
        return value

    def emit_constant(self, op: arith.ConstantOp) -> None:
        if isinstance(op.result.type, TensorType):
            self.emit_elementwise(op)
        else:
            self.scalar_constants[op.result] = op  # splatted where it is used

    def emit_elementwise(self, op: Operation) -> None:
        """An arith or math op on tiles, its operands broadcast to one shape."""
        shapes = [s for s in map(self.shape_of, op.operands) if s is not None]
        if not shapes:
            raise PassError(op, "tile: an op on constants only is not tiled yet")
        rank = max(map(len, shapes))
        # a tile of the parallel dims only, beside tiles of every loop dim
        shapes = [
            self.from_parallel_shape(s)
            if len(s) < rank == self.rank
            else [*s, *[1] * (rank - len(s))]
            for s in shapes
        ]
        reduced = self.reduced_positions()
        if op in self.epilogue or (
            self.on_parallel_dims
            and all(s[p] == 1 for s in shapes if len(s) == self.rank for p in reduced)
            and all(_is_32_bit(v.type) for v in (*op.operands, *op.results))
        ):
            # Computed on the parallel dims only: the reduced ones are 1 (after the
            # reduction, or in a product's kernel for values that do not vary along
            # them), and tiles with unit minor dims would waste 127 of 128 lanes.
            shapes = [
                self.parallel_shape(s) if len(s) == self.rank else s for s in shapes
            ]
        shape = [max(dims) for dims in zip(*shapes)]
        operands = [self.operand(o, shape) for o in op.operands]
        if isinstance(op, SCALAR_ONLY_CASTS):
            # arith integer casts take scalars only: a tile is converted.
            self.values[op.results[0]] = self.cast(op, operands[0], shape)
            self.values[op.results[0]].name_hint = op.results[0].name_hint
            return
        if isinstance(op, arith.SelectOp):
            new = tl.SelectOp(*operands)  # arith.select takes an i1 scalar
        elif isinstance(op, arith.CmpfOp | arith.CmpiOp):
            new = tl.CompareOp(_predicate(op), *operands)  # an i1 scalar too
        else:
            new = type(op).create(
                operands=operands,
                result_types=[self.tensor(r, shape) for r in op.results],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
        new.location = op.location
        self.add(new)
        for old_r, new_r in zip(op.results, new.results):
            new_r.name_hint = old_r.name_hint
            self.values[old_r] = new_r


def _is_32_bit(t: Attribute) -> bool:
    """A 32-bit element type: Mosaic reshapes its tiles between the parallel dims and
    loop space (16-bit and i1 tiles with a unit minor dim it rejects or aborts on)."""
    return getattr(t, "bitwidth", None) == 32


def cast_tile(
    op: Operation,
    v: SSAValue,
    shape: Sequence[int],
    add_op: Callable[[Operation], SSAValue],
    splat: Callable[[int, IntegerType, Sequence[int]], SSAValue],
) -> SSAValue:
    """An arith integer cast of a tile (`add_op` adds each op, `splat(value, elt,
    shape)` gives a constant tile): `tl.convert` (numpy `astype`), with the
    fix-ups where arith means otherwise: an i1 is signed (extsi/sitofp give -1), a
    cast to i1 keeps the low bit, and extui/uitofp/fptoui read the integer as
    unsigned (a mask below 32 bits, `uiN` elements from 32 bits)."""
    src = v.type.element_type  # type: ignore[attr-defined]
    dst = op.results[0].type
    loc = op.location

    def add(new: Operation) -> SSAValue:
        new.location = loc
        return add_op(new)

    def convert(x: SSAValue, elt: Attribute) -> SSAValue:
        if x.type.element_type == elt:  # type: ignore[attr-defined]
            return x
        return add(tl.ConvertOp(x, TensorType(elt, list(shape))))

    def width(t: Attribute) -> int:
        return t.width.data if isinstance(t, IntegerType) else 64

    unsigned = isinstance(op, arith.ExtUIOp | arith.UIToFPOp | arith.FPToUIOp)
    if dst == i1 and src != i1:
        x = v if isinstance(src, IntegerType | IndexType) else convert(v, i32)
        elt = x.type.element_type  # type: ignore[attr-defined]
        return convert(add(arith.AndIOp(x, splat(1, elt, shape))), i1)
    if src == i1:
        r = convert(v, dst)
        if unsigned or isinstance(op, arith.IndexCastOp):
            return r
        if isinstance(dst, IntegerType | IndexType):
            return add(arith.SubiOp(splat(0, dst, shape), r))  # type: ignore[arg-type]
        return add(arith.NegfOp(r))
    if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
        n = width(src)
        if n >= 32:
            return convert(convert(v, IntegerType(n, Signedness.UNSIGNED)), dst)
        wide = dst if isinstance(op, arith.ExtUIOp) else i32
        x = convert(v, wide)
        x = add(arith.AndIOp(x, splat((1 << n) - 1, wide, shape)))  # type: ignore[arg-type]
        return convert(x, dst)
    if isinstance(op, arith.FPToUIOp):
        n = width(dst)
        via = i32 if n < 32 else IntegerType(n, Signedness.UNSIGNED)
        return convert(convert(v, via), dst)
    return convert(v, dst)


_HANDLERS: dict[type[Operation], Callable[[Emitter, Any], None]] = {
    ta.LoadOp: Emitter.emit_load,
    ta.StoreOp: Emitter.emit_store,
    ta.ReduceOp: Emitter.emit_reduce,
    arith.ConstantOp: Emitter.emit_constant,
}
"""The emitter of each op kind of a `ta.loop` body; other arith and math ops are
element-wise (`Emitter.emit_elementwise`)."""


def simplify(grid: tl.GridOp) -> None:
    """Fold the layout moves that loop-space conversion leaves back to back (e.g. a
    tile transposed into loop order and back for a dot) and drop the unit dims of the
    compute between reshapes: the canonicalization patterns of the reshape and
    transpose ops tl shares with pallas (their traits' own lists)."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(
            [
                *ReshapeHasCanonicalizationPatterns.get_canonicalization_patterns(),
                *TransposeHasCanonicalizationPatterns.get_canonicalization_patterns(),
            ]
        ),
    ).rewrite_region(grid.body)


def _scalar(attr: Attribute) -> float | int:
    assert isinstance(attr, FloatAttr | IntegerAttr)
    return attr.value.data


def relaunch(
    module: ModuleOp,
    kernel: ta.KernelOp,
    views: list[ta.ReshapeOp],
    stored: list[Storage],
    kept: list[int],
) -> None:
    """Pass each in-kernel view as an argument (reshaped on the host before the
    launch), and each argument read as host storage as the host value of that shape;
    of those and the original arguments, only the `kept` positions (a host reshape
    that only fed a dropped one goes too)."""
    if not views and not stored and len(kept) == len(kernel.body.block.args):
        return
    for launch in ta.kernel_launches(module, kernel):
        block = launch.parent_block()
        assert block is not None
        extra: list[SSAValue] = []
        for v in views:
            chain = []
            value: SSAValue = v.result
            while isinstance(value.owner, ta.ReshapeOp):
                chain.append(value.owner)
                value = value.owner.source
            assert isinstance(value, BlockArgument)
            host_value = launch.args[value.index]
            for r in reversed(chain):
                reshape = ta.ReshapeOp(host_value, r.result.type)  # type: ignore[arg-type]
                block.insert_op_before(reshape, launch)
                host_value = reshape.result
            extra.append(host_value)
        for st in stored:
            host_value = launch.args[st.root]
            if st.reshape:
                reshape = ta.ReshapeOp(host_value, st.type)
                block.insert_op_before(reshape, launch)
                extra.append(reshape.result)
                continue
            while host_value.type != st.type:
                owner = host_value.owner
                assert isinstance(owner, ta.ReshapeOp)  # host_storage found it
                host_value = owner.source
            extra.append(host_value)
        operands = [*launch.args, *extra]
        new = ta.LaunchOp(kernel.sym_name.data, [operands[k] for k in kept])
        new.location = launch.location
        block.insert_op_before(new, launch)
        block.erase_op(launch)
        for value in dict.fromkeys(operands):  # the host reshapes of dropped arguments
            while isinstance(owner := value.owner, ta.ReshapeOp) and not value.uses:
                value = owner.source
                owner.detach()
                owner.erase()


def emit_kernel(
    kernel: ta.KernelOp, plan: TilePlan
) -> tuple[tl.KernelOp, list[ta.ReshapeOp], list[Storage], list[int]]:
    """The `tl.kernel` that `plan` tiles `kernel` into (not inserted anywhere), with the
    in-kernel views and host storage it takes as extra arguments, and the positions,
    among the original arguments, views and storage, of those its tiles use: an
    argument read only through a view or as host storage is dropped. Raises a located
    `PassError` for a body op the tiler has no tile form of."""
    loop = next(o for o in kernel.body.block.ops if isinstance(o, ta.LoopOp))
    accesses, dma = plan.accesses, plan.dma
    # Kernel arguments: the original ones, then one per in-kernel view (reshape) and
    # one per argument read as host storage; both become launch operands.
    args = list(kernel.body.block.args)
    views = [o for o in kernel.body.block.ops if isinstance(o, ta.ReshapeOp)]
    used = {a.merged_into or a.buffer for a in [*accesses.values(), *dma.values()]}
    used |= {index.buffer for a in accesses.values() for _, index in a.gathers}
    views = [v for v in views if v.result in used]
    stored = sorted(
        {
            b
            for a in accesses.values()
            for b in (a.buffer, a.merged_into)
            if isinstance(b, Storage)
        },
        key=lambda st: st.root,
    )
    roles = [kernel.role_of(a).value for a in args]
    for v in views:
        root = ta.root_buffer(v.result)
        roles.append(kernel.role_of(root).value)  # type: ignore[arg-type]
    roles += [kernel.role_of(args[st.root]).value for st in stored]
    types = [a.type for a in args] + [v.result.type for v in views]
    types += [st.type for st in stored]
    new_kernel = tl.KernelOp(kernel.sym_name.data, types, roles)
    kblock = new_kernel.body.block
    buffers: dict[SSAValue | Storage, SSAValue] = {}
    keys: list[SSAValue | Storage] = [*args, *(v.result for v in views), *stored]
    for old, new in zip(keys, kblock.args):
        buffers[old] = new
        if isinstance(old, Storage):
            new.name_hint = args[old.root].name_hint
        else:
            new.name_hint = old.name_hint
    n_parallel = len(plan.grid) - plan.sequential
    semantics = [tl.GridSemantics.PARALLEL] * n_parallel
    semantics += [tl.GridSemantics.SEQUENTIAL] * plan.sequential
    grid = tl.GridOp(plan.grid, semantics)
    for k, iv in enumerate(grid.body.block.args):
        iv.name_hint = "ijklmn"[k] if k < 6 else f"g{k}"
    kblock.add_op(grid)
    Emitter(loop, plan, buffers, grid.body.block).emit()
    simplify(grid)
    # The accesses read their buffers as views or host storage: the original argument
    # no tile reads or writes any more is not passed.
    kept = [k for k, a in enumerate(kblock.args) if a.uses]
    for a in [a for a in kblock.args if not a.uses]:
        kblock.erase_arg(a)
    new_kernel.set_roles([roles[k] for k in kept])
    new_kernel.location = kernel.location
    return new_kernel, views, stored, kept


@dataclass(frozen=True)
class BodySize:
    """What the values of a tiled kernel body take."""

    vmem: int
    """VMEM beside the blocks (`body_vmem_bytes`)."""
    largest: int
    """Elements of the largest value (`tpu_rules.BODY_VALUE_ELEMENTS`)."""


def body_size(kernel: ta.KernelOp, plan: TilePlan) -> BodySize | Rejection:
    """The size of the values of the body that `plan` builds, or why it does not build
    (an op with no tile form): a dry run of `emit_kernel` that leaves the module as it
    was."""
    try:
        new_kernel, _, _, _ = emit_kernel(kernel, plan)
    except PassError as e:
        return Rejection.of(e)
    ops = list(new_kernel.walk())
    largest = max(
        (
            math.prod(r.type.get_shape())
            for op in ops
            for r in op.results
            if isinstance(r.type, TensorType)
        ),
        default=0,
    )
    found = BodySize(body_vmem_bytes(ops), largest)
    new_kernel.erase()
    return found


def build_kernel(module: ModuleOp, kernel: ta.KernelOp, plan: TilePlan) -> None:
    """Replace `kernel` by the `tl.kernel` that `plan` tiles it into, and pass the views
    and host storage its tiles read at every launch. Raises a located `PassError` (and
    leaves the module as it was) for a body op the tiler has no tile form of."""
    new_kernel, views, stored, kept = emit_kernel(kernel, plan)
    loop = next(o for o in kernel.body.block.ops if isinstance(o, ta.LoopOp))
    accesses, dma, resident = plan.accesses, plan.dma, plan.resident
    budget = plan.budget
    emit_remark(
        loop,
        f"tile: @{kernel.sym_name.data}: tiles {plan.tiles} over loop "
        f"{list(loop.extents)}, grid {plan.grid}",
    )
    for op, a in dma.items():
        found = lookup_dims(a.gathers[0][1])
        assert found is not None
        rows = plan.tiles[found[0]]
        if a.is_store:
            emit_remark(op, f"tile: row scatter by row DMA, {rows} rows per grid step")
            continue
        strategy = ta.gather_strategy(a.op)
        if op in resident:
            emit_remark(
                op,
                f"tile: gather from a VMEM-resident table ({resident[op] // 2} B, "
                f"fetched once), {rows} rows per grid step by local row copies",
            )
            continue
        asked = {
            ta.GatherStrategy.DMA: "",
            ta.GatherStrategy.DMA_CHUNKED: " (indices streamed to SMEM in chunks of 1024)",
            ta.GatherStrategy.VMEM: " (the table, double-buffered, needs more than half of the "
            f"{budget} B VMEM budget to stay resident)",
        }[strategy]  # type: ignore[index]
        emit_remark(op, f"tile: gather by row DMA, {rows} rows per grid step{asked}")
    for a in accesses.values():
        strategy = ta.gather_strategy(a.op)
        if strategy is not None and strategy != ta.GatherStrategy.PREFETCH:
            why = (
                "which needs indices read one lookup at a time and whole rows of "
                "the table's leading dims"
                if rows_by_dma(a.bits)
                else "but rows of 8-bit data pack four to a 32-bit sublane, so a "
                "row DMA would move four rows a lookup"
            )
            emit_remark(
                a.op,
                f"tile: gather asks for the {strategy.value} idiom, {why}; tiled "
                "with scalar prefetch (one row per grid step)",
            )
    module.body.block.insert_op_after(new_kernel, kernel)
    relaunch(module, kernel, views, stored, kept)
    module.body.block.erase_op(kernel)


def _predicate(op: arith.CmpfOp | arith.CmpiOp) -> ComparePredicate:
    predicate = arith_predicate(op)
    if predicate is None:
        raise PassError(op, "tile: a constant comparison is not tiled")
    return predicate
