"""xla-outline: what no Pallas idiom covers runs on XLA (ta → ta).

For every kernel the tile policy does not tile (its loop has no `tile_sizes`), the
policy says which access it cannot tile and why (`Rejection`); the access moves to an
XLA kernel (`pallas_ir.passes.xla_outline`: an XLA gather before the kernel, an XLA
computation of the row indices before it, an XLA scatter after it), with a remark, and
the policy is asked again. A kernel with 64-bit data or a product reduction, one whose
odd access has a static index and nothing else that needs Pallas (one XLA fusion), and
one where nothing is to blame, run on XLA whole. The kernel left tiles: its loop gets
the policy's sizes, and `tile` never falls back itself.

It lives with the tiler, not in `passes/`, because it asks the tiling policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.tile import (
    TilePlan,
    plan_tiling,
    set_tile_sizes,
    tile_sizes,
    vmem_budget,
)
from pallas_ir.lowering.tile.access import (
    buffer_bytes,
    fuses_on_xla,
    gathered_bytes,
    rows_addressable,
)
from pallas_ir.lowering.tile.legality import rows_by_dma
from pallas_ir.lowering.tile.policy import (
    Rejection,
    RejectionKind,
    kernel_storage,
    the_loop,
)
from pallas_ir.passes.xla_outline import (
    outline_index,
    outline_load,
    outline_store,
    run_on_xla,
)

_MAX_FALLBACK_STEPS = 16
"""Outlining steps (an access moved to XLA, then the policy asked again) before the
kernel runs on XLA whole: a step that does not make the kernel tileable must not loop
(found by benchmarks/fuzz.py)."""


@dataclass(frozen=True)
class XlaOutlinePass(ModulePass):
    """Move what the tile policy cannot tile to XLA (see the module docstring).

    Options: `chip` and `vmem-budget`, as for `tile` (the policy's budget).
    """

    name = "xla-outline"

    chip: str = "v5e"
    vmem_budget: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        budget = vmem_budget(self.name, self.chip, self.vmem_budget)
        for kernel in [k for k in op.ops if isinstance(k, ta.KernelOp)]:
            if kernel.on_xla:
                continue
            loop = the_loop(kernel)
            if isinstance(loop, ta.LoopOp) and tile_sizes(loop) is not None:
                continue  # the policy tiles it
            self.outline_until_tiled(op, kernel, budget)

    def outline_until_tiled(
        self, module: ModuleOp, kernel: ta.KernelOp, budget: int
    ) -> None:
        """Ask the policy whether the kernel tiles; while it does not, move the access it
        blames to an XLA kernel (with a remark saying why), or the whole kernel when that
        is what it takes (64-bit data, no access to blame, an element-wise kernel that
        fuses on XLA). The kernel left tiles, and gets the policy's sizes."""
        relayout_ok: set[Operation] = set()
        for _ in range(_MAX_FALLBACK_STEPS):
            e = plan_tiling(module, kernel, budget, relayout_ok)
            if isinstance(e, TilePlan):
                loop = the_loop(kernel)
                assert isinstance(loop, ta.LoopOp)
                set_tile_sizes(loop, e.tiles)
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
        self.fallback_exhausted(kernel)

    def fallback_exhausted(self, kernel: ta.KernelOp) -> None:
        self.whole_kernel_on_xla(
            kernel,
            Rejection(
                kernel,
                f"xla-outline: moving accesses to XLA did not give a tileable kernel in "
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
