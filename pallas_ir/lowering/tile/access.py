"""What each access of a `ta.loop` is, for the tiler: the buffer it reads or writes (a
kernel argument, an in-kernel view, or the N-D storage the host already holds), and per
buffer dim the loop dim that walks it, its constant offset and its step; gathers marked
by indirect-load-to-scalar-prefetch also name the index loads that pick their rows.

`analyse` raises a located `PassError` for an access no Pallas idiom covers; the policy
turns that into a rejection (and xla-outline into an XLA kernel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, MemRefType, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineSymExpr

from pallas_ir.affine_analysis import (
    LinearExpr,
    decompose_on_shape,
    flat_offset,
    linearize,
    rotation,
)
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import (
    ELEMENTWISE_DIALECTS,
    ArgRole,
    ReductionKind,
)
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.passes.access_rewrites import access_offset
from pallas_ir.tpu_rules import rows_per_sublane


@dataclass(frozen=True)
class Storage:
    """A kernel argument seen as the N-D storage the host already holds it in: the
    `tl.kernel` gets it as an extra argument, so no reshape (a TPU relayout) is needed."""

    root: int
    """The ta.kernel argument it is."""
    type: MemRefType
    reshape: bool = False
    """True: the host reshapes the launch operand to `type` (a relayout on TPU when the
    last two dims change); False: the host already holds it with this shape."""


@dataclass(frozen=True)
class Access:
    op: ta.LoadOp | ta.StoreOp
    buffer: SSAValue | Storage
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
    merged_into: SSAValue | Storage | None = None
    """For an access through a view whose trailing dims split its argument's last dim:
    the argument (or the host's storage of it, its rows regrouped where that is free),
    which the kernel reads and splits, or stores with the tile's split dims merged (see
    `merge_lane_split_views`)."""
    rotations: tuple[int, ...] = ()
    """Per buffer dim, the c of a load at `(d + c) mod n` (0 where the dim is not
    rotated; all 0 when empty): the whole dim is loaded and rolled in the kernel."""

    @property
    def diagonal(self) -> bool:
        """A load whose last two dims one loop dim walks together (`x[.., i + r, i +
        c]`, `x.diagonal()`; `analyse` allows no other repeat): the (t, t) block of
        each step is loaded and its diagonal kept in the kernel
        (`build.Emitter.diagonal_of`)."""
        walked = [l for l, _ in self.dims if l is not None]
        return len(set(walked)) < len(walked)

    def buffer_dims(self, l: int) -> list[int]:
        """The buffer dims loop dim `l` walks: one, or the last two of a diagonal."""
        return [b for b, (d, _) in enumerate(self.dims) if d == l]

    def rotation(self, b: int) -> int:
        return self.rotations[b] if self.rotations else 0

    @property
    def merged_dims(self) -> int:
        """How many trailing dims of the view split `merged_into`'s last dim."""
        assert self.merged_into is not None
        t = self.merged_into.type  # a Storage's, or the kernel argument's
        return len(self.shape) - t.get_num_dims() + 1  # type: ignore[attr-defined]

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

    def with_unit_dim(self, view: Storage) -> Access:
        """The access on the view `(..., A, 1, B)` of its buffer `(..., A, B)`: a block of
        one row of A is then legal (A is no longer the second-minor dim)."""
        k = len(self.shape) - 1
        return Access(
            self.op,
            view,
            (*self.shape[:k], 1, self.shape[k]),
            self.bits,
            (*self.dims[:k], (None, 0), self.dims[k]),
            (*self.steps[:k], 1, self.steps[k]) if self.steps else (),
            self.gathers,
            rotations=(*self.rotations[:k], 0, self.rotations[k])
            if self.rotations
            else (),
        )


def split_dim(loop: ta.LoopOp) -> int | None:
    """The reduction dim a sequential grid dim may split, when the loop's reductions
    allow one (`_splittable_at`): its only reduction dim, or, in a loop that reduces
    per-row reductions again (`ta.reduce ... over`), its first reduction dim, when
    every reduction combines over that dim alone (the outer ones) or not over it (the
    per-row ones, whole in each block)."""
    n_par, rank = len(loop.parallel_extents), len(loop.extents)
    reduces = [op for op in loop.body.block.ops if isinstance(op, ta.ReduceOp)]
    if not any(r.partial for r in reduces):
        split = n_par if rank - n_par == 1 else None
    elif all(
        n_par not in r.reduced_dims(loop)
        or (
            r.reduced_dims(loop) == (n_par,)
            and ta.value_dims(r.value, loop) <= {*range(n_par + 1)}
        )
        for r in reduces
    ):
        split = n_par  # the outer ones sum per-row values: what each block holds
    else:
        split = None
    if split is None or not _splittable_at(loop, split):
        return None
    return split


