"""tile: ta → tl. Pick a tile size for every loop dim and rewrite each `ta.loop` as a
`tl.grid` of whole-tile loads, compute and stores.

The policy is deterministic:

1. Accesses. Every access must be a projected permutation with constant offsets (each
   index `d + c` or `c`; the ta passes bring strided, flat and collapsed accesses there),
   except that an access through a reshape of a kernel argument that the host holds as
   N-D storage is re-read as a strided walk of that storage when the TPU allows it
   (steps on leading dims, and sublane steps of 32-bit data): no host relayout; and a
   load whose last two indices one loop dim walks (a diagonal) loads the (t, t)
   block on the diagonal and keeps its diagonal in the kernel, t the smallest legal
   size (each block reads t elements per one kept). Gathers
   marked by indirect-load-to-scalar-prefetch read their indices with `tl.scalar_load`
   and take one row per grid step along the dims those indices depend on (the
   scalar-prefetch idiom); buffers that then take one row of a second-minor dim are
   viewed as `(..., A, 1, B)`; gathers marked `dma`/`vmem` take whole rows by row DMA
   (one index buffer per gathered leading dim). Any other access goes to XLA through
   xla-outline's plan (`outline_plan.py`), with a remark saying why: with a static
   index in a kernel that has no matrix product and no gather, the whole kernel runs on
   XLA as one fusion; otherwise the access moves to an XLA kernel and the rest is
   tiled. A kernel with 64-bit data or a product reduction (Mosaic has none), with a
   store whose index depends on data or that accumulates (a scatter, a scatter-add: no
   block holds what its points reach), or one no tiling fits, runs on XLA whole.
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
   `cdiv(extent, tile)` long. A loop of per-row reductions reduced again
   (`ta.reduce ... over`, cross-entropy) splits its rows like a parallel dim, each row
   whole in a block, and accumulates the reductions over the rows (`access.split_dim`).
5. Contractions. A sum over k of the product of an (m, k) and a (k, n) tile is a
   `tl.dot` (the MXU, accumulating in f32).

Values are computed in loop space (one tensor dim per loop dim, size 1 where a value does
not vary); loads are reshaped and transposed into it, stores out of it, and operands are
broadcast where an op needs equal shapes; back-to-back reshapes and transposes are folded.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Operation

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.lowering.tile.attention import attention_op, tile_attention
from pallas_ir.lowering.tile.build import body_size, build_kernel
from pallas_ir.lowering.tile.legality import block_vmem_bytes
from pallas_ir.lowering.tile.policy import (
    Rejection,
    RejectionKind,
    TilePlan,
    plan_kernel,
    the_loop,
)
from pallas_ir.passes.options import CHIP, CheckedOptionsPass, vmem_budget_bytes
from pallas_ir.tpu_rules import BODY_VALUE_ELEMENTS, CHIPS, Chip

__all__ = [
    "TILE_SIZES",
    "Rejection",
    "RejectionKind",
    "TilePass",
    "TilePlan",
    "TilePolicyPass",
    "plan_kernel",
    "tile_sizes",
]

TILE_SIZES = "tile_sizes"
"""The `ta.loop` attribute that holds its tile sizes (`array<i64: ...>`, one per loop
dim): written by tile-policy (and xla-outline), obeyed by tile."""


def tile_sizes(loop: ta.LoopOp) -> list[int] | None:
    """The tile sizes written on a loop, or None."""
    sizes = loop.attributes.get(TILE_SIZES)
    if sizes is None:
        return None
    if not isinstance(sizes, DenseArrayBase) or sizes.elt_type != i64:
        raise PassError(loop, f"tile: '{TILE_SIZES}' must be an array<i64: ...>")
    return list(sizes.get_values())  # type: ignore[arg-type]


def set_tile_sizes(loop: ta.LoopOp, tiles: Sequence[int]) -> None:
    loop.attributes[TILE_SIZES] = DenseArrayBase.from_list(i64, list(tiles))


def vmem_budget(chip: str, budget: int) -> int:
    """A pass's VMEM budget: its `vmem-budget` option, else the chip's default (both
    checked when the pass is built: `passes/options.py`)."""
    return budget or CHIPS[chip].default_scoped_vmem_bytes


def plan_tiling(
    module: ModuleOp,
    kernel: ta.KernelOp,
    budget: int,
    chip: Chip,
    relayout_ok: AbstractSet[Operation] | None = frozenset(),
    tiles: Sequence[int] | None = None,
) -> TilePlan | Rejection:
    """The policy's plan for a kernel, when it also builds (every body op has a tile
    form) and its blocks and the body's values (`body_vmem_bytes`: those a relayout
    grows, and a dot's result and operand copies; 0 for element-wise bodies) fit the
    budget together, or why not. While they do not, the blocks are planned again in what the values leave (smaller blocks, smaller values).
    Blocks are planned smaller too while the body's largest value is over
    `BODY_VALUE_ELEMENTS` (its compile time), as long as that makes it smaller. See
    `plan_kernel` for the arguments."""
    loop = the_loop(kernel)
    blocks_budget = budget
    last = None  # the last plan, its blocks and values (bytes), when over the budget
    large = None  # the last plan that fits but whose body is large, its largest value
    # and blocks (bytes), and the largest blocks budget known to leave no plan
    while True:
        plan = plan_kernel(module, kernel, blocks_budget, chip, relayout_ok, tiles)
        if isinstance(plan, Rejection) and large is not None:
            # Too small for any plan: try between it and the large plan's blocks.
            large = (*large[:3], blocks_budget)
            blocks_budget = (blocks_budget + large[2]) // 2
            if blocks_budget <= large[3] or large[2] - blocks_budget < large[2] // 16:
                return large[0]  # no smaller blocks: the body stays large
            continue
        if isinstance(plan, Rejection) and last is not None:
            tried, blocks, values = last
            return Rejection(
                loop if isinstance(loop, ta.LoopOp) else kernel,
                f"tile: the body's values need {values} bytes of VMEM beside {blocks} "
                f"bytes of blocks (tiles {tried}), over the budget of {budget}, and no "
                "smaller tiles fit",
            )
        if isinstance(plan, Rejection):
            return plan
        body = body_size(kernel, plan)
        if isinstance(body, Rejection):
            return body
        assert isinstance(loop, ta.LoopOp)
        extents = list(loop.extents)
        blocks = sum(plan.resident.values()) + sum(
            block_vmem_bytes(a, plan.tiles, extents) for a in plan.accesses.values()
        )
        if blocks + body.vmem <= budget:
            fitted = replace(plan, budget=budget)
            if body.largest <= BODY_VALUE_ELEMENTS or tiles is not None:
                return fitted
            if large is not None and body.largest >= large[1]:
                return large[0]  # smaller blocks, no smaller body
            large = (fitted, body.largest, blocks, large[3] if large else 0)
            blocks_budget = min(blocks - 1, blocks * BODY_VALUE_ELEMENTS // body.largest)
            blocks_budget = max(blocks_budget, large[3] + 1)
            continue
        last = (plan.tiles, blocks, body.vmem)
        blocks_budget = min(budget - body.vmem, blocks - 1)
        if tiles is not None or blocks_budget <= 0:
            blocks_budget = 0  # given tiles, or values alone over the budget: rejected


def untiled_kernels(
    module: ModuleOp,
) -> list[tuple[ta.KernelOp, ta.LoopOp | Rejection]]:
    """The kernels bound for Pallas whose loop has no tile sizes yet, each with its loop
    (or why it has no single loop): what tile-policy and xla-outline look at."""
    found: list[tuple[ta.KernelOp, ta.LoopOp | Rejection]] = []
    for kernel in [k for k in module.ops if isinstance(k, ta.KernelOp)]:
        loop = the_loop(kernel)
        if (
            kernel.on_xla
            or attention_op(kernel) is not None  # flash attention: its own blocks
            or (isinstance(loop, ta.LoopOp) and tile_sizes(loop) is not None)
        ):
            continue
        found.append((kernel, loop))
    return found


TILER_OPTIONS = {"chip": CHIP, "vmem_budget": vmem_budget_bytes}
"""The options of the tile policy, xla-outline and tile."""


@dataclass(frozen=True)
class TilePolicyPass(CheckedOptionsPass):
    """Write the tiling policy's tile sizes on the loop of every kernel that tiles
    (`tile_sizes = array<i64: ...>` on its `ta.loop`; see the package docstring for the
    rules). A kernel that does not tile is left as it was, for xla-outline; a loop that
    already has sizes keeps them.

    Options: `chip` and `vmem-budget`, as for `tile`.
    """

    name = "tile-policy"
    option_rules = TILER_OPTIONS

    chip: str = "v5e"
    vmem_budget: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        budget = vmem_budget(self.chip, self.vmem_budget)
        for kernel, loop in untiled_kernels(op):
            if isinstance(loop, Rejection):
                continue  # for xla-outline
            plan = plan_tiling(op, kernel, budget, CHIPS[self.chip])
            if isinstance(plan, TilePlan):
                set_tile_sizes(loop, plan.tiles)


@dataclass(frozen=True)
class TilePass(CheckedOptionsPass):
    """Tile every `ta.kernel` into a `tl.kernel`, with the tile sizes on its loop
    (`tile_sizes`, checked for legality: an illegal size is an error at the loop), or,
    where there are none, with the ones the policy picks (see the package docstring).
    A kernel that does not tile is an error: xla-outline moves what no Pallas idiom
    covers to XLA first.

    Options:
    - `chip` (`v5e` | `v6e`, default `v5e`);
    - `vmem-budget`: bytes for the double-buffered blocks of one kernel (default 0: the
      chip's default scoped VMEM, 16 MiB on v5e and 32 MiB on v6e).
    """

    name = "tile"
    option_rules = TILER_OPTIONS

    chip: str = "v5e"
    vmem_budget: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        budget = vmem_budget(self.chip, self.vmem_budget)
        for kernel in [k for k in op.ops if isinstance(k, ta.KernelOp)]:
            if not kernel.on_xla:
                self.tile_kernel(op, kernel, budget)

    def tile_kernel(self, module: ModuleOp, kernel: ta.KernelOp, budget: int) -> None:
        if (attention := attention_op(kernel)) is not None:
            tile_attention(module, kernel, attention, budget)
            return
        loop = the_loop(kernel)
        if isinstance(loop, Rejection):
            raise PassError(loop.op, f"{loop.message}; run xla-outline before tile")
        tiles = tile_sizes(loop)
        # Sizes in the IR were chosen (or written) with the gathers as they are: a
        # prefetched gather may relayout its table (xla-outline found nothing better).
        relayout_ok = None if tiles is not None else frozenset[Operation]()
        plan = plan_kernel(module, kernel, budget, CHIPS[self.chip], relayout_ok, tiles)
        if isinstance(plan, Rejection):
            if tiles is not None and plan.op is loop and TILE_SIZES in plan.message:
                raise PassError(loop, plan.message)
            raise PassError(
                plan.op or kernel,
                f"{plan.message}; run xla-outline before tile (it moves what no Pallas "
                "idiom covers to XLA)",
            )
        build_kernel(module, kernel, plan)
