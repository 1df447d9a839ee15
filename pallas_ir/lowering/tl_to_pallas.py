"""tl-to-pallas: tiled kernels and their host function become `pallas.call`s.

Each `ta.launch` of a `tl.kernel` in `func.func @forward` becomes one `pallas.call`:

* the `tl.grid` gives the grid; `parallel` dims stay parallel, `sequential` dims become
  `arbitrary`;
* every `tl.load` becomes an input block spec and a `pallas.load` of its ref, every
  `tl.store` an output block spec and a `pallas.store`; the tile's element offsets
  become block indices (offset / block size). A strided tile reads a block `stride`
  times taller and picks its rows in the kernel with `pl.ds(start, n, stride=k)`;
* prefetch buffers read by `tl.scalar_load` become scalar-prefetch operands, and the
  symbols they feed become `sK = prefetchP[map]` bindings of the block specs;
* tile compute is copied: `arith`/`math` as they are, `tl.transpose/broadcast/reduce`
  as their `pallas` forms;
* an `inout` buffer is passed in and aliased to its output, so what the kernel does
  not write keeps its value.

On the host, buffers (memrefs, written in place) become SSA tensors: a launch reads
the current value of each buffer and defines a new value for each one it writes;
`ta.reshape` views become `pallas.reshape`s of the buffer they view.

Offsets that are not multiples of their block size cannot be Pallas blocks: they are
rejected with a located error rather than mis-tiled.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    i1,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.passes import ModulePass

from pallas_ir.affine_analysis import LinearExpr, linearize
from pallas_ir.analysis.cost_model import call_cost
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import (
    READABLE_ROLES,
    WRITABLE_ROLES,
    ArgRole,
    find_forward,
)
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.lowering.ta_to_xla import XlaFunctions
from pallas_ir.tpu_rules import (
    CHIPS,
    INDEX_CHUNK,
    MAX_ELEMENT_BITS,
    block_shape_error,
    rows_per_sublane,
)

_SEMANTICS = {
    tl.GridSemantics.PARALLEL: pallas.DimensionSemantics.PARALLEL,
    tl.GridSemantics.SEQUENTIAL: pallas.DimensionSemantics.ARBITRARY,
}


def _tensor(t: MemRefType) -> TensorType:
    return TensorType(t.element_type, t.get_shape())


@dataclass
class _Access:
    """One tile access turned into a block spec and the indexers of its ref."""

    spec: pallas.BlockSpecAttr
    indexers: list[pallas.Indexer]


@dataclass
class _KernelConverter:
    kernel: tl.KernelOp
    grid: tl.GridOp
    prefetch: list[BlockArgument] = field(default_factory=list[BlockArgument])
    """Kernel arguments used as scalar-prefetch operands, in operand order."""
    scalar_loads: dict[SSAValue, tuple[int, AffineMap]] = field(
        default_factory=dict[SSAValue, tuple[int, AffineMap]]
    )

    def grid_position(self, value: SSAValue, op: Operation) -> int:
        if isinstance(value, BlockArgument) and value.block is self.grid.body.block:
            return value.index
        raise PassError(
            op, "tl-to-pallas: tile offsets may use only grid indices as dims"
        )

    def grid_map(
        self, map: AffineMap, dims: Sequence[SSAValue], op: Operation
    ) -> AffineMap:
        """The map with its dims replaced by grid positions."""
        rank = len(self.grid.extents)
        replace = [AffineDimExpr(self.grid_position(d, op)) for d in dims]
        return AffineMap(
            rank,
            map.num_symbols,
            tuple(
                e.replace_dims_and_symbols(
                    replace, [AffineSymExpr(i) for i in range(map.num_symbols)]
                )
                for e in map.results
            ),
        )

    def access(
        self,
        op: tl.LoadOp | tl.StoreOp,
        tile: TensorType,
        buffer_shape: Sequence[int],
    ) -> _Access:
        strides = (
            op.strides.get_values()
            if op.strides is not None
            else (1,) * len(buffer_shape)
        )
        offsets = self.grid_map(op.map.data, op.dims, op)
        bindings: list[tuple[int, AffineMap]] = []
        for s in op.symbols:
            if s not in self.scalar_loads:
                raise PassError(
                    op, "tl-to-pallas: a tile offset symbol must come from tl.scalar_load"
                )
            bindings.append(self.scalar_loads[s])
        dims: list[_DimBlock] = []
        rank = len(buffer_shape)
        unaligned: list[int] = []  # leading dims whose tile offsets are not aligned
        for k, (e, t, st, n) in enumerate(
            zip(offsets.results, tile.get_shape(), strides, buffer_shape, strict=True)
        ):
            lin = linearize(e)
            if lin is None:
                raise PassError(
                    op,
                    f"tl-to-pallas: the offset {e} of dim {k} is not linear in the grid",
                )
            aligned = _DimBlock.aligned(lin, t, st, n)
            if aligned is None and k < rank - 2 and t < n and st == 1:
                unaligned.append(k)
                aligned = _DimBlock(t, lin, pallas.SliceAttr(0, t, 1), False)
            dims.append(aligned or _DimBlock.whole(lin, t, st, n, e, k, op))
        bits = numpy_dtype(tile.element_type).itemsize * 8
        if (
            unaligned
            and not bindings
            and all(st == 1 for st in strides)
            and all(d.size == t for d, t in zip(dims, tile.get_shape()))
            and block_shape_error(list(tile.get_shape()), buffer_shape, bits) is None
        ):
            # A leading-dim tile at offsets its size does not divide (x[:, 1:4], three
            # rows a step): element offsets (`pl.Element` dims) move exactly the
            # window, where block indices would widen it to the whole dim.
            spec = pallas.BlockSpecAttr(
                list(tile.get_shape()), offsets, pallas.MemorySpace.VMEM, element=True
            )
            return _Access(spec, [])
        for k in unaligned:  # no element window: the whole dim, sliced in the kernel
            lin = linearize(offsets.results[k])
            assert lin is not None
            t, n = tile.get_shape()[k], buffer_shape[k]
            dims[k] = _DimBlock.whole(lin, t, strides[k], n, offsets.results[k], k, op)
        # A block that breaks the TPU rules (a short second-minor or lane dim) is widened
        # to the whole dim when its offset is constant; the kernel slices what it needs.
        for k in _minor_dims(len(dims)):
            if block_shape_error([d.size for d in dims], buffer_shape, bits) is None:
                break
            lin = linearize(offsets.results[k])
            if lin is not None and lin.is_constant and dims[k].size != buffer_shape[k]:
                t, st = tile.get_shape()[k], strides[k]
                dims[k] = _DimBlock.whole(
                    lin, t, st, buffer_shape[k], offsets.results[k], k, op
                )
        if isinstance(op, tl.StoreOp):
            for k, d in enumerate(dims):
                if d.partial:
                    raise PassError(
                        op,
                        f"tl-to-pallas: the store writes part of a {d.size}-element block "
                        f"along dim {k}; masked stores are not supported yet",
                    )
        index_map = AffineMap(
            len(self.grid.extents),
            len(bindings),
            tuple(d.index.to_affine() for d in dims),
        )
        spec = pallas.BlockSpecAttr(
            [d.size for d in dims], index_map, pallas.MemorySpace.VMEM, bindings
        )
        sliced = any(d.partial for d in dims)
        return _Access(spec, [d.indexer for d in dims] if sliced else [])


@dataclass(frozen=True)
class _DimBlock:
    """How one dim of a tile access becomes a block: its size, its block index (a linear
    form in grid indices and symbols) and the in-block slice the kernel keeps."""

    size: int
    index: LinearExpr
    indexer: pallas.SliceAttr
    partial: bool
    """The kernel uses only part of the block along this dim."""

    @staticmethod
    def aligned(lin: LinearExpr, t: int, stride: int, n: int) -> _DimBlock | None:
        """Blocks of `t * stride` elements at offsets that are multiples of it; a strided
        tile may start `start < stride` elements into its block."""
        # A one-element tile needs no stride: its block is that element's row.
        size = min(t * stride, n) if stride > 1 and t > 1 else t
        start = lin.constant % size
        coefficients = [*lin.dims.values(), *lin.symbols.values(), lin.constant - start]
        if any(c % size for c in coefficients) or start >= stride:
            return None
        index = LinearExpr(
            {p: c // size for p, c in lin.dims.items()},
            {p: c // size for p, c in lin.symbols.items()},
            (lin.constant - start) // size,
        )
        slice_ = pallas.SliceAttr(start, t, stride if t > 1 else 1)
        return _DimBlock(size, index, slice_, (stride > 1 and t > 1) or t != size)

    @staticmethod
    def whole(
        lin: LinearExpr, t: int, stride: int, n: int, e: AffineExpr, k: int, op: Operation
    ) -> _DimBlock:
        """The whole dim as one block, the tile sliced out of it at a constant offset."""
        if not lin.is_constant:
            raise PassError(
                op,
                f"tl-to-pallas: offset {e} of dim {k} is not block-aligned: "
                f"blocks of dim {k} would hold {t * stride} elements",
            )
        c = lin.constant
        if c + (t - 1) * stride >= n:
            raise PassError(
                op, f"tl-to-pallas: the tile of dim {k} runs past its dim of {n}"
            )
        return _DimBlock(
            n, LinearExpr(), pallas.SliceAttr(c, t, stride), (c, t, stride) != (0, n, 1)
        )


def _minor_dims(rank: int) -> list[int]:
    """The dims the TPU block rules constrain: the last two (the only one for rank 1)."""
    return [k for k in (rank - 1, rank - 2) if k >= 0]


class _Host:
    """Buffers of @forward as SSA tensors: each root buffer's current value."""

    def __init__(self, forward: func.FuncOp):
        self.old = forward
        types: list[TensorType] = []
        for a in forward.body.block.args:
            if not isinstance(a.type, MemRefType):
                raise PassError(forward, "tl-to-pallas: @forward takes memref buffers")
            types.append(_tensor(a.type))
        self.block = Block(arg_types=types)
        self.root: dict[SSAValue, SSAValue] = {}
        self.value: dict[SSAValue, SSAValue | None] = {}
        for old, new in zip(forward.body.block.args, self.block.args):
            new.name_hint = old.name_hint
            self.root[old] = old
            self.value[old] = new

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def read(
        self, buffer: SSAValue, user: Operation, as_stored: bool = False
    ) -> SSAValue:
        """The buffer's current value, reshaped to the buffer's shape (unless
        `as_stored`: then in the shape the host holds it, for an XLA call, which reads
        its buffers flat and needs no relayout)."""
        root = self.root[buffer]
        value = self.value[root]
        if value is None:
            raise PassError(
                user, "tl-to-pallas: a kernel reads a buffer nothing has written"
            )
        want = buffer.type
        assert isinstance(want, MemRefType)
        same = tuple(want.get_shape()) == tuple(value.type.get_shape())  # type: ignore[attr-defined]
        if not same and not as_stored:
            value = self.add(pallas.ReshapeOp(value, _tensor(want))).results[0]
        return value

    def as_int32(self, value: SSAValue) -> SSAValue:
        """Scalar-prefetch operands are i32 (SMEM holds 32-bit words; TPU kernels have no
        64-bit types): torch's int64 indices are converted on the host. Indices are
        bounded by their tables, far below 2**31."""
        t = value.type
        assert isinstance(t, TensorType)
        if t.element_type == i32:
            return value
        convert = self.add(pallas.ConvertOp(value, TensorType(i32, t.get_shape())))
        convert.results[0].name_hint = value.name_hint
        return convert.results[0]

    def write(self, buffer: SSAValue, value: SSAValue) -> None:
        root = self.root[buffer]
        want = root.type
        assert isinstance(want, MemRefType)
        if tuple(want.get_shape()) != tuple(value.type.get_shape()):  # type: ignore[attr-defined]
            value = self.add(pallas.ReshapeOp(value, _tensor(want))).results[0]
        value.name_hint = root.name_hint
        self.value[root] = value


