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

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from pallas_ir.diagnostics import PassError, count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.tile.access import (
    buffer_bytes,
    fuses_on_xla,
    gathered_bytes,
    rows_addressable,
)
from pallas_ir.lowering.tile.build import build_kernel
from pallas_ir.lowering.tile.legality import rows_by_dma
from pallas_ir.lowering.tile.policy import (
    Rejection,
    RejectionKind,
    TilePlan,
    kernel_storage,
    plan_kernel,
)
from pallas_ir.lowering.xla_fallback import (
    outline_index,
    outline_load,
    outline_store,
    run_on_xla,
)
from pallas_ir.tpu_rules import CHIPS

__all__ = ["Rejection", "TilePass", "TilePlan", "plan_kernel"]

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
            e = self.tile_kernel(module, kernel, budget, relayout_ok)
            if e is None:
                return
            if e.kind is RejectionKind.GATHER_NEEDS_RELAYOUT:
                # Computing the row indices on XLA and copying rows by DMA moves the rows
                # once; scalar prefetch would relayout the whole table on every call.
                gather = e.op
                assert isinstance(gather, ta.LoadOp)
                storage = kernel_storage(module, kernel)
                name = kernel.sym_name.data
                # (The computed-row form copies rows by DMA: not for 8-bit rows.)
                main = (
                    outline_index(module, kernel, gather, storage)
                    if rows_by_dma(8 * numpy_dtype(gather.result.type).itemsize)
                    and rows_addressable(gather)
                    else None
                )
                how = "the row indices are computed on XLA and the rows come by row DMA"
                if main is None and gathered_bytes(gather) < buffer_bytes(gather):
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
            elif e.kind is RejectionKind.WIDE_DATA:
                assert e.op is not None
                emit_remark(e.op, f"{e.message}: @{kernel.sym_name.data} runs on XLA")
                run_on_xla(kernel)
                return
            else:
                access = e.op
                if not isinstance(access, ta.LoadOp | ta.StoreOp) or (
                    access.parent_op() is None
                    or access.parent_op().parent_op() is not kernel  # type: ignore[union-attr]
                ):
                    self.whole_kernel_on_xla(kernel, e)
                    return
                name = kernel.sym_name.data
                if fuses_on_xla(access):
                    emit_remark(
                        access,
                        f"{e.message}; @{name} runs on XLA as one fusion (moving only "
                        "the access to XLA would write and read it once more)",
                    )
                    count(self.name, "kernels run on XLA")
                    run_on_xla(kernel)
                    return
                if isinstance(access, ta.LoadOp):
                    storage = kernel_storage(module, kernel)
                    main = (
                        outline_index(module, kernel, access, storage)
                        if rows_by_dma(8 * numpy_dtype(access.result.type).itemsize)
                        and rows_addressable(access)
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
            Rejection(
                kernel,
                f"tile: moving accesses to XLA did not give a tileable kernel in "
                f"{_MAX_FALLBACK_STEPS} steps",
            ),
        )

    def whole_kernel_on_xla(self, kernel: ta.KernelOp, e: Rejection) -> None:
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
        relayout_ok: AbstractSet[Operation] = frozenset(),
    ) -> Rejection | None:
        """Tile the kernel, or say why it does not tile (and leave it as it was)."""
        plan = plan_kernel(module, kernel, budget, relayout_ok)
        if isinstance(plan, Rejection):
            return plan
        try:
            build_kernel(module, kernel, plan)
        except PassError as e:
            return Rejection.of(e)
        return None