def split_masked(loop: ta.LoopOp) -> bool:
    """Whether the loop's split dim (`split_dim`) may take a tile that does not divide
    it, the last part running past the dim's end: the kernel sets the padding of every
    reduction over the split dim to the reduction's identity (`Emitter.masked`), and
    the per-row stores of a loop of per-row reductions reduced again write only the
    rows inside the dim (a matrix product's factors are both masked: the MXU sums what
    it is given, bfloat16 factors too). Not where a lookup could read its index from
    the padding (it would fetch an arbitrary row)."""
    if ta.has_partial_reductions(loop):
        return True
    for op in loop.body.block.ops:
        if isinstance(op, ta.LoadOp | ta.StoreOp) and op.symbols:
            return False
    return True


def _splittable_at(loop: ta.LoopOp, split: int) -> bool:
    """Whether the reductions over loop dim `split` can run over a sequential grid
    dim: combinable kinds (not argmax/argmin), stores that do not walk it, and
    reduction results that are only stored, or only used by an epilogue
    (`epilogue_ops`: what a softmax does with its sums varies along the reduced dim, so
    a softmax cannot)."""
    split_var = loop.body.block.args[split]
    nested = ta.has_partial_reductions(loop)
    for op in loop.body.block.ops:
        if isinstance(op, ta.ReduceOp) and ReductionKind(op.kind.data).returns_index:
            return False
        if isinstance(op, ta.StoreOp) and split_var in op.dims:
            positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
            if positions.index(split_var.index) in op.map.data.used_dims() and (
                # a per-row value of a nested loop is stored with its rows' block
                not nested or ta.value_dims(op.value, loop) - set(range(split + 1))
            ):
                return False
    return epilogue_ops(loop) is not None


def totals(loop: ta.LoopOp) -> list[ta.ReduceOp]:
    """The reductions whose results are totals over the reduction a split would cut:
    every reduction, or, with per-row reductions (`over`), those over the first
    reduction dim (the others are whole in each block)."""
    first = len(loop.parallel_extents)
    return [
        op
        for op in loop.body.block.ops
        if isinstance(op, ta.ReduceOp) and first in op.reduced_dims(loop)
    ]


def epilogue_ops(loop: ta.LoopOp) -> list[Operation] | None:
    """The ops of a loop that compute from its reductions' results (in order; stores
    of them included), when a split reduction can run them once, on its complete
    totals: each is element-wise, its other operands do not vary along the reduced
    dims, and the totals are 32-bit (held in VMEM between grid steps). Empty when the
    results are only stored; None when the ops cannot wait for the totals. Per-row
    reductions (`over` dims a split leaves whole) are values like any other."""
    the_totals = totals(loop)
    reduced = set(range(len(loop.parallel_extents), len(loop.extents)))
    varies: set[SSAValue] = {loop.body.block.args[d] for d in reduced}
    later: set[SSAValue] = set()
    ops: list[Operation] = []
    for op in loop.body.block.ops:
        if op in the_totals:
            if any(o in later for o in op.operands):
                return None  # a reduction of what a reduction computes: not split
            later.add(op.results[0])
            continue
        operands = list(op.operands)
        if isinstance(op, ta.StoreOp):  # its value, and the variables its index uses
            used = op.map.data.used_dims()
            operands = [op.value, *op.symbols]
            operands += [d for k, d in enumerate(op.dims) if k in used]
        uses_total = any(o in later for o in operands)
        if isinstance(op, ta.LoadOp):
            if uses_total:
                return None  # an index computed from a total
            positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
            walked = any(
                positions[k] in reduced
                for k in op.map.data.used_dims()  # type: ignore[attr-defined]
            )
            if walked or any(o in varies for o in op.symbols):
                varies.add(op.result)
            continue
        if not uses_total:
            varies.update(r for r in op.results if any(o in varies for o in op.operands))
            continue
        if any(o in varies for o in operands):
            return None  # combines a total with what varies along the reduced dim
        if not isinstance(op, ta.StoreOp) and (
            op.dialect_name() not in ELEMENTWISE_DIALECTS or len(op.results) != 1
        ):
            return None
        later.update(op.results)
        ops.append(op)
    if all(isinstance(op, ta.StoreOp) for op in ops):
        return []
    if any(getattr(t.result.type, "bitwidth", 0) != 32 for t in the_totals):
        return None
    return ops


