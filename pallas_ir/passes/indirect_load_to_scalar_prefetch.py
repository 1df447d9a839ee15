"""`indirect-load-to-scalar-prefetch`: symbol-indexed `ta.load`s become row gathers.

A `ta.load` whose map uses a symbol that is an (integer-cast) value loaded from a small
integer buffer indexed by loop dims is a gather: `out = emb[idx]`, `x[:, idx, :]`,
`tok[idx] + pos[pidx]`. The pass turns the index buffer into a scalar-prefetch argument
(role `prefetch`: SMEM on TPU), normalises the table access so that every gathered
table dim is indexed by a bare symbol, and records on the load which Pallas idiom the
tiler should use:

* `gather = #ta<gather_strategy prefetch>`: G1, the prefetched index feeds the table's BlockSpec index map;
* `gather = #ta<gather_strategy dma>`: G3, the table stays in HBM and rows are copied by manual DMAs;
* `gather = #ta<gather_strategy vmem>`: G4, the whole table is one VMEM block read with dynamic row loads;
* `gather = #ta<gather_strategy dma_chunked>`: G3c, the indices are too big for SMEM: the index buffer
  stays an ordinary input and is streamed to SMEM in chunks, rows copied by DMA.

The IR contract each value promises is in docs/passes.md (indirect-load-to-scalar-prefetch).
Meaning is unchanged: a role change and an attribute do not change what a load reads,
and the table reshape is the contiguous N-D view whose strides are the flat map's
coefficients (valid for every index value inside its torch dim).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from math import prod
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AffineMapAttr,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineDimExpr,
    AffineMap,
    AffineSymExpr,
)

from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import ArgRole
from pallas_ir.dialects.tensor_access import (
    KernelOp,
    LoadOp,
    root_buffer,
)
from pallas_ir.passes.indirect_access import (
    INDEX_CASTS,
    IndexSource,
    Rejected,
    loop_extent,
    nd_view,
    shape_str,
    trace_symbol,
    view_before_loop,
)
from pallas_ir.passes.options import (
    CheckedOptionsPass,
    Rule,
    one_of,
    positive_bytes,
)
from pallas_ir.passes.report import AccessReport, value_name
from pallas_ir.tpu_rules import INDEX_CHUNK, vmem_block_bytes

PASS_NAME = "indirect-load-to-scalar-prefetch"

"""Discardable attribute on a rewritten load: which Pallas gather idiom to emit."""

STRATEGIES = ("auto", "prefetch", "dma", "vmem")

SMEM_WORD = 4
"""Bytes one index takes in SMEM: TPU kernels have no 64-bit types, so int64 indices
are carried as int32 (converted at the host boundary) and narrower ones use a word."""

CHUNK_BYTES = INDEX_CHUNK * 4
"""G3c's index chunk: `tpu_rules.INDEX_CHUNK` int32 lookups, the SMEM block the tiler
streams."""


def _itemsize(element: Attribute) -> int:
    width = getattr(element, "bitwidth", None)
    return max(1, width // 8) if isinstance(width, int) else 4


# ---------------------------------------------------------------------------------------
# Analysis of one access


@dataclass
class _Gather:
    """A load the pass can rewrite, and everything the decision needs."""

    load: LoadOp
    table: SSAValue
    """The root kernel argument the load reads (for the remark)."""
    shape: tuple[int, ...]
    """The N-D table view the rewritten load goes through."""
    map: AffineMap
    """The rewritten map: gathered dims are bare symbols."""
    reshape: bool
    """Whether the load's buffer needs a `ta.reshape` to `shape` (it was flat)."""
    gathered: tuple[int, ...]
    """Table dims indexed by a symbol, in increasing order."""
    sources: tuple[IndexSource, ...]
    """One per symbol operand."""
    elements: int
    """Elements the load reads over its loop, n lookups times the row size D: the
    product of the extents of the loop dims it depends on, directly or through its
    indices (a dim it ignores re-reads the same element)."""
    itemsize: int

    @property
    def index_buffers(self) -> tuple[BlockArgument, ...]:
        seen: dict[BlockArgument, None] = {}
        for s in self.sources:
            seen.setdefault(s.buffer)
        return tuple(seen)

    @property
    def table_bytes(self) -> int:
        return prod(self.shape) * self.itemsize

    @property
    def table_vmem_bytes(self) -> int:
        """The table as one VMEM block: padded to whole (sublane, lane) tiles."""
        return vmem_block_bytes(self.shape, 8 * self.itemsize)

    @property
    def read_bytes(self) -> int:
        return self.elements * self.itemsize

    @property
    def relayout_shape(self) -> tuple[int, ...] | None:
        """G1 blocks are one row on the gathered dim. On the second-minor dim that is a
        squeezed tiled dim, illegal on TPU, so G1 needs the table as (..., V, 1, D):
        a full HBM relayout on every call. None when no gathered dim is second-minor."""
        rank = len(self.shape)
        if rank - 2 not in self.gathered:
            return None
        return (*self.shape[: rank - 1], 1, self.shape[-1])


