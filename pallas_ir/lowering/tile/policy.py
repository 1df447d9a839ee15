"""The tiling policy: tile sizes for every loop dim of a kernel's `ta.loop` (a
`TilePlan`), or a `Rejection` that says why the kernel does not tile (and which op is to
blame, so that xla-outline can move that access to XLA). See the package docstring for
the rules."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from enum import Enum, auto

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import BlockArgument, Operation, SSAValue

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import special
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import ReductionKind
from pallas_ir.lowering.tile.access import (
    Access,
    Storage,
    analyse,
    element_type,
    epilogue_ops,
    host_storage,
    lookup_dims,
    mxu_factors,
    scatter_lookup,
    split_dim,
    split_masked,
)
from pallas_ir.lowering.tile.legality import (
    block_rows,
    block_vmem_bytes,
    candidates,
    legal,
    rows_by_dma,
)
from pallas_ir.tpu_rules import (
    BODY_VALUE_ELEMENTS,
    GRID_STEP_SECONDS,
    LANES,
    MAX_ELEMENT_BITS,
    MIN_K_PART,
    PIPELINE_BUFFERS,
    Chip,
    block_dim_legal,
    dot_vmem_bytes,
    reshape_is_free,
    vmem_block_bytes,
)

LANE_TARGET = 512
SUBLANE_TARGET = 256
DIAGONAL_TARGET = LANES
BLOCK_BYTES = 1 << 20
MIN_BLOCK_BYTES = 1 << 19
"""The VMEM block size up to which leading dims grow (a grid step's fixed cost is paid
once per block). A llama layer's rotary kernel, whose values are (2, 16) per row,
took 129 us on a v5e over 4096 steps of one row each, and 33 us over 64 steps of 64."""
# The most rows a row-DMA gather copies a grid step: 32-bit rows in a `pallas.loop`,
# packed 8- and 16-bit rows one DMA each, unrolled.
MAX_UNROLLED_ROWS = 128


def row_gather(
    a: Access, extents: Sequence[int], n_parallel: int
) -> tuple[int, list[int], dict[int, list[int]]] | None:
    """(lookup loop dim, the rows per grid step to try, best first, the tiles to try for
    the other loop dims the index depends on: one point per step, but for the bag dim of
    an embedding bag, below) when a gather can be done by
    row DMAs: it asks for `dma` (or `vmem`, `dma_chunked`), picks rows of the table's
    leading dims (one index buffer each, `x[i0, i1]`) with indices read at consecutive
    positions along one loop dim (`idx[i + c]`, or `idx[16 * b + t]` for an index of
    rank 2 stored flat), the same positions for every index buffer, and takes whole
    rows."""
    if not a.gathers or ta.gather_strategy(a.op) not in (
        ta.GatherStrategy.DMA,
        ta.GatherStrategy.VMEM,
        ta.GatherStrategy.DMA_CHUNKED,
    ):
        return None
    if not rows_by_dma(a.bits):
        return None
    picked = len(a.gathers)
    if [b for b, _ in a.gathers] != list(range(picked)):
        return None
    found = lookup_dims(a.gathers[0][1])
    if found is None or any(lookup_dims(i) != found for _, i in a.gathers[1:]):
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
    # along its lanes (a rank-1 output), only the whole dim is a legal block; packed
    # rows' DMAs are unrolled, so that is bounded.
    sublanes = block_rows(a.bits)
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


def scatter_rows(extent: int) -> list[int]:
    """The rows per grid step a row scatter may take, best first: a sublane tile of
    them (8), or all of them where they are few; the other accesses along the lookup
    dim pick the first they allow. Each row is one DMA, unrolled in the kernel."""
    if extent <= block_rows(32):
        return [extent]
    return [block_rows(32)] + ([extent] if extent <= MAX_UNROLLED_ROWS else [])


class RejectionKind(Enum):
    """Why a kernel does not tile, as far as what to do about it goes."""

    ACCESS = auto()
    """An access (or the kernel) no tiling covers: `Rejection.op` says which."""
    GATHER_NEEDS_RELAYOUT = auto()
    """A scalar-prefetch gather (G1) that would relayout its table on the host."""
    WIDE_DATA = auto()
    """The kernel computes on 64-bit data, which TPU kernels do not have (or with an op
    Mosaic does not lower: a product reduction, `NOT_IN_MOSAIC`)."""
    XLA_FUSION = auto()
    """An access no Pallas idiom covers, with a static index, in a kernel where nothing
    else needs Pallas: the whole kernel is one XLA fusion (see `fuses_on_xla`)."""


@dataclass(frozen=True)
class Rejection:
    """The policy's answer for a kernel it cannot tile: where, why, and what kind."""

    op: Operation | None
    message: str
    kind: RejectionKind = RejectionKind.ACCESS

    @staticmethod
    def of(error: PassError) -> Rejection:
        return Rejection(error.op, error.message)


