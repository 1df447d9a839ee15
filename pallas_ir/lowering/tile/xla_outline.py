"""xla-outline: what no Pallas idiom covers runs on XLA (ta → ta).

For every kernel the tile policy does not tile (its loop has no `tile_sizes`), one
planned step: the plan (`outline_plan.plan_outlining`) classifies every access of the
kernel at once, and the pass moves each access it lists to an XLA kernel of its own
(`pallas_ir.passes.xla_outline`: an XLA gather before the kernel, an XLA computation of
the row indices before it, an XLA scatter after it), with a remark saying why. A kernel
with 64-bit data or a product reduction, one whose odd access has a static index and
nothing else that needs Pallas (one XLA fusion), and one where nothing is to blame, run
on XLA whole. Then the policy is asked once for the tile sizes of what is left; if it
still does not tile, it runs on XLA whole too, with a remark saying why. `tile` never
falls back itself.

It lives with the tiler, not in `passes/`, because it asks the tiling policy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.lowering.tile import (
    TILER_OPTIONS,
    TilePlan,
    plan_tiling,
    set_tile_sizes,
    untiled_kernels,
    vmem_budget,
)
from pallas_ir.lowering.tile.access import fuses_on_xla
from pallas_ir.lowering.tile.outline_plan import (
    OutlinedAccess,
    OutlinePlan,
    outline_form,
    plan_outlining,
)
from pallas_ir.lowering.tile.policy import (
    Rejection,
    RejectionKind,
    kernel_storage,
    the_loop,
)
from pallas_ir.passes.options import CheckedOptionsPass
from pallas_ir.passes.xla_outline import (
    Outlined,
    outline_index,
    outline_load,
    outline_store,
    run_on_xla,
)
from pallas_ir.tpu_rules import CHIPS

_HOW = {
    ta.XlaAccess.INDEX: "an XLA computation of the row indices before",
    ta.XlaAccess.GATHER: "an XLA gather before",
    ta.XlaAccess.SCATTER: "an XLA scatter after",
}
_HOW_OFF_RELAYOUT = {
    ta.XlaAccess.INDEX: "the row indices are computed on XLA and the rows come by row DMA",
    ta.XlaAccess.GATHER: "an XLA gather before the Pallas kernel takes the rows",
}


@dataclass(frozen=True)
class XlaOutlinePass(CheckedOptionsPass):
    """Move what the tile policy cannot tile to XLA (see the module docstring).

    Options: `chip` and `vmem-budget`, as for `tile` (the policy's budget).
    """

    name = "xla-outline"
    option_rules = TILER_OPTIONS

    chip: str = "v5e"
    vmem_budget: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        budget = vmem_budget(self.chip, self.vmem_budget)
        for kernel, _ in untiled_kernels(op):  # those with sizes tile as they are
            self.outline(op, kernel, budget)

    def outline(self, module: ModuleOp, kernel: ta.KernelOp, budget: int) -> None:
        """Carry out the kernel's outlining plan, then give what is left the policy's
        tile sizes, or run it on XLA whole."""
        plan = plan_outlining(module, kernel)
        if plan.accesses:
            emit_remark(kernel, f"{self.name}: @{kernel.sym_name.data}: {plan}")
        # Outlining copies the kernel's loop into a new kernel: follow the ops the rest
        # of the plan names.
        named = [a.op for a in plan.accesses] + list(plan.relayout_ok)
        if plan.whole_kernel is not None and plan.whole_kernel.op is not None:
            named.append(plan.whole_kernel.op)
        followed: dict[Operation, Operation] = {o: o for o in named}
        for access in plan.accesses:
            left = self.outline_access(module, kernel, access, followed[access.op])
            kernel = left.kernel
            followed = {o: left.clones.get(c, c) for o, c in followed.items()}
        if plan.whole_kernel is not None:
            e = plan.whole_kernel
            where = followed.get(e.op) if e.op is not None else None
            self.whole_kernel_on_xla(kernel, Rejection(where, e.message, e.kind))
            return
        relayout_ok = {followed[g] for g in plan.relayout_ok}
        tiled = plan_tiling(module, kernel, budget, CHIPS[self.chip], relayout_ok)
        if isinstance(tiled, TilePlan):
            loop = the_loop(kernel)
            assert isinstance(loop, ta.LoopOp)
            set_tile_sizes(loop, tiled.tiles)
            return
        # What is left does not tile: it runs on XLA whole, as one fusion where its
        # odd access is static and nothing else needs Pallas. A rejection the plan did
        # not foresee (an access it would have moved) says so.
        unforeseen = None
        access = tiled.op
        if tiled.kind is RejectionKind.ACCESS and _an_access_of(access, kernel):
            assert isinstance(access, ta.LoadOp | ta.StoreOp)
            if fuses_on_xla(access):
                tiled = replace(tiled, kind=RejectionKind.XLA_FUSION)
            elif outline_form(access, kernel_storage(module, kernel)) is not None:
                unforeseen = plan
        elif tiled.kind is RejectionKind.GATHER_NEEDS_RELAYOUT:
            unforeseen = plan
        self.whole_kernel_on_xla(kernel, tiled, unforeseen)

    def outline_access(
        self,
        module: ModuleOp,
        kernel: ta.KernelOp,
        planned: OutlinedAccess,
        access: Operation,
    ) -> Outlined:
        """Move one planned access to its XLA kernel, with a remark saying why."""
        name = kernel.sym_name.data
        if planned.form is ta.XlaAccess.SCATTER:
            assert isinstance(access, ta.StoreOp)
            left = outline_store(module, kernel, access)
        else:
            assert isinstance(access, ta.LoadOp)
            if planned.form is ta.XlaAccess.INDEX:
                storage = kernel_storage(module, kernel)
                left = outline_index(module, kernel, access, storage)
            else:
                left = outline_load(module, kernel, access)
        assert left is not None, "the plan checked that the outlining applies"
        if planned.relayout:
            how = _HOW_OFF_RELAYOUT[planned.form]
            emit_remark(access, f"{planned.reason}; instead {how} (@{name})")
            count(self.name, "gathers moved off scalar prefetch")
        else:
            how = _HOW[planned.form]
            emit_remark(
                access, f"{planned.reason}; done by {how} the Pallas kernel @{name}"
            )
            count(self.name, "accesses moved to XLA")
        return left

    def whole_kernel_on_xla(
        self, kernel: ta.KernelOp, e: Rejection, unforeseen: OutlinePlan | None = None
    ) -> None:
        """No tiling for this kernel (64-bit data, an odd access best fused on XLA, no
        legal tile sizes, a reduction that cannot be one block, an index that needs a
        reduction of the same loop...): it runs on XLA whole, which computes what the
        ta reference does, and a remark says why. `unforeseen`: the plan carried out,
        when `e` blames what it would have moved to XLA had it foreseen it."""
        name = kernel.sym_name.data
        where = e.op if e.op is not None else kernel
        if e.kind is RejectionKind.WIDE_DATA:
            emit_remark(where, f"{e.message}: @{name} runs on XLA")
            run_on_xla(kernel)
            return
        if e.kind is RejectionKind.XLA_FUSION:
            emit_remark(
                where,
                f"{e.message}; @{name} runs on XLA as one fusion (moving only the "
                "access to XLA would write and read it once more)",
            )
        elif unforeseen is not None:
            emit_remark(
                where,
                f"{e.message}; @{name} runs on XLA (its outlining plan did not "
                f"foresee this: {unforeseen})",
            )
        else:
            emit_remark(where, f"{e.message}; @{name} runs on XLA")
        count(self.name, "kernels run on XLA")
        run_on_xla(kernel)


def _an_access_of(op: Operation | None, kernel: ta.KernelOp) -> bool:
    """Whether `op` is a load or store of the kernel's loop."""
    return (
        isinstance(op, ta.LoadOp | ta.StoreOp)
        and (loop := op.parent_op()) is not None
        and loop.parent_op() is kernel
    )
