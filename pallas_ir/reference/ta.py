"""The reference semantics of `ta`: run kernels and host functions on numpy arrays.

A `ta.loop` is evaluated for all its points at once: every body value is a numpy array
broadcastable to the loop's domain (parallel dims, then reduction dims), loop
variables are `arange`s along their axis, loads gather with the index maps evaluated
on those arrays, and stores scatter in row-major (iteration) order, so when two points
store to one element the later point wins, as in a sequential loop; an accumulating
store (`accumulate <sum>`) combines every point's value with the element, repeated
indices included (`np.add.at`). `ta.reduce` combines over the reduction axes. This is
the sequential meaning for every loop whose points do not read what other points of
the same loop write (the tiler's parallel grid assumes the same).

Indices are checked, as torch checks them: an access outside its buffer raises
`ReferenceError` naming the op and the index, instead of wrapping or clamping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from pallas_ir.affine_analysis import linearize
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import (
    READABLE_ROLES,
    ArgRole,
    KernelOpBase,
    ReductionKind,
    expr_bounds,
    find_forward,
)
from pallas_ir.reference.ops import (
    ReferenceError,
    array_type,
    bind_buffers,
    combine_at,
    divisor_arguments,
    eval_affine,
    evaluate,
    numpy_dtype,
    random_array,
    reduce_array,
    run_library_call,
)


def _op_name(op: Operation) -> str:
    from pallas_ir.diagnostics import location_of

    loc = location_of(op)
    return f"'{op.name}'" + (f" at {loc}" if loc else "")


def _indices(
    op: ta.LoadOp | ta.StoreOp, env: Mapping[SSAValue, Any], buffer: np.ndarray
) -> tuple[Any, ...]:
    dims = [env[d] for d in op.dims]
    symbols = [np.asarray(env[s]).astype(np.int64) for s in op.symbols]
    out: list[Any] = []
    for k, (expr, n) in enumerate(zip(op.map.data.results, buffer.shape, strict=True)):
        idx = np.asarray(eval_affine(expr, dims, symbols), dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = idx[(idx < 0) | (idx >= n)].flat[0]
            raise ReferenceError(
                f"{_op_name(op)}: index {bad} is out of range for dim {k} of size {n}"
            )
        out.append(idx)
    return tuple(out)


@dataclass
class _Loop:
    op: ta.LoopOp

    @property
    def rank(self) -> int:
        return len(self.op.extents)

    @property
    def reduce_axes(self) -> tuple[int, ...]:
        n = len(self.op.parallel_extents)
        return tuple(range(n, self.rank))

    def ivs(self) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for axis, n in enumerate(self.op.extents):
            shape = [1] * self.rank
            shape[axis] = n
            out.append(np.arange(n, dtype=np.int64).reshape(shape))
        return out

    def reduce(
        self,
        kind: ReductionKind,
        value: Any,
        result_dtype: np.dtype[Any],
        axes: tuple[int, ...] | None = None,
    ) -> Any:
        """`value` combined over `axes` (the reduction axes by default), kept as axes
        of size 1."""
        axes = self.reduce_axes if axes is None else axes
        v = np.asarray(value)
        v = v.reshape((1,) * (self.rank - v.ndim) + v.shape)
        # A value that does not vary along a reduced dim still counts once per point.
        full = tuple(
            self.op.extents[a] if a in axes else v.shape[a] for a in range(self.rank)
        )
        v = np.broadcast_to(v, full)
        return reduce_array(kind, v, axes, result_dtype)


def _run_loop(loop_op: ta.LoopOp, env: dict[SSAValue, Any]) -> None:
    loop = _Loop(loop_op)
    env = dict(env)
    for arg, iv in zip(loop_op.body.block.args, loop.ivs(), strict=True):
        env[arg] = iv
    for op in loop_op.body.block.ops:
        args = [env[o] for o in op.operands]
        if isinstance(op, ta.LoadOp):
            buffer = env[op.buffer]
            env[op.result] = buffer[_indices(op, env, buffer)]
        elif isinstance(op, ta.StoreOp):
            buffer = env[op.buffer]
            idx = _indices(op, env, buffer)
            shape = np.broadcast_shapes(*(i.shape for i in idx), np.shape(args[0]))
            idx = tuple(np.broadcast_to(i, shape) for i in idx)
            value = np.broadcast_to(args[0], shape).astype(buffer.dtype)
            if op.combine is None:
                buffer[idx] = value
            else:
                combine_at(op.combine, buffer, idx, value)
        elif isinstance(op, ta.ReduceOp):
            kind = ReductionKind(op.kind.data)
            env[op.result] = loop.reduce(
                kind, args[0], numpy_dtype(op.result.type), op.reduced_dims(loop_op)
            )
        elif (value := evaluate(op, args)) is not None:
            env[op.results[0]] = value
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")


def _gather(
    op: ta.AttentionOp, what: str, env: Mapping[SSAValue, Any]
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """An operand of `ta.attention` over the domain (size-1 axes where its map does not
    vary), and its indices into the buffer."""
    buffer, map = op.accesses()[what]
    array = env[buffer]
    names = op.dim_names()
    ivs = []
    for axis, (name, n) in enumerate(zip(names, op.extents)):
        shape = [1] * len(names)
        if name in ta.AttentionOp.USES[what]:
            shape[axis] = n
        ivs.append(np.arange(shape[axis], dtype=np.int64).reshape(shape))
    idx = []
    for k, (expr, n) in enumerate(zip(map.data.results, array.shape, strict=True)):
        at = np.asarray(eval_affine(expr, ivs, []), dtype=np.int64)
        if at.size and (at.min() < 0 or at.max() >= n):
            raise ReferenceError(f"{_op_name(op)}: {what} leaves dim {k} of size {n}")
        at = np.broadcast_to(at, np.broadcast_shapes(*(iv.shape for iv in ivs)))
        idx.append(at)
    return array[tuple(idx)], tuple(idx)


def _run_attention(op: ta.AttentionOp, env: dict[SSAValue, Any]) -> None:
    """`ta.attention`: scores in f32, the score region on all (b, i, j) at once, a
    softmax over j, and its product with v."""
    nb = len(op.batch_extents)
    q, _ = _gather(op, "q", env)  # (B..., Tq, 1, D, 1)
    k, _ = _gather(op, "k", env)  # (B..., 1, Tk, D, 1)
    v, _ = _gather(op, "v", env)  # (B..., 1, Tk, 1, E)
    q = q[..., 0].astype(np.float32)  # (B..., Tq, 1, D)
    k = k[..., 0].astype(np.float32)  # (B..., 1, Tk, D)
    scores = np.matmul(q[..., 0, :], np.swapaxes(k[..., 0, :, :], -1, -2))
    local = dict(env)
    args = op.score.block.args
    for axis, arg in enumerate(args[: nb + 2]):
        shape = [1] * (nb + 2)
        shape[axis] = op.extents[axis]
        local[arg] = np.arange(shape[axis], dtype=np.int64).reshape(shape)
    local[args[nb + 2]] = scores.astype(numpy_dtype(args[nb + 2].type))
    for inner in op.score.block.ops:
        if isinstance(inner, ta.YieldOp):
            scores = np.broadcast_to(local[inner.values[0]], scores.shape)
        elif isinstance(inner, ta.LoadOp):
            buffer = local[inner.buffer]
            local[inner.result] = buffer[_indices(inner, local, buffer)]
        elif (value := evaluate(inner, [local[o] for o in inner.operands])) is not None:
            local[inner.results[0]] = value
        else:
            raise ReferenceError(
                f"the reference interpreter does not model '{inner.name}'"
            )
    t = scores.astype(np.float32)
    if (c := op.causal_offset) is not None:
        i = np.arange(op.extents[nb])[:, None]
        j = np.arange(op.extents[nb + 1])[None, :]
        t = np.where(j > i + c, np.float32(-np.inf), t)
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.exp(t - t.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
    if op.zero_masked_rows is not None:
        p = np.where(np.all(t == -np.inf, axis=-1, keepdims=True), np.float32(0), p)
    data = numpy_dtype(op.out.type.element_type)  # type: ignore[attr-defined]
    if data.itemsize < 4:  # 16-bit data: the weights rounded to it, as v is
        p = p.astype(data).astype(np.float32)
    out = np.matmul(p, v[..., 0, :, 0, :].astype(np.float32))  # (B..., Tq, E)
    buffer = env[op.out]
    _, idx = _gather(op, "out", env)  # (B..., Tq, 1, 1, E)
    idx = tuple(i[..., 0, 0, :] for i in idx)
    buffer[idx] = out.astype(buffer.dtype)


def _view(source: np.ndarray, op: ta.ReshapeOp) -> np.ndarray:
    t = op.result.type
    assert isinstance(t, MemRefType)
    view = source.reshape(t.get_shape())
    if not np.shares_memory(view, source):
        raise ReferenceError(f"{_op_name(op)}: reshape of a non-contiguous buffer")
    return view


def run_kernel(kernel: ta.KernelOp, buffers: Sequence[np.ndarray]) -> None:
    """Run one kernel in place on its argument buffers (outputs are written)."""
    block = kernel.body.block
    env = bind_buffers(kernel.sym_name.data, block.args, buffers)
    for op in block.ops:
        if isinstance(op, ta.LoopOp):
            _run_loop(op, env)
        elif isinstance(op, ta.ReshapeOp):
            env[op.result] = _view(env[op.source], op)
        elif isinstance(op, ta.LibraryCallOp):
            results = run_library_call(op, [env[v] for v in op.inputs])
            for out, values in zip(op.outputs, results):
                env[out].reshape(-1)[...] = values
        elif isinstance(op, ta.AttentionOp):
            _run_attention(op, env)
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")


def run_forward(module: ModuleOp, *arrays: np.ndarray) -> list[np.ndarray]:
    """Run `func.func @forward` of a ta (or tiled, tl) module: buffers in, returned
    buffers out."""
    forward = find_forward(module)
    if forward is None:
        raise ReferenceError("the module has no func.func @forward")
    kernels = {o.sym_name.data: o for o in module.ops if isinstance(o, KernelOpBase)}
    block: Block = forward.body.block
    if len(arrays) != len(block.args):
        raise ReferenceError(
            f"@forward takes {len(block.args)} buffers, got {len(arrays)}"
        )
    env: dict[SSAValue, Any] = {}
    for arg, a in zip(block.args, arrays):
        shape, dtype = array_type(arg.type)  # buffers, and scalars
        env[arg] = np.array(a, dtype=dtype).reshape(shape)
        if ta.is_iota_argument(arg) and not np.array_equal(env[arg], np.arange(shape[0])):
            raise ReferenceError(
                f"@forward argument #{arg.index} is marked {ta.IOTA_ARGUMENT} but does "
                "not hold 0, 1, ..., n - 1"
            )
    for op in block.ops:
        if isinstance(op, ta.AllocOp):
            t = op.result.type
            assert isinstance(t, MemRefType)
            env[op.result] = np.zeros(t.get_shape(), dtype=numpy_dtype(t.element_type))
        elif isinstance(op, ta.ReshapeOp):
            env[op.result] = _view(env[op.source], op)
        elif isinstance(op, ta.LaunchOp):
            kernel = kernels[op.callee.string_value()]
            buffers = [env[a] for a in op.args]
            if isinstance(kernel, ta.KernelOp):
                run_kernel(kernel, buffers)
            else:  # a tl.kernel, once tiled
                from pallas_ir.reference import tl as tl_reference

                tl_reference.run_kernel(kernel, buffers)  # type: ignore[arg-type]
        elif isinstance(op, func.ReturnOp):
            return [env[v] for v in op.arguments]
        elif (value := evaluate(op, [env[o] for o in op.operands])) is not None:
            env[op.results[0]] = value  # arith and math on host scalars
        else:
            raise ReferenceError(f"the reference interpreter does not model '{op.name}'")
    raise ReferenceError("@forward has no func.return")


# ---------------------------------------------------------------------------------------
# Random inputs: floats in [-2, 2], index buffers within their table's range, divisors
# nonzero


def _index_uses(
    kernel: ta.KernelOp,
) -> dict[int, list[tuple[ta.LoadOp | ta.StoreOp, int]]]:
    """For each integer kernel argument, the accesses whose symbol #k it feeds
    (through loads and integer casts)."""
    uses: dict[int, list[tuple[ta.LoadOp | ta.StoreOp, int]]] = {}
    for op in kernel.walk():
        if not isinstance(op, ta.LoadOp | ta.StoreOp):
            continue
        for k, sym in enumerate(op.symbols):
            v = sym
            while not isinstance(v.owner, ta.LoadOp) and isinstance(v.owner, Operation):
                if len(v.owner.operands) != 1:
                    break
                v = v.owner.operands[0]
            if isinstance(v.owner, ta.LoadOp):
                root = ta.root_buffer(v.owner.buffer)
                if hasattr(root, "index") and root.owner is kernel.body.block:
                    uses.setdefault(root.index, []).append((op, k))  # type: ignore[attr-defined]
    return uses


def _symbol_limits(op: ta.LoadOp | ta.StoreOp) -> list[int]:
    """For each symbol of the access, n such that values in [0, n) keep the access in
    bounds for the whole loop, all symbols at once.

    Symbols are bounded in order of increasing stride: a symbol may not reach the next
    larger stride of its index (in flat storage `s0 * 50 + s1` on 100 x 50 elements, s1
    stays below 50, the dim the strides imply), and no further than the bounds allow
    with the symbols before it at their limits (bisection on interval bounds).
    """
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    dims: list[tuple[int, int] | None] = []
    for d in op.dims:
        owner = d.owner
        loop = owner.parent_op() if isinstance(owner, Block) else None
        n = loop.extents[d.index] if isinstance(loop, ta.LoopOp) else 1  # type: ignore[attr-defined]
        dims.append((0, n - 1))
    return symbol_limits(op.map.data, dims, t.get_shape())


def symbol_limits(
    map: AffineMap, dims: Sequence[tuple[int, int] | None], shape: Sequence[int]
) -> list[int]:
    """`_symbol_limits` for an index map over dims in the given ranges, into a buffer
    (or view) of `shape` (the xla reference uses it for `xla.flat_index`)."""
    n_sym = map.num_symbols
    stride = [0] * n_sym  # the largest coefficient of each symbol
    caps: list[int | None] = [None] * n_sym
    for expr in map.results:
        lin = linearize(expr)
        if lin is None:
            continue
        coefficients = [*lin.dims.values(), *lin.symbols.values()]
        for q, c in lin.symbols.items():
            stride[q] = max(stride[q], abs(c))
            larger = [abs(x) for x in coefficients if abs(x) > abs(c)]
            if larger:
                cap = min(larger) // abs(c)
                caps[q] = cap if caps[q] is None else min(caps[q], cap)  # type: ignore[type-var]
    limits = [1] * n_sym
    fixed: set[int] = set()

    def fits(k: int, n: int) -> bool:
        syms: list[tuple[int, int] | None] = [
            (0, limits[q] - 1) if q in fixed else (0, 0) for q in range(n_sym)
        ]
        syms[k] = (0, n - 1)
        for expr, size in zip(map.results, shape):
            b = expr_bounds(expr, dims, syms)
            if b is None or b[0] < 0 or b[1] >= size:
                return False
        return True

    for k in sorted(range(n_sym), key=lambda q: stride[q]):
        lo, hi = 1, 1
        if fits(k, 1):
            while fits(k, hi * 2) and hi < 1 << 40:
                hi *= 2
            lo, hi = hi, hi * 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if fits(k, mid) else (lo, mid)
        cap = caps[k]
        limits[k] = max(1, min(lo, cap) if cap is not None else lo)
        fixed.add(k)
    return limits


def index_limits(kernel: ta.KernelOp) -> dict[int, int]:
    """For each integer argument whose values index other buffers: the exclusive upper
    bound that keeps every such access inside its buffer."""
    return {
        i: min(_symbol_limits(op)[k] for op, k in uses)
        for i, uses in _index_uses(kernel).items()
    }


def divisor_args(kernel: ta.KernelOp) -> set[int]:
    """The kernel arguments whose values are integer divisors (drawn nonzero)."""

    def loaded_from(op: Operation) -> SSAValue | None:
        return op.buffer if isinstance(op, ta.LoadOp) else None

    block = kernel.body.block
    return {a.index for a in divisor_arguments(kernel, loaded_from) if a.block is block}


def random_buffers(kernel: ta.KernelOp, rng: np.random.Generator) -> list[np.ndarray]:
    """Buffers for one kernel: readable floats uniform in [-2, 2]; integer buffers that
    feed indices stay inside the tables they index, those that divide are nonzero, and
    those bound to an iota argument of @forward hold 0, 1, ...; outputs start at zero."""
    limits = index_limits(kernel)
    divisors = divisor_args(kernel)
    iota = ta.iota_bound_arguments(kernel)
    out: list[np.ndarray] = []
    for arg in kernel.body.block.args:
        t = arg.type
        assert isinstance(t, MemRefType)
        dtype = numpy_dtype(t.element_type)
        shape = t.get_shape()
        role = kernel.role_of(arg)
        if arg in iota:  # what every launch passes there
            out.append(np.arange(shape[0], dtype=dtype))
        elif role not in READABLE_ROLES and role != ArgRole.INOUT:
            out.append(np.zeros(shape, dtype=dtype))
        else:
            out.append(random_array(t, rng, limits.get(arg.index), arg.index in divisors))
    return out
