"""The outlining plan of a kernel the tile policy does not tile, decided at once for
the whole kernel: every access no Pallas idiom covers, with the policy's reason and the
form of the XLA kernel that takes it (`OutlinedAccess`), or why the kernel runs on XLA
whole. xla-outline moves the accesses in order and asks the policy once for the tile
sizes of what is left.

The plan asks the policy's questions in the policy's order, each about every access at
once, on the kernel as outlining the accesses before it leaves it:

1. accesses `analyse` rejects (an index that is not a loop dim plus a constant, a load
   indexed by data that is no marked gather, a partial store), in program order, but a
   store that no outlining form takes (a scatter) first: it keeps the kernel on XLA;
2. gathers indexed along a reduction dim that row DMA does not take;
3. scalar-prefetch gathers that would relayout their table on the host: their row
   index moves to XLA, or an XLA gather takes the rows when that moves less than the
   relayout; else they keep the relayout (`relayout_ok`);
4. 64-bit data or a product reduction in what is left: the rest runs on XLA whole;
5. accesses that allow no tile size of a loop dim on their own, dim by dim.

An access of steps 1, 2 and 5 runs on XLA with the whole kernel instead when its index
is static and nothing left needs Pallas (`fuses_on_xla`: one XLA fusion), or when no
outlining form applies to it. A load that only indexes a later load moves with it (a
double indirection is one XLA step).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.tile.access import (
    Access,
    analyse,
    buffer_bytes,
    fuses_on_xla,
    gathered_bytes,
    rows_addressable,
    split_dim,
    split_masked,
)
from pallas_ir.lowering.tile.legality import rows_by_dma
from pallas_ir.lowering.tile.policy import (
    Rejection,
    RejectionKind,
    classify_gathers,
    kernel_storage,
    no_tile_size,
    the_loop,
    tile_options,
    untileable,
    walks_of,
    wide_data,
)
from pallas_ir.passes.xla_outline import (
    load_outlines,
    outlined_ops,
    rows_outline,
    scratch_dims,
    store_outlines,
)


@dataclass(frozen=True)
class OutlinedAccess:
    """An access that moves to an XLA kernel of its own."""

    op: ta.LoadOp | ta.StoreOp
    """The access the policy blames (a load whose value only indexes a later load moves
    with that load)."""
    reason: str
    """The policy's reason."""
    form: ta.XlaAccess
    """The XLA kernel that takes it: a gather before the Pallas kernel, the row indices
    computed before it (the Pallas kernel gathers the rows by row DMA), or a scatter
    after it."""
    relayout: bool = False
    """A scalar-prefetch gather moved off its table's relayout (it does tile as it is)."""

    def __str__(self) -> str:
        if isinstance(self.op, ta.StoreOp):
            hint = ta.root_buffer(self.op.buffer).name_hint
            what = f"the store to %{hint}" if hint else "a store"
        else:
            hint = self.op.result.name_hint
            what = f"%{hint}" if hint else "a load"
        return f"{self.form.value} {what}"


@dataclass(frozen=True)
class OutlinePlan:
    """What xla-outline does with a kernel the tile policy does not tile."""

    accesses: tuple[OutlinedAccess, ...] = ()
    """The accesses that move to XLA kernels, in order."""
    whole_kernel: Rejection | None = None
    """Why what is left after `accesses` runs on XLA whole (None: it tiles)."""
    relayout_ok: frozenset[Operation] = frozenset()
    """Scalar-prefetch gathers that keep their table's relayout (no XLA form moves
    less)."""

    def __str__(self) -> str:
        moved = ", ".join(str(a) for a in self.accesses) or "nothing"
        if self.whole_kernel is None:
            return f"to XLA: {moved}; the rest to tile"
        return f"to XLA: {moved}; the rest runs on XLA ({self.whole_kernel.message})"