_WIDENING = (arith.ExtFOp, arith.ExtSIOp, arith.ExtUIOp, arith.SIToFPOp, arith.UIToFPOp)


def _widen_before_reshapes(call: pallas.CallOp) -> None:
    """In a kernel, a value of narrow (8- or 16-bit) data reshaped and then widened is
    widened first: Mosaic cannot shape-cast packed data across its last two dims
    (measured: `vector<16x16xbf16> -> vector<16x16x1xbf16>` fails "unsupported shape
    cast"), while the 32-bit reshape is the one f32 kernels already use."""
    for reshape in [o for o in call.walk() if isinstance(o, pallas.ReshapeOp)]:
        src, uses = reshape.source.type, list(reshape.result.uses)
        if (
            not isinstance(src, TensorType)
            or getattr(src.element_type, "bitwidth", 32) >= 32
        ):
            continue
        if len(uses) != 1 or not isinstance(widen := uses[0].operation, _WIDENING):
            continue
        wide = widen.results[0].type
        assert isinstance(wide, TensorType)
        first = type(widen)(
            reshape.source, TensorType(wide.element_type, src.get_shape())
        )
        then = pallas.ReshapeOp(first.results[0], wide)
        block = reshape.parent_block()
        assert block is not None
        block.insert_ops_before([first, then], reshape)
        widen.results[0].replace_all_uses_with(then.result)
        block.erase_op(widen)
        block.erase_op(reshape)