@dataclass
class TilePlan:
    """The tiling of one kernel: its tile sizes and grid, and what the build needs to
    know about its accesses."""

    tiles: list[int]
    grid: list[int]
    sequential: int = 0
    """How many trailing grid dims run in order: those of a split reduction, and a row
    scatter's from the first dim its indices are read along (a later write to a row
    wins)."""
    accesses: dict[Operation, Access] = field(default_factory=dict[Operation, Access])
    """The tiled loads and stores (gathers by row DMA are in `dma`)."""
    skip: set[Operation] = field(default_factory=set[Operation])
    """Ops that only read gather indices (tiles do not load them)."""
    dma: dict[Operation, Access] = field(default_factory=dict[Operation, Access])
    """Gathers done by row DMA."""
    resident: dict[Operation, int] = field(default_factory=dict[Operation, int])
    """Row-DMA gathers whose table stays whole in VMEM (G4), with its double-buffered
    bytes."""
    budget: int = 0
    """The VMEM budget the plan fits."""


def walks_of(accesses: Sequence[Access], l: int) -> list[tuple[Access, int]]:
    """Each access that walks loop dim `l`, with the buffer dim it walks."""
    return [(a, b) for a in accesses for b in a.buffer_dims(l)]


def tile_options(
    walks: Sequence[tuple[Access, int]],
    extent: int,
    reduction: bool,
    forced: list[int] | None,
    splittable: bool,
    ragged: bool = False,
) -> list[int]:
    """The tile sizes of a loop dim legal for every access that walks it, smallest
    first: the first of what a gather forces (lookups per grid step, whole rows), or,
    for a reduction dim, the whole dim (and the parts that divide it when the reduction
    may be split: no padding may enter a sum; with `ragged`, where the kernel masks
    the last part's padding, any part when none divides it)."""
    e = extent
    if forced is not None:
        return [t for t in forced if all(legal(a, b, t, e) for a, b in walks)][:1]
    sizes = [t for t in candidates(e) if all(legal(a, b, t, e) for a, b in walks)]
    if reduction:
        parts = [t for t in sizes if t < e] if splittable else []
        dividing = [t for t in parts if e % t == 0]
        whole = [e] if e in sizes else []
        return [*(dividing or parts if ragged else dividing), *whole]
    return sizes


def untileable(walks: Sequence[tuple[Access, int]], extent: int) -> list[Access]:
    """The accesses that allow no tile size of a loop dim on their own (`walks`: each
    access that walks the dim, with the buffer dim it walks)."""
    return [
        a for a, b in walks if not any(legal(a, b, t, extent) for t in candidates(extent))
    ]


def no_tile_size(l: int, extent: int) -> str:
    return f"tile: no legal tile size for loop dim {l} (extent {extent})"


def choose_tiles(
    loop: ta.LoopOp,
    accesses: Sequence[Access],
    budget: int,
    chip: Chip,
    where: Operation,
    forced: dict[int, list[int]] | None = None,
    split: int | None = None,
) -> TilePlan | Rejection:
    """Tile sizes and grid (see the package docstring). `split`: the reduction dim
    that may be split over a sequential grid dim (`split_dim`), if any."""
    extents = list(loop.extents)
    n_par = len(loop.parallel_extents)
    ragged = split_masked(loop)
    options: list[list[int]] = []
    targets: list[int] = []
    for l, e in enumerate(extents):
        walks = walks_of(accesses, l)
        allowed = tile_options(
            walks, e, l >= n_par, (forced or {}).get(l), l == split, ragged
        )
        if l >= n_par and not (forced and l in forced) and e not in allowed:
            return Rejection(where, f"tile: reduction dim {l} cannot be one whole block")
        if not allowed:
            # Blame an access that allows no tile on its own, so the tiler can move it
            # to XLA; otherwise the accesses only conflict with each other.
            alone = untileable(walks, e)
            return Rejection(alone[0].op if alone else where, no_tile_size(l, e))
        lane = any(b == len(a.shape) - 1 for a, b in walks)
        sublane = any(b == len(a.shape) - 2 for a, b in walks)
        if any(a.diagonal for a, _ in walks):
            # A diagonal's (t, t) block reads t elements per one it keeps: the
            # smallest legal t (one vreg row of lanes) moves the fewest bytes, as few
            # as XLA's (8, 128) HBM tiles (512 B an element).
            targets.append(DIAGONAL_TARGET)
        else:
            targets.append(LANE_TARGET if lane else SUBLANE_TARGET if sublane else 1)
        options.append(allowed)
    tiles = []
    for l, (allowed, target) in enumerate(zip(options, targets)):
        fitting = [t for t in allowed if t <= target]
        if l >= n_par:
            tiles.append(extents[l])  # reductions start whole
        else:
            tiles.append(max(fitting) if fitting else min(allowed))
    if not forced and (products := _products_to_tile(loop, accesses)):
        best = contraction_tiles(
            loop, accesses, options, targets, tiles, budget, chip, products
        )
        if best is not None:
            return plan_grid(loop, best)

    def footprint() -> int:
        return sum(block_vmem_bytes(a, tiles, extents) for a in accesses)

    def largest_block() -> int:
        return max((block_vmem_bytes(a, tiles, extents) for a in accesses), default=0)

    # Leading dims start at 1; where the minor dims make small blocks (a rotate-half's
    # (2, 16)), the innermost leading dims grow to `MIN_BLOCK_BYTES`.
    for l in [l for l in reversed(range(n_par)) if targets[l] == 1]:
        while largest_block() < MIN_BLOCK_BYTES and tiles[l] != options[l][-1]:
            bigger = options[l][options[l].index(tiles[l]) + 1]
            old = tiles[l]
            tiles[l] = bigger
            if footprint() > budget or largest_block() > MIN_BLOCK_BYTES:
                tiles[l] = old
                break
    # Blocks of about a MiB keep several grid steps in flight (DMA overlaps compute)
    # without wasting VMEM; the budget bounds them all together. A reduction split
    # into parts that need not divide it (`split_masked`: the rows of per-row
    # reductions reduced again, a reduction no legal part divides) shrinks like a
    # parallel dim: a split adds one running total per step, not a partial product
    # per element.
    rows = []
    if split is not None and (
        ta.has_partial_reductions(loop) or any(extents[split] % t for t in options[split])
    ):
        rows = [split]
    while footprint() > budget or largest_block() > 2 * BLOCK_BYTES:
        shrinkable = [l for l in [*range(n_par), *rows] if options[l].index(tiles[l]) > 0]
        if footprint() > budget:
            # Over budget: a splittable reduction may be cut too (largest tile first, so
            # a long contraction is split before the output tile shrinks).
            shrinkable += [
                l for l in range(n_par, len(extents)) if options[l].index(tiles[l]) > 0
            ]
        if not shrinkable:
            if footprint() <= budget:
                break
            return Rejection(
                where,
                f"tile: the smallest legal tiles need {footprint()} bytes of VMEM, over the "
                f"budget of {budget}",
            )
        l = max(shrinkable, key=lambda k: tiles[k])
        tiles[l] = options[l][options[l].index(tiles[l]) - 1]
    return plan_grid(loop, tiles)


