"""A numpy interpreter for the `pallas` level: what a pallas module means, independent
of JAX.

It walks each `pallas.call`'s grid in row-major order (the order a TPU core runs it),
cuts every operand into the block its spec's index map selects (prefetched scalars
read from the prefetch operands), runs the kernel body on numpy arrays and writes the
output blocks back. Edge blocks that run past an array are padded on read and clipped
on write, as Pallas does. Tests and `python -m pallas_ir` compare the emitted Python,
run by JAX, against this.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import BlockArgument, Operation, SSAValue

from pallas_ir.dialects import pallas
from pallas_ir.dialects.common import find_forward
from pallas_ir.reference import xla as xla_reference
from pallas_ir.reference.ops import (
    ReferenceError,
    array_type,
    divisor_arguments,
    element_type,
    evaluate,
    evaluate_tile,
    numpy_dtype,
)
from pallas_ir.reference.ta import symbol_limits


def _iota(t: TensorType, dim: int, offset: int) -> np.ndarray:
    """offset + the index along `dim`, broadcast over the other dims."""
    shape = [1] * t.get_num_dims()
    shape[dim] = t.get_shape()[dim]
    along = (offset + np.arange(t.get_shape()[dim], dtype=np.int32)).reshape(shape)
    return np.broadcast_to(along, t.get_shape()).copy()


def _run_kernel(
    call: pallas.CallOp, refs: Sequence[np.ndarray], grid_pos: tuple[int, ...]
):
    env: dict[SSAValue, Any] = dict(zip(call.body.block.args, refs, strict=True))
    _run_ops(call.body.block.ops, env, grid_pos)


def _local_row(static: IntegerAttr, at: SSAValue | None, env: dict[SSAValue, Any]) -> int:
    """A row of a VMEM buffer: its static part plus a loop's index, if any (the
    verifier bounds it by the buffer)."""
    return static.value.data + (0 if at is None else int(env[at]))


def _run_ops(
    ops: Iterable[Operation], env: dict[SSAValue, Any], grid_pos: tuple[int, ...]
):
    for op in ops:
        args = [env[o] for o in op.operands]
        if isinstance(op, pallas.WhenOp):
            if bool(args[0]):
                _run_ops(op.body.block.ops, env, grid_pos)
            continue
        if isinstance(op, pallas.LoopOp):
            for i in range(*op.bounds):
                env[op.index] = np.int32(i)
                _run_ops(op.body.block.ops, env, grid_pos)
            continue
        if isinstance(op, pallas.StoreOp):
            args[1][pallas.python_index(op.indexers)] = args[0]
            continue
        if isinstance(op, pallas.DmaStartOp):
            src = env[op.src][tuple(int(env[v]) for v in op.src_lead)]
            row, dst = int(env[op.src_row]), env[op.dst]
            p = op.row_count
            if not 0 <= row <= src.shape[0] - p:
                raise ReferenceError(
                    f"a row DMA reads rows {row} to {row + p - 1} of {src.shape[0]}"
                )
            # Lands at once; waits are no-ops.
            dst[_local_row(op.dst_row, op.dst_at, env)] = (
                src[row : row + p] if p > 1 else src[row]
            )
            continue
        if isinstance(op, pallas.RowCopyOp):
            src = env[op.src][tuple(int(env[v]) for v in op.src_lead)]
            row, dst = int(env[op.src_row]), env[op.dst]
            if not 0 <= row < src.shape[0]:
                raise ReferenceError(f"a row copy reads row {row} of {src.shape[0]}")
            dst[_local_row(op.dst_row, op.dst_at, env)] = src[row]
            continue
        if isinstance(op, pallas.DmaWriteStartOp):
            dst = env[op.dst][tuple(int(env[v]) for v in op.dst_lead)]
            row = int(env[op.dst_row])
            if not 0 <= row < dst.shape[0]:
                raise ReferenceError(f"a row DMA writes row {row} of {dst.shape[0]}")
            # Lands at once, in place (the `any` ref is the array itself).
            dst[row] = env[op.src][_local_row(op.src_row, op.src_at, env)]
            continue
        if isinstance(op, pallas.DmaWaitOp | pallas.DmaWriteWaitOp):
            continue
        if isinstance(op, pallas.LoadOp | pallas.SliceOp):
            # A slice of a value means what a load of a ref does.
            r = np.array(args[0][pallas.python_index(op.indexers)])
        elif isinstance(op, pallas.IotaOp):
            r = _iota(op.result.type, op.dim.value.data, int(args[0]))  # type: ignore[arg-type]
        elif isinstance(op, pallas.ReadOp):
            r = args[0][tuple(int(i) for i in args[1:])]
        elif isinstance(op, pallas.ProgramIdOp):
            r = np.int32(grid_pos[op.axis.value.data])
        elif (tile := evaluate_tile(op, args)) is not None:
            r = tile
        elif (value := evaluate(op, args)) is not None:
            r = value
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")
        if len(op.results) == 1 and isinstance(op.results[0].type, TensorType):
            r = np.asarray(r).astype(
                numpy_dtype(element_type(op.results[0].type)), copy=False
            )
        env[op.results[0]] = r


def _block_window(
    spec: pallas.BlockSpecAttr,
    grid_pos: tuple[int, ...],
    prefetch: Sequence[np.ndarray],
    shape: Sequence[int],
) -> list[tuple[int, int, bool]]:
    """(start, size, squeezed) per array dim for the block at this grid point."""
    symbols = [int(prefetch[p][tuple(m.eval(grid_pos, ()))]) for p, m in spec.prefetch]
    block_idx = spec.map.eval(grid_pos, symbols)
    out: list[tuple[int, int, bool]] = []
    for b, i, start, n in zip(
        spec.shape, block_idx, spec.starts(block_idx), shape, strict=True
    ):
        size = 1 if b is None else b
        if not 0 <= start < n:
            raise ReferenceError(
                f"block index {i} starts at element {start} outside a dim of {n}"
            )
        out.append((start, size, b is None))
    return out


def _read_block(array: np.ndarray, window: list[tuple[int, int, bool]]) -> np.ndarray:
    block = np.zeros([s for _, s, _ in window], dtype=array.dtype)
    src = tuple(slice(a, min(a + s, n)) for (a, s, _), n in zip(window, array.shape))
    dst = tuple(slice(0, min(a + s, n) - a) for (a, s, _), n in zip(window, array.shape))
    block[dst] = array[src]
    squeeze = tuple(k for k, (_, _, sq) in enumerate(window) if sq)
    return block.squeeze(axis=squeeze) if squeeze else block


def _write_block(
    array: np.ndarray, window: list[tuple[int, int, bool]], block: np.ndarray
):
    full = block.reshape([s for _, s, _ in window])
    dst = tuple(slice(a, min(a + s, n)) for (a, s, _), n in zip(window, array.shape))
    src = tuple(slice(0, min(a + s, n) - a) for (a, s, _), n in zip(window, array.shape))
    array[dst] = full[src]


def run_call(call: pallas.CallOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    prefetch = list(args[: call.n_prefetch])
    ins = list(args[call.n_prefetch :])
    outs: list[np.ndarray] = []
    for r in call.outs:
        t = r.type
        assert isinstance(t, TensorType)
        outs.append(np.zeros(t.get_shape(), dtype=numpy_dtype(t.element_type)))
    for i, o in call.aliases:
        outs[o][...] = args[i]
    scratch = [
        np.zeros(s.get_shape(), dtype=numpy_dtype(s.element_type))
        for s in call.scratch_shapes.data
    ]
    grid = call.grid.get_values()
    for pos in itertools.product(*(range(n) for n in grid)):
        in_refs: list[np.ndarray] = []
        for a, spec in zip(ins, call.in_specs.data, strict=True):
            if spec.space == pallas.MemorySpace.ANY:
                in_refs.append(a)
            else:
                in_refs.append(
                    _read_block(a, _block_window(spec, pos, prefetch, a.shape))
                )
        windows: list[list[tuple[int, int, bool]] | None] = []
        out_refs: list[np.ndarray] = []
        for o, spec in zip(outs, call.out_specs.data, strict=True):
            if spec.space == pallas.MemorySpace.ANY:
                windows.append(None)
                out_refs.append(o)
            else:
                w = _block_window(spec, pos, prefetch, o.shape)
                windows.append(w)
                out_refs.append(_read_block(o, w))
        _run_kernel(call, [*prefetch, *in_refs, *out_refs, *scratch], pos)
        for o, w, ref in zip(outs, windows, out_refs, strict=True):
            if w is not None:
                _write_block(o, w, ref)
    return outs


def run_xla_call(call: pallas.XlaCallOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """A call of an `xla.func`: the xla reference runs it."""
    function = call.function()
    if function is None:
        raise ReferenceError(f"{call.callee} is not an xla.func")
    return xla_reference.run_function(function, args)


def run_forward(module: ModuleOp, *arrays: np.ndarray) -> list[np.ndarray]:
    """Run `func.func @forward` of a pallas module on numpy arrays."""
    forward = find_forward(module)
    if forward is None:
        raise ReferenceError("the module has no func.func @forward")
    params = forward.body.block.args
    if len(arrays) != len(params):
        raise ReferenceError(f"@forward takes {len(params)} arrays, got {len(arrays)}")
    env: dict[SSAValue, np.ndarray] = {}
    for p, a in zip(params, arrays):
        shape, dtype = array_type(p.type)  # arrays, and scalars
        a = np.asarray(a)
        if tuple(a.shape) != shape:
            raise ReferenceError(
                f"argument {p.name_hint}: shape {a.shape}, expected {p.type}"
            )
        env[p] = a.astype(dtype, copy=False)
    for op in forward.body.block.ops:
        if isinstance(op, pallas.CallOp):
            for r, v in zip(op.outs, run_call(op, [env[a] for a in op.args])):
                env[r] = v
        elif isinstance(op, pallas.ReshapeOp | pallas.ConvertOp):
            env[op.result] = evaluate_tile(op, [env[op.source]])
        elif isinstance(op, pallas.XlaCallOp):
            for r, v in zip(op.outs, run_xla_call(op, [env[a] for a in op.args])):
                env[r] = v
        elif isinstance(op, func.ReturnOp):
            return [env[v] for v in op.arguments]
        elif (value := evaluate(op, [env[o] for o in op.operands])) is not None:
            env[op.results[0]] = value  # arith and math on whole arrays
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")
    raise ReferenceError("@forward has no func.return")


# ---------------------------------------------------------------------------------------
# What random inputs must respect


def call_index_limits(call: pallas.CallOp | pallas.XlaCallOp) -> dict[int, int]:
    """For each operand of a call whose values index arrays: the exclusive upper bound
    that keeps every block, row DMA or XLA access they choose inside its array."""
    limits: dict[int, int] = {}

    def bound(operand: int, limit: int) -> None:
        limits[operand] = min(limits.get(operand, limit), limit)

    if isinstance(call, pallas.XlaCallOp):
        function = call.function()
        return xla_reference.index_limits(function) if function is not None else {}
    grid = [(0, n - 1) for n in call.grid.get_values()]
    operands = [*call.block_args, *call.outs]
    for value, spec in zip(operands, [*call.in_specs.data, *call.out_specs.data]):
        if not spec.prefetch:
            continue
        t = value.type
        assert isinstance(t, TensorType)
        # Block indices stay below the blocks there are along each dim.
        blocks = [-(-n // (b or 1)) for n, b in zip(t.get_shape(), spec.shape)]
        for (p, _), limit in zip(
            spec.prefetch, symbol_limits(spec.map, grid, blocks), strict=True
        ):
            bound(p, limit)
    # Row DMAs and row copies read (or write) the row, at the leading indices,
    # prefetched indices name.
    for dma in call.walk():
        if isinstance(dma, pallas.DmaStartOp | pallas.RowCopyOp):
            array, at = dma.src.type, [*dma.src_lead, dma.src_row]
        elif isinstance(dma, pallas.DmaWriteStartOp):
            array, at = dma.dst.type, [*dma.dst_lead, dma.dst_row]
        else:
            continue
        assert isinstance(array, pallas.RefType)
        for k, value in enumerate(at):
            # (A slab of packed rows starts at P * (index / P).)
            while isinstance(value.owner, arith.MuliOp | arith.DivSIOp):
                value = value.owner.lhs
            if not isinstance(value.owner, pallas.ReadOp):
                continue
            ref = value.owner.ref
            # The index ref is a prefetch operand or a streamed input (G3c): either
            # way ref k is call operand k.
            if isinstance(ref, BlockArgument) and ref.index < len(call.args):
                bound(ref.index, array.get_shape()[k])
    return limits


def call_divisors(call: pallas.CallOp | pallas.XlaCallOp) -> set[int]:
    """The operands of a call whose values are integer divisors (drawn nonzero)."""
    if isinstance(call, pallas.XlaCallOp):
        function = call.function()
        return xla_reference.divisor_args(function) if function is not None else set()

    def loaded_from(op: Operation) -> SSAValue | None:
        if isinstance(op, pallas.LoadOp | pallas.ReadOp):
            return op.ref
        return None

    block = call.body.block
    return {
        a.index
        for a in divisor_arguments(call, loaded_from)
        if a.block is block and a.index < len(call.args)
    }