@dataclass(frozen=True)
class TlToPallasPass(ModulePass):
    """Convert `tl.kernel`s and the `func.func @forward` that launches them to `pallas`.

    Options:
    - `chip` (`v5e` | `v6e`, default `v5e`): a call whose VMEM footprint (double-buffered
      blocks plus scratch) exceeds the chip's default scoped VMEM gets `vmem_limit_bytes`.
    """

    name = "tl-to-pallas"

    chip: str = "v5e"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.chip not in CHIPS:
            raise PassError(None, f"tl-to-pallas: unknown chip '{self.chip}'")
        kernels: dict[str, tl.KernelOp | ta.KernelOp] = {
            k.sym_name.data: k for k in op.ops if isinstance(k, tl.KernelOp)
        }
        kernels.update(
            (k.sym_name.data, k)
            for k in op.ops
            if isinstance(k, ta.KernelOp) and k.on_xla
        )
        if not kernels:
            return
        forward = find_forward(op)
        if forward is None:
            raise PassError(
                next(iter(kernels.values())),
                "tl-to-pallas: needs a func.func @forward that launches the kernels",
            )
        host = _Host(forward)
        xla_functions = XlaFunctions(list(kernels))
        for host_op in forward.body.block.ops:
            self.convert_host_op(host_op, host, kernels, xla_functions)
        result_types = (
            [r.type for r in host.block.last_op.operands] if host.block.last_op else []
        )
        new_forward = func.FuncOp(
            "forward",
            ([a.type for a in host.block.args], result_types),
            Region(host.block),
        )
        new_forward.location = forward.location
        for k in kernels.values():
            op.body.block.erase_op(k)
        op.body.block.insert_op_after(new_forward, forward)
        op.body.block.insert_ops_before(xla_functions.functions, new_forward)
        op.body.block.erase_op(forward)
        for call in [c for c in op.walk() if isinstance(c, pallas.CallOp)]:
            _widen_before_reshapes(call)

    def convert_host_op(
        self,
        host_op: Operation,
        host: _Host,
        kernels: dict[str, tl.KernelOp | ta.KernelOp],
        xla_functions: XlaFunctions,
    ) -> None:
        if isinstance(host_op, ta.AllocOp):
            host.root[host_op.result] = host_op.result
            host.value[host_op.result] = None
        elif isinstance(host_op, ta.ReshapeOp):
            host.root[host_op.result] = host.root[host_op.source]
        elif isinstance(host_op, ta.LaunchOp):
            name = host_op.callee.string_value()
            if name not in kernels:
                raise PassError(
                    host_op, f"tl-to-pallas: @{name} is not a tl.kernel (run tile first)"
                )
            kernel = kernels[name]
            if isinstance(kernel, ta.KernelOp):
                call = self.convert_xla_launch(kernel, host_op, host, xla_functions)
            else:
                call = self.convert_launch(kernel, host_op, host)
            call.location = host_op.location
        elif isinstance(host_op, func.ReturnOp):
            ret = func.ReturnOp(*[host.read(v, host_op) for v in host_op.arguments])
            host.add(ret)
        else:
            raise PassError(host_op, f"tl-to-pallas: unexpected host op '{host_op.name}'")

    @staticmethod
    def convert_xla_launch(
        kernel: ta.KernelOp, launch: ta.LaunchOp, host: _Host, functions: XlaFunctions
    ) -> pallas.XlaCallOp:
        """A launch of an XLA kernel: its readable buffers in, its written ones out;
        it calls the kernel's `xla.func` (ta-to-xla)."""
        args = kernel.body.block.args
        roles = [kernel.role_of(a) for a in args]
        ins = [
            host.read(launch.args[k], launch, as_stored=True)
            for k, r in enumerate(roles)
            if r in READABLE_ROLES
        ]
        outs = [k for k, r in enumerate(roles) if r in WRITABLE_ROLES]
        out_types = [_tensor(host.root[launch.args[k]].type) for k in outs]  # type: ignore[arg-type]
        name = functions.get(kernel, [v.type for v in ins], out_types)  # type: ignore[misc]
        call = pallas.XlaCallOp(name, ins, out_types)
        host.add(call)
        for k, result in zip(outs, call.outs):
            host.write(launch.args[k], result)
        return call

    def convert_launch(
        self, kernel: tl.KernelOp, launch: ta.LaunchOp, host: _Host
    ) -> pallas.CallOp:
        (grid,) = [g for g in kernel.body.block.ops if isinstance(g, tl.GridOp)]
        conv = _KernelConverter(kernel, grid)
        body_ops = list(grid.body.block.ops)
        # Scalar prefetch: every prefetch buffer a scalar_load or a gather reads. A
        # gather's `in` index buffer (too big for SMEM) is streamed instead (G3c).
        chunked: list[BlockArgument] = []
        for o in body_ops:
            if isinstance(o, tl.GatherOp):
                for index in o.indices:
                    assert isinstance(index, BlockArgument)
                    streamed = kernel.role_of(index) != ArgRole.PREFETCH
                    if streamed and len(o.indices) > 1:
                        raise PassError(
                            o,
                            "tl-to-pallas: a gather by several index buffers reads them "
                            "whole from SMEM (prefetch); streaming them is not done",
                        )
                    group = chunked if streamed else conv.prefetch
                    if index not in group:
                        group.append(index)
            if isinstance(o, tl.ScalarLoadOp):
                arg = o.buffer
                assert isinstance(arg, BlockArgument)
                if arg not in conv.prefetch:
                    conv.prefetch.append(arg)
                conv.scalar_loads[o.result] = (
                    conv.prefetch.index(arg),
                    conv.grid_map(o.map.data, o.dims, o),
                )
        row_loads = [o for o in body_ops if isinstance(o, tl.LoadOp) and _row_strided(o)]
        loads = [o for o in body_ops if isinstance(o, tl.LoadOp) and o not in row_loads]
        # Gathers and row-strided loads both copy rows by DMA from an array left in HBM.
        gathers: list[tl.GatherOp | tl.LoadOp] = [
            o for o in body_ops if isinstance(o, tl.GatherOp) or o in row_loads
        ]
        stores = [o for o in body_ops if isinstance(o, tl.StoreOp)]
        for o in [*loads, *gathers, *stores]:
            buffer = o.buffer if isinstance(o, tl.LoadOp | tl.StoreOp) else o.table
            element = buffer.type.element_type  # type: ignore[attr-defined]
            if getattr(element, "bitwidth", 0) > MAX_ELEMENT_BITS:
                name = f"%{buffer.name_hint}" if buffer.name_hint else "a buffer"
                raise PassError(
                    o,
                    f"tl-to-pallas: TPU kernels have no 64-bit types and {name} holds "
                    f"{element}; only scalar-prefetch indices are narrowed (to i32)",
                )
        stored: dict[SSAValue, tl.StoreOp] = {}
        for s in stores:
            if s.buffer in stored:
                raise PassError(
                    s, "tl-to-pallas: a buffer is stored twice in one grid step"
                )
            stored[s.buffer] = s
        in_accesses = [
            conv.access(o, o.result.type, o.buffer.type.get_shape()) for o in loads
        ]  # type: ignore[arg-type, union-attr]
        out_accesses = [
            conv.access(s, s.value.type, s.buffer.type.get_shape()) for s in stores
        ]  # type: ignore[arg-type, union-attr]
        # inout buffers keep what the kernel does not write: pass them in and alias.
        alias_inputs: list[BlockArgument] = []
        aliases: list[tuple[int, int]] = []
        n_pre = len(conv.prefetch)
        for k, s in enumerate(stores):
            buf = s.buffer
            assert isinstance(buf, BlockArgument)
            if kernel.role_of(buf) != ArgRole.INOUT:
                continue
            alias_inputs.append(buf)
            aliases.append((n_pre + len(loads) + len(gathers) + len(alias_inputs) - 1, k))
        # A gather's index buffer is read flat (tl.gather's offsets are row-major
        # positions): an N-D one is flattened on the host with its i32 conversion.
        scalar_read = {o.buffer for o in body_ops if isinstance(o, tl.ScalarLoadOp)}
        flat_index = {
            a: TensorType(i32, [a.type.element_count()])  # type: ignore[attr-defined]
            for a in [*conv.prefetch, *chunked]
            if a not in scalar_read and a.type.get_num_dims() != 1  # type: ignore[attr-defined]
        }

        def index_operand(a: BlockArgument) -> SSAValue:
            value = host.as_int32(host.read(launch.args[a.index], launch))
            if a in flat_index:
                value = host.add(pallas.ReshapeOp(value, flat_index[a])).results[0]
            return value

        operands = [index_operand(a) for a in conv.prefetch]
        operands += [host.read(launch.args[o.buffer.index], launch) for o in loads]  # type: ignore[attr-defined]
        operands += [
            host.read(launch.args[_rows_source(g).index], launch) for g in gathers
        ]  # type: ignore[attr-defined]
        operands += [host.read(launch.args[a.index], launch) for a in alias_inputs]
        operands += [index_operand(a) for a in chunked]
        result_types = [_tensor(s.buffer.type) for s in stores]  # type: ignore[arg-type]
        # Gathered tables stay in HBM (`any`): rows come by manual DMA; a table marked
        # `table = "vmem"` (G4) is one whole block that stays resident (its index never
        # changes, so it is fetched once), and the row DMAs are local VMEM copies.
        n_grid = len(grid.extents)
        table_specs = [
            pallas.BlockSpecAttr(
                _rows_source(g).type.get_shape(),  # type: ignore[attr-defined]
                AffineMap(
                    n_grid,
                    0,
                    tuple(
                        AffineConstantExpr(0) for _ in _rows_source(g).type.get_shape()
                    ),  # type: ignore[attr-defined]
                ),
            )
            if _resident(g)
            else pallas.BlockSpecAttr.any()
            for g in gathers
        ]
        in_specs = [
            *(a.spec for a in in_accesses),
            *table_specs,
            *[pallas.BlockSpecAttr.any()] * len(alias_inputs),
            *(_index_chunk_spec(a, gathers, conv) for a in chunked),
        ]
        out_specs = [a.spec for a in out_accesses]
        # The kernel region.
        ref_types: list[pallas.RefType] = []
        for a in conv.prefetch:
            t = a.type
            assert isinstance(t, MemRefType)
            shape = flat_index[a].get_shape() if a in flat_index else t.get_shape()
            ref_types.append(pallas.RefType(shape, i32, pallas.MemorySpace.SMEM))
        for o, acc in zip(loads, in_accesses):
            ref_types.append(
                pallas.RefType(acc.spec.ref_shape(), o.result.type.element_type)
            )  # type: ignore[union-attr]
        for a, spec in zip(
            [*(_rows_source(g) for g in gathers), *alias_inputs],
            in_specs[len(in_accesses) :],
        ):
            t = a.type
            assert isinstance(t, MemRefType)
            ref_types.append(pallas.RefType(t.get_shape(), t.element_type, spec.space))
        for spec in in_specs[len(in_specs) - len(chunked) :]:
            ref_types.append(pallas.RefType(spec.ref_shape(), i32, spec.space))
        for s, acc in zip(stores, out_accesses):
            ref_types.append(
                pallas.RefType(acc.spec.ref_shape(), s.value.type.element_type)
            )  # type: ignore[union-attr]
        # Each gather's rows land in a VMEM buffer, signalled on a DMA semaphore.
        scratch: list[pallas.RefType] = []
        for g in gathers:
            t = g.result.type
            assert isinstance(t, TensorType)
            # Rows land in a (rows, lanes) buffer; a strided load's leading dims are 1.
            if isinstance(g, tl.GatherOp):
                shape = list(t.get_shape())
                if (packed := _packed_rows(g)) > 1:  # one slab of packed rows a lookup
                    shape.insert(1, packed)
            else:  # whole rows of the array (a lane step compacts them after)
                shape = [t.get_shape()[-2], g.buffer.type.get_shape()[-1]]  # type: ignore[attr-defined]
            scratch.append(pallas.RefType(shape, t.element_type))
            scratch.append(pallas.RefType([], i32, pallas.MemorySpace.SEMAPHORE))
        # A split reduction of 8- or 16-bit data accumulates in a 32-bit VMEM scratch
        # (initialised at the first step of its sequential dims, written to the output
        # block, narrowed, at the last); wider data accumulates in the output block.
        acc_scratch: dict[tl.StoreOp, int] = {}
        for st in stores:
            vt = st.value.type
            assert isinstance(vt, TensorType)
            if st.accumulate is not None and (wide := _accumulator_type(vt)) is not None:
                acc_scratch[st] = len(scratch)
                scratch.append(pallas.RefType(vt.get_shape(), wide.element_type))
        body = Block(arg_types=[*ref_types, *scratch])
        refs = list(body.args)
        for ref, a in zip(refs, conv.prefetch):
            ref.name_hint = f"{a.name_hint}_ref" if a.name_hint else None
        in_refs = refs[n_pre : n_pre + len(loads)]
        table_refs = refs[n_pre + len(loads) : n_pre + len(loads) + len(gathers)]
        first_out = n_pre + len(loads) + len(gathers) + len(alias_inputs) + len(chunked)
        chunk_refs = dict(zip(chunked, refs[first_out - len(chunked) : first_out]))
        for a, ref in chunk_refs.items():
            ref.name_hint = f"{a.name_hint}_chunk" if a.name_hint else None
        out_refs = refs[first_out : first_out + len(stores)]
        scratch_refs = refs[first_out + len(stores) :]
        gather_refs = {
            g: (table_refs[k], scratch_refs[2 * k], scratch_refs[2 * k + 1])
            for k, g in enumerate(gathers)
        }
        for ref, g in zip(table_refs, gathers):
            source = _rows_source(g)
            where = "vmem" if _resident(g) else "hbm"
            ref.name_hint = f"{source.name_hint}_{where}" if source.name_hint else None
        for k in range(len(gathers)):
            scratch_refs[2 * k].name_hint = "rows"
            scratch_refs[2 * k + 1].name_hint = "sem"
        for k in acc_scratch.values():
            scratch_refs[k].name_hint = "acc"
        for ref, o in zip(in_refs, loads):
            ref.name_hint = f"{o.buffer.name_hint}_ref" if o.buffer.name_hint else None
        for ref, s in zip(out_refs, stores):
            ref.name_hint = f"{s.buffer.name_hint}_out" if s.buffer.name_hint else None
        values: dict[SSAValue, SSAValue] = {}
        load_refs = dict(zip(loads, zip(in_refs, in_accesses)))
        store_refs = dict(zip(stores, zip(out_refs, out_accesses)))
        flops = transcendentals = 0
        for o in body_ops:
            new: Operation | None = None
            if isinstance(o, tl.ScalarLoadOp):
                continue
            if isinstance(o, tl.LoadOp) and o in gather_refs:
                table_ref, rows_ref, sem = gather_refs[o]
                *prologue, new = _strided_rows(conv, o, table_ref, rows_ref, sem)
                for p in prologue:
                    p.location = o.location
                    body.add_op(p)
            elif isinstance(o, tl.LoadOp):
                ref, acc = load_refs[o]
                new = pallas.LoadOp(ref, o.result.type, acc.indexers)  # type: ignore[arg-type]
            elif isinstance(o, tl.GatherOp):
                table_ref, rows_ref, sem = gather_refs[o]
                start = conv.grid_map(o.map.data, o.dims, o).results[0]
                chunk = None
                if o.indices[0] in chunk_refs:
                    # The step's lookups are at `start mod C` of its SMEM chunk.
                    index_refs = [chunk_refs[o.indices[0]]]  # type: ignore[index]
                    chunk = index_refs[0].type.get_shape()[0]  # type: ignore[attr-defined]
                else:
                    index_refs = [refs[conv.prefetch.index(i)] for i in o.indices]  # type: ignore[arg-type]
                *prologue, new = _gather_rows(
                    start, index_refs, table_ref, rows_ref, sem, o, chunk
                )
                for p in prologue:
                    p.location = o.location
                    body.add_op(p)
            elif isinstance(o, tl.StoreOp) and o.accumulate is not None:
                ref, acc = store_refs[o]
                acc_ref = scratch_refs[acc_scratch[o]] if o in acc_scratch else None
                *prologue, new = _accumulate(
                    o, values[o.value], ref, acc.indexers, grid, acc_ref
                )
                for p in prologue:
                    p.location = o.location
                    body.add_op(p)
            elif isinstance(o, tl.StoreOp):
                ref, acc = store_refs[o]
                new = pallas.StoreOp(values[o.value], ref, acc.indexers)
            elif isinstance(o, tl.TransposeOp):
                new = pallas.TransposeOp(values[o.source], o.permutation.get_values())
            elif isinstance(o, tl.IotaOp):
                start = conv.grid_map(o.map.data, o.dims, o).results[0]
                *prologue, offset = _grid_scalar(start, o)[0]
                for p in [*prologue, offset]:
                    p.location = o.location
                    body.add_op(p)
                new = pallas.IotaOp(offset.results[0], o.dim.value.data, o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.DotOp):
                new = pallas.DotOp(values[o.lhs], values[o.rhs])
                a = o.lhs.type
                assert isinstance(a, TensorType)
                flops += 2 * math.prod(a.get_shape()) * o.rhs.type.get_shape()[1]  # type: ignore[attr-defined]
            elif isinstance(o, tl.ReshapeOp):
                new = pallas.ReshapeOp(values[o.source], o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.BroadcastOp):
                new = pallas.BroadcastOp(values[o.source], o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.ReduceOp):
                new = pallas.ReduceOp(o.kind.data, values[o.source], o.dims.get_values())
            elif isinstance(o, tl.ConvertOp):
                new = pallas.ConvertOp(values[o.source], o.result.type)  # type: ignore[arg-type]
                flops += _elements(o)
            elif isinstance(o, tl.CompareOp):
                lhs, rhs = (_widened_for_compare(values[v], body) for v in (o.lhs, o.rhs))
                new = pallas.CompareOp(o.predicate.data, lhs, rhs)
                flops += _elements(o)
            elif isinstance(o, tl.SelectOp):
                new = pallas.SelectOp(
                    values[o.cond], values[o.true_value], values[o.false_value]
                )
                flops += _elements(o)
            elif o.dialect_name() in ("arith", "math"):
                for operand in o.operands:
                    if operand not in values:
                        raise PassError(
                            o, "tl-to-pallas: tile compute may use only tile values"
                        )
                new = _widened_8bit_arith(o, values, body) or o.clone(
                    value_mapper=dict(values)
                )
                elements = _elements(o)
                if o.dialect_name() == "math":
                    transcendentals += elements
                elif not isinstance(o, arith.ConstantOp):
                    flops += elements
            else:
                raise PassError(o, f"tl-to-pallas: no Pallas form for '{o.name}'")
            new.location = o.location
            body.add_op(new)
            for old_r, new_r in zip(o.results, new.results):
                new_r.name_hint = old_r.name_hint
                values[old_r] = new_r
        steps = math.prod(grid.extents)
        call = pallas.CallOp(
            kernel.sym_name.data,
            operands,
            result_types,
            grid.extents,
            in_specs,
            out_specs,
            [_SEMANTICS[s.data] for s in grid.semantics.data],
            num_scalar_prefetch=n_pre,
            scratch_shapes=scratch,
            input_output_aliases=aliases,
            body=Region(body),
        )
        host.add(call)
        cost = call_cost(call)
        call.properties["cost_estimate"] = pallas.CostEstimateAttr(
            flops * steps, transcendentals * steps, cost.modelled
        )
        if cost.vmem_bytes > CHIPS[self.chip].default_scoped_vmem_bytes:
            from xdsl.dialects.builtin import IntegerAttr, i64

            limit = min(CHIPS[self.chip].vmem_bytes, 2 * cost.vmem_bytes)
            call.properties["vmem_limit_bytes"] = IntegerAttr(limit, i64)
        for s, r in zip(stores, call.outs):
            host.write(launch.args[s.buffer.index], r)  # type: ignore[attr-defined]
        return call