def outline_form(
    access: ta.LoadOp | ta.StoreOp,
    storage: dict[int, MemRefType],
    gone: AbstractSet[Operation] = frozenset(),
) -> ta.XlaAccess | None:
    """How an access no Pallas idiom covers moves to XLA once the outlinings that take
    `gone` out of its loop are done, or None when no form applies (the store's index
    depends on data, the load's on a reduction...). A load of whole rows moves only its
    row index, when the rows can come by row DMA (not 8-bit rows, nor rows packed
    across a sublane); any other load, the whole gather."""
    if isinstance(access, ta.StoreOp):
        return ta.XlaAccess.SCATTER if store_outlines(access) else None
    if (
        rows_by_dma(8 * numpy_dtype(access.result.type).itemsize)
        and rows_addressable(access)
        and rows_outline(access, storage, gone) is not None
    ):
        return ta.XlaAccess.INDEX
    return ta.XlaAccess.GATHER if load_outlines(access, gone) else None


def plan_outlining(module: ModuleOp, kernel: ta.KernelOp) -> OutlinePlan:
    """The outlining plan of `kernel` (see the module docstring)."""
    loop = the_loop(kernel)
    if isinstance(loop, Rejection):
        return OutlinePlan(whole_kernel=loop)
    return _Planner(module, kernel, loop).plan()


