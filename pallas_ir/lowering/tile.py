"""tile: ta → tl. Pick a tile size for every loop dim and rewrite each `ta.loop` as a
`tl.grid` of whole-tile loads, compute and stores.

The policy is deterministic:

1. Accesses. Every access must be a projected permutation with constant offsets (each
   index `d + c` or `c`; the ta passes bring strided, flat and collapsed accesses there),
   except that an access through a reshape of a kernel argument that the host holds as
   N-D storage is re-read as a strided walk of that storage when the TPU allows it
   (steps on leading dims, and sublane steps of 32-bit data): no host relayout. Gathers
   marked by indirect-load-to-scalar-prefetch read their indices with `tl.scalar_load`
   and take one row per grid step along the dims those indices depend on (the
   scalar-prefetch idiom); buffers that then take one row of a second-minor dim are
   viewed as `(..., A, 1, B)`; gathers marked `dma`/`vmem` take whole rows by row DMA
   (one index buffer per gathered leading dim). Any other access goes to XLA through
   `xla_fallback`, with a remark saying why: with a static index in a kernel that has
   no matrix product and no gather, the whole kernel runs on XLA as one fusion;
   otherwise the access moves to an XLA kernel and the rest is tiled. A kernel with
   64-bit data or a product reduction (Mosaic has none), or one no tiling fits, runs on
   XLA whole.
2. Legality. A loop dim's tile must be legal for every buffer dim it walks: on a lane
   (last) dim a multiple of 128, on a sublane dim a multiple of the dtype's rows (8 for
   32-bit, 16 for 16-bit, 32 for 8-bit), on a rank-1 buffer a multiple of 1024 or a
   power of two of at least 128 * 32 / bits; or the whole extent in one tile (at a
   constant offset, which tl-to-pallas turns into a whole-dim block and a static slice).
   Offsets stay block-aligned, and stores may not write past their loop's extent inside
   a larger buffer. A sublane-strided read forces 128-lane tiles.
3. Size. Among legal sizes, the largest up to 512 for lane dims and 256 for sublane dims
   (1 for leading dims); then the largest tile steps down to its next legal size until
   no block is over 1 MiB (so the pipeline has several steps to overlap) and the
   double-buffered blocks of all accesses fit the VMEM budget.
4. Reductions are kept whole in the tile and reduced in the kernel. When that cannot fit
   the budget and the loop's single reduction is only stored (not reused, as softmax
   reuses its sums), it is split: its tiles divide it, it becomes the last grid dim,
   sequential, and the stores accumulate. Parallel dims become parallel grid dims,
   `cdiv(extent, tile)` long.
5. Contractions. A sum over k of the product of an (m, k) and a (k, n) tile is a
   `tl.dot` (the MXU, accumulating in f32).

Values are computed in loop space (one tensor dim per loop dim, size 1 where a value does
not vary); loads are reshaped and transposed into it, stores out of it, and operands are
broadcast where an op needs equal shapes; back-to-back reshapes and transposes are folded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pallas_ir.affine_analysis import (
    LinearExpr,
    decompose_on_shape,
    flat_offset,
    linearize,
)
from pallas_ir.diagnostics import PassError, count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import FLOAT_PREDICATES, INT_PREDICATES, ReductionKind
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.xla_fallback import (
    outline_index,
    outline_load,
    outline_store,
    run_on_xla,
)
from pallas_ir.tpu_rules import (
    CHIPS,
    LANES,
    MAX_ELEMENT_BITS,
    min_sublanes,
    reshape_is_free,
    rows_per_sublane,
)

LANE_TARGET = 512
SUBLANE_TARGET = 256
BLOCK_BYTES = 1 << 20
# Row-DMA gathers unroll one DMA per row and grid step.
MAX_UNROLLED_ROWS = 128


@dataclass(frozen=True)
class _Storage:
    """A kernel argument seen as the N-D storage the host already holds it in: the
    `tl.kernel` gets it as an extra argument, so no reshape (a TPU relayout) is needed."""

    root: int
    """The ta.kernel argument it is."""
    type: MemRefType
    reshape: bool = False
    """True: the host reshapes the launch operand to `type` (a relayout on TPU when the
    last two dims change); False: the host already holds it with this shape."""


@dataclass(frozen=True)
class _Access:
    op: ta.LoadOp | ta.StoreOp
    buffer: SSAValue | _Storage
    shape: tuple[int, ...]
    bits: int
    dims: tuple[tuple[int | None, int], ...]
    """Per buffer dim: the loop dim that walks it (None for a constant index), and the
    constant offset."""
    steps: tuple[int, ...] = ()
    """Per buffer dim, the step of its walk (all 1 unless the access is a strided view
    of host storage)."""
    gathers: tuple[tuple[int, ta.LoadOp], ...] = ()
    """(buffer dim, the load of the index buffer) for each dim a prefetched index picks."""
    merged_into: SSAValue | None = None
    """For a store through a view that splits its argument's last dim in two: the
    argument, which the kernel stores with the tile's last two dims merged (see
    `_merge_lane_split_stores`)."""

    @property
    def is_store(self) -> bool:
        return isinstance(self.op, ta.StoreOp)

    def step(self, b: int) -> int:
        return self.steps[b] if self.steps else 1

    @property
    def sublane_strided(self) -> bool:
        return len(self.shape) >= 2 and self.step(len(self.shape) - 2) > 1

    def loop_to_buffer(self) -> dict[int, int]:
        return {l: b for b, (l, _) in enumerate(self.dims) if l is not None}

    def with_unit_dim(self, view: _Storage) -> _Access:
        """The access on the view `(..., A, 1, B)` of its buffer `(..., A, B)`: a block of
        one row of A is then legal (A is no longer the second-minor dim)."""
        k = len(self.shape) - 1
        return _Access(
            self.op,
            view,
            (*self.shape[:k], 1, self.shape[k]),
            self.bits,
            (*self.dims[:k], (None, 0), self.dims[k]),
            (*self.steps[:k], 1, self.steps[k]) if self.steps else (),
            self.gathers,
        )


def _splittable(loop: ta.LoopOp) -> bool:
    """Whether the loop's reduction can be split over a sequential grid dim: one
    reduction dim, combinable kinds (not argmax/argmin), and reduction results that are
    only stored (a softmax, which reuses its sums on the whole row, cannot)."""
    if len(loop.reduce_extents) != 1:
        return False
    reduce_var = loop.body.block.args[-1]
    for op in loop.body.block.ops:
        if isinstance(op, ta.ReduceOp):
            if ReductionKind(op.kind.data).returns_index:
                return False
            if any(not isinstance(u.operation, ta.StoreOp) for u in op.result.uses):
                return False
        if isinstance(op, ta.StoreOp) and reduce_var in op.dims:
            positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
            if positions.index(reduce_var.index) in op.map.data.used_dims():
                return False
    return True


def _contraction(op: Operation) -> Operation | None:
    """The product a `ta.reduce <sum>` sums, when that product has no other use: a
    candidate for a matrix product."""
    if (
        not isinstance(op, ta.ReduceOp)
        or ReductionKind(op.kind.data) != ReductionKind.SUM
    ):
        return None
    mul = op.value.owner
    if (
        not isinstance(mul, arith.MulfOp | arith.MuliOp)
        or len(list(mul.result.uses)) != 1
    ):
        return None
    return mul


def _lookup_dims(index: ta.LoadOp) -> tuple[int, dict[int, int], int] | None:
    """For an index read at row-major position `sum(c_l * l) + c0` of its kernel
    argument (directly or through a view; `tl.gather` reads index buffers flat) with
    exactly one loop dim at coefficient 1 (the lookup dim, whose consecutive points read
    consecutive indices) and positive coefficients: (lookup dim, {loop dim:
    coefficient}, c0)."""
    root = ta.root_buffer(index.buffer)
    if not isinstance(root.type, MemRefType):
        return None
    view = index.buffer.type
    assert isinstance(view, MemRefType)
    lin = flat_offset(index.map.data.results, view.get_shape())
    if lin is None or lin.symbols or any(c <= 0 for c in lin.dims.values()):
        return None
    coefficients = {index.dims[p].index: c for p, c in lin.dims.items()}  # type: ignore[attr-defined]
    unit = [l for l, c in coefficients.items() if c == 1]
    if len(unit) != 1:
        return None
    return unit[0], coefficients, lin.constant


def _row_gather(
    a: _Access, extents: Sequence[int], n_parallel: int
) -> tuple[int, list[int], dict[int, list[int]]] | None:
    """(lookup loop dim, the rows per grid step to try, best first, the tiles to try for
    the other loop dims the index depends on: one point per step, but for the bag dim of
    an embedding bag, below) when a gather can be done by
    row DMAs: it asks for `dma` (or `vmem`, `dma_chunked`), picks rows of the table's
    leading dims (one index buffer each, `x[i0, i1]`) with indices read at consecutive
    positions along one loop dim (`idx[i + c]`, or `idx[16 * b + t]` for an index of
    rank 2 stored flat), the same positions for every index buffer, and takes whole
    rows."""
    strategy = a.op.attributes.get("gather")
    if not isinstance(strategy, StringAttr) or strategy.data not in (
        "dma",
        "vmem",
        "dma_chunked",
    ):
        return None
    if not _rows_by_dma(a.bits):
        return None
    picked = len(a.gathers)
    if [b for b, _ in a.gathers] != list(range(picked)):
        return None
    found = _lookup_dims(a.gathers[0][1])
    if found is None or any(_lookup_dims(i) != found for _, i in a.gathers[1:]):
        return None  # several index buffers must be read at the same positions
    lookup, coefficients, _ = found
    if any(l >= n_parallel for l in coefficients if l != lookup):
        return None
    if lookup >= n_parallel and extents[lookup] > MAX_UNROLLED_ROWS:
        return None  # an embedding bag's rows come whole, one DMA each, per step
    for b, (l, c) in enumerate(a.dims[picked:], start=picked):
        if l is None or c != 0 or extents[l] != a.shape[b]:
            return None
    e = extents[lookup]
    # 8 rows fill a sublane tile (16 for 16-bit data; a ragged last step repeats the
    # last lookup into the tile's padding). When another access walks the lookup dim
    # along its lanes (a rank-1 output), only the whole dim is a legal block; its DMAs
    # are unrolled, so that is bounded.
    sublanes = _block_rows(a.bits)
    preferred = sublanes if e >= sublanes else 1
    rows = [preferred] + ([e] if preferred < e <= MAX_UNROLLED_ROWS else [])
    others = {l: [1] for l in coefficients if l != lookup}
    if lookup >= n_parallel:
        # Along a reduction dim (an embedding bag: each bag sums rows idx[4 * b + k]):
        # all of a bag's rows in one step, reduced in the kernel. When consecutive bags
        # read consecutive indices (the bag dim's coefficient is the bag size), 8 bags
        # (a sublane tile of the output) take one step: their rows are consecutive too.
        rows = [e]
        bags = [l for l, c in coefficients.items() if l != lookup and c == e]
        if len(others) == 1 and bags:
            (bag,) = bags
            sizes = [t for t in (8, 16, 32) if t * e <= MAX_UNROLLED_ROWS]
            whole = [extents[bag]] if extents[bag] * e <= MAX_UNROLLED_ROWS else []
            others[bag] = [t for t in sizes if t < extents[bag]] + whole + [1]
    return lookup, rows, others


def _block_rows(bits: int) -> int:
    """The rows a tiled second-minor dim takes: the TPU minimum (8, 32 for 8-bit data),
    16 for 16-bit data (a whole packed tile, the tiler's choice)."""
    return max(min_sublanes(bits), 16 if bits == 16 else 0)


def _rows_by_dma(bits: int) -> bool:
    """Whether gathered rows of this width come by row DMA. Rows of 16-bit data pack
    two to a 32-bit sublane, which a DMA cannot split: each lookup copies the pair (2x
    the bytes). Of 8-bit data four rows share a sublane: 4x the bytes, more than an XLA
    gather's extra pass (written and read again: 3x), so those go to XLA."""
    return bits >= 16


def _element_type(a: _Access) -> Attribute:
    """The element type of an access's buffer."""
    t = a.buffer.type
    assert isinstance(t, MemRefType)
    return t.element_type


def _index_load(symbol: SSAValue, where: Operation) -> ta.LoadOp:
    """The load of the index buffer a gather symbol comes from (through integer casts)."""
    value = symbol
    while isinstance(value.owner, arith.IndexCastOp | arith.ExtSIOp | arith.TruncIOp):
        value = value.owner.operands[0]
    if not isinstance(value.owner, ta.LoadOp) or value.owner.symbols:
        raise PassError(where, "tile: a gather index must be loaded from an index buffer")
    return value.owner


def _gather(op: ta.LoadOp) -> _Access:
    """A gather marked by indirect-load-to-scalar-prefetch: every index is a bare
    symbol (a prefetched index picks one row) or a loop dim plus a constant."""
    strategy = op.attributes.get("gather")
    if not isinstance(strategy, StringAttr):
        raise PassError(
            op,
            "tile: the index depends on data and the load is not a gather "
            "(indirect-load-to-scalar-prefetch left it)",
        )
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
    dims: list[tuple[int | None, int]] = []
    gathers: list[tuple[int, ta.LoadOp]] = []
    for k, e in enumerate(op.map.data.results):
        lin = linearize(e)
        if (
            lin is not None
            and not lin.dims
            and list(lin.symbols.values()) == [1]
            and not lin.constant
        ):
            (q,) = lin.symbols
            gathers.append((k, _index_load(op.symbols[q], op)))
            dims.append((None, 0))
        elif (
            lin is not None
            and not lin.symbols
            and len(lin.dims) <= 1
            and set(lin.dims.values()) <= {1}
        ):
            dims.append(
                (positions[next(iter(lin.dims))] if lin.dims else None, lin.constant)
            )
        else:
            raise PassError(
                op, f"tile: gather index {k} ({e}) is neither an index nor a loop dim"
            )
    bits = numpy_dtype(t.element_type).itemsize * 8
    if not _rows_addressable(op):
        pack = rows_per_sublane(bits)
        raise PassError(
            op,
            f"tile: rows of {t.element_type} pack {pack} to a 32-bit sublane and the "
            f"gathered dim ({t.get_shape()[-2]} rows) is not a multiple of {pack}: no "
            "DMA or block addresses one row",
        )
    return _Access(
        op, op.buffer, tuple(t.get_shape()), bits, tuple(dims), (), tuple(gathers)
    )


def _rows_addressable(op: ta.LoadOp) -> bool:
    """Whether one row of the gathered table can be addressed at a dynamic row: not
    when rows of narrow data pack several to a 32-bit sublane and the gathered
    (second-minor) dim is not a multiple of that. Measured (libtpu 0.0.42.1): the HBM
    tiling of such a table (bf16 with 3, 17 or 33 rows) admits neither a row DMA nor a
    one-row block at a dynamic row."""
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    packed = rows_per_sublane(numpy_dtype(t.element_type).itemsize * 8)
    if packed <= 1 or len(shape) < 2:
        return True
    gathered = op.map.data.results[-2]
    lin = linearize(gathered)
    data_dependent = lin is None or bool(lin.symbols)
    return not data_dependent or shape[-2] % packed == 0


def _host_storage(module: ModuleOp, kernel: ta.KernelOp, index: int) -> MemRefType | None:
    """The N-D shape the host holds kernel argument `index` in at every launch: the
    storage shape nearest the host's own buffer along the chain of host reshapes."""
    found: set[MemRefType] = set()
    for launch in module.walk():
        if not isinstance(launch, ta.LaunchOp):
            continue
        if launch.callee.string_value() != kernel.sym_name.data:
            continue
        value: SSAValue = launch.args[index]
        chain = [value.type]
        while isinstance(value.owner, ta.ReshapeOp):
            value = value.owner.source
            chain.append(value.type)
        nd = [
            t
            for t in reversed(chain)
            if isinstance(t, MemRefType) and t.get_num_dims() >= 2
        ]
        if not nd:
            return None
        found.add(nd[0])
    return found.pop() if len(found) == 1 else None


def _flat_offset(op: ta.LoadOp | ta.StoreOp) -> LinearExpr | None:
    """The access's offset into the flat storage of its root argument, in loop dims."""
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    lin = flat_offset(op.map.data.results, t.get_shape())
    if lin is None or lin.symbols:
        return None
    positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
    in_loop: dict[int, int] = {}
    for p, c in lin.dims.items():
        in_loop[positions[p]] = in_loop.get(positions[p], 0) + c
    return LinearExpr({l: c for l, c in in_loop.items() if c}, {}, lin.constant)


def _on_storage(
    op: ta.LoadOp | ta.StoreOp, loop: ta.LoopOp, storage: MemRefType, root: int
) -> _Access | None:
    """The access as a strided walk of the host's storage shape, if that is legal on a
    TPU: steps only on loads; on the sublane dim with whole rows (copied by row DMA at
    one index of each leading dim per step) and on the lane dim (whole lanes read, then
    compacted), both only of 32-bit data."""
    offset = _flat_offset(op)
    if offset is None:
        return None
    extents = dict(enumerate(loop.extents))
    indices = decompose_on_shape(offset, extents, storage.get_shape())
    if indices is None:
        return None
    rank = len(indices)
    bits = numpy_dtype(storage.element_type).itemsize * 8
    for b, ix in enumerate(indices):
        if ix.step == 1:
            continue
        if isinstance(op, ta.StoreOp):
            return None
        if b == rank - 2 and bits != 32:
            # A row step of packed (8- or 16-bit) data: a DMA cannot take one row of a
            # sublane and Mosaic has no strided load of non-32-bit data (measured).
            return None
        if b == rank - 1 and (bits != 32 or any(i.step > 1 for i in indices[:-2])):
            # A lane step: the whole lanes are read and compacted in registers (no DMA
            # can skip lanes); only for 32-bit data, with at most a row step besides
            # (whole rows by row DMA, then compacted).
            return None
    return _Access(
        op,
        _Storage(root, storage),
        tuple(storage.get_shape()),
        bits,
        tuple((ix.dim, ix.offset) for ix in indices),
        tuple(ix.step for ix in indices),
    )


def _analyse(
    op: ta.LoadOp | ta.StoreOp, loop: ta.LoopOp, storage: dict[int, MemRefType]
) -> _Access:
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    if op.symbols:
        if not isinstance(op, ta.LoadOp):
            raise PassError(
                op, "tile: data-dependent stores (scatters) are not tiled yet"
            )
        return _gather(op)
    root = ta.root_buffer(op.buffer)
    index = root.index if isinstance(root, BlockArgument) else None
    if (
        index is not None
        and index in storage
        and storage[index] != t
        and (on_storage := _on_storage(op, loop, storage[index], index)) is not None
    ):
        return on_storage
    positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
    dims: list[tuple[int | None, int]] = []
    seen: set[int] = set()
    for k, e in enumerate(op.map.data.results):
        lin = linearize(e)
        if lin is None or len(lin.dims) > 1 or any(c != 1 for c in lin.dims.values()):
            raise PassError(
                op,
                f"tile: index {k} ({e}) is not a loop dim plus a constant; run "
                "stride-to-reshape and canonicalize-permutation first",
            )
        if not lin.dims:
            dims.append((None, lin.constant))
            continue
        (p,) = lin.dims
        l = positions[p]
        if l in seen:
            raise PassError(op, f"tile: loop dim {l} indexes two dims of one buffer")
        seen.add(l)
        dims.append((l, lin.constant))
    bits = numpy_dtype(t.element_type).itemsize * 8
    shape = tuple(t.get_shape())
    if isinstance(op, ta.StoreOp):
        for b in range(max(len(shape) - 2, 0), len(shape)):
            if dims[b][0] is None and shape[b] > 1:
                raise PassError(
                    op,
                    f"tile: the store writes one element of dim {b} ({shape[b]} "
                    "elements) where a block must hold the whole dim; masked stores are "
                    "not supported",
                )
    return _Access(op, op.buffer, shape, bits, tuple(dims))


def _legal(access: _Access, b: int, tile: int, extent: int) -> bool:
    """Whether walking buffer dim `b` with tiles of `tile` (over `extent` elements) gives
    blocks the TPU accepts and that keep the meaning."""
    n = access.shape[b]
    _, c = access.dims[b]
    rank = len(access.shape)
    step = access.step(b)
    if step > 1:
        # A strided walk (a load of host storage): one row per step on a leading dim
        # moves exactly what is used (the index map steps); rows of a rank-2 array are
        # copied one by one by row DMAs (tl-to-pallas), so any start will do; lanes are
        # read whole, `tile * step` of them, and compacted in the kernel.
        if b < rank - 2:
            return tile == 1
        if b == rank - 1:
            if access.sublane_strided:  # whole rows by row DMA, then compacted
                return tile >= extent and extent * step == n and c < step
            t = min(tile, extent)
            lanes = t * step  # the block's lanes, read whole
            return (
                (t % LANES == 0 or tile >= extent)
                and (lanes % LANES == 0 or lanes == n)
                and c % lanes < step
                and lanes <= n
            )
        return tile % 8 == 0 or tile >= extent
    if b == rank - 1 and access.sublane_strided:
        return tile >= extent and n == extent  # row DMAs copy whole rows
    if b < rank - 2 and access.sublane_strided:
        return tile == 1  # row DMAs of one leading index per step
    if tile >= extent:
        # One tile at a constant offset (tl-to-pallas widens it to the whole dim if it
        # must); a store must then cover the whole dim, or it would write the rest of
        # the widened block.
        return not access.is_store or (c == 0 and extent == n)
    if c % tile:
        return False  # offsets `g * tile + c` would not be block-aligned
    if access.is_store and extent % tile and c + extent != n:
        return False  # the last tile would write past the loop's part of the buffer
    if rank == 1:
        least = LANES * 32 // access.bits
        return tile % 1024 == 0 or (tile >= least and tile & (tile - 1) == 0)
    if b == rank - 1:
        return tile % LANES == 0
    if b == rank - 2:
        return tile % _block_rows(access.bits) == 0
    return True


def _candidates(extent: int) -> list[int]:
    sizes = {extent}
    k = 1
    while k < extent:
        sizes.add(k)
        k *= 2
    sizes.update(range(LANES, extent, LANES))
    return sorted(sizes)


@dataclass
class _Plan:
    tiles: list[int]
    grid: list[int]
    sequential: int = 0
    """How many trailing grid dims walk a split reduction (in order, sequentially)."""


def _choose_tiles(
    loop: ta.LoopOp,
    accesses: Sequence[_Access],
    budget: int,
    where: Operation,
    forced: dict[int, list[int]] | None = None,
    splittable: bool = False,
) -> _Plan:
    """Tile sizes and grid (see the module docstring). `splittable`: the loop's single
    reduction may be split over a sequential grid dim (its results are only stored)."""
    extents = list(loop.extents)
    n_par = len(loop.parallel_extents)
    options: list[list[int]] = []
    targets: list[int] = []
    for l, e in enumerate(extents):
        walks = [(a, a.loop_to_buffer()[l]) for a in accesses if l in a.loop_to_buffer()]
        if forced and l in forced:  # set by gathers: lookups per grid step, whole rows
            fits = [t for t in forced[l] if all(_legal(a, b, t, e) for a, b in walks)]
            legal = fits[:1]
        elif l >= n_par:
            # Whole first; a split reduction takes tiles that divide it (no padding may
            # enter a sum).
            parts = (
                [t for t in _candidates(e) if t < e and e % t == 0] if splittable else []
            )
            legal = [t for t in [*parts, e] if all(_legal(a, b, t, e) for a, b in walks)]
            if e not in legal:
                raise PassError(
                    where, f"tile: reduction dim {l} cannot be one whole block"
                )
        else:
            legal = [
                t for t in _candidates(e) if all(_legal(a, b, t, e) for a, b in walks)
            ]
        if not legal:
            # Blame an access that allows no tile on its own, so the tiler can move it
            # to XLA; otherwise the accesses only conflict with each other.
            alone = [
                a for a, b in walks if not any(_legal(a, b, t, e) for t in _candidates(e))
            ]
            raise PassError(
                alone[0].op if alone else where,
                f"tile: no legal tile size for loop dim {l} (extent {e})",
            )
        lane = any(b == len(a.shape) - 1 for a, b in walks)
        sublane = any(b == len(a.shape) - 2 for a, b in walks)
        targets.append(LANE_TARGET if lane else SUBLANE_TARGET if sublane else 1)
        options.append(legal)
    tiles = []
    for l, (legal, target) in enumerate(zip(options, targets)):
        fitting = [t for t in legal if t <= target]
        if l >= n_par:
            tiles.append(extents[l])  # reductions start whole
        else:
            tiles.append(max(fitting) if fitting else min(legal))

    def footprint() -> int:
        return sum(2 * _block_elements(a, tiles, extents) * a.bits // 8 for a in accesses)

    def largest_block() -> int:
        return max(
            (2 * _block_elements(a, tiles, extents) * a.bits // 8 for a in accesses),
            default=0,
        )

    # Blocks of about a MiB keep several grid steps in flight (DMA overlaps compute)
    # without wasting VMEM; the budget bounds them all together.
    while footprint() > budget or largest_block() > 2 * BLOCK_BYTES:
        shrinkable = [l for l in range(n_par) if options[l].index(tiles[l]) > 0]
        if footprint() > budget:
            # Over budget: a splittable reduction may be cut too (largest tile first, so
            # a long contraction is split before the output tile shrinks).
            shrinkable += [
                l for l in range(n_par, len(extents)) if options[l].index(tiles[l]) > 0
            ]
        if not shrinkable:
            if footprint() <= budget:
                break
            raise PassError(
                where,
                f"tile: the smallest legal tiles need {footprint()} bytes of VMEM, over the "
                f"budget of {budget}",
            )
        l = max(shrinkable, key=lambda k: tiles[k])
        tiles[l] = options[l][options[l].index(tiles[l]) - 1]
    grid = [-(-extents[l] // tiles[l]) for l in range(n_par)]
    split = [l for l in range(n_par, len(extents)) if tiles[l] < extents[l]]
    grid += [extents[l] // tiles[l] for l in split]
    return _Plan(tiles, grid or [1], len(split))


def _merge_lane_split_stores(
    accesses: dict[Operation, _Access], plan: _Plan, extents: Sequence[int]
) -> None:
    """A store through a view `(..., a, b)` of an argument `(..., a * b)` (a channels-last
    permute written flat: canonicalize-permutation splits the lane dim) would make the
    host relayout the view back into the argument after the kernel. When the tile holds
    the view's last two dims whole and its rows are a legal block of the argument, the
    kernel merges them in registers (a `tl.reshape` Mosaic does) and stores the
    argument itself."""
    for op, a in list(accesses.items()):
        view = a.buffer
        if not a.is_store or not isinstance(view, SSAValue):
            continue
        reshape = view.owner
        if not isinstance(reshape, ta.ReshapeOp) or not isinstance(
            reshape.source, BlockArgument
        ):
            continue
        arg = reshape.source
        shape, whole = a.shape, arg.type.get_shape()  # type: ignore[attr-defined]
        if (
            len(shape) != len(whole) + 1
            or len(shape) < 3
            or list(shape[:-2]) != list(whole[:-1])
            or shape[-2] * shape[-1] != whole[-1]
            or reshape_is_free(whole, shape, a.bits)
        ):
            continue
        split = a.dims[-2:]
        if any(
            l is None or c != 0 or plan.tiles[l] < extents[l] or extents[l] != n
            for (l, c), n in zip(split, shape[-2:])
        ):
            continue  # the tile must hold the split dims whole
        merged = replace(a, shape=tuple(whole), dims=(*a.dims[:-2], (None, 0)))
        l, _ = a.dims[-3]
        rows = 1 if l is None else plan.tiles[l]
        if (l is None and whole[-2] != 1) or (
            l is not None and not _legal(merged, len(whole) - 2, rows, extents[l])
        ):
            continue
        accesses[op] = replace(a, merged_into=arg)


def _block_elements(a: _Access, tiles: Sequence[int], extents: Sequence[int]) -> int:
    """Elements of VMEM an access's block takes: its tile, widened to the whole dim
    where the tile is the whole extent or a constant index on one of the last two dims,
    with its last dim padded to 128 lanes and the one before to whole sublane tiles, as
    VMEM holds it (a (128, 8192, 2) bf16 block takes 64x its 4 MiB: measured, the TPU
    compiler asks for 256 MiB)."""
    sizes = []
    for b, (l, _) in enumerate(a.dims):
        if l is None:
            sizes.append(1 if b < len(a.shape) - 2 else a.shape[b])
        else:
            sizes.append(a.shape[b] if tiles[l] >= extents[l] else tiles[l] * a.step(b))
    if sizes:
        sizes[-1] = -(-sizes[-1] // 128) * 128
    if len(sizes) >= 2:  # a VMEM tile is 8 sublanes of (packed) rows
        rows = 8 * rows_per_sublane(a.bits)
        sizes[-2] = -(-sizes[-2] // rows) * rows
    return math.prod(sizes)


# ---------------------------------------------------------------------------------------
# Emission


@dataclass
class _Emitter:
    loop: ta.LoopOp
    plan: _Plan
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
    resident: frozenset[Operation] = frozenset()
    """Gathers whose table stays whole in VMEM (G4)."""

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    @property
    def rank(self) -> int:
        return len(self.plan.tiles)

    def offsets(self, access: _Access) -> AffineMapAttr:
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

    def tile_shape(self, access: _Access) -> list[int]:
        extents = self.loop.extents
        return [
            1 if l is None else min(self.plan.tiles[l], extents[l])
            for l, _ in access.dims
        ]

    def loop_shape(self, access: _Access) -> list[int]:
        """The loop-space shape of an access's tile (1 where the loop dim is unused)."""
        used = access.loop_to_buffer()
        return [
            min(self.plan.tiles[l], self.loop.extents[l]) if l in used else 1
            for l in range(self.rank)
        ]

    def full_shape(self) -> list[int]:
        return [min(t, e) for t, e in zip(self.plan.tiles, self.loop.extents)]

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
        return self.block.args

    def load(self, access: _Access) -> SSAValue:
        op = access.op
        assert isinstance(op, ta.LoadOp)
        tile = TensorType(op.result.type, self.tile_shape(access))
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
        return self.to_loop_space(v, access, tile)

    def gather_rows(self, access: _Access) -> SSAValue:
        """A gather by row DMAs: `tl.gather` of the rows the lookups of this grid step
        name (see `_row_gather`), then into loop space like any tile."""
        indices = [index for _, index in access.gathers]
        found = _lookup_dims(indices[0])
        assert found is not None  # _row_gather checked
        lookup, coefficients, constant = found
        rows = self.plan.tiles[lookup]
        # Bags taken several per step (see _row_gather): their rows follow each other.
        bags = [l for l in coefficients if l != lookup and self.plan.tiles[l] > 1]
        for l in bags:
            assert coefficients[l] == rows  # _row_gather checked: consecutive bags
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
                # read flat (see _lookup_dims)
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

    def to_loop_space(self, v: SSAValue, access: _Access, tile: TensorType) -> SSAValue:
        """Buffer order → loop order: drop constant dims, transpose, add unused loop dims."""
        walked = [(b, l) for b, (l, _) in enumerate(access.dims) if l is not None]
        order = sorted(range(len(walked)), key=lambda k: walked[k][1])
        if order != list(range(len(walked))):
            v = self.reshape(v, [tile.get_shape()[b] for b, _ in walked])
            v = self.add(tl.TransposeOp(v, order))
        # Dropping and adding unit dims keeps the row-major order: one reshape.
        return self.reshape(v, self.loop_shape(access))

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

    def store(self, access: _Access, v: SSAValue) -> None:
        op = access.op
        assert isinstance(op, ta.StoreOp)
        assert isinstance(v.type, TensorType)
        used = access.loop_to_buffer()
        shape = list(v.type.get_shape())
        for l in range(self.rank):
            if l not in used and shape[l] != 1:
                raise PassError(
                    op,
                    f"tile: the stored value varies along loop dim {l}, which the "
                    "store's index does not use",
                )
        v = self.broadcast(v, self.loop_shape(access))
        walked = sorted(used.items(), key=lambda kv: kv[1])  # (loop dim, buffer dim)
        loop_order = sorted(used)
        perm = [loop_order.index(l) for l, _ in walked]
        if perm != list(range(len(perm))):
            v = self.reshape(v, [self.loop_shape(access)[l] for l in loop_order])
            v = self.add(tl.TransposeOp(v, perm))
        v = self.reshape(v, self.tile_shape(access))
        offsets = self.offsets(access)
        if access.merged_into is None:
            buffer = self.buffers[access.buffer]
        else:
            # The whole (a, b) of the view's last two dims is the argument's a * b.
            *lead, a, b = self.tile_shape(access)
            v = self.reshape(v, [*lead, a * b])
            buffer = self.buffers[access.merged_into]
            m = offsets.data
            offsets = AffineMapAttr(
                AffineMap(m.num_dims, m.num_symbols, (*m.results[:-2], m.results[-1]))
            )
        # A reduction split over sequential grid dims stores partial results that
        # the store combines (the value is a ta.reduce result: _splittable checked).
        accumulate = None
        if self.plan.sequential and isinstance(op.value.owner, ta.ReduceOp):
            accumulate = ReductionKind(op.value.owner.kind.data)
        self.add(tl.StoreOp(v, buffer, offsets, self.grid_ivs(), accumulate=accumulate))

    def iota(self, l: int) -> SSAValue:
        """Loop index `l` as an i32 tile: the indices this grid step covers along it."""
        t = self.full_shape()[l]
        shape = [1] * self.rank
        shape[l] = t
        in_grid = l < len(self.plan.grid) and self.plan.grid[l] > 1
        offset = AffineDimExpr(l) * t if in_grid else AffineConstantExpr(0)
        start = AffineMapAttr(AffineMap(len(self.plan.grid), 0, (offset,)))
        v = self.add(tl.IotaOp(l, start, self.grid_ivs(), TensorType(i32, shape)))
        v.name_hint = self.loop.body.block.args[l].name_hint
        return v

    def dot_dims(self, mul: Operation) -> tuple[int, int, int] | None:
        """(m, n, k) when `mul` multiplies an (m, k) tile by a (k, n) tile in loop space
        and is summed over the single reduction dim k: a matrix product."""
        reduce_dims = range(len(self.loop.parallel_extents), self.rank)
        if len(reduce_dims) != 1:
            return None
        (k,) = reduce_dims
        shapes = [self.shape_of(v) for v in mul.operands]
        if any(sh is None for sh in shapes):
            return None
        sx, sy = shapes  # type: ignore[misc]
        xs = {l for l, n in enumerate(sx) if n > 1}
        ys = {l for l, n in enumerate(sy) if n > 1}
        if k not in xs or k not in ys or len(xs) != 2 or len(ys) != 2:
            return None
        (m,) = xs - {k}
        (n,) = ys - {k}
        return (m, n, k) if m != n else None

    def dot(self, mul: Operation, reduce: ta.ReduceOp) -> SSAValue:
        """The reduction of a product as `tl.dot` (the MXU), in loop space."""
        m, n, k = self.dot_dims(mul)  # type: ignore[misc]
        x, y = (self.values[v] for v in mul.operands)
        full = self.full_shape()

        def matrix(v: SSAValue, rows: int, cols: int) -> SSAValue:
            if rows < cols:
                return self.reshape(v, [full[rows], full[cols]])
            v = self.reshape(v, [full[cols], full[rows]])
            return self.add(tl.TransposeOp(v, [1, 0]))

        c = self.add(tl.DotOp(matrix(x, m, k), matrix(y, k, n)))
        if m > n:
            c = self.add(tl.TransposeOp(c, [1, 0]))
        shape = [full[l] if l in (m, n) else 1 for l in range(self.rank)]
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
        return self.broadcast(self.values[value], shape)

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
        """An arith integer cast of a tile: `tl.convert` (numpy `astype`), with the
        fix-ups where arith means otherwise: an i1 is signed (extsi/sitofp give -1), a
        cast to i1 keeps the low bit, and extui/uitofp/fptoui read the integer as
        unsigned (a mask below 32 bits, `uiN` elements from 32 bits)."""
        src = v.type.element_type  # type: ignore[attr-defined]
        dst = op.results[0].type
        loc = op.location

        def add(new: Operation) -> SSAValue:
            new.location = loc
            return self.add(new)

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
            return convert(add(arith.AndIOp(x, self.splat(1, elt, shape))), i1)
        if src == i1:
            r = convert(v, dst)
            if unsigned or isinstance(op, arith.IndexCastOp):
                return r
            if isinstance(dst, IntegerType | IndexType):
                return add(arith.SubiOp(self.splat(0, dst, shape), r))  # type: ignore[arg-type]
            return add(arith.NegfOp(r))
        if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
            n = width(src)
            if n >= 32:
                return convert(convert(v, IntegerType(n, Signedness.UNSIGNED)), dst)
            wide = dst if isinstance(op, arith.ExtUIOp) else i32
            x = convert(v, wide)
            x = add(arith.AndIOp(x, self.splat((1 << n) - 1, wide, shape)))  # type: ignore[arg-type]
            return convert(x, dst)
        if isinstance(op, arith.FPToUIOp):
            n = width(dst)
            via = i32 if n < 32 else IntegerType(n, Signedness.UNSIGNED)
            return convert(convert(v, via), dst)
        return convert(v, dst)

    def emit(
        self,
        accesses: dict[Operation, _Access],
        skip: set[Operation],
        dma: dict[Operation, _Access],
    ) -> None:
        reduce_dims = list(range(len(self.loop.parallel_extents), self.rank))
        contractions = {
            op: mul
            for op in self.loop.body.block.ops
            if (mul := _contraction(op)) is not None
        }
        products = set(contractions.values())
        as_dot: set[Operation] = set()
        for op in self.loop.body.block.ops:
            if op in skip:
                continue  # an index read and its casts: gathers read it as a scalar
            if op in products and self.dot_dims(op) is not None:
                as_dot.add(op)  # emitted as a dot by the reduction that consumes it
                continue
            if op in contractions and contractions[op] in as_dot:
                dot = self.dot(contractions[op], op)
                self.values[op.results[0]] = dot
                dot.name_hint = op.results[0].name_hint
                continue
            if isinstance(op, ta.LoadOp) and op in dma:
                self.values[op.result] = self.gather_rows(dma[op])
                self.values[op.result].name_hint = op.result.name_hint
            elif isinstance(op, ta.LoadOp):
                self.values[op.result] = self.load(accesses[op])
                self.values[op.result].name_hint = op.result.name_hint
            elif isinstance(op, ta.StoreOp):
                shape = self.shape_of(op.value) or [1] * self.rank
                self.store(accesses[op], self.operand(op.value, shape))
            elif isinstance(op, ta.ReduceOp):
                full = self.full_shape()
                source = self.operand(op.value, full)
                kind = ReductionKind(op.kind.data)
                if kind.returns_index and len(reduce_dims) > 1:
                    # argmax/argmin of a split reduction: its dims are the last ones, so
                    # merging them row-major gives torch's flat position.
                    n_par = len(self.loop.parallel_extents)
                    merged = [*full[:n_par], math.prod(full[n_par:])]
                    r = tl.ReduceOp(kind, self.reshape(source, merged), [n_par])
                    self.add(r)
                    value = self.reshape(
                        r.result, [*full[:n_par], *[1] * len(reduce_dims)]
                    )
                else:
                    r = tl.ReduceOp(kind, source, reduce_dims)
                    value = self.add(r)
                self.values[op.result] = value
                value.name_hint = op.result.name_hint
            elif isinstance(op, arith.ConstantOp) and not isinstance(
                op.result.type, TensorType
            ):
                self.scalar_constants[op.result] = op
            elif op.dialect_name() in ("arith", "math"):
                shapes = [s for s in map(self.shape_of, op.operands) if s is not None]
                if not shapes:
                    raise PassError(op, "tile: an op on constants only is not tiled yet")
                shape = [max(dims) for dims in zip(*shapes)]
                operands = [self.operand(o, shape) for o in op.operands]
                if isinstance(op, _INT_CASTS):
                    # arith integer casts take scalars only: a tile is converted.
                    self.values[op.results[0]] = self.cast(op, operands[0], shape)
                    self.values[op.results[0]].name_hint = op.results[0].name_hint
                    continue
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
            else:
                raise PassError(op, f"tile: '{op.name}' is not tiled yet")


_INT_CASTS = (
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.IndexCastOp,
)
"""Casts that `arith` verifies on scalars only (extf/truncf also take tensors)."""


def _predicate(op: arith.CmpfOp | arith.CmpiOp) -> str:
    floating = isinstance(op, arith.CmpfOp)
    names = (
        arith.CMPF_COMPARISON_OPERATIONS if floating else arith.CMPI_COMPARISON_OPERATIONS
    )
    name = names[op.predicate.value.data]
    if name not in (FLOAT_PREDICATES if floating else INT_PREDICATES):
        raise PassError(op, f"tile: the constant comparison '{name}' is not tiled")
    return name


class _FoldReshapes(RewritePattern):
    """reshape(reshape(x)) is one reshape; a reshape to the same shape is nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tl.ReshapeOp, rewriter: PatternRewriter) -> None:
        source = op.source
        if isinstance(source.owner, tl.ReshapeOp):
            source = source.owner.source
        if source.type == op.result.type:
            rewriter.replace(op, [], [source])
        elif source is not op.source:
            rewriter.replace(op, tl.ReshapeOp(source, op.result.type))  # type: ignore[arg-type]


class _FoldTransposes(RewritePattern):
    """transpose(transpose(x)) is one transpose; the identity permutation is nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tl.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = list(op.permutation.get_values())
        source = op.source
        if isinstance(source.owner, tl.TransposeOp):
            inner = source.owner.permutation.get_values()
            perm = [inner[p] for p in perm]
            source = source.owner.source
        if perm == sorted(perm):
            rewriter.replace(op, [], [source])
        elif source is not op.source:
            rewriter.replace(op, tl.TransposeOp(source, perm))


def _simplify(grid: tl.GridOp) -> None:
    """Fold the layout moves that loop-space conversion leaves back to back (e.g. a
    tile transposed into loop order and back for a dot)."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier([_FoldReshapes(), _FoldTransposes()]),
    ).rewrite_region(grid.body)


def _buffer_bytes(op: ta.LoadOp) -> int:
    t = ta.root_buffer(op.buffer).type
    assert isinstance(t, MemRefType)
    return t.element_count() * numpy_dtype(t.element_type).itemsize


def _gathered_bytes(op: ta.LoadOp) -> int:
    """Elements a load reads, one per point of its loop, in bytes."""
    loop = op.parent_op()
    assert isinstance(loop, ta.LoopOp)
    return math.prod(loop.extents) * numpy_dtype(op.result.type).itemsize


def _fuses_on_xla(access: ta.LoadOp | ta.StoreOp) -> bool:
    """Whether a kernel with an access no Pallas idiom covers runs whole on XLA: when
    the access has a static index and nothing else in the loop needs Pallas (a matrix
    product for the MXU, a gather's row DMAs), XLA's one fusion is the loop a Pallas
    kernel would be, without the extra HBM pass of an outlined access."""
    if isinstance(access, ta.LoadOp) and access.symbols:
        return False
    loop = access.parent_op()
    assert isinstance(loop, ta.LoopOp)
    return not any(
        (isinstance(o, ta.LoadOp) and o.symbols) or _contraction(o) is not None
        for o in loop.body.block.ops
    )


class _GatherNeedsRelayout(PassError):
    """A scalar-prefetch gather (G1) that would relayout its table on the host."""


class _WideData(PassError):
    """The kernel computes on 64-bit data, which TPU kernels do not have (or takes a
    product reduction, which Mosaic does not lower)."""


def _refuse_wide_data(loop: ta.LoopOp, skip: set[Operation]) -> None:
    """Raise `_WideData` at the first op of the tiled body with a 64-bit type (gather
    indices, read on the host or from SMEM, are narrowed to i32 and do not count)."""
    live: set[Operation] = set()  # what the stores need; dead loads are dropped anyway
    for op in reversed(list(loop.body.block.ops)):
        if isinstance(op, ta.StoreOp) or any(
            u.operation in live for r in op.results for u in r.uses
        ):
            live.add(op)
    for op in loop.body.block.ops:
        if op in skip or op not in live:
            continue
        if isinstance(op, ta.ReduceOp) and op.kind.data == ReductionKind.PROD.value:
            raise _WideData(
                op, "tile: Mosaic has no product reduction ('ta.reduce <prod>')"
            )
        types = [r.type for r in op.results]
        if isinstance(op, ta.LoadOp | ta.StoreOp):
            types.append(op.buffer.type.element_type)  # type: ignore[attr-defined]
        for t in types:
            if (
                not isinstance(t, IndexType)
                and getattr(t, "bitwidth", 0) > MAX_ELEMENT_BITS
            ):
                raise _WideData(
                    op, f"tile: TPU kernels have no 64-bit types and '{op.name}' uses {t}"
                )


def _scalar(attr: Attribute) -> float | int:
    assert isinstance(attr, FloatAttr | IntegerAttr)
    return attr.value.data


_MAX_FALLBACK_STEPS = 16
"""Fallback steps (an access moved to XLA, then the kernel tiled again) before the kernel
runs on XLA whole: a step that does not make the kernel tileable must not loop (found by
benchmarks/fuzz.py)."""


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Tile every `ta.kernel` into a `tl.kernel` (see the module docstring for the policy).

    Options:
    - `chip` (`v5e` | `v6e`, default `v5e`);
    - `vmem-budget`: bytes for the double-buffered blocks of one kernel (default 0: the
      chip's default scoped VMEM, 16 MiB on v5e and 32 MiB on v6e).
    """

    name = "tile"

    chip: str = "v5e"
    vmem_budget: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.chip not in CHIPS:
            raise PassError(None, f"tile: unknown chip '{self.chip}' (v5e or v6e)")
        budget = self.vmem_budget or CHIPS[self.chip].default_scoped_vmem_bytes
        for kernel in [k for k in op.ops if isinstance(k, ta.KernelOp)]:
            if not kernel.on_xla:
                self.tile_or_fall_back(op, kernel, budget)

    def tile_or_fall_back(
        self, module: ModuleOp, kernel: ta.KernelOp, budget: int
    ) -> None:
        """Tile the kernel; an access no idiom covers is moved to an XLA kernel (with a
        remark saying why) and the rest is tiled, and a kernel with 64-bit data runs on
        XLA whole (see `xla_fallback`)."""
        relayout_ok: set[Operation] = set()
        for _ in range(_MAX_FALLBACK_STEPS):
            try:
                self.tile_kernel(module, kernel, budget, relayout_ok)
                return
            except _GatherNeedsRelayout as e:
                # Computing the row indices on XLA and copying rows by DMA moves the rows
                # once; scalar prefetch would relayout the whole table on every call.
                gather = e.op
                assert isinstance(gather, ta.LoadOp)
                storage = {
                    a.index: t
                    for a in kernel.body.block.args
                    if (t := _host_storage(module, kernel, a.index)) is not None
                }
                name = kernel.sym_name.data
                # (The computed-row form copies rows by DMA: not for 8-bit rows.)
                main = (
                    outline_index(module, kernel, gather, storage)
                    if _rows_by_dma(8 * numpy_dtype(gather.result.type).itemsize)
                    and _rows_addressable(gather)
                    else None
                )
                how = "the row indices are computed on XLA and the rows come by row DMA"
                if main is None and _gathered_bytes(gather) < _buffer_bytes(gather):
                    # An XLA gather reads and writes what is gathered; the relayout
                    # would read and write the whole table.
                    main = outline_load(module, kernel, gather)
                    how = "an XLA gather before the Pallas kernel takes the rows"
                if main is None:
                    relayout_ok.add(gather)
                    continue
                emit_remark(gather, f"{e.message}; instead {how} (@{name})")
                count(self.name, "gathers moved off scalar prefetch")
                kernel = main
            except _WideData as e:
                emit_remark(e.op, f"{e.message}: @{kernel.sym_name.data} runs on XLA")
                run_on_xla(kernel)
                return
            except PassError as e:
                access = e.op
                if not isinstance(access, ta.LoadOp | ta.StoreOp) or (
                    access.parent_op() is None
                    or access.parent_op().parent_op() is not kernel  # type: ignore[union-attr]
                ):
                    self.whole_kernel_on_xla(kernel, e)
                    return
                name = kernel.sym_name.data
                if _fuses_on_xla(access):
                    emit_remark(
                        access,
                        f"{e.message}; @{name} runs on XLA as one fusion (moving only "
                        "the access to XLA would write and read it once more)",
                    )
                    count(self.name, "kernels run on XLA")
                    run_on_xla(kernel)
                    return
                if isinstance(access, ta.LoadOp):
                    storage = {
                        a.index: t
                        for a in kernel.body.block.args
                        if (t := _host_storage(module, kernel, a.index)) is not None
                    }
                    main = (
                        outline_index(module, kernel, access, storage)
                        if _rows_by_dma(8 * numpy_dtype(access.result.type).itemsize)
                        and _rows_addressable(access)
                        else None
                    )
                    how = "an XLA computation of the row indices before"
                    if main is None:
                        main = outline_load(module, kernel, access)
                        how = "an XLA gather before"
                else:
                    main = outline_store(module, kernel, access)
                    how = "an XLA scatter after"
                if main is None:
                    self.whole_kernel_on_xla(kernel, e)
                    return
                emit_remark(
                    access, f"{e.message}; done by {how} the Pallas kernel @{name}"
                )
                count(self.name, "accesses moved to XLA")
                kernel = main
        self._fallback_exhausted(kernel)

    def _fallback_exhausted(self, kernel: ta.KernelOp) -> None:
        self.whole_kernel_on_xla(
            kernel,
            PassError(
                kernel,
                f"tile: moving accesses to XLA did not give a tileable kernel in "
                f"{_MAX_FALLBACK_STEPS} steps",
            ),
        )

    def whole_kernel_on_xla(self, kernel: ta.KernelOp, e: PassError) -> None:
        """No tiling for this kernel (no legal tile sizes, a reduction that cannot be
        one block, an index that needs a reduction of the same loop...): it runs on XLA
        whole, which computes what the ta reference does, and a remark says why."""
        where = e.op if e.op is not None else kernel
        emit_remark(where, f"{e.message}; @{kernel.sym_name.data} runs on XLA")
        count(self.name, "kernels run on XLA")
        run_on_xla(kernel)

    def tile_kernel(
        self,
        module: ModuleOp,
        kernel: ta.KernelOp,
        budget: int,
        relayout_ok: set[Operation] = frozenset(),  # type: ignore[assignment]
    ) -> None:
        loops = [o for o in kernel.body.block.ops if isinstance(o, ta.LoopOp)]
        others = [
            o
            for o in kernel.body.block.ops
            if not isinstance(o, ta.LoopOp | ta.ReshapeOp)
        ]
        if len(loops) != 1 or others:
            raise PassError(kernel, "tile: a kernel with one ta.loop is tiled; this one has "
                            f"{len(loops)}")  # fmt: skip
        (loop,) = loops
        storage = {
            a.index: t
            for a in kernel.body.block.args
            if (t := _host_storage(module, kernel, a.index)) is not None
        }
        accesses = {
            o: _analyse(o, loop, storage)
            for o in loop.body.block.ops
            if isinstance(o, ta.LoadOp | ta.StoreOp)
        }
        skip, forced, dma = self.gather_reads(loop, accesses, relayout_ok)
        _refuse_wide_data(loop, skip)
        # G4: a gather that asks for a VMEM-resident table gets one when the table,
        # double-buffered, takes at most half the budget; the tiles get the rest.
        resident = {
            op: 2 * math.prod(a.shape) * a.bits // 8
            for op, a in dma.items()
            if a.op.attributes.get("gather") == StringAttr("vmem")
        }
        resident = {op: b for op, b in resident.items() if b <= budget // 2}
        if sum(resident.values()) > budget // 2:
            resident = {}
        plan = _choose_tiles(
            loop,
            list(accesses.values()),
            budget - sum(resident.values()),
            loop,
            forced,
            _splittable(loop),
        )
        _merge_lane_split_stores(accesses, plan, loop.extents)
        # Kernel arguments: the original ones, then one per in-kernel view (reshape) and
        # one per argument read as host storage; both become launch operands.
        args = list(kernel.body.block.args)
        views = [o for o in kernel.body.block.ops if isinstance(o, ta.ReshapeOp)]
        used = {a.merged_into or a.buffer for a in [*accesses.values(), *dma.values()]}
        used |= {index.buffer for a in accesses.values() for _, index in a.gathers}
        views = [v for v in views if v.result in used]
        stored = sorted(
            {a.buffer for a in accesses.values() if isinstance(a.buffer, _Storage)},
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
        buffers: dict[SSAValue | _Storage, SSAValue] = {}
        keys: list[SSAValue | _Storage] = [*args, *(v.result for v in views), *stored]
        for old, new in zip(keys, kblock.args):
            buffers[old] = new
            if isinstance(old, _Storage):
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
        emitter = _Emitter(loop, plan, buffers, grid.body.block)
        emitter.resident = frozenset(resident)
        emitter.emit(accesses, skip, dma)
        _simplify(grid)
        new_kernel.location = kernel.location
        emit_remark(
            loop,
            f"tile: @{kernel.sym_name.data}: tiles {plan.tiles} over loop "
            f"{list(loop.extents)}, grid {plan.grid}",
        )
        for op, a in dma.items():
            found = _lookup_dims(a.gathers[0][1])
            assert found is not None
            rows = plan.tiles[found[0]]
            strategy = a.op.attributes["gather"]
            if op in resident:
                emit_remark(
                    op,
                    f"tile: gather from a VMEM-resident table ({resident[op] // 2} B, "
                    f"fetched once), {rows} rows per grid step by local row copies",
                )
                continue
            asked = {
                "dma": "",
                "dma_chunked": " (indices streamed to SMEM in chunks of 1024)",
                "vmem": " (the table, double-buffered, needs more than half of the "
                f"{budget} B VMEM budget to stay resident)",
            }[strategy.data]  # type: ignore[attr-defined]
            emit_remark(op, f"tile: gather by row DMA, {rows} rows per grid step{asked}")
        for a in accesses.values():
            strategy = a.op.attributes.get("gather")
            if isinstance(strategy, StringAttr) and strategy.data != "prefetch":
                why = (
                    "which needs indices read one lookup at a time and whole rows of "
                    "the table's leading dims"
                    if _rows_by_dma(a.bits)
                    else "but rows of 8-bit data pack four to a 32-bit sublane, so a "
                    "row DMA would move four rows a lookup"
                )
                emit_remark(
                    a.op,
                    f"tile: gather asks for the {strategy.data} idiom, {why}; tiled "
                    "with scalar prefetch (one row per grid step)",
                )
        module.body.block.insert_op_after(new_kernel, kernel)
        self.relaunch(module, kernel, views, stored)
        module.body.block.erase_op(kernel)

    @staticmethod
    def gather_reads(
        loop: ta.LoopOp,
        accesses: dict[Operation, _Access],
        relayout_ok: set[Operation] = frozenset(),  # type: ignore[assignment]
    ) -> tuple[set[Operation], dict[int, int], dict[Operation, _Access]]:
        """Gathers. Returns the ops that only read gather indices (tiles do not load
        them), the tile sizes the gathers force on loop dims, and the gathers done by
        manual row DMA (taken out of `accesses`).

        A gather marked `dma` or `vmem` whose index walks its loop dim one by one takes
        whole rows of the table by row DMAs, 8 per grid step where the lookups divide by
        8 (`tl.gather`): from the table left in HBM (G3), or, for `vmem` when the table
        fits (see `tile_kernel`), from the table held whole in VMEM (G4). Any other gather reads one row per grid step through a
        scalar-prefetched index map (G1); accesses that then take one row of a
        second-minor dim are moved to the view `(..., A, 1, B)` of their buffer."""
        skip: set[Operation] = set()
        forced: dict[int, list[int]] = {}
        one_row: set[int] = set()
        dma: dict[Operation, _Access] = {}
        extents = loop.extents
        for op, a in list(accesses.items()):
            for _, index in a.gathers:
                skip.add(index)
            by_dma = _row_gather(a, extents, len(loop.parallel_extents))
            if by_dma is not None:
                lookup, rows, others = by_dma
                dma[op] = a
                accesses.pop(op)
                forced[lookup] = rows
                for l, sizes in others.items():
                    # The first size every other access walking `l` allows (1 last:
                    # the view below makes it legal).
                    walks = [
                        (b, o)
                        for b in accesses.values()
                        for o_l, o in b.loop_to_buffer().items()
                        if o_l == l
                    ]
                    fits = [
                        t
                        for t in sizes
                        if all(_legal(b, o, t, extents[l]) for b, o in walks)
                    ]
                    forced[l] = fits[:1] or [1]
                for l, _ in a.dims[1:]:
                    if l is not None:
                        forced[l] = [extents[l]]  # whole rows
                continue
            for _, index in a.gathers:
                positions = [d.index for d in index.dims]  # type: ignore[attr-defined]
                for e in index.map.data.results:
                    lookups = {positions[p] for p in e.used_dims()}
                    if any(l >= len(loop.parallel_extents) for l in lookups):
                        raise PassError(
                            a.op,
                            "tile: a gather indexed along a reduction dim (an embedding "
                            "bag) is not tiled yet",
                        )
                    one_row.update(lookups)
        # A prefetched index picks one row a grid step, so its lookup dims take tile 1
        # even where a DMA gather of the same lookups would take 8 rows a step.
        forced.update((l, [1]) for l in one_row)
        for op in loop.body.block.ops:
            if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.TruncIOp) and (
                op.operands[0].owner in skip
            ):
                skip.add(op)
        for op in skip:
            accesses.pop(op, None)
        for op, a in accesses.items():
            rank = len(a.shape)
            if rank < 2 or a.shape[rank - 2] == 1:
                continue
            l, _ = a.dims[rank - 2]
            if rank - 2 not in dict(a.gathers) and (l is None or forced.get(l) != [1]):
                continue
            if rank - 2 in dict(a.gathers) and op not in relayout_ok:
                raise _GatherNeedsRelayout(
                    op,
                    "tile: scalar prefetch of one row of the second-minor dim needs the "
                    f"table relaid out to (..., {a.shape[rank - 2]}, 1, "
                    f"{a.shape[rank - 1]})",
                )
            if isinstance(a.buffer, _Storage):
                root = a.buffer.root
            else:
                root = ta.root_buffer(a.buffer).index  # type: ignore[attr-defined]
            t = MemRefType(_element_type(a), (*a.shape[: rank - 1], 1, a.shape[rank - 1]))
            accesses[op] = a.with_unit_dim(_Storage(root, t, reshape=True))
        return skip, forced, dma

    def relaunch(
        self,
        module: ModuleOp,
        kernel: ta.KernelOp,
        views: list[ta.ReshapeOp],
        stored: list[_Storage],
    ) -> None:
        """Pass each in-kernel view as an argument (reshaped on the host before the
        launch), and each argument read as host storage as the host value of that shape."""
        if not views and not stored:
            return
        for launch in [o for o in module.walk() if isinstance(o, ta.LaunchOp)]:
            if launch.callee.string_value() != kernel.sym_name.data:
                continue
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
                    assert isinstance(owner, ta.ReshapeOp)  # _host_storage found it
                    host_value = owner.source
                extra.append(host_value)
            new = ta.LaunchOp(kernel.sym_name.data, [*launch.args, *extra])
            new.location = launch.location
            block.insert_op_before(new, launch)
            block.erase_op(launch)