_8BIT_ARITH = (
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.DivSIOp,
    arith.RemSIOp,
    arith.MaxSIOp,
    arith.MinSIOp,
)


def _widened_8bit_arith(
    o: Operation, values: dict[SSAValue, SSAValue], body: Block
) -> Operation | None:
    """Mosaic has no 8-bit integer vector arithmetic: an `i8` tile op runs on `i32`
    (sign-extended) and is narrowed back; the low 8 bits are what `i8` wrapping gives.
    Returns the narrowing op (the result), its inputs already added to `body`."""
    t = o.results[0].type if o.results else None
    if not isinstance(o, _8BIT_ARITH) or not isinstance(t, TensorType):
        return None
    element = t.element_type
    if not isinstance(element, IntegerType) or element.width.data != 8:
        return None
    wide = TensorType(i32, t.get_shape())
    operands = []
    for v in o.operands:
        widen = pallas.ConvertOp(values[v], wide)
        body.add_op(widen)
        operands.append(widen.result)
    op = type(o)(*operands, result_type=wide)  # type: ignore[call-arg]
    body.add_op(op)
    return pallas.ConvertOp(op.results[0], t)


def _widened_for_compare(value: SSAValue, body: Block) -> SSAValue:
    """Mosaic compares only 32-bit integers: widen 8- and 16-bit tiles to i32 first.
    Sign extension keeps both the signed and the unsigned order, so every predicate
    means what it did. (i1 is left alone: widening would flip its signed order.)"""
    t = value.type
    assert isinstance(t, TensorType)
    element = t.element_type
    if not isinstance(element, IntegerType) or element.width.data not in (8, 16):
        return value
    widen = pallas.ConvertOp(value, TensorType(i32, t.get_shape()))
    body.add_op(widen)
    return widen.result