def mxu_factors(mul: Operation) -> Sequence[SSAValue]:
    """A contraction's factors as the MXU takes them: two bfloat16 values widened to
    f32 are multiplied as bfloat16 (their product is exact in f32, and the MXU sums
    in f32), a single pass where widened f32 operands need six."""
    widened = [
        v.owner.input
        for v in mul.operands
        if isinstance(v.owner, arith.ExtFOp)
        and isinstance(v.owner.input.type, BFloat16Type)
    ]
    return widened if len(widened) == 2 else mul.operands


def lookup_dims(index: ta.LoadOp) -> tuple[int, dict[int, int], int] | None:
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


def element_type(a: Access) -> Attribute:
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


def gather_access(op: ta.LoadOp) -> Access:
    """A gather marked by indirect-load-to-scalar-prefetch: every index is a bare
    symbol (a prefetched index picks one row) or a loop dim plus a constant."""
    if ta.gather_strategy(op) is None:
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
    if not rows_addressable(op):
        pack = rows_per_sublane(bits)
        raise PassError(
            op,
            f"tile: rows of {t.element_type} pack {pack} to a 32-bit sublane and the "
            f"gathered dim ({t.get_shape()[-2]} rows) is not a multiple of {pack}: no "
            "DMA or block addresses one row",
        )
    return Access(
        op, op.buffer, tuple(t.get_shape()), bits, tuple(dims), (), tuple(gathers)
    )


def scatter_access(op: ta.StoreOp) -> Access:
    """A row scatter as indirect-store-to-row-dma leaves it: a store (or a sum) of whole
    rows of 32-bit data, the second-minor index a bare symbol read from a `prefetch`
    index buffer, the others loop dims. It is written by row DMA (`tl.scatter`)."""
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    rank = t.get_num_dims()
    results = op.map.data.results
    positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
    index = _index_load(op.symbols[0], op) if len(op.symbols) == 1 else None
    kernel = op.parent_op()
    while kernel is not None and not isinstance(kernel, ta.KernelOp):
        kernel = kernel.parent_op()
    root = None if index is None else ta.root_buffer(index.buffer)
    if (
        rank < 2
        or index is None
        or kernel is None
        or not isinstance(root, BlockArgument)
        or kernel.role_of(root) != ArgRole.PREFETCH
        or not isinstance(results[rank - 2], AffineSymExpr)
        or numpy_dtype(t.element_type).itemsize != 4
        or op.combine not in (None, ReductionKind.SUM)
    ):
        raise PassError(
            op,
            "tile: a data-dependent store (a scatter) is tiled only as a row scatter "
            "(indirect-store-to-row-dma did not make it one)",
        )
    dims: list[tuple[int | None, int]] = []
    for k, e in enumerate(results):
        lin = linearize(e)
        if k == rank - 2:
            dims.append((None, 0))
        elif (
            lin is not None
            and not lin.symbols
            and not lin.constant
            and (list(lin.dims.values()) == [1])
        ):
            dims.append((positions[next(iter(lin.dims))], 0))
        else:
            raise PassError(op, f"tile: row scatter index {k} ({e}) is not a loop dim")
    found = lookup_dims(index)
    if found is None or set(found[1]) & {l for l, _ in dims}:
        raise PassError(
            op,
            "tile: a row scatter reads its indices consecutively along one loop dim, "
            "and along none that picks a place in a row",
        )
    return Access(
        op, op.buffer, tuple(t.get_shape()), 32, tuple(dims), (), ((rank - 2, index),)
    )


def scatter_lookup(a: Access) -> tuple[int, dict[int, int], int]:
    """How a row scatter reads its indices (`scatter_access`, `lookup_dims`): the loop
    dim its rows follow, {loop dim: coefficient} and the constant offset."""
    found = lookup_dims(a.gathers[0][1])
    assert found is not None  # scatter_access checked
    return found


def rows_addressable(op: ta.LoadOp) -> bool:
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