@dataclass
class _Planner:
    module: ModuleOp
    kernel: ta.KernelOp
    loop: ta.LoopOp
    accesses: list[OutlinedAccess] = field(default_factory=list[OutlinedAccess])
    gone: set[Operation] = field(default_factory=set[Operation])
    """Ops the planned outlinings take out of the loop (replaced or erased)."""
    erased: set[Operation] = field(default_factory=set[Operation])
    """Of those, the ones erased (the rest are replaced by an op of the same type)."""
    rows_by_dma: bool = False
    """Whether a planned outlining leaves a row gather (which needs Pallas)."""
    buffers: dict[Operation, Access] = field(default_factory=dict[Operation, Access])
    """The kernel's accesses of the buffers the planned XLA kernels share with it, by
    the access each replaces."""
    known: set[Operation] = field(default_factory=set[Operation])
    """The keys of `buffers` when the accesses left were listed (`untileable`)."""

    def plan(self) -> OutlinePlan:
        loop = self.loop
        self.storage = kernel_storage(self.module, self.kernel)
        analysed: dict[Operation, Access] = {}
        rejected: list[Rejection] = []
        for o in loop.body.block.ops:
            if isinstance(o, ta.LoadOp | ta.StoreOp):
                try:
                    analysed[o] = analyse(o, loop, self.storage)
                except PassError as e:
                    rejected.append(Rejection.of(e))
        # A store no XLA kernel takes alone (its index depends on data, or it
        # accumulates) keeps the whole kernel on XLA: moving other accesses out first
        # would only add XLA kernels.
        unmovable = [
            r
            for r in rejected
            if isinstance(r.op, ta.StoreOp) and outline_form(r.op, self.storage) is None
        ]
        for r in [*unmovable, *(r for r in rejected if r not in unmovable)]:
            if (whole := self.outline(r)) is not None:
                return self.done(whole)
        for r in classify_gathers(loop, self.left(analysed)).along_reduction:
            if (whole := self.outline(r)) is not None:
                return self.done(whole)
        relayout_ok: set[Operation] = set()
        for r in classify_gathers(loop, self.left(analysed)).relayouts:
            if r.op not in self.gone and not self.move_off_relayout(r):
                assert r.op is not None
                relayout_ok.add(r.op)
        left = self.left(analysed)
        gathers = classify_gathers(loop, left)
        if (wide := wide_data(loop, gathers.skip | self.erased)) is not None:
            return self.done(wide, relayout_ok)
        whole = self.untileable(left, gathers.forced)
        return self.done(whole, relayout_ok)

    def left(self, analysed: dict[Operation, Access]) -> dict[Operation, Access]:
        """The accesses the planned outlinings leave, in program order."""
        return {
            o: self.buffers.get(o) or analysed[o]
            for o in self.loop.body.block.ops
            if o in self.buffers or (o in analysed and o not in self.gone)
        }

    def done(
        self, whole: Rejection | None, relayout_ok: set[Operation] | None = None
    ) -> OutlinePlan:
        return OutlinePlan(tuple(self.accesses), whole, frozenset(relayout_ok or ()))

    def take(self, access: OutlinedAccess) -> None:
        """Plan `access`, and note the kernel's access of the buffer it then shares
        with its XLA kernel (read or written at the loop dims the access used, whole and
        in order), if any."""
        before = frozenset(self.gone)
        replaced, erased = outlined_ops(access.op, before)
        self.accesses.append(access)
        self.gone |= {replaced, *erased}
        self.erased |= erased
        if access.form is ta.XlaAccess.INDEX:
            self.rows_by_dma = True
            return
        dims = scratch_dims(access.op, before)
        assert isinstance(replaced, ta.LoadOp | ta.StoreOp)
        value = replaced.result if isinstance(replaced, ta.LoadOp) else replaced.value
        extents = list(self.loop.extents)
        self.buffers[replaced] = Access(
            replaced,
            replaced.buffer,
            tuple(extents[d] for d in dims) or (1,),
            8 * numpy_dtype(value.type).itemsize,
            tuple((d, 0) for d in dims) or ((None, 0),),
        )

    def outline(self, r: Rejection) -> Rejection | None:
        """Plan to move the access `r` blames to XLA; or why the kernel runs on XLA
        whole instead (returned)."""
        access = r.op
        if access in self.gone:
            return None  # it moves with an access planned before it
        if not isinstance(access, ta.LoadOp | ta.StoreOp) or (
            access.parent_op() is not self.loop
        ):
            return r
        if not self.rows_by_dma and fuses_on_xla(access, self.gone):
            return replace(r, kind=RejectionKind.XLA_FUSION)
        form = outline_form(access, self.storage, self.gone)
        if form is None:
            return r
        self.take(OutlinedAccess(access, r.message, form))
        return None

    def move_off_relayout(self, r: Rejection) -> bool:
        """Plan to move a scalar-prefetch gather that would relayout its table to XLA:
        its row index (the rows then move once, by row DMA), or the gather itself when
        an XLA gather moves less than the relayout (it reads and writes what is
        gathered; the relayout, the whole table). False: neither is planned."""
        gather = r.op
        assert isinstance(gather, ta.LoadOp)
        if outline_form(gather, self.storage, self.gone) is ta.XlaAccess.INDEX:
            form = ta.XlaAccess.INDEX
        elif gathered_bytes(gather) < buffer_bytes(gather) and load_outlines(
            gather, self.gone
        ):
            form = ta.XlaAccess.GATHER
        else:
            return False
        self.take(OutlinedAccess(gather, r.message, form, relayout=True))
        return True

    def untileable(
        self, left: dict[Operation, Access], forced: dict[int, list[int]]
    ) -> Rejection | None:
        """Plan to move the accesses that allow no tile size of a loop dim on their own,
        dim by dim as the policy meets them; stop at a dim no tile fits for another
        reason (the policy then says why the kernel runs on XLA whole)."""
        n_par = len(self.loop.parallel_extents)
        split = split_dim(self.loop)
        self.known = set(self.buffers)
        for l, e in enumerate(self.loop.extents):
            if self.fits(left, l, e, n_par, forced, split):
                continue
            if l >= n_par and l not in forced:
                return None  # a reduction that cannot be one whole block
            alone = untileable(walks_of(self.walking(left), l), e)
            if not alone:
                return None  # the accesses only conflict with each other
            for a in alone:
                if (
                    whole := self.outline(Rejection(a.op, no_tile_size(l, e)))
                ) is not None:
                    return whole
            if not self.fits(left, l, e, n_par, forced, split):
                return None
        return None

    def walking(self, left: dict[Operation, Access]) -> list[Access]:
        """The accesses the planned outlinings leave: `left`, with the buffers of the
        XLA kernels planned since in place of the accesses they replace."""
        kept = [
            a if o in self.known or o not in self.gone else self.buffers[o]
            for o, a in left.items()
            if o in self.known or o not in self.gone or o in self.buffers
        ]
        return kept + [b for o, b in self.buffers.items() if o not in left]

    def fits(
        self,
        left: dict[Operation, Access],
        l: int,
        e: int,
        n_par: int,
        forced: dict[int, list[int]],
        split: int | None,
    ) -> bool:
        """Whether loop dim `l` has a tile size (for a reduction, the whole dim).
        `split`: the reduction dim that may be split (`split_dim`)."""
        walks = walks_of(self.walking(left), l)
        allowed = tile_options(
            walks, e, l >= n_par, forced.get(l), l == split, split_masked(self.loop)
        )
        return bool(allowed) and (l < n_par or l in forced or e in allowed)