def contractions_in(loop: ta.LoopOp) -> list[Operation]:
    """The products the loop's reductions of a product sum, over its reduction dims
    (several are one merged k, `ta.matmul_dims`): a matrix product's candidates, one or
    several (sibling products of one input that fuse-siblings made one loop). Other
    reductions, a norm's statistics in a product's prologue, may sit beside them."""
    if not loop.reduce_extents:
        return []
    # an integer product over several wide dims is multiplied out (`ta.matmul_dims`)
    several = sum(e > 1 for e in loop.reduce_extents) > 1
    return [
        mul
        for op in loop.body.block.ops
        if isinstance(op, ta.ReduceOp)
        and (mul := ta.contraction(op)) is not None
        and not (several and isinstance(mul, arith.MuliOp))
    ]


def _products_to_tile(loop: ta.LoopOp, accesses: Sequence[Access]) -> list[Operation]:
    """The products whose tiles `contraction_tiles` chooses: the loop's matrix products
    (factors walked along different dims), or its one product of any form when it has
    no matrix product (a lone sum of squares). A norm's statistics beside a matrix
    product are summed on the VPU, in the blocks the product's tiles give."""
    products = contractions_in(loop)
    matrix = [
        mul
        for mul in products
        if None not in (dims := [_walked_dims(v, accesses) for v in mul.operands])
        and dims[0] != dims[1]
    ]
    return matrix or (products if len(products) == 1 else [])


@dataclass(frozen=True)
class Roofline:
    """A tiling's modelled time on a chip: HBM bytes at its bandwidth or MXU work at its
    peak, whichever takes longer, plus the blocks of one step (the pipeline's fill and
    drain) and the fixed cost of each grid step."""

    seconds: float
    hbm_bytes: int
    steps: int