def _used_dims(load: LoadOp) -> set[SSAValue]:
    """The loop variables an access depends on."""
    used: set[SSAValue] = set()
    for result in load.map.data.results:
        for e in result.dfs():
            if isinstance(e, AffineDimExpr):
                used.add(load.dims[e.position])
    return used


def _analyse(load: LoadOp) -> _Gather:
    mtype = load.buffer.type
    assert isinstance(mtype, MemRefType)
    sources = tuple(trace_symbol(load, k, s) for k, s in enumerate(load.symbols))
    old = load.map.data
    shape, results, reshape = nd_view(old, mtype, load.dims)
    if not reshape:
        last = results[-1]
        if any(isinstance(e, AffineSymExpr) for e in last.dfs()):
            raise Rejected(
                f"the last (lane) table index {last} uses a symbol: a lane gather has "
                "no row to fetch",
                "gather on the lane dim",
            )
    gathered: list[int] = []
    for k, e in enumerate(results):
        if not any(isinstance(x, AffineSymExpr) for x in e.dfs()):
            continue
        if not isinstance(e, AffineSymExpr):
            raise Rejected(
                f"table index #{k} is {e}: it combines a symbol with other terms",
                "gathered index is not a bare symbol",
            )
        gathered.append(k)
    if not gathered:
        raise Rejected(
            "the map does not use its symbols: the access is not indirect",
            "symbols unused",
        )
    table_dims = _used_dims(load)
    index_dims: set[SSAValue] = set()
    for s in sources:
        index_dims |= _used_dims(s.load)
    if table_dims <= index_dims:
        raise Rejected(
            "element-wise gather (torch.gather): the index is read at every loop point "
            "the table access depends on, so each index picks one element, not a row",
            "element-wise gather",
        )
    return _Gather(
        load=load,
        table=root_buffer(load.buffer),
        shape=shape,
        map=AffineMap(old.num_dims, old.num_symbols, tuple(results)),
        reshape=reshape,
        gathered=tuple(gathered),
        sources=sources,
        elements=prod(loop_extent(d) for d in table_dims | index_dims),
        itemsize=_itemsize(mtype.element_type),
    )


def _index_bytes(buffer: BlockArgument) -> int:
    t = buffer.type
    assert isinstance(t, MemRefType)
    return t.element_count() * SMEM_WORD


# ---------------------------------------------------------------------------------------
# Uses of an index buffer


