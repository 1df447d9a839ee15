"""Block and offset math of tl-to-pallas: a tile access at element offsets becomes a
block spec (block indices, or element offsets) and the in-block indexers of its ref."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    TensorType,
    i32,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from pallas_ir.affine_analysis import LinearExpr, linearize
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.tpu_rules import (
    block_shape_error,
    constrained_dims,
)


def tensor_of(t: MemRefType) -> TensorType:
    return TensorType(t.element_type, t.get_shape())


@dataclass
class Access:
    """One tile access turned into a block spec and the indexers of its ref."""

    spec: pallas.BlockSpecAttr
    indexers: list[pallas.Indexer]


@dataclass
class KernelConverter:
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
    ) -> Access:
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
        dims: list[DimBlock] = []
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
            aligned = DimBlock.aligned(lin, t, st, n)
            if aligned is None and k < rank - 2 and t < n and st == 1:
                unaligned.append(k)
                aligned = DimBlock(t, lin, pallas.SliceAttr(0, t, 1), False)
            dims.append(aligned or DimBlock.whole(lin, t, st, n, e, k, op))
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
            return Access(spec, [])
        for k in unaligned:  # no element window: the whole dim, sliced in the kernel
            lin = linearize(offsets.results[k])
            assert lin is not None
            t, n = tile.get_shape()[k], buffer_shape[k]
            dims[k] = DimBlock.whole(lin, t, strides[k], n, offsets.results[k], k, op)
        # A block that breaks the TPU rules (a short second-minor or lane dim) is widened
        # to the whole dim when its offset is constant; the kernel slices what it needs.
        for k in constrained_dims(len(dims)):
            if block_shape_error([d.size for d in dims], buffer_shape, bits) is None:
                break
            lin = linearize(offsets.results[k])
            if lin is not None and lin.is_constant and dims[k].size != buffer_shape[k]:
                t, st = tile.get_shape()[k], strides[k]
                dims[k] = DimBlock.whole(
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
        return Access(spec, [d.indexer for d in dims] if sliced else [])


@dataclass(frozen=True)
class DimBlock:
    """How one dim of a tile access becomes a block: its size, its block index (a linear
    form in grid indices and symbols) and the in-block slice the kernel keeps."""

    size: int
    index: LinearExpr
    indexer: pallas.SliceAttr
    partial: bool
    """The kernel uses only part of the block along this dim."""

    @staticmethod
    def aligned(lin: LinearExpr, t: int, stride: int, n: int) -> DimBlock | None:
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
        return DimBlock(size, index, slice_, (stride > 1 and t > 1) or t != size)

    @staticmethod
    def whole(
        lin: LinearExpr, t: int, stride: int, n: int, e: AffineExpr, k: int, op: Operation
    ) -> DimBlock:
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
        return DimBlock(
            n, LinearExpr(), pallas.SliceAttr(c, t, stride), (c, t, stride) != (0, n, 1)
        )


def grid_scalar(expr: AffineExpr, where: Operation) -> tuple[list[Operation], SSAValue]:
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