def _grid_scalar(expr: AffineExpr, where: Operation) -> tuple[list[Operation], SSAValue]:
    """An affine expression of the grid indices as i32 kernel scalars."""
    lin = linearize(expr)
    if lin is None or lin.symbols:
        raise PassError(where, f"tl-to-pallas: {expr} is not linear in the grid indices")
    ops: list[Operation] = [arith.ConstantOp(IntegerAttr(lin.constant, i32))]
    total: SSAValue = ops[0].results[0]
    for k, c in sorted(lin.dims.items()):
        pid = pallas.ProgramIdOp(k)
        ops.append(pid)
        term: SSAValue = pid.result
        if c != 1:
            scale = arith.ConstantOp(IntegerAttr(c, i32))
            mul = arith.MuliOp(pid.result, scale.result)
            ops += [scale, mul]
            term = mul.result
        add = arith.AddiOp(total, term)
        ops.append(add)
        total = add.result
    return ops, total


def _row_strided(load: tl.LoadOp) -> bool:
    """A load of every k-th row (k > 1) of an array, whole rows, one index of each
    leading dim: done by one row DMA per row (at those leading indices), which moves
    exactly those rows (a strided `pl.ds` would read the whole `tile * k`-row block). A
    lane step on top keeps every j-th lane of the rows, compacted in registers. Part of
    the lanes of rows wider than 128 lanes comes the same way, the lanes sliced after
    (Mosaic's strided load wants a 128-lane ref: measured, "The last dim size is not
    128 in original base memref")."""
    t, b = load.result.type, load.buffer.type
    assert isinstance(t, TensorType) and isinstance(b, MemRefType)
    rank = b.get_num_dims()
    if load.strides is None or rank < 2 or load.symbols:
        return False
    *_, row_step, lane_step = load.strides.get_values()
    lane = linearize(load.map.data.results[-1])
    if row_step == 1 or any(d != 1 for d in t.get_shape()[:-2]):
        return False
    if lane is None or not lane.is_constant:
        return False
    lanes, width = t.get_shape()[-1], b.get_shape()[-1]
    whole = lanes * lane_step == width and lane.constant < lane_step
    part = lane_step == 1 and width > 128 and lane.constant + lanes <= width
    return whole or part


