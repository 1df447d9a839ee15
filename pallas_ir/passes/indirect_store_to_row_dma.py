"""`indirect-store-to-row-dma`: symbol-indexed `ta.store`s of whole rows become row
scatters.

A `ta.store` into an `inout` buffer whose map uses one symbol, an (integer-cast) value
loaded from an integer index buffer consecutively along one loop dim (`idx[p]`,
`tokens[b, t]`), is a row scatter when
the symbol picks the row of the buffer's N-D view and loop dims give the other
indices, the last one whole: `cache[:, :, pos] = new`, `x.index_copy_(0, idx, src)`,
`x.index_add_(0, idx, src)`. The pass makes the index buffer a scalar-prefetch argument
(role `prefetch`: SMEM on TPU) and moves a flat store onto that N-D view of its buffer
(a `ta.reshape` in the kernel). `tile` then writes it as `tl.scatter`: one row DMA per
written row into the buffer left in HBM, aliased to the kernel's output (the KV-cache
update). Anything else is left as it was, with a remark saying why; the tiler then
keeps the kernel on XLA (a scatter).

Meaning is unchanged: a role change and a contiguous view whose strides are the flat
map's coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap, AffineSymExpr

from pallas_ir.affine_analysis import flat_offset, linearize
from pallas_ir.dialects.common import ArgRole, ReductionKind
from pallas_ir.dialects.tensor_access import (
    KernelOp,
    LoadOp,
    StoreOp,
    root_buffer,
)
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.passes.indirect_access import (
    INDEX_CASTS,
    Rejected,
    loop_extent,
    nd_view,
    trace_symbol,
    view_before_loop,
)
from pallas_ir.passes.options import CheckedOptionsPass, Rule, positive_bytes
from pallas_ir.passes.report import AccessReport, value_name

PASS_NAME = "indirect-store-to-row-dma"

SMEM_WORD = 4
"""Bytes one index takes in SMEM (int64 indices are carried as int32)."""


@dataclass(frozen=True)
class _RowScatter:
    """A store the pass rewrites."""

    store: StoreOp
    index: BlockArgument
    """The index buffer, which becomes a prefetch argument."""
    shape: tuple[int, ...]
    """The N-D view of the written buffer."""
    map: AffineMap
    """The store's map on that view: the row a bare symbol, the rest loop dims."""
    reshape: bool
    index_load: LoadOp
    index_map: AffineMap
    """The index load's map: its own, or, where one index serves every point, the
    same place read along a loop dim of extent 1 (the row dim)."""