def _data_use(value: SSAValue, gathers: set[LoadOp]) -> Operation | None:
    """The first use of an index value that is not (a cast chain into) a symbol operand
    of one of `gathers`; None if there is none."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, INDEX_CASTS):
            if (found := _data_use(user.results[0], gathers)) is not None:
                return found
        elif not (
            isinstance(user, LoadOp)
            and user in gathers
            and use.index >= 1 + len(user.dims)  # operands: buffer, dims, symbols
        ):
            return user
    return None


def _loads_of(kernel: KernelOp, buffer: BlockArgument) -> Iterator[LoadOp]:
    for op in kernel.walk():
        if isinstance(op, LoadOp) and root_buffer(op.buffer) is buffer:
            yield op


# ---------------------------------------------------------------------------------------
# The pass


@dataclass
class _Decision:
    gather: _Gather
    strategy: str
    detail: str


@dataclass
class _KernelRewrite:
    """The pass's work on one kernel: decide everything first, then mutate."""

    options: IndirectLoadToScalarPrefetchPass
    kernel: KernelOp
    report: AccessReport
    rejected: dict[LoadOp, Rejected] = field(default_factory=dict[LoadOp, Rejected])

    def run(self) -> None:
        candidates = [
            op for op in self.kernel.walk() if isinstance(op, LoadOp) and op.symbols
        ]
        gathers: dict[LoadOp, _Gather] = {}
        for load in candidates:
            self.report.seen()
            try:
                gathers[load] = _analyse(load)
            except Rejected as r:
                self.rejected[load] = r
        # Rejections can cascade (an index buffer that feeds a rejected gather cannot
        # become a prefetch argument for the others either), so decide to a fixed point.
        while True:
            accepted = {ld: g for ld, g in gathers.items() if ld not in self.rejected}
            before = len(self.rejected)
            self._reject_shared(accepted)
            accepted = {ld: g for ld, g in accepted.items() if ld not in self.rejected}
            decisions, prefetch = self._decide(accepted)
            if len(self.rejected) == before:
                break
        self._apply(decisions, prefetch)
        for load in candidates:
            if load in self.rejected:
                r = self.rejected[load]
                self.report.rejected(load, root_buffer(load.buffer), r.reason, r.key)

    def _reject_shared(self, accepted: dict[LoadOp, _Gather]) -> None:
        """An index buffer read for anything but gather indices keeps its role, and
        every gather that uses it is left alone."""
        changed = True
        while changed:
            changed = False
            live = {ld for ld in accepted if ld not in self.rejected}
            buffers = {b for ld in live for b in accepted[ld].index_buffers}
            for buffer in sorted(buffers, key=lambda b: b.index):
                reason = self._shared_reason(buffer, live)
                if reason is None:
                    continue
                for ld in live:
                    if buffer in accepted[ld].index_buffers:
                        self.rejected[ld] = Rejected(
                            reason, "index buffer has other uses"
                        )
                        changed = True
                break

    def _shared_reason(self, buffer: BlockArgument, live: set[LoadOp]) -> str | None:
        name = value_name(buffer)
        role = self.kernel.role_of(buffer)
        if role not in (ArgRole.IN, ArgRole.PREFETCH):
            return (
                f"index buffer {name} has role '{role}': the kernel writes it, so it "
                "cannot be a prefetch argument"
            )
        for load in _loads_of(self.kernel, buffer):
            user = _data_use(load.result, live)
            if user is None:
                continue
            if isinstance(user, LoadOp) and user.symbols:
                return (
                    f"index buffer {name} also indexes "
                    f"{value_name(root_buffer(user.buffer))} in a load this pass does "
                    "not rewrite, so it keeps its role"
                )
            return (
                f"index buffer {name} is also read as data (by {user.name}), so it "
                "keeps its role"
            )
        return None

    def _decide(
        self, accepted: dict[LoadOp, _Gather]
    ) -> tuple[list[_Decision], set[BlockArgument]]:
        """Per gather, in program order: fit its new index buffers into the kernel's
        SMEM budget (shared with the kernel's other prefetch arguments), then pick a
        strategy. Returns the decisions and the buffers that become prefetch."""
        opts = self.options
        args = self.kernel.body.block.args
        prefetch = {a for a in args if self.kernel.role_of(a) == ArgRole.PREFETCH}
        used = sum(_index_bytes(a) for a in prefetch)
        streamed: set[BlockArgument] = set()
        decisions: list[_Decision] = []
        for load, g in accepted.items():
            new = [b for b in g.index_buffers if b not in prefetch]
            need = sum(_index_bytes(b) for b in new)
            # Buffers that already are prefetch arguments are in SMEM whatever the
            # budget says; only new ones have to fit.
            fits = not new or (
                not any(b in streamed for b in new) and used + need < opts.smem_budget
            )
            try:
                if fits:
                    strategy, why = self._pick(g)
                    detail = self._describe(g, strategy, why)
                    prefetch.update(new)
                    used += need
                else:
                    detail = self._chunked(g, new, need, used)
                    strategy = "dma_chunked"
                    streamed.update(new)
            except Rejected as r:
                self.rejected[load] = r
                continue
            decisions.append(_Decision(g, strategy, detail))
        return decisions, prefetch

    # -- strategy ---------------------------------------------------------------

    def _costs(self, g: _Gather) -> dict[str, int | None]:
        """Modelled HBM bytes per idiom (facts file §4): G1 reads n*D*s, plus a
        2*V*D*s relayout of the whole table when it gathers on the second-minor dim;
        G3 reads exactly n*D*s; G4 reads the table once, V*D*s, if the double-buffered
        table fits vmem-budget (None otherwise). The index array costs every idiom the
        same and is left out."""
        relayout = 2 * g.table_bytes if g.relayout_shape is not None else 0
        fits_vmem = 2 * g.table_vmem_bytes <= self.options.vmem_budget
        return {
            "prefetch": g.read_bytes + relayout,
            "dma": g.read_bytes,
            "vmem": g.table_bytes if fits_vmem else None,
        }

    def _pick(self, g: _Gather) -> tuple[str, str]:
        costs = self._costs(g)
        opts = self.options
        if opts.strategy != "auto":
            if costs[opts.strategy] is None:
                raise Rejected(
                    f"strategy=vmem, but the table ({g.table_vmem_bytes} B in VMEM, "
                    f"double-buffered {2 * g.table_vmem_bytes} B) does not fit vmem-budget {opts.vmem_budget}",
                    "table over vmem-budget",
                )
            return opts.strategy, f"strategy={opts.strategy}"
        # Fewest bytes wins; ties go to the simpler idiom: prefetch (a pipelined
        # BlockSpec, no manual DMA), then dma (no VMEM held), then vmem.
        order = ("prefetch", "dma", "vmem")
        best = min(
            (s for s in order if costs[s] is not None),
            key=lambda s: (costs[s], order.index(s)),
        )
        return best, "auto picked the fewest modelled HBM bytes"

    def _cost_text(self, g: _Gather) -> str:
        costs = self._costs(g)
        relayout = g.relayout_shape
        prefetch = f"prefetch {costs['prefetch']}"
        if relayout is not None:
            prefetch += (
                f" ({g.read_bytes} + {2 * g.table_bytes} to relayout the table to "
                f"{shape_str(relayout)})"
            )
        vmem = (
            f"vmem {costs['vmem']}"
            if costs["vmem"] is not None
            else f"vmem n/a (table {g.table_vmem_bytes} B in VMEM, double-buffered, exceeds "
            f"vmem-budget {self.options.vmem_budget})"
        )
        return f"{prefetch}, dma {costs['dma']}, {vmem}"

    def _where(self, g: _Gather) -> str:
        mtype = g.load.buffer.type
        assert isinstance(mtype, MemRefType)
        dims = ", ".join(map(str, g.gathered))
        by = ", ".join(dict.fromkeys(value_name(s.buffer) for s in g.sources))
        text = (
            f"table {shape_str(g.shape, mtype.element_type)} gathered on "
            f"dim{'s' if len(g.gathered) > 1 else ''} {dims} by {by}"
        )
        row = g.shape[-1]
        if row % 128:
            text += (
                f"; rows of {row} elements are not a multiple of 128 lanes: legal, the "
                "block spans the whole last dim"
            )
        return text

    def _describe(self, g: _Gather, strategy: str, why: str) -> str:
        smem = sum(_index_bytes(b) for b in g.index_buffers)
        return (
            f"gather = #ta<gather_strategy {strategy}>, {self._where(g)}; indices in "
            f"SMEM ({smem} B as i32); {why}: {self._cost_text(g)}"
        )

    def _chunked(self, g: _Gather, new: list[BlockArgument], need: int, used: int) -> str:
        opts = self.options
        names = ", ".join(value_name(b) for b in new)
        over = (
            f"index {names} ({need} B as i32"
            + (f", with {used} B of other prefetch arguments" if used else "")
            + f") does not fit smem-budget {opts.smem_budget}"
        )
        if opts.strategy in ("prefetch", "vmem"):
            raise Rejected(
                f"{over}; strategy={opts.strategy} needs the indices in SMEM "
                "(strategy=auto or dma would stream them)",
                "index over smem-budget",
            )
        streamed = sum(_index_bytes(b) for b in new)
        return (
            f"gather = #ta<gather_strategy dma_chunked>, {self._where(g)}; {over}, so it "
            f"stays an ordinary input streamed to SMEM in {CHUNK_BYTES}-byte chunks; modelled HBM bytes "
            f"{g.read_bytes + streamed} ({g.read_bytes} rows + {streamed} indices)"
        )

    # -- rewriting --------------------------------------------------------------

    def _apply(self, decisions: list[_Decision], prefetch: set[BlockArgument]) -> None:
        roles = [
            ArgRole.PREFETCH if a in prefetch else self.kernel.role_of(a)
            for a in self.kernel.body.block.args
        ]
        self.kernel.set_roles(roles)
        for d in decisions:
            load = d.gather.load
            if d.gather.reshape:
                buffer = view_before_loop(self.kernel, load, d.gather.shape)
                load.operands = [buffer, *load.dims, *load.symbols]
                load.properties["map"] = AffineMapAttr(d.gather.map)
            load.attributes[ta.GATHER_ATTR] = ta.GatherStrategyAttr(
                ta.GatherStrategy(d.strategy)
            )
            self.report.applied(load, d.gather.table, d.detail)


