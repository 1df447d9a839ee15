"""The HBM traffic model of a `pallas` module: what each `pallas.call` moves, and the least
it could move.

Per the TPU pipeline, a grid runs in row-major order (last grid dim fastest), and an
operand's block is fetched from HBM only when its block index differs from the previous
grid step's; an output block is written back when its index changes and after the last
step. Edge blocks that run past an array move only their in-bounds part. Scalar-prefetch
operands are copied to SMEM once. An array left in HBM (`any`) moves only by the row
DMAs the kernel makes: a row read or written moves that row, at each grid step it runs
(under `pallas.when`, the steps whose condition holds); an array only aliased to an
output (inout, or a scatter's dest) costs nothing beyond its rows. Index maps that read prefetched values are evaluated on
index data when it is given; without it the model assumes every step fetches (an upper
bound) and says so.

The minimum is each input element the kernel actually reads (its loads' indexers select
within the block, narrowed by the `pallas.slice`s of the loaded value) read once, and
each output element written once.

A `pallas.xla_call` (an access or kernel the tiler handed to XLA) reads every element
its loads take (a gather one element per loop point) and writes what its stores write.
An XLA gather or scatter adds nothing to the minimum (the Pallas kernel beside it
already counts the elements the program needs). A whole kernel on XLA is one fusion:
its minimum is the distinct elements it reads and writes, and it moves, for each access
with a static index, the whole 128-lane groups of the array's last dim those elements
lie in (HBM moves a row's lanes in groups of 128, or the whole row when it is shorter),
so an irregular or strided lane-dim access shows the lane floor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from pallas_ir.dialects import pallas, xla
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import DotOpBase, TransposeOpBase, find_forward
from pallas_ir.dialects.enums import DotPrecision
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.reference.ops import INTEGER_DIVISIONS, eval_affine, evaluate
from pallas_ir.tpu_rules import (
    PIPELINE_BUFFERS,
    dot_vmem_bytes,
    vmem_block_bytes,
    vmem_relayout_bytes,
)


@dataclass(frozen=True)
class OperandTraffic:
    name: str
    role: str  # "in", "out" or "prefetch"
    bytes: int
    minimum: int
    fetches: int
    bound: bool = False
    """True when the count is an upper bound (data-dependent index maps, no data)."""
    read_back: int = 0
    """Bytes an output reads back from HBM (the rows an accumulating row DMA write
    adds to), beside the `bytes` it writes; part of the minimum."""


@dataclass(frozen=True)
class CallCost:
    kernel: str
    grid: tuple[int, ...]
    operands: list[OperandTraffic]
    vmem_bytes: int
    smem_bytes: int

    @property
    def read(self) -> int:
        return sum(o.bytes if o.role != "out" else o.read_back for o in self.operands)

    @property
    def written(self) -> int:
        return sum(o.bytes for o in self.operands if o.role == "out")

    @property
    def modelled(self) -> int:
        return self.read + self.written

    @property
    def minimum(self) -> int:
        return sum(o.minimum for o in self.operands)

    @property
    def ratio(self) -> float:
        return self.modelled / self.minimum if self.minimum else 1.0

    @property
    def bound(self) -> bool:
        return any(o.bound for o in self.operands)


@dataclass(frozen=True)
class XlaCost:
    kernel: str
    kind: str
    """`gather`, `scatter` or `index` (one access, or the row indices of one gather,
    the tiler moved to XLA) or `kernel` (all of it)."""
    read: int
    written: int
    needed: int = 0
    """A whole kernel's distinct elements read and written, in bytes."""

    @property
    def modelled(self) -> int:
        return self.read + self.written

    @property
    def minimum(self) -> int:
        return self.needed if self.kind == "kernel" else 0


LANE_GROUP = 128
_MAX_ENUMERATED_POINTS = 1 << 24


def _axes(at: xla.FlatIndexOp) -> list[int]:
    """The domain axis of each dim of the index map (its iota's)."""
    return [d.owner.axis.value.data for d in at.dims]  # type: ignore[attr-defined]


def _static_positions(
    map: AffineMap, axes: Sequence[int], shape: Sequence[int], extents: Sequence[int]
) -> np.ndarray | None:
    """The distinct row-major positions a static access (its map, the domain axis of
    each map dim, its view's shape) touches over its domain (None when it has too many
    points to enumerate)."""
    used = sorted({axes[p] for p in map.used_dims()})
    points = math.prod(extents[d] for d in used)
    if points > _MAX_ENUMERATED_POINTS:
        return None
    grids = np.meshgrid(
        *(np.arange(extents[d], dtype=np.int64) for d in used), indexing="ij"
    )
    on = {d: g.reshape(-1) for d, g in zip(used, grids)}
    dims = [on.get(a, np.int64(0)) for a in axes]
    index = tuple(
        np.broadcast_to(eval_affine(e, dims, []), (points,)) for e in map.results
    )
    return np.unique(
        np.ravel_multi_index(index, shape) if index else np.zeros(1, np.int64)
    )