def _only_index_use(value: SSAValue, store: StoreOp) -> Operation | None:
    """The first use of an index value other than (a cast chain into) the store's
    symbol operand; None if there is none."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, INDEX_CASTS):
            if (found := _only_index_use(user.results[0], store)) is not None:
                return found
        elif user is not store or use.index < 2 + len(store.dims):
            return user  # operands: value, buffer, dims, symbols
    return None


def _analyse(kernel: KernelOp, store: StoreOp, smem_budget: int) -> _RowScatter:
    buffer = root_buffer(store.buffer)
    if kernel.role_of(buffer) != ArgRole.INOUT:
        raise Rejected(
            f"{value_name(buffer)} is not an inout argument: a row scatter keeps what "
            "it does not write",
            "written buffer not inout",
        )
    if store.combine not in (None, ReductionKind.SUM):
        raise Rejected(
            f"the store accumulates with <{store.combine}>; rows are added (<sum>) "
            "or written",
            "accumulates other than sum",
        )
    if len(store.symbols) != 1:
        raise Rejected(
            f"the store uses {len(store.symbols)} symbols; a row scatter picks rows "
            "of one dim",
            "not one symbol",
        )
    mtype = store.buffer.type
    assert isinstance(mtype, MemRefType)
    bits = numpy_dtype(mtype.element_type).itemsize * 8
    if bits != 32:
        raise Rejected(
            f"rows of {mtype.element_type} pack several to a 32-bit sublane: a row DMA "
            "cannot write one of them",
            "rows not 32-bit",
        )
    source = trace_symbol(store, 0, store.symbols[0])  # type: ignore[arg-type]
    old = store.map.data
    shape, results, reshape = nd_view(old, mtype, store.dims)
    rank = len(shape)
    row = rank - 2
    uses = sum(isinstance(x, AffineSymExpr) for e in results for x in e.dfs())
    if uses != 1 or not isinstance(results[row], AffineSymExpr):
        raise Rejected(
            "the symbol is not the bare index of the second-minor dim: the store does "
            "not write whole rows",
            "not whole rows",
        )
    used: list[int] = []
    for k, e in enumerate(results):
        if k == row:
            continue
        lin = linearize(e)
        if lin is None or lin.symbols or len(lin.dims) > 1 or lin.constant:
            raise Rejected(f"index #{k} ({e}) is not a loop dim", "index not a loop dim")
        if lin.dims:
            ((p, c),) = lin.dims.items()
            if c != 1:
                raise Rejected(f"index #{k} ({e}) steps by {c}", "index not a loop dim")
            used.append(p)
        elif k == rank - 1:
            raise Rejected("the store writes one element of each row", "not whole rows")
    last = linearize(results[-1])
    assert last is not None
    (lane,) = last.dims
    if loop_extent(store.dims[lane]) != shape[-1]:
        raise Rejected(
            f"the store writes {loop_extent(store.dims[lane])} of the {shape[-1]} "
            "elements of a row",
            "not whole rows",
        )
    index_view = source.load.buffer.type
    assert isinstance(index_view, MemRefType)
    rows = {store.dims[p] for p in used}
    index_map = source.load.map.data
    index_lin = flat_offset(index_map.results, index_view.get_shape())
    if index_lin is not None and not index_lin.symbols and not index_lin.dims:
        # One index for every point (a write at one position: a decode step's KV-cache
        # write). Read along a loop dim of extent 1 that no other index of the store
        # takes, it is the same value, and that dim is the row dim.
        unit = next(
            (
                p
                for p, d in enumerate(source.load.dims)
                if loop_extent(d) == 1 and d not in rows
            ),
            None,
        )
        if unit is not None:
            *lead, last = index_map.results
            index_map = AffineMap(
                index_map.num_dims,
                index_map.num_symbols,
                (*lead, last + AffineExpr.dimension(unit)),
            )
            index_lin = flat_offset(index_map.results, index_view.get_shape())
    if (
        index_lin is None
        or index_lin.symbols
        or list(index_lin.dims.values()).count(1) != 1
        or any(c <= 0 for c in index_lin.dims.values())
    ):
        raise Rejected(
            f"the index is read from {value_name(source.buffer)} at "
            f"{source.load.map.data}: consecutive along one loop dim is needed",
            "index not read along one loop dim",
        )
    if any(store.dims[p] in rows for p in index_lin.dims):
        raise Rejected(
            "the index is read at every point of a row: each index picks one element, "
            "not a row",
            "index per element",
        )
    if kernel.role_of(source.buffer) not in (ArgRole.IN, ArgRole.PREFETCH):
        raise Rejected(
            f"index buffer {value_name(source.buffer)} is written by the kernel",
            "index buffer has other uses",
        )
    for op in kernel.walk():
        if (
            isinstance(op, LoadOp)
            and root_buffer(op.buffer) is source.buffer
            and (user := _only_index_use(op.result, store)) is not None
        ):
            raise Rejected(
                f"index buffer {value_name(source.buffer)} is also read by "
                f"{user.name}, so it keeps its role",
                "index buffer has other uses",
            )
    index_type = source.buffer.type
    assert isinstance(index_type, MemRefType)
    if index_type.element_count() * SMEM_WORD > smem_budget:
        raise Rejected(
            f"index {value_name(source.buffer)} ({index_type.element_count()} indices) "
            f"does not fit smem-budget {smem_budget}",
            "index over smem-budget",
        )
    return _RowScatter(
        store,
        source.buffer,
        shape,
        AffineMap(old.num_dims, old.num_symbols, tuple(results)),
        reshape,
        source.load,
        index_map,
    )


@dataclass(frozen=True)
class IndirectStoreToRowDmaPass(CheckedOptionsPass):
    """Turn symbol-indexed ta.stores of whole rows into row scatters: the index buffer
    becomes a `prefetch` argument and a flat store moves onto the N-D view whose
    second-minor dim its symbol picks. Stores that write parts of rows, along the lane
    dim, element-wise (torch.scatter), of 8- or 16-bit data, or that accumulate other
    than by sum are left alone, each with a remark.

    Options:
      smem-budget: bytes of SMEM the index buffer may take (4 per index). Default
        256 KiB, a quarter of the SMEM of v4-v7x.
    """

    name = PASS_NAME
    option_rules: ClassVar[dict[str, Rule]] = {"smem_budget": positive_bytes}

    smem_budget: int = 1 << 18

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        report = AccessReport(PASS_NAME)
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            if kernel.on_xla:
                continue
            for store in [o for o in kernel.walk() if isinstance(o, StoreOp)]:
                if not store.symbols:
                    continue
                report.seen()
                buffer = root_buffer(store.buffer)
                try:
                    found = _analyse(kernel, store, self.smem_budget)
                except Rejected as r:
                    report.rejected(store, buffer, r.reason, r.key)
                    continue
                roles = [
                    ArgRole.PREFETCH if a is found.index else kernel.role_of(a)
                    for a in kernel.body.block.args
                ]
                kernel.set_roles(roles)
                if found.reshape:
                    view = view_before_loop(kernel, store, found.shape)
                    store.operands = [store.value, view, *store.dims, *store.symbols]
                store.properties["map"] = AffineMapAttr(found.map)
                found.index_load.properties["map"] = AffineMapAttr(found.index_map)
                report.applied(
                    store,
                    buffer,
                    f"rows of {'x'.join(map(str, found.shape))} by row DMA, indices "
                    f"{value_name(found.index)} prefetched",
                )


__all__ = ["IndirectStoreToRowDmaPass"]