def host_storage(
    module: ModuleOp,
    kernel: ta.KernelOp,
    index: int,
    launches: Sequence[ta.LaunchOp] | None = None,
) -> MemRefType | None:
    """The N-D shape the host holds kernel argument `index` in at every launch: the
    storage shape nearest the host's own buffer along the chain of host reshapes.
    `launches`: the kernel's, when the caller has them."""
    found: set[MemRefType] = set()
    if launches is None:
        launches = ta.kernel_launches(module, kernel)
    for launch in launches:
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
    """The access's offset into the flat storage of its root argument, in loop dims:
    the `access_offset` the ta passes read it by, whatever view they left it on."""
    lin = access_offset(op)
    if lin is None or lin.symbols:
        return None
    positions = [d.index for d in op.dims]  # type: ignore[attr-defined]
    return LinearExpr({positions[p]: c for p, c in lin.dims.items()}, {}, lin.constant)


def _on_storage(
    op: ta.LoadOp | ta.StoreOp, loop: ta.LoopOp, storage: MemRefType, root: int
) -> Access | None:
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
    return Access(
        op,
        Storage(root, storage),
        tuple(storage.get_shape()),
        bits,
        tuple((ix.dim, ix.offset) for ix in indices),
        tuple(ix.step for ix in indices),
    )


def analyse(
    op: ta.LoadOp | ta.StoreOp, loop: ta.LoopOp, storage: dict[int, MemRefType]
) -> Access:
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    if isinstance(op, ta.StoreOp) and op.symbols:
        return scatter_access(op)
    if isinstance(op, ta.StoreOp) and op.combine is not None:
        # Points of different grid steps may reach one element: no block of a
        # parallel grid holds it alone.
        raise PassError(op, "tile: accumulating stores (scatter-adds) are not tiled yet")
    if op.symbols:
        return gather_access(op)
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
    extents = [loop.extents[p] for p in positions]
    dims: list[tuple[int | None, int]] = []
    rotations: list[int] = []
    seen: set[int] = set()
    for k, e in enumerate(op.map.data.results):
        if (r := rotation(e, extents)) is not None:
            if isinstance(op, ta.StoreOp):
                raise PassError(op, "tile: a store at a rotated index is not tiled")
            l = positions[r.dim]
            if l in seen:
                raise PassError(op, f"tile: loop dim {l} indexes two dims of one buffer")
            seen.add(l)
            dims.append((l, 0))
            rotations.append(r.shift)
            continue
        rotations.append(0)
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
        if l in seen and not _diagonal(op, k, l, dims, rotations):
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
    return Access(
        op,
        op.buffer,
        shape,
        bits,
        tuple(dims),
        rotations=tuple(rotations) if any(rotations) else (),
    )


def _diagonal(
    op: ta.LoadOp | ta.StoreOp,
    k: int,
    l: int,
    dims: Sequence[tuple[int | None, int]],
    rotations: Sequence[int],
) -> bool:
    """Whether index `k` of `op`, walked by loop dim `l` which an earlier index walks
    too, makes the access a diagonal the tiler reads: a load, `k` its last dim and `l`
    the second-minor dim's, neither rotated."""
    rank = len(op.map.data.results)
    return (
        isinstance(op, ta.LoadOp)
        and k == rank - 1
        and k >= 1
        and dims[k - 1][0] == l
        and not any(rotations)
    )


def buffer_bytes(op: ta.LoadOp) -> int:
    t = ta.root_buffer(op.buffer).type
    assert isinstance(t, MemRefType)
    return t.element_count() * numpy_dtype(t.element_type).itemsize


def gathered_bytes(op: ta.LoadOp) -> int:
    """Elements a load reads, one per point of its loop, in bytes."""
    loop = op.parent_op()
    assert isinstance(loop, ta.LoopOp)
    return math.prod(loop.extents) * numpy_dtype(op.result.type).itemsize


def fuses_on_xla(
    access: ta.LoadOp | ta.StoreOp, gone: AbstractSet[Operation] = frozenset()
) -> bool:
    """Whether a kernel with an access no Pallas idiom covers runs whole on XLA: when
    the access has a static index and nothing else in the loop needs Pallas (a matrix
    product for the MXU, a gather's row DMAs), XLA's one fusion is the loop a Pallas
    kernel would be, without the extra HBM pass of an outlined access. `gone`: ops
    already moved to XLA kernels (they need nothing)."""
    if isinstance(access, ta.LoadOp) and access.symbols:
        return False
    loop = access.parent_op()
    assert isinstance(loop, ta.LoopOp)
    return not any(
        (isinstance(o, ta.LoadOp) and o.symbols) or ta.contraction(o) is not None
        for o in loop.body.block.ops
        if o not in gone
    )