def _index_chunk_spec(
    index: BlockArgument,
    gathers: Sequence[tl.GatherOp | tl.LoadOp],
    conv: _KernelConverter,
) -> pallas.BlockSpecAttr:
    """The SMEM block spec that streams a gather's index buffer in chunks: chunk
    `start floordiv C` holds the lookups of the grid step whose first lookup is
    `start` (tile requires the rows of a step to stay within one chunk)."""
    (gather,) = [
        g for g in gathers if isinstance(g, tl.GatherOp) and g.indices[0] is index
    ]
    n = index.type.element_count()  # type: ignore[attr-defined]
    n_grid = len(conv.grid.extents)
    if n <= INDEX_CHUNK:
        return pallas.BlockSpecAttr(
            [n], AffineMap(n_grid, 0, (AffineConstantExpr(0),)), pallas.MemorySpace.SMEM
        )
    rows = gather.result.type.get_shape()[0]  # type: ignore[attr-defined]
    (start,) = conv.grid_map(gather.map.data, gather.dims, gather).results
    lin = linearize(start)
    if (
        lin is None
        or INDEX_CHUNK % rows
        or lin.constant % rows
        or any(c % rows for c in lin.dims.values())
    ):
        raise PassError(
            gather,
            f"tl-to-pallas: the {rows} lookups of a grid step may straddle two "
            f"{INDEX_CHUNK}-index chunks of the streamed index buffer",
        )
    return pallas.BlockSpecAttr(
        [INDEX_CHUNK],
        AffineMap(n_grid, 0, (start // INDEX_CHUNK,)),
        pallas.MemorySpace.SMEM,
    )


def _packed_rows(op: tl.GatherOp) -> int:
    """Rows each lookup copies: those of the table's element type per 32-bit sublane
    (2 for 16-bit and 4 for 8-bit data, whose single rows a DMA cannot address) when the
    gathered dim is the table's second-minor (sublane) dim; otherwise 1 (a lookup then
    copies whole tiles)."""
    bits = numpy_dtype(op.result.type.element_type).itemsize * 8  # type: ignore[attr-defined]
    rank = op.table.type.get_num_dims()  # type: ignore[attr-defined]
    if len(op.indices) - 1 != rank - 2:
        return 1
    return rows_per_sublane(bits)


def _resident(op: tl.GatherOp | tl.LoadOp) -> bool:
    """A gather from a VMEM-resident table (the G4 idiom)."""
    return isinstance(op, tl.GatherOp) and op.attributes.get("table") == StringAttr(
        "vmem"
    )


def _rows_source(op: tl.GatherOp | tl.LoadOp) -> SSAValue:
    return op.table if isinstance(op, tl.GatherOp) else op.buffer


def _strided_rows(
    conv: _KernelConverter,
    load: tl.LoadOp,
    table_ref: SSAValue,
    rows_ref: SSAValue,
    sem: SSAValue,
) -> list[Operation]:
    """Rows `start + k * r` of the array (at the tile's leading indices) by row DMA,
    then the rows as a tile."""
    *lead_exprs, start, _ = conv.grid_map(load.map.data, load.dims, load).results
    ops: list[Operation] = []
    lead: list[SSAValue] = []
    for e in lead_exprs:
        more, value = _grid_scalar(e, load)
        ops += more
        lead.append(value)
    more, base = _grid_scalar(start, load)
    ops += more
    t = load.result.type
    assert isinstance(t, TensorType) and load.strides is not None
    step = load.strides.get_values()[-2]
    rows: list[SSAValue] = []
    for r in range(t.get_shape()[-2]):
        offset = arith.ConstantOp(IntegerAttr(step * r, i32))
        at = arith.AddiOp(base, offset.result)
        dma = pallas.DmaStartOp(table_ref, at.result, rows_ref, r, sem, lead)
        ops += [offset, at, dma]
        rows.append(at.result)
    ops += [
        pallas.DmaWaitOp(table_ref, row, rows_ref, r, sem, lead)
        for r, row in enumerate(rows)
    ]
    two_d = TensorType(t.element_type, t.get_shape()[-2:])
    lane_step = load.strides.get_values()[-1]
    indexers: list[pallas.Indexer] = []
    lane = linearize(load.map.data.results[-1])
    assert lane is not None  # _row_strided checked
    n_rows, n_lanes = two_d.get_shape()
    if lane_step > 1:  # every k-th lane of the whole rows, compacted in registers
        indexers = [
            pallas.SliceAttr(0, n_rows),
            pallas.SliceAttr(lane.constant, n_lanes, lane_step),
        ]
    elif n_lanes != load.buffer.type.get_shape()[-1]:  # type: ignore[attr-defined]
        indexers = [pallas.SliceAttr(0, n_rows), pallas.SliceAttr(lane.constant, n_lanes)]
    ops.append(pallas.LoadOp(rows_ref, two_d, indexers))
    if two_d != t:  # the leading dims of one index each
        ops.append(pallas.ReshapeOp(ops[-1].results[0], t))
    return ops


def _gather_rows(
    start: AffineExpr,
    index_refs: Sequence[SSAValue],
    table_ref: SSAValue,
    rows_ref: SSAValue,
    sem: SSAValue,
    gather: tl.GatherOp,
    chunk: int | None = None,
) -> list[Operation]:
    """The G3 idiom: read each row's indices from SMEM, start one row DMA per row into
    the VMEM buffer (`table.at[i0, pl.ds(i1, 1)]` for two index buffers), wait for all,
    then load the rows as a tile. Index positions past the end of an index buffer (a
    ragged last step) read its last index: those rows land in the padded part of the
    tile, which the store drops. With `chunk`, the indices are a streamed SMEM block of
    that many lookups, so a position is taken modulo it (G3c; the clamped last position
    is in the last chunk)."""
    ops, base = _grid_scalar(start, gather)
    counts = [i.type.element_count() for i in gather.indices]  # type: ignore[attr-defined]
    last_of = {
        n: arith.ConstantOp(IntegerAttr(n - 1, i32)) for n in dict.fromkeys(counts)
    }
    lasts = [last_of[n] for n in counts]
    size = arith.ConstantOp(IntegerAttr(chunk or 1, i32))
    ops += [*last_of.values(), size]
    t = gather.result.type
    assert isinstance(t, TensorType)
    packed = _packed_rows(gather)
    pack = arith.ConstantOp(IntegerAttr(packed, i32))
    if packed > 1:
        ops.append(pack)
    picks: list[list[SSAValue]] = []
    selectors: list[SSAValue] = []
    for r in range(t.get_shape()[0]):
        offset = arith.ConstantOp(IntegerAttr(r, i32))
        at = arith.AddiOp(base, offset.result)
        ops += [offset, at]
        pick: list[SSAValue] = []
        for index_ref, last in zip(index_refs, lasts):
            clamped = arith.MinSIOp(at.result, last.result)
            ops.append(clamped)
            position = clamped.result
            if chunk is not None:
                local = arith.RemSIOp(position, size.result)
                ops.append(local)
                position = local.result
            read = pallas.ReadOp(index_ref, [position])
            ops.append(read)
            pick.append(read.result)
        *lead, row = pick
        if packed > 1:
            # The 32-bit sublane that holds the row: rows P * (row / P) ... + P - 1
            # (the gathered dim is a multiple of P: indirect-load-to-scalar-prefetch
            # does not pick DMA otherwise).
            group = arith.DivSIOp(row, pack.result)
            first = arith.MuliOp(group.result, pack.result)
            ops += [group, first]
            within = arith.SubiOp(row, first.result)
            ops.append(within)
            selectors.append(within.result)
            row = first.result
        ops.append(pallas.DmaStartOp(table_ref, row, rows_ref, r, sem, lead, packed))
        picks.append([*lead, row])
    ops += [
        pallas.DmaWaitOp(table_ref, pick[-1], rows_ref, r, sem, pick[:-1], packed)
        for r, pick in enumerate(picks)
    ]
    if packed == 1:
        ops.append(pallas.LoadOp(rows_ref, t))
    else:
        ops += _pick_packed_rows(rows_ref, selectors, t)
    return ops


def _pick_packed_rows(
    rows_ref: SSAValue, positions: Sequence[SSAValue], t: TensorType
) -> list[Operation]:
    """Of the slab of P packed rows each lookup copied (`rows_ref`: R x P x ...), keep
    the row at its `position` in the slab: a column `which` of those positions, built
    from the scalars with scalar-predicate selects, picks between the P slabs' rows."""
    R, *rest = t.get_shape()
    packed = rows_ref.type.get_shape()[1]  # type: ignore[attr-defined]
    col = TensorType(i32, [R, 1])

    def splat(value: int) -> arith.ConstantOp:
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(col, [value]))

    zero, offset = splat(0), arith.ConstantOp(IntegerAttr(0, i32))
    iota = pallas.IotaOp(offset.result, 0, col)
    # Row q of a slab, as an i32 scalar and an (R, 1) column, for q = 1 .. P - 1.
    q_ints = {q: arith.ConstantOp(IntegerAttr(q, i32)) for q in range(1, packed)}
    q_cols = {q: splat(q) for q in range(1, packed)}
    ops: list[Operation] = [zero, offset, iota, *q_ints.values(), *q_cols.values()]
    which: SSAValue = zero.result
    for r, position in enumerate(positions):
        at_r = splat(r)
        is_r = pallas.CompareOp("eq", iota.result, at_r.result)
        ops += [at_r, is_r]
        for q in range(1, packed):
            here = pallas.SelectOp(is_r.result, q_cols[q].result, zero.result)
            hit = arith.CmpiOp(position, q_ints[q].result, "eq")
            add = arith.SelectOp(hit.result, here.result, zero.result)
            total = arith.AddiOp(which, add.result)
            ops += [here, hit, add, total]
            which = total.result
    full = [pallas.SliceAttr(0, n, 1) for n in rest]
    out = pallas.LoadOp(rows_ref, t, [pallas.SliceAttr(0, R, 1), IntAttr(0), *full])
    ops.append(out)
    value: SSAValue = out.result
    for q in range(1, packed):
        is_q = pallas.CompareOp("eq", which, q_cols[q].result)
        wide = pallas.BroadcastOp(is_q.result, TensorType(i1, t.get_shape()))
        slab = pallas.LoadOp(rows_ref, t, [pallas.SliceAttr(0, R, 1), IntAttr(q), *full])
        pick = pallas.SelectOp(wide.result, slab.result, value)
        ops += [is_q, wide, slab, pick]
        value = pick.result
    return ops


_COMBINE: dict[str, tuple[type[Operation], type[Operation]]] = {
    "sum": (arith.AddfOp, arith.AddiOp),
    "prod": (arith.MulfOp, arith.MuliOp),
    "max": (arith.MaximumfOp, arith.MaxSIOp),
    "min": (arith.MinimumfOp, arith.MinSIOp),
}


def _accumulator_type(t: TensorType) -> TensorType | None:
    """The 32-bit type a split reduction of 8- or 16-bit data accumulates in (None:
    the data is 32-bit, and the output block itself is the accumulator)."""
    elt = t.element_type
    bits = getattr(elt, "bitwidth", 32)
    if bits >= 32 or (isinstance(elt, IntegerType) and bits == 1):
        return None
    wide = i32 if isinstance(elt, IntegerType) else Float32Type()
    return TensorType(wide, t.get_shape())


def _sequential_steps(
    grid: tl.GridOp, step: Callable[[int, int], int]
) -> tuple[list[Operation], SSAValue]:
    """`i1` that holds where every sequential grid dim k is at step `step(k, n)` (of
    its n steps)."""
    ops: list[Operation] = []
    all_at: SSAValue | None = None
    for k, (sem, n) in enumerate(zip(grid.semantics.data, grid.extents)):
        if sem.data != tl.GridSemantics.SEQUENTIAL:
            continue
        pid = pallas.ProgramIdOp(k)
        at = arith.ConstantOp(IntegerAttr(step(k, n), i32))
        eq = arith.CmpiOp(pid.result, at.result, "eq")
        ops += [pid, at, eq]
        if all_at is None:
            all_at = eq.result
        else:
            both = arith.AndIOp(all_at, eq.result)
            ops.append(both)
            all_at = both.result
    assert all_at is not None  # the verifier requires sequential dims
    return ops, all_at


def _accumulate(
    store: tl.StoreOp,
    value: SSAValue,
    ref: SSAValue,
    indexers: Sequence[pallas.Indexer],
    grid: tl.GridOp,
    acc_ref: SSAValue | None = None,
) -> list[Operation]:
    """An accumulating store. The output block stays in VMEM across the sequential grid
    dims (its index does not change along them). Without `acc_ref`, the first step
    stores the tile and the others combine with it in place; Pallas writes the block
    back once. With `acc_ref` (a 32-bit VMEM scratch for 8- and 16-bit data), the first
    step initialises the scratch with the widened tile, every later step combines into
    it, and the last step (finalize) stores it, narrowed, into the output block."""
    ops, first = _sequential_steps(grid, lambda k, n: 0)
    true = arith.ConstantOp(IntegerAttr(1, IntegerType(1)))
    later = arith.XOrIOp(first, true.result)
    t = value.type
    assert isinstance(t, TensorType)
    float_op, int_op = _COMBINE[store.accumulate.data]  # type: ignore[union-attr]
    combine_op = int_op if isinstance(t.element_type, IntegerType) else float_op
    if acc_ref is None:
        old = pallas.LoadOp(ref, t, indexers)
        combine = combine_op(old.result, value)
        store_first = pallas.StoreOp(value, ref, indexers)
        store_later = pallas.StoreOp(combine.results[0], ref, indexers)
        return [
            *ops,
            pallas.WhenOp(first, Region(Block([store_first]))),
            true,
            later,
            pallas.WhenOp(later.result, Region(Block([old, combine, store_later]))),
        ]
    wide = _accumulator_type(t)
    assert wide is not None
    widened = pallas.ConvertOp(value, wide)
    old = pallas.LoadOp(acc_ref, wide)
    combine = combine_op(old.result, widened.result)
    last_ops, last = _sequential_steps(grid, lambda k, n: n - 1)
    total = pallas.LoadOp(acc_ref, wide)
    narrowed = pallas.ConvertOp(total.result, t)
    return [
        *ops,
        widened,
        pallas.WhenOp(
            first, Region(Block([pallas.StoreOp(widened.result, acc_ref, ())]))
        ),
        true,
        later,
        pallas.WhenOp(
            later.result,
            Region(
                Block([old, combine, pallas.StoreOp(combine.results[0], acc_ref, ())])
            ),
        ),
        *last_ops,
        pallas.WhenOp(
            last,
            Region(
                Block([total, narrowed, pallas.StoreOp(narrowed.result, ref, indexers)])
            ),
        ),
    ]


def _elements(op: Operation) -> int:
    t = op.results[0].type if op.results else None
    return math.prod(t.get_shape()) if isinstance(t, TensorType) else 1