def _lane_group_elements(positions: np.ndarray, shape: Sequence[int]) -> int:
    """Elements in the 128-lane groups of the last dim (a whole row when it is shorter)
    that `positions` lie in."""
    lanes = shape[-1] if shape else 1
    per_row = -(-lanes // LANE_GROUP)
    groups = np.unique(positions // lanes * per_row + positions % lanes // LANE_GROUP)
    return int(np.minimum(LANE_GROUP, lanes - groups % per_row * LANE_GROUP).sum())


def _buffer_origin(value: SSAValue) -> SSAValue:
    """The `xla.buffer` or `xla.zeros` a buffer value is, stores done."""
    while isinstance(value.owner, xla.ScatterOp | xla.UpdateWindowOp):
        value = value.owner.buffer
    return value


def xla_cost(call: pallas.XlaCallOp) -> XlaCost:
    function = call.function()
    assert function is not None  # the verifier checks it
    kind = function.access.value
    moved = {True: 0, False: 0}  # by "is a load"
    needed = 0
    touched: dict[tuple[SSAValue, bool], list[np.ndarray]] = {}
    for op in function.body.block.ops:
        if isinstance(op, xla.LibraryCallOp):
            # A library function reads its operands and writes its results whole.
            for values, is_load in ((op.inputs, True), (op.outputs, False)):
                for v in values:
                    t = v.type
                    assert isinstance(t, TensorType)
                    size = t.element_count() * numpy_dtype(t.element_type).itemsize
                    moved[is_load] += size
                    needed += size
            continue
        if isinstance(op, xla.WindowOp | xla.UpdateWindowOp):
            domain = op.result if isinstance(op, xla.WindowOp) else op.value
            extents = domain.type.get_shape()  # type: ignore[attr-defined]
            m, view = op.map.data, op.shape.get_values()
            axes, symbols = list(range(m.num_dims)), False
        elif isinstance(op, xla.TakeOp | xla.ScatterOp):
            at = op.index.owner
            assert isinstance(at, xla.FlatIndexOp)  # ta-to-xla makes every access so
            extents = at.result.type.get_shape()  # type: ignore[attr-defined]
            m, view = at.map.data, at.shape.get_values()
            axes, symbols = _axes(at), bool(at.symbols)
        else:
            continue
        t = op.buffer.type
        assert isinstance(t, TensorType)
        size = numpy_dtype(t.element_type).itemsize
        is_load = isinstance(op, xla.TakeOp | xla.WindowOp)
        if symbols:  # a gather or a scatter: one element per point
            points = math.prod(extents)
            if isinstance(op, xla.ScatterOp) and op.combine is not None:
                moved[True] += points * size  # it reads what it combines with
                needed += points * size
        elif (
            kind == "kernel"
            and (positions := _static_positions(m, axes, view, extents)) is not None
        ):
            # Views in a kernel are contiguous reshapes: the same row-major
            # positions as the buffer they view.
            touched.setdefault((_buffer_origin(op.buffer), is_load), []).append(positions)
            continue
        else:
            used = {axes[p] for p in m.used_dims()}
            points = min(math.prod(extents[d] for d in used), t.element_count())
        moved[is_load] += points * size
        needed += points * size
    for (buffer, is_load), parts in touched.items():
        t = buffer.type
        assert isinstance(t, TensorType)
        size = numpy_dtype(t.element_type).itemsize
        positions = np.unique(np.concatenate(parts))
        needed += len(positions) * size
        moved[is_load] += _lane_group_elements(positions, t.get_shape()) * size
    return XlaCost(function.sym_name.data, kind, moved[True], moved[False], needed)


@dataclass(frozen=True)
class CostReport:
    calls: list[CallCost] = field(default_factory=list[CallCost])
    wrapper_copy_bytes: int = 0
    """HBM bytes of host-side XLA ops between kernels: a `pallas.reshape` that changes
    the last two dims (a relayout) and a `pallas.convert` read and write their arrays."""

    xla_calls: list[XlaCost] = field(default_factory=list[XlaCost])

    @property
    def modelled(self) -> int:
        return (
            sum(c.modelled for c in [*self.calls, *self.xla_calls])
            + self.wrapper_copy_bytes
        )

    @property
    def minimum(self) -> int:
        return sum(c.minimum for c in [*self.calls, *self.xla_calls])

    @property
    def ratio(self) -> float:
        return self.modelled / self.minimum if self.minimum else 1.0

    def format(self) -> str:
        lines: list[str] = []
        for c in self.calls:
            mark = (
                " (upper bound: data-dependent index maps or manual DMAs)"
                if c.bound
                else ""
            )
            lines.append(f"pallas.call @{c.kernel}  grid {list(c.grid)}{mark}")
            lines.append(
                f"  HBM read {c.read} B, written {c.written} B, modelled {c.modelled} B, "
                f"minimum {c.minimum} B, ratio {c.ratio:.3f}"
            )
            lines.append(
                f"  VMEM {c.vmem_bytes} B (double-buffered blocks + scratch, in whole tiles), "
                f"SMEM {c.smem_bytes} B"
            )
            for o in c.operands:
                lines.append(
                    f"    {o.role:8s} {o.name:12s} {o.bytes:>12d} B in {o.fetches} DMAs"
                    f"{f', {o.read_back} B read back' if o.read_back else ''}"
                    f" (minimum {o.minimum} B){' bound' if o.bound else ''}"
                )
        for x in self.xla_calls:
            lines.append(
                f"pallas.xla_call @{x.kernel}  (XLA {x.kind})\n"
                f"  HBM read {x.read} B, written {x.written} B, modelled {x.modelled} B, "
                f"minimum {x.minimum} B"
            )
        lines.append(f"wrapper copies: {self.wrapper_copy_bytes} B")
        lines.append(
            f"total: modelled {self.modelled} B, minimum {self.minimum} B, ratio {self.ratio:.3f}"
        )
        return "\n".join(lines)


def _itemsize(t: TensorType | pallas.RefType) -> int:
    return numpy_dtype(t.element_type).itemsize


def _grid_points(grid: Sequence[int]) -> np.ndarray:
    """All grid points in execution order, as an (N, rank) int64 array."""
    if not grid:
        return np.zeros((1, 0), dtype=np.int64)
    mesh = np.meshgrid(*(np.arange(n, dtype=np.int64) for n in grid), indexing="ij")
    return np.stack([m.reshape(-1) for m in mesh], axis=1)


def _block_indices(
    spec: pallas.BlockSpecAttr,
    points: np.ndarray,
    prefetch: Sequence[np.ndarray | None],
) -> np.ndarray | None:
    """(N, rank) block indices at every grid point; None if they need missing data."""
    dims = [points[:, k] for k in range(points.shape[1])]
    symbols: list[np.ndarray] = []
    for p, m in spec.prefetch:
        data = prefetch[p]
        if data is None:
            return None
        idx = tuple(
            np.broadcast_to(
                np.asarray(eval_affine(e, dims, []), dtype=np.int64), (len(points),)
            )
            for e in m.results
        )
        symbols.append(data[idx].astype(np.int64))
    cols = [
        np.broadcast_to(
            np.asarray(eval_affine(e, dims, symbols), dtype=np.int64), (len(points),)
        )
        for e in spec.map.results
    ]
    return np.stack(cols, axis=1) if cols else np.zeros((len(points), 0), np.int64)


def _window_bytes(
    blocks: np.ndarray,
    block: Sequence[int],
    shape: Sequence[int],
    item: int,
    element: bool = False,
) -> np.ndarray:
    """In-bounds bytes of each block (edge blocks are clipped); `element`: the indices
    are element offsets."""
    sizes = np.ones(len(blocks), dtype=np.int64)
    for k, (b, n) in enumerate(zip(block, shape)):
        start = blocks[:, k] if element else blocks[:, k] * b
        sizes *= np.clip(np.minimum(start + b, n) - start, 0, None)
    return sizes * item


def used_elements(value: SSAValue) -> np.ndarray | bool:
    """Mask over a loaded value of the elements the kernel goes on to use: narrowed
    through the `pallas.slice`s (and the `pallas.reshape`s before them) that
    `pallas-legalize-mosaic` writes after a load Mosaic must take wider, and through
    a select whose condition compares iotas (a diagonal's `row == lane`, seen through
    converts and bitcasts); True (all of it) when any other op uses it."""
    t = value.type
    if not value.uses or not isinstance(t, TensorType):
        return True
    mask = np.zeros(t.get_shape(), dtype=bool)
    for use in value.uses:
        op = use.operation
        if isinstance(op, pallas.SelectOp) and use.index > 0:
            # Kept where the condition picks it: a diagonal's `row == lane`.
            kept = _iota_condition(op.cond)
            if kept is None:
                return True
            mask |= np.broadcast_to(kept if use.index == 1 else ~kept, mask.shape)
        elif isinstance(op, pallas.SliceOp):
            mask[pallas.python_index(op.indexers)] |= used_elements(op.result)
        elif isinstance(op, arith.BitcastOp | pallas.ConvertOp):  # the same elements
            inner = used_elements(op.result)
            mask |= inner
        elif isinstance(op, pallas.ReshapeOp):
            inner = used_elements(op.result)
            mask |= inner if isinstance(inner, bool) else inner.reshape(mask.shape)
        else:
            return True
    return mask


def _iota_condition(cond: SSAValue) -> np.ndarray | None:
    """A `pallas.compare` of two `pallas.iota`s at constant offsets, as the mask it
    computes; None for any other condition (a mask that depends on data)."""
    op = cond.owner
    if not isinstance(op, pallas.CompareOp) or op.predicate.data != "eq":
        return None
    sides = []
    for v in (op.lhs, op.rhs):
        iota = v.owner
        if not isinstance(iota, pallas.IotaOp):
            return None
        start = iota.offset.owner
        if not isinstance(start, arith.ConstantOp):
            return None
        shape = iota.result.type.get_shape()  # type: ignore[attr-defined]
        dim = iota.dim.value.data  # type: ignore[attr-defined]
        index = np.indices(shape)[dim] if shape else np.zeros((), np.int64)
        sides.append(index + start.value.value.data)  # type: ignore[attr-defined]
    return np.asarray(sides[0] == sides[1])


def _selected(
    ref_uses: Sequence[pallas.LoadOp | pallas.StoreOp], block: Sequence[int]
) -> np.ndarray:
    """Mask over one block of the elements the kernel's loads (or stores) touch."""
    mask = np.zeros(block, dtype=bool)
    for op in ref_uses:
        used = used_elements(op.result) if isinstance(op, pallas.LoadOp) else True
        mask[pallas.python_index(op.indexers)] |= used
    return mask


def _touched_elements(
    blocks: np.ndarray,
    spec: pallas.BlockSpecAttr,
    shape: Sequence[int],
    within: np.ndarray,
) -> int:
    """How many distinct array elements the blocks cover where `within` is set.

    Counted per distinct block, never per array element: a block covers the selected
    elements of the part of it inside the array (a box counted in O(1) from prefix sums
    of `within`), and blocks whose starts differ by whole blocks never overlap. Windows
    that may overlap (element offsets a fraction of a block apart) are merged exactly
    in block-sized cells of the array."""
    full = [1 if b is None else b for b in spec.shape]
    sel = within.reshape(full)
    distinct = np.unique(blocks, axis=0)
    starts = distinct if spec.element else distinct * np.asarray(full, dtype=np.int64)
    if not len(starts):
        return 0
    block = np.asarray(full, dtype=np.int64)
    if np.all((starts - starts[0]) % block == 0):
        # Inside the array, window k spans [lo, hi) of its own block.
        lo = np.clip(-starts, 0, block)
        hi = np.clip(np.asarray(shape, dtype=np.int64) - starts, lo, block)
        return _selected_in_boxes(sel, lo, hi)
    return _merged_windows(sel, starts, shape)


def _selected_in_boxes(sel: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> int:
    """Sum over rows k of the set elements of sel[lo[k]:hi[k]] (per dim), by
    inclusion-exclusion on the prefix sums of `sel`."""
    if sel.ndim == 0:
        return len(lo) * int(sel)
    prefix = sel.astype(np.int64)
    for axis in range(sel.ndim):
        prefix = np.cumsum(prefix, axis=axis)
    prefix = np.pad(prefix, [(1, 0)] * sel.ndim)
    total = np.zeros(len(lo), dtype=np.int64)
    for corner in range(1 << sel.ndim):
        upper = [(corner >> k) & 1 for k in range(sel.ndim)]
        at = tuple(hi[:, k] if u else lo[:, k] for k, u in enumerate(upper))
        sign = 1 if (sel.ndim - sum(upper)) % 2 == 0 else -1
        total += sign * prefix[at]
    return int(total.sum())


def _merged_windows(sel: np.ndarray, starts: np.ndarray, shape: Sequence[int]) -> int:
    """Distinct array elements of the windows `sel` placed at `starts` (which may
    overlap), clipped to the array: each window is ORed into the block-sized cells of
    the array it meets (at most 2 per dim), kept only for cells some window meets."""
    full = np.asarray(sel.shape, dtype=np.int64)
    cells: dict[tuple[int, ...], np.ndarray] = {}
    for start in starts:
        first = start // full
        for corner in range(1 << sel.ndim):
            cell = first + [(corner >> k) & 1 for k in range(sel.ndim)]
            origin = cell * full
            # The overlap of the window, the cell and the array, in array coordinates.
            lo = np.maximum(np.maximum(start, origin), 0)
            hi = np.minimum(np.minimum(start + full, origin + full), shape)
            if np.any(hi <= lo):
                continue
            key = tuple(int(c) for c in cell)
            mask = cells.setdefault(key, np.zeros(sel.shape, dtype=bool))
            dst = tuple(slice(int(a - o), int(b - o)) for a, b, o in zip(lo, hi, origin))
            src = tuple(slice(int(a - s), int(b - s)) for a, b, s in zip(lo, hi, start))
            mask[dst] |= sel[src]
    return int(sum(int(m.sum()) for m in cells.values()))


def _grid_scalar(
    value: SSAValue,
    points: np.ndarray,
    indices: Mapping[SSAValue, np.ndarray] | None = None,
) -> np.ndarray | None:
    """A kernel scalar computed from the grid position alone (`pallas.program_id`,
    constants and `arith`), and from the indices of the `pallas.loop`s around it
    (`indices`: each loop's index at every row of `points`), at every grid point;
    None when it depends on data."""
    if indices is not None and value in indices:
        return indices[value]
    op = value.owner
    if isinstance(op, pallas.ProgramIdOp):
        return points[:, op.axis.value.data]
    if not isinstance(op, Operation) or op.dialect_name() != "arith":
        return None
    args = [_grid_scalar(o, points, indices) for o in op.operands]
    if any(a is None for a in args):
        return None
    return evaluate(op, args)


def _active_steps(op: Operation, points: np.ndarray) -> tuple[int, bool]:
    """How many times `op` runs over the grid: at every grid step, once per index of
    each `pallas.loop` around it, where every condition of the `pallas.when`s around
    it holds; and whether that count is exact (the conditions depend on the grid
    position and the loops' indices alone)."""
    scopes: list[Operation] = []
    parent = op.parent_op()
    while isinstance(parent, pallas.WhenOp | pallas.LoopOp):
        scopes.append(parent)
        parent = parent.parent_op()
    trips = [s.bounds[1] - s.bounds[0] for s in scopes if isinstance(s, pallas.LoopOp)]
    if not any(isinstance(s, pallas.WhenOp) for s in scopes):
        return len(points) * math.prod(trips), True
    # Expand the grid points by each loop's indices, outermost loop first.
    indices: dict[SSAValue, np.ndarray] = {}
    for scope in reversed(scopes):
        if isinstance(scope, pallas.LoopOp):
            lower, upper = scope.bounds
            n = upper - lower
            points = np.repeat(points, n, axis=0)
            indices = {v: np.repeat(a, n) for v, a in indices.items()}
            indices[scope.index] = np.tile(np.arange(lower, upper), len(points) // n)
    active = np.ones(len(points), dtype=bool)
    exact = True
    for scope in scopes:
        if not isinstance(scope, pallas.WhenOp):
            continue
        holds = _grid_scalar(scope.condition, points, indices)
        if holds is None:
            exact = False
        else:
            active &= np.broadcast_to(np.asarray(holds, dtype=bool), active.shape)
    return int(active.sum()), exact


def _row_writes(
    name: str,
    role: str,
    ref: SSAValue,
    writes: Sequence[pallas.DmaWriteStartOp],
    shape: Sequence[int],
    item: int,
    points: np.ndarray,
) -> OperandTraffic:
    """An array in HBM written by row DMAs (a `tl.scatter`): each write moves its row,
    at every grid step it runs, and so does each read of a row to add to it (an
    accumulating scatter); nothing else of the array moves (it is aliased, not
    copied). All of it is needed."""
    written = read = copies = 0
    exact = True
    for w in writes:
        steps, known = _active_steps(w, points)
        written += steps * math.prod(shape[1 + len(w.dst_lead) :]) * item
        copies += steps
        exact &= known
    reads = [
        u.operation
        for u in ref.uses
        if isinstance(u.operation, pallas.DmaStartOp) and u.operation.src is ref
    ]
    for r in reads:
        steps, known = _active_steps(r, points)
        read += steps * math.prod(shape[1 + len(r.src_lead) :]) * item * r.row_count
        copies += steps
        exact &= known
    return OperandTraffic(name, role, written, written + read, copies, not exact, read)


def _operand_traffic(
    name: str,
    role: str,
    value_type: TensorType,
    spec: pallas.BlockSpecAttr,
    ref: SSAValue,
    points: np.ndarray,
    prefetch: Sequence[np.ndarray | None],
) -> OperandTraffic:
    shape = value_type.get_shape()
    item = _itemsize(value_type)
    if spec.space == pallas.MemorySpace.ANY:
        if not list(ref.uses):
            # Passed only to be aliased to an output (an inout buffer): it stays in HBM
            # and the kernel never reads it.
            return OperandTraffic(name, role, 0, 0, 0)
        writes = [
            u.operation
            for u in ref.uses
            if isinstance(u.operation, pallas.DmaWriteStartOp)
        ]
        if writes:
            return _row_writes(name, role, ref, writes, shape, item, points)
        dmas = [
            u.operation for u in ref.uses if isinstance(u.operation, pallas.DmaStartOp)
        ]
        if dmas:
            # Row DMAs: each start moves one row, every grid step. When the rows come from
            # prefetched indices, which rows (and so the minimum, the distinct ones)
            # depends on data: a bound. Computed rows (a strided read) are distinct.
            packed = dmas[0].row_count
            row = math.prod(shape[1 + len(dmas[0].src_lead) :]) * item
            copies = sum(_active_steps(d, points)[0] for d in dmas)
            moved = copies * row * packed
            by_data = any(isinstance(d.src_row.owner, pallas.ReadOp) for d in dmas)
            # Of the rows, the kernel may keep only some lanes (a lane step compacts
            # them): the minimum is what its loads of the row buffer select. Of a slab
            # of packed rows it keeps one.
            dst = dmas[0].dst
            loads = [
                u.operation for u in dst.uses if isinstance(u.operation, pallas.LoadOp)
            ]
            dst_shape = dst.type.get_shape()  # type: ignore[attr-defined]
            kept = _selected(loads, dst_shape).sum() / max(math.prod(dst_shape), 1)
            kept /= packed
            return OperandTraffic(
                name,
                role,
                moved,
                int(moved * kept) if loads else moved,
                copies,
                bound=by_data,
            )
        # Other manual DMAs are not modelled: count the whole array once, as a bound.
        total = math.prod(shape) * item
        return OperandTraffic(name, role, total, total, 1, bound=True)
    full = [1 if b is None else b for b in spec.shape]
    blocks = _block_indices(spec, points, prefetch)
    bound = blocks is None
    local = [
        u.operation
        for u in ref.uses
        if isinstance(u.operation, pallas.DmaStartOp | pallas.RowCopyOp)
    ]
    if local and blocks is not None:
        # A table resident in VMEM (G4): the block moves when its index changes (once,
        # for a constant map); the rows the kernel needs are at most one per lookup and
        # at most the whole table, which of them depends on data: a bound.
        changed = np.ones(len(blocks), dtype=bool)
        changed[1:] = np.any(blocks[1:] != blocks[:-1], axis=1)
        moved = int(_window_bytes(blocks[changed], full, shape, item, spec.element).sum())
        lookups = (
            sum(_active_steps(o, points)[0] for o in local)
            * math.prod(shape[1 + len(local[0].src_lead) :])
            * item
        )
        return OperandTraffic(
            name, role, moved, min(moved, lookups), int(changed.sum()), bound=True
        )
    if blocks is None:
        # Unknown data: every step fetches a full block.
        per = math.prod(full) * item
        fetches = len(points)
        total = per * fetches
        uses = [
            u.operation
            for u in ref.uses
            if isinstance(u.operation, pallas.LoadOp | pallas.StoreOp)
        ]
        minimum = min(
            total,
            int(_selected(uses, [b for b in spec.ref_shape()]).sum()) * item * fetches,
        )
        return OperandTraffic(name, role, total, minimum, fetches, bound=True)
    changed = np.ones(len(blocks), dtype=bool)
    if len(blocks) > 1:
        changed[1:] = np.any(blocks[1:] != blocks[:-1], axis=1)
    moved = _window_bytes(blocks[changed], full, shape, item, spec.element)
    uses = [
        u.operation
        for u in ref.uses
        if isinstance(u.operation, pallas.LoadOp | pallas.StoreOp)
    ]
    within = _selected(uses, list(spec.ref_shape()))
    if any(isinstance(u.operation, pallas.ReadOp) for u in ref.uses):
        within[...] = True  # scalars read at computed indices (streamed gather indices)
    touched = _touched_elements(blocks, spec, shape, within)
    return OperandTraffic(
        name, role, int(moved.sum()), touched * item, int(changed.sum()), bound
    )


def _elements(op: Operation) -> int:
    t = op.results[0].type if op.results else None
    return math.prod(t.get_shape()) if isinstance(t, TensorType) else 1


def tile_compute(ops: Sequence[Operation]) -> tuple[int, int]:
    """(flops, transcendentals) of one grid step of a `tl.grid` body, for a call's cost
    estimate: a `tl.dot` is 2·m·k·n, an element-wise `arith` op, a convert, compare or
    select one flop an element, a `math` or `special` op one transcendental an
    element; loads, stores, layout moves and constants are free."""
    flops = transcendentals = 0
    for op in ops:
        if isinstance(op, tl.DotOp):
            a, b = op.lhs.type, op.rhs.type
            assert isinstance(a, TensorType) and isinstance(b, TensorType)
            flops += 2 * math.prod(a.get_shape()) * b.get_shape()[-1]
        elif isinstance(op, tl.ConvertOp | tl.CompareOp | tl.SelectOp):
            flops += _elements(op)
        elif op.dialect_name() in ("math", "special"):
            transcendentals += _elements(op)
        elif op.dialect_name() == "arith" and not isinstance(op, arith.ConstantOp):
            flops += _elements(op)
    return flops, transcendentals


def grid_compute(grid: tl.GridOp) -> tuple[int, int]:
    """(flops, transcendentals) of a whole `tl.grid`: `tile_compute` of its body at
    every grid point, except that a `tl.when` body counts only at the points where
    its condition holds (a causal attention's skipped key blocks cost nothing)."""
    points = _grid_points(grid.extents)
    whens = [o for o in grid.body.walk() if isinstance(o, tl.WhenOp)]
    guarded = {o for when in whens for o in when.body.walk()}
    flops, transcendentals = tile_compute(
        [o for o in grid.body.walk() if o not in guarded]
    )
    flops *= len(points)
    transcendentals *= len(points)
    for when in whens:
        dims = [points[:, d.index] for d in when.dims]  # type: ignore[attr-defined]
        (condition,) = when.map.data.results
        holds = np.broadcast_to(eval_affine(condition, dims, []) >= 0, len(points))
        runs = int(np.count_nonzero(holds))
        f, t = tile_compute(list(when.body.walk()))
        flops += f * runs
        transcendentals += t * runs
    return flops, transcendentals


def body_vmem_bytes(ops: Iterable[Operation]) -> int:
    """VMEM the values of a kernel body (a `tl.grid`'s or a `pallas.call`'s, which
    convert op for op) take beside its blocks: the values a transpose makes larger in
    VMEM tiles than its source, and the same-shaped values computed from them, of which
    some by an integer division (`tpu_rules.vmem_relayout_bytes`), the largest
    dot's result and operand copies (`tpu_rules.dot_vmem_bytes`), and the scratch of
    `tl.accumulate` totals (a `pallas.call` counts its scratch with its blocks)."""
    held: set[SSAValue] = set()
    divides = False
    dots = [0]
    scratch = 0
    for op in ops:
        grown = isinstance(op, TransposeOpBase) and _padded(op.result) > _padded(
            op.source
        )
        from_held = any(
            o in held and _same_tiles(o, r) for o in op.operands for r in op.results
        )
        if grown or from_held:
            held.update(op.results)
            divides |= from_held and isinstance(op, INTEGER_DIVISIONS)
        if isinstance(op, tl.AccumulateOp):  # its total's scratch (pallas: scratch)
            scratch += _padded(op.result)
        if isinstance(op, DotOpBase):
            lhs, rhs = op.lhs.type, op.rhs.type
            assert isinstance(lhs, TensorType) and isinstance(rhs, TensorType)
            # a batch dim counts as more rows: its products are held side by side
            *rows, k = lhs.get_shape()
            m, n = math.prod(rows), rhs.get_shape()[-1]
            f32_product = op.precision_of() == DotPrecision.HIGHEST
            dots.append(dot_vmem_bytes(m, n, k, 8 * _itemsize(lhs), f32_product))
    relayouts = vmem_relayout_bytes(
        ((v.type.get_shape(), 8 * _itemsize(v.type)) for v in held), divides
    )
    return relayouts + max(dots) + scratch


def _same_tiles(a: SSAValue, b: SSAValue) -> bool:
    """Whether two values take the same VMEM tiles: one type, or one shape but for
    leading unit dims (a transposed block reshaped into a loop space whose first
    dims are 1 is as large)."""

    def core(t: Attribute) -> tuple[Attribute, tuple[int, ...]] | None:
        if not isinstance(t, TensorType):
            return None
        shape = list(t.get_shape())
        while len(shape) > 1 and shape[0] == 1:
            shape.pop(0)
        return t.element_type, tuple(shape)

    return a.type == b.type or (core(a.type) is not None and core(a.type) == core(b.type))


def _padded(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return vmem_block_bytes(t.get_shape(), 8 * _itemsize(t))


def call_cost(
    call: pallas.CallOp, prefetch_data: Sequence[np.ndarray | None] | None = None
) -> CallCost:
    grid = tuple(call.grid.get_values())
    points = _grid_points(grid)
    n_pre = call.n_prefetch
    prefetch = list(prefetch_data) if prefetch_data is not None else [None] * n_pre
    refs = call.body.block.args
    operands: list[OperandTraffic] = []
    smem = 0
    for i, a in enumerate(call.prefetch_args):
        t = a.type
        assert isinstance(t, TensorType)
        size = t.element_count() * _itemsize(t)
        smem += size
        operands.append(
            OperandTraffic(_name(a, f"prefetch{i}"), "prefetch", size, size, 1)
        )
    vmem = 0
    specs = [
        *(("in", v, s) for v, s in zip(call.block_args, call.in_specs.data)),
        *(("out", v, s) for v, s in zip(call.outs, call.out_specs.data)),
    ]
    for k, (role, value, spec) in enumerate(specs):
        t = value.type
        assert isinstance(t, TensorType)
        ref = refs[n_pre + k]
        operands.append(
            _operand_traffic(
                _name(ref, f"{role}{k}"), role, t, spec, ref, points, prefetch
            )
        )
        # Pipelined blocks are double-buffered; VMEM holds them padded to whole tiles.
        if spec.space == pallas.MemorySpace.SMEM:
            smem += PIPELINE_BUFFERS * math.prod(spec.ref_shape()) * _itemsize(t)
        elif spec.space != pallas.MemorySpace.ANY:
            vmem += PIPELINE_BUFFERS * vmem_block_bytes(
                spec.ref_shape(), 8 * _itemsize(t)
            )
    for s in call.scratch_shapes.data:
        if s.space == pallas.MemorySpace.SEMAPHORE:
            continue
        if s.space == pallas.MemorySpace.SMEM:
            smem += math.prod(s.get_shape()) * _itemsize(s)
        else:
            vmem += vmem_block_bytes(s.get_shape(), 8 * _itemsize(s))
    vmem += body_vmem_bytes(call.body.walk())
    return CallCost(call.kernel_name.data, grid, operands, vmem, smem)


def _name(value: SSAValue, fallback: str) -> str:
    return f"%{value.name_hint}" if value.name_hint else fallback


def cost_report(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | None = None,
) -> CostReport:
    """Model every `pallas.call` of `@forward`. `inputs` (by @forward argument name or
    position) gives index data for maps that read prefetched values; without it those
    operands are bounded."""
    forward = find_forward(module)
    if forward is None:
        return CostReport()
    data: dict[SSAValue, np.ndarray] = {}
    if inputs is not None:
        for k, arg in enumerate(forward.body.block.args):
            if isinstance(inputs, Mapping):
                if arg.name_hint in inputs:
                    data[arg] = np.asarray(inputs[arg.name_hint])
            elif k < len(inputs):
                data[arg] = np.asarray(inputs[k])
    calls: list[CallCost] = []
    xla_calls: list[XlaCost] = []
    copies = 0
    for op in forward.body.block.ops:
        if isinstance(op, pallas.CallOp):
            pre = [data.get(a) for a in op.prefetch_args]
            calls.append(call_cost(op, pre))
        elif isinstance(op, pallas.XlaCallOp):
            xla_calls.append(xla_cost(op))
        elif isinstance(op, pallas.ConvertOp):
            # An XLA convert between kernels reads and writes the whole array.
            src, dst = op.source.type, op.result.type
            assert isinstance(src, TensorType) and isinstance(dst, TensorType)
            copies += src.element_count() * (_itemsize(src) + _itemsize(dst))
            if op.source in data:
                data[op.result] = data[op.source].astype(numpy_dtype(dst.element_type))
        elif isinstance(op, pallas.ReshapeOp):
            if op.source in data:
                data[op.result] = data[op.source].reshape(op.result.type.get_shape())  # type: ignore[union-attr]
            if op.is_relayout:
                t = op.source.type
                assert isinstance(t, TensorType)
                copies += 2 * t.element_count() * _itemsize(t)
    return CostReport(calls, copies, xla_calls)