@dataclass(frozen=True)
class IndirectLoadToScalarPrefetchPass(CheckedOptionsPass):
    """Turn symbol-indexed ta.loads into row gathers with scalar-prefetched indices.

    A load whose map uses a symbol cast from a value loaded from an integer buffer
    indexed by loop dims becomes a gather: the index buffer's role becomes `prefetch`,
    a flat table is viewed as the contiguous N-D `ta.reshape` in which each gathered
    dim is a bare symbol, and the load gets `{gather = #ta<gather_strategy S>}` (S: prefetch,
    dma, vmem or dma_chunked; `ta.GatherStrategyAttr`). Lane-dim gathers, element-wise gathers (torch.gather) and index
    buffers used for anything else are left alone, each with a remark.

    Options:
      smem-budget: bytes of SMEM the kernel's prefetch arguments may take together
        (each index counts 4 bytes: int64 is carried as int32); they must stay below
        it. Default 1 MiB, the SMEM of v4-v7x.
      vmem-budget: bytes of VMEM a resident table may take with double buffering
        (strategy vmem needs 2 * table bytes <= vmem-budget). Default 8 MiB: half the
        16 MiB default scoped VMEM limit of v4/v5e/v5p, the rest left to other blocks.
      strategy: auto | prefetch | dma | vmem. `auto` picks the idiom with the fewest
        modelled HBM bytes; index arrays over smem-budget are streamed (dma_chunked)
        under auto and dma, and left alone under prefetch and vmem.
    """

    name = PASS_NAME
    option_rules: ClassVar[dict[str, Rule]] = {
        "smem_budget": positive_bytes,
        "vmem_budget": positive_bytes,
        "strategy": one_of(STRATEGIES),
    }

    smem_budget: int = 1 << 20
    vmem_budget: int = 8 << 20
    strategy: str = "auto"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        report = AccessReport(PASS_NAME)
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            _KernelRewrite(self, kernel, report).run()


__all__ = ["IndirectLoadToScalarPrefetchPass"]