def roofline(
    loop: ta.LoopOp,
    accesses: Sequence[Access],
    tiles: Sequence[int],
    chip: Chip,
    mxu_flops: float,
    products: int = 1,
) -> Roofline:
    """The roofline of `tiles` for a contraction (`plan_grid`'s grid: parallel dims in
    order, then the split reduction, innermost). A block moves when its index differs
    from the previous step's, so an access is fetched once per step of the grid dims up
    to the innermost one it walks: the output once per (m, n) block with k innermost, an
    (m, k) operand once per m block when k is whole."""
    extents = list(loop.extents)
    n_par = len(loop.parallel_extents)
    grid = plan_grid(loop, list(tiles)).grid
    position = {l: l for l in range(n_par)}
    position |= {l: n_par for l in range(n_par, len(extents)) if tiles[l] < extents[l]}
    hbm = exposed = 0
    for a in accesses:
        walked = [position[l] for l in a.loop_to_buffer() if l in position]
        walked = [p for p in walked if grid[p] > 1]
        fetches = math.prod(grid[: max(walked) + 1]) if walked else 1
        block = block_vmem_bytes(a, tiles, extents) // PIPELINE_BUFFERS
        hbm += fetches * block
        exposed += block
    steps = math.prod(grid)
    padded = math.prod(-(-e // t) * t for e, t in zip(extents, tiles))
    seconds = max(hbm / chip.hbm_bytes_per_second, 2 * products * padded / mxu_flops)
    # The first step's blocks come in, and the last step's go out, with nothing to
    # overlap them.
    seconds += exposed / chip.hbm_bytes_per_second
    return Roofline(seconds + steps * GRID_STEP_SECONDS, hbm, steps)


def contraction_tiles(
    loop: ta.LoopOp,
    accesses: Sequence[Access],
    options: Sequence[list[int]],
    targets: Sequence[int],
    tiles: Sequence[int],
    budget: int,
    chip: Chip,
    products: Sequence[Operation],
) -> list[int] | None:
    """Tiles for a loop of matrix products (`products`, one or several over the same
    reduction): of the legal sizes that fit the VMEM budget
    (double-buffered blocks, and the f32 accumulator a split reduction of narrow data
    keeps), those with the least `roofline` time, then the fewest HBM bytes. Lane and
    sublane dims take sizes of at least 128 (the MXU's tile) where legal, leading dims
    keep the sizes the general rule gave (`tiles`), and the reduction is whole or, when
    the loop allows it, split over a sequential grid dim into parts that divide it. None
    when nothing fits (the general rule then shrinks or rejects)."""
    extents = list(loop.extents)
    n_par = len(loop.parallel_extents)
    factor = mxu_factors(products[0])[0].type
    mxu_flops = chip.mxu_flops(
        getattr(factor, "bitwidth", 32), not isinstance(factor, IntegerType)
    )
    # A split reduction accumulates in 32-bit scratch when it is stored as narrow data
    # or an epilogue computes from it.
    epilogue = bool(epilogue_ops(loop))
    in_scratch = [a for a in accesses if a.is_store and (a.bits < 32 or epilogue)]
    factors = [[_walked_dims(v, accesses) for v in mul.operands] for mul in products]
    f32_product = isinstance(factor, Float32Type)

    def dot_bytes(t: Sequence[int]) -> int:
        # Each body's dot (`dot_vmem_bytes`): m the dims only the left factor walks and
        # the batch dim (its products sit side by side), n those only the right walks.
        total = 0
        for lhs, rhs in factors:
            if lhs is None or rhs is None:
                continue
            batch = (lhs & rhs) - set(range(n_par, len(extents)))
            m = math.prod(t[l] for l in (lhs - rhs) | batch)
            n = math.prod(t[l] for l in rhs - lhs)
            k = math.prod(t[l] for l in range(n_par, len(extents)))
            total += dot_vmem_bytes(m, n, k, getattr(factor, "bitwidth", 32), f32_product)
        return total

    def outer_product_elements(t: Sequence[int]) -> int | None:
        # The body's dot (`Emitter.dot_dims`) takes one batch dim (walked by both
        # factors); with more than one over a point, the body multiplies the factors
        # out whole before it sums.
        total = None
        for lhs, rhs in factors:
            if lhs is None or rhs is None:
                continue
            batch = (lhs & rhs) - set(range(n_par, len(extents)))
            if sum(t[l] > 1 for l in batch) > 1:
                total = (total or 0) + math.prod(t[l] for l in lhs | rhs)
        return total

    def fastest(choices: Sequence[list[int]]) -> list[int] | None:
        best: tuple[tuple[float, int, int], list[int]] | None = None
        for combo in itertools.product(*choices):
            combo_tiles = list(combo)
            split = any(combo_tiles[l] < extents[l] for l in range(n_par, len(extents)))
            vmem = sum(block_vmem_bytes(a, combo_tiles, extents) for a in accesses)
            vmem += dot_bytes(combo_tiles)
            if split:
                vmem += sum(
                    block_vmem_bytes(a, combo_tiles, extents)
                    // PIPELINE_BUFFERS
                    * 32
                    // a.bits
                    for a in in_scratch
                )
            if vmem > budget:
                continue
            if any(
                block_vmem_bytes(a, combo_tiles, extents)
                * 8
                // (PIPELINE_BUFFERS * a.bits)
                > BODY_VALUE_ELEMENTS
                for a in accesses
            ):
                continue
            # no dot: the body multiplies the factors out, then sums
            outer = outer_product_elements(combo_tiles)
            if outer is not None and (
                outer > BODY_VALUE_ELEMENTS or vmem + 4 * outer > budget
            ):
                continue
            r = roofline(loop, accesses, combo_tiles, chip, mxu_flops, len(products))
            key = (r.seconds, r.hbm_bytes, r.steps)
            if best is None or key < best[0]:
                best = (key, combo_tiles)
        return best[1] if best is not None else None

    # Leading dims keep their size; the others try MXU-sized tiles first, then, in a
    # budget too small for those, every legal size.
    every = [
        [tiles[l]] if l < n_par and targets[l] == 1 else o for l, o in enumerate(options)
    ]
    wide = []
    for l, allowed in enumerate(every):
        least = MIN_K_PART if l >= n_par else LANES
        wide.append([t for t in allowed if t >= min(least, extents[l])] or allowed)
    return fastest(wide) or fastest(every)


def integer_matrix_product(
    loop: ta.LoopOp, accesses: Sequence[Access]
) -> Rejection | None:
    """A `WIDE_DATA` rejection for a matrix product of integers (factors walked along
    different dims): Mosaic's dot takes floats, and 32-bit integers (what the frontend
    holds integer data in) have no MXU path."""
    for mul in contractions_in(loop):
        if not isinstance(mxu_factors(mul)[0].type, IntegerType):
            continue
        lhs, rhs = (_walked_dims(v, accesses) for v in mul.operands)
        if lhs == rhs:
            continue  # an element-wise product summed: the VPU reduces it
        return Rejection(
            mul,
            "tile: Mosaic's dot takes floats; a matrix product of integers runs on XLA",
            RejectionKind.WIDE_DATA,
        )


def _walked_dims(value: SSAValue, accesses: Sequence[Access]) -> set[int] | None:
    """The loop dims a contraction's factor varies along: those of the loads it is
    computed from (a prologue's ops included), None when one of them is no access of
    the plan."""
    if isinstance(value, BlockArgument):
        return {value.index}
    if isinstance(value.owner, ta.LoadOp):
        found = [a for a in accesses if a.op is value.owner]
        return set(found[0].loop_to_buffer()) if found else None
    walked: set[int] = set()
    for operand in value.owner.operands:
        dims = _walked_dims(operand, accesses)
        if dims is None:
            return None
        walked |= dims
    return walked


def plan_grid(loop: ta.LoopOp, tiles: list[int]) -> TilePlan:
    """The grid of `tiles`: `cdiv(extent, tile)` steps per parallel dim, then one
    sequential grid dim per split reduction (its tiles divide it)."""
    extents = list(loop.extents)
    n_par = len(loop.parallel_extents)
    grid = [-(-extents[l] // tiles[l]) for l in range(n_par)]
    split = [l for l in range(n_par, len(extents)) if tiles[l] < extents[l]]
    grid += [-(-extents[l] // tiles[l]) for l in split]  # a ragged one is masked
    return TilePlan(tiles, grid or [1], len(split))


def merge_lane_split_views(
    accesses: dict[Operation, Access],
    plan: TilePlan,
    extents: Sequence[int],
    storage: Mapping[int, MemRefType],
) -> None:
    """An access through a view `(..., a, b, c)` of an argument `(..., a * b * c)` (a
    channels-last permute written flat, heads split from a projection's `h * d`, a
    fused qkv projection's `(3, h, d)`: canonicalize-permutation splits the lane dim)
    would make the host relayout the argument into the view before the kernel (a load)
    or the view back into the argument after it (a store), a full HBM read and write
    each call. The kernel reads or writes the argument itself instead, viewed as
    `(leading dims of the view, a * b * c)` (the host regroups the rows only where that
    is free, `reshape_is_free`), and splits or merges the lanes in registers (a
    `tl.reshape` Mosaic does) when the tile holds the split dims after the first whole,
    its lanes are a legal block of the argument's (the first split dim may be tiled or
    indexed: one kv head of a (2, 4, 32) split is 128 lanes, q of a (3, 4, 64) qkv split
    256), and its rows are a legal block."""
    for op, a in list(accesses.items()):
        view = a.buffer
        if not isinstance(view, SSAValue) or a.gathers or any(st > 1 for st in a.steps):
            continue
        if not a.is_store and not (
            a.bits == 32 or isinstance(a.op.result.type, BFloat16Type)
        ):
            continue  # Mosaic splits lanes of 32-bit and bfloat16 tiles (measured)
        reshape = view.owner
        if not isinstance(reshape, ta.ReshapeOp) or not isinstance(
            reshape.source, BlockArgument
        ):
            continue
        arg = reshape.source
        whole = tuple(arg.type.get_shape())  # type: ignore[attr-defined]
        flat = len(whole) == 1 and arg.index in storage
        if flat:  # a flat argument: the host's N-D storage
            whole = tuple(storage[arg.index].get_shape())
        shape = a.shape
        k = _lane_split(shape, whole[-1])
        if k is None or len(whole) < 2 or reshape_is_free(whole, shape, a.bits):
            continue
        host = (*shape[:-k], whole[-1])
        if host != whole and not reshape_is_free(whole, host, a.bits):
            continue
        (first, c0), *rest = a.dims[-k:]
        if any(
            l is None or c != 0 or plan.tiles[l] < extents[l] or extents[l] != n
            for (l, c), n in zip(rest, shape[-k + 1 :], strict=True)
        ):
            continue  # the split dims after the first must be whole in the tile
        if first is not None and (c0 != 0 or extents[first] != shape[-k]):
            continue
        inner = math.prod(shape[-k + 1 :])
        # the first split dim tiled, or one index of it (q of a fused qkv projection)
        lanes = inner * (1 if first is None else min(plan.tiles[first], extents[first]))
        if lanes < whole[-1] and not block_dim_legal(
            lanes, whole[-1], len(host) - 1, len(host), a.bits, block_rows(a.bits)
        ):
            continue
        merged = replace(a, shape=host, dims=(*a.dims[:-k], (None, 0)), rotations=())
        l, _ = a.dims[-k - 1]
        rows = 1 if l is None else plan.tiles[l]
        if (l is None and host[-2] != 1) or (
            l is not None and not legal(merged, len(host) - 2, rows, extents[l])
        ):
            continue
        if host != whole:
            merged_into: SSAValue | Storage = Storage(
                arg.index, MemRefType(element_type(a), host), reshape=True
            )
        elif flat:
            merged_into = Storage(arg.index, storage[arg.index])
        else:
            merged_into = arg
        accesses[op] = replace(a, merged_into=merged_into)


def _lane_split(shape: Sequence[int], lanes: int) -> int | None:
    """How many trailing dims of `shape` (at least 2, leaving a leading one) split a
    lane dim of `lanes`; None if none do."""
    for k in range(2, len(shape)):
        n = math.prod(shape[-k:])
        if n == lanes and shape[-k] > 1:
            return k
        if n > lanes:
            return None
    return None


NOT_IN_MOSAIC = {
    special.IgammaOp: "a series or continued fraction of up to 2000 terms",
    special.IgammacOp: "a series or continued fraction of up to 2000 terms",
}
"""Ops Mosaic does not lower and no expansion into a bounded kernel body covers (with
why): a kernel that computes one runs on XLA."""


def wide_data(loop: ta.LoopOp, skip: set[Operation]) -> Rejection | None:
    """A `WIDE_DATA` rejection at the first op of the tiled body with a 64-bit type (gather
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
        if type(op) in NOT_IN_MOSAIC:
            return Rejection(
                op,
                f"tile: Mosaic does not lower '{op.name}' ({NOT_IN_MOSAIC[type(op)]})",
                RejectionKind.WIDE_DATA,
            )
        if isinstance(op, ta.ReduceOp) and op.kind.data == ReductionKind.PROD.value:
            return Rejection(
                op,
                "tile: Mosaic has no product reduction ('ta.reduce <prod>')",
                RejectionKind.WIDE_DATA,
            )
        types = [r.type for r in op.results]
        if isinstance(op, ta.LoadOp | ta.StoreOp):
            types.append(op.buffer.type.element_type)  # type: ignore[attr-defined]
        for t in types:
            if (
                not isinstance(t, IndexType)
                and getattr(t, "bitwidth", 0) > MAX_ELEMENT_BITS
            ):
                return Rejection(
                    op,
                    f"tile: TPU kernels have no 64-bit types and '{op.name}' uses {t}",
                    RejectionKind.WIDE_DATA,
                )
    return None


@dataclass
class GatherReads:
    """What the gathers of a loop take (see `gather_reads`), and which cannot be tiled."""

    skip: set[Operation]
    """Ops that only read gather indices (tiles do not load them)."""
    forced: dict[int, list[int]]
    """The tile sizes the gathers force on loop dims."""
    dma: dict[Operation, Access]
    """Gathers done by manual row DMA (taken out of the accesses)."""
    along_reduction: list[Rejection]
    """Gathers indexed along a reduction dim that are not done by row DMA, in order."""
    relayouts: list[Rejection]
    """Scalar-prefetch gathers of one row of the second-minor dim, which need their
    table relaid out on the host (`GATHER_NEEDS_RELAYOUT`), in order."""


def classify_gathers(loop: ta.LoopOp, accesses: dict[Operation, Access]) -> GatherReads:
    """Gathers (see `gather_reads`), with every gather that does not tile as it is."""
    skip: set[Operation] = set()
    forced: dict[int, list[int]] = {}
    one_row: set[int] = set()
    dma: dict[Operation, Access] = {}
    along_reduction: list[Rejection] = []
    relayouts: list[Rejection] = []
    extents = loop.extents
    for op, a in list(accesses.items()):
        for _, index in a.gathers:
            skip.add(index)
        if a.is_store and a.gathers:  # a row scatter: rows written by DMA, whole
            dma[op] = a
            accesses.pop(op)
            lookup, coefficients, _ = scatter_lookup(a)
            forced.update((l, [1]) for l in coefficients)  # `tokens[b, t]`: one b
            forced[lookup] = scatter_rows(extents[lookup])
            *lead, _, (lane, _) = a.dims
            forced.update((l, [1]) for l, _ in lead if l is not None)
            if lane is not None:
                forced[lane] = [extents[lane]]
            continue
        by_dma = row_gather(a, extents, len(loop.parallel_extents))
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
                    t for t in sizes if all(legal(b, o, t, extents[l]) for b, o in walks)
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
                    along_reduction.append(
                        Rejection(
                            a.op,
                            "tile: a gather indexed along a reduction dim (an embedding "
                            "bag) is not tiled yet",
                        )
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
        if rank - 2 in dict(a.gathers):
            relayouts.append(
                Rejection(
                    op,
                    "tile: scalar prefetch of one row of the second-minor dim needs the "
                    f"table relaid out to (..., {a.shape[rank - 2]}, 1, "
                    f"{a.shape[rank - 1]})",
                    RejectionKind.GATHER_NEEDS_RELAYOUT,
                )
            )
        if isinstance(a.buffer, Storage):
            root = a.buffer.root
        else:
            root = ta.root_buffer(a.buffer).index  # type: ignore[attr-defined]
        t = MemRefType(element_type(a), (*a.shape[: rank - 1], 1, a.shape[rank - 1]))
        accesses[op] = a.with_unit_dim(Storage(root, t, reshape=True))
    return GatherReads(skip, forced, dma, along_reduction, relayouts)


def column_views(
    loop: ta.LoopOp, accesses: Mapping[Operation, Access]
) -> dict[Operation, Access]:
    """The rank-1 accesses of kernel arguments on the view `(A, 1)` of their buffer `(A,)`
    (a relayout on the host), where the loop dim that walks them is walked by no other
    access along its lanes: a per-row vector beside rows of a matrix (a row's label,
    its loss), whose block is then 8 rows rather than 128 or all of them. A buffer is
    viewed so by all of its accesses or none (one buffer, one view of it)."""
    lanes = {
        a.dims[-1][0]
        for a in accesses.values()
        if len(a.shape) > 1 and a.dims[-1][0] is not None
    }

    def column(a: Access) -> bool:
        buffer = a.buffer
        return (
            len(a.shape) == 1
            and a.dims[0][0] is not None
            and a.dims[0][0] not in lanes
            and not a.gathers
            and a.merged_into is None
            and a.step(0) == 1
            and a.rotation(0) == 0
            and isinstance(buffer, BlockArgument)
            and buffer.type.get_shape() == a.shape  # type: ignore[attr-defined]
        )

    viewed = {a.buffer for a in accesses.values() if column(a)}
    viewed -= {a.buffer for a in accesses.values() if not column(a)}
    columns = {}
    for op, a in accesses.items():
        if a.buffer in viewed:
            t = MemRefType(element_type(a), (a.shape[0], 1))
            view = Storage(a.buffer.index, t, reshape=True)  # type: ignore[union-attr]
            columns[op] = Access(
                a.op, view, t.get_shape(), a.bits, (a.dims[0], (None, 0))
            )
    return columns


def gather_reads(
    loop: ta.LoopOp,
    accesses: dict[Operation, Access],
    relayout_ok: AbstractSet[Operation] | None = frozenset(),
) -> tuple[set[Operation], dict[int, list[int]], dict[Operation, Access]] | Rejection:
    """Gathers. Returns the ops that only read gather indices (tiles do not load
    them), the tile sizes the gathers force on loop dims, and the gathers done by
    manual row DMA (taken out of `accesses`); or why a gather does not tile.

    A gather marked `dma` or `vmem` whose index walks its loop dim one by one takes
    whole rows of the table by row DMAs, 8 per grid step where the lookups divide by
    8 (`tl.gather`): from the table left in HBM (G3), or, for `vmem` when the table
    fits (see `plan_kernel`), from the table held whole in VMEM (G4). Any other gather
    reads one row per grid step through a
    scalar-prefetched index map (G1); accesses that then take one row of a
    second-minor dim are moved to the view `(..., A, 1, B)` of their buffer, which for
    a gathered table is a relayout on the host: only for the gathers in `relayout_ok`
    (None: any)."""
    found = classify_gathers(loop, accesses)
    if found.along_reduction:
        return found.along_reduction[0]
    for r in found.relayouts:
        if relayout_ok is not None and r.op not in relayout_ok:
            return r
    return found.skip, found.forced, found.dma


def the_loop(kernel: ta.KernelOp) -> ta.LoopOp | Rejection:
    """The kernel's one `ta.loop` (beside in-kernel views): the tiler's unit."""
    loops = [o for o in kernel.body.block.ops if isinstance(o, ta.LoopOp)]
    others = [
        o for o in kernel.body.block.ops if not isinstance(o, ta.LoopOp | ta.ReshapeOp)
    ]
    if len(loops) != 1 or others:
        return Rejection(
            kernel,
            f"tile: a kernel with one ta.loop is tiled; this one has {len(loops)}",
        )
    return loops[0]


def kernel_storage(module: ModuleOp, kernel: ta.KernelOp) -> dict[int, MemRefType]:
    """The N-D storage the host holds each kernel argument in (see `host_storage`)."""
    launches = ta.kernel_launches(module, kernel)
    return {
        a.index: t
        for a in kernel.body.block.args
        if (t := host_storage(module, kernel, a.index, launches)) is not None
    }


def check_tiles(
    loop: ta.LoopOp,
    accesses: Sequence[Access],
    tiles: Sequence[int],
    budget: int,
    forced: dict[int, list[int]],
) -> TilePlan | Rejection:
    """The plan of tile sizes given in the IR (`tile_sizes` on the loop), when they are
    legal: one per loop dim, each at most its extent, legal for every access that walks
    the dim, what a gather forces (its rows per grid step), a reduction whole or split
    into parts that divide it (when it may be split), and blocks that fit the budget.
    Otherwise a rejection at the loop saying which size is illegal."""
    extents = list(loop.extents)
    n_par = len(loop.parallel_extents)

    def illegal(why: str) -> Rejection:
        return Rejection(loop, f"tile: tile_sizes {list(tiles)} {why}")

    split = split_dim(loop)

    if len(tiles) != len(extents):
        return illegal(f"give {len(tiles)} sizes for a loop of {len(extents)} dims")
    for l, (t, e) in enumerate(zip(tiles, extents)):
        if not 1 <= t <= e:
            return illegal(f"give loop dim {l} a tile of {t}, not in [1, {e}]")
        for a, b in walks_of(accesses, l):
            if not legal(a, b, t, e):
                return illegal(
                    f"give loop dim {l} a tile of {t}: not a legal block of dim {b} of "
                    f"{a.op.name} (shape {list(a.shape)}, {a.bits}-bit)"
                )
        if l in forced and t not in forced[l]:
            return illegal(
                f"give loop dim {l} a tile of {t}, but a gather takes {forced[l]} a step"
            )
        masked = split_masked(loop)
        if l >= n_par and t < e and (l != split or (e % t and not masked)):
            return illegal(
                f"split reduction dim {l} into tiles of {t}: it must be whole, or split "
                "into parts that divide it when its results are only stored"
            )
    footprint = sum(block_vmem_bytes(a, tiles, extents) for a in accesses)
    if footprint > budget:
        return illegal(f"need {footprint} bytes of VMEM, over the budget of {budget}")
    return plan_grid(loop, list(tiles))


def plan_kernel(
    module: ModuleOp,
    kernel: ta.KernelOp,
    budget: int,
    chip: Chip,
    relayout_ok: AbstractSet[Operation] | None = frozenset(),
    tiles: Sequence[int] | None = None,
) -> TilePlan | Rejection:
    """The tiling of a kernel (see the package docstring), or why there is none.
    `relayout_ok`: scalar-prefetch gathers that may relayout their table on the host
    (nothing better was found for them); None: any may. `tiles`: the sizes to take
    (checked by `check_tiles`) instead of choosing them."""
    loop = the_loop(kernel)
    if isinstance(loop, Rejection):
        return loop
    storage = kernel_storage(module, kernel)
    try:
        accesses = {
            o: analyse(o, loop, storage)
            for o in loop.body.block.ops
            if isinstance(o, ta.LoadOp | ta.StoreOp)
        }
    except PassError as e:
        return Rejection.of(e)
    gathers = gather_reads(loop, accesses, relayout_ok)
    if isinstance(gathers, Rejection):
        return gathers
    skip, forced, dma = gathers
    if (wide := wide_data(loop, skip)) is not None:
        return wide
    if (mxu := integer_matrix_product(loop, list(accesses.values()))) is not None:
        return mxu
    # G4: a gather that asks for a VMEM-resident table gets one when the table,
    # double-buffered, takes at most half the budget; the tiles get the rest.
    resident = {
        op: PIPELINE_BUFFERS * vmem_block_bytes(a.shape, a.bits)
        for op, a in dma.items()
        if ta.gather_strategy(a.op) == ta.GatherStrategy.VMEM
    }
    resident = {op: b for op, b in resident.items() if b <= budget // 2}
    if sum(resident.values()) > budget // 2:
        resident = {}

    def plan_of(accesses: dict[Operation, Access]) -> TilePlan | Rejection:
        if tiles is not None:
            return check_tiles(
                loop,
                list(accesses.values()),
                tiles,
                budget - sum(resident.values()),
                forced,
            )
        return choose_tiles(
            loop,
            list(accesses.values()),
            budget - sum(resident.values()),
            chip,
            loop,
            forced,
            split_dim(loop),
        )

    plan = plan_of(accesses)
    if isinstance(plan, Rejection) and (columns := column_views(loop, accesses)):
        # A vector's block is 128 of its elements or all of them, which can be more
        # rows than the others' blocks hold: viewed as a column, 8 rows are legal.
        # (Where that fails too, its reason is the one to give: its blocks are smaller.)
        with_columns = {**accesses, **columns}
        plan = plan_of(with_columns)
        if isinstance(plan, TilePlan):
            accesses = with_columns
    if isinstance(plan, Rejection):
        return plan
    merge_lane_split_views(accesses, plan, loop.extents, storage)
    # A row scatter writes its rows in order: the grid walks the dims its indices are
    # read along, and those after them (whole rows), sequentially.
    scatters = [min(scatter_lookup(a)[1]) for a in dma.values() if a.is_store]
    sequential = max([plan.sequential] + [len(plan.grid) - l for l in scatters])
    return replace(
        plan,
        sequential=sequential,
        accesses=accesses,
        skip=skip,
        dma=dma,
        resident=resident,
        budget=budget,
    )
