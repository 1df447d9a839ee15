"""The registry of ATen lowerings: `@lowers(aten.mul.Tensor, aten.mul.Scalar)` on a
function `(ctx: Lowering, args) -> Value` (a list of Values for an op with several
results) makes it the one way the frontend converts those ops. It is also the list of
what the frontend supports: an op without a lowering is an `UnsupportedError`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import torch

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    DTYPES,
    Buffer,
    Fusion,
    Program,
    UnsupportedError,
    Value,
    chained,
    storage_value,
    where,
)

LoweringFn = Callable[["Lowering", list[Any]], "Value | list[Value]"]

MAX_FUSED_DEPTH = 64
"""The longest chain of ATen ops fused into one value: a value whose chain reaches it
is materialised into a buffer, from which the chain goes on. Emitting a value recurses
through its chain (a few Python frames an op), so an unbounded chain of a thousand ops
exceeds Python's recursion limit; the bound also keeps a kernel's body small (Inductor
bounds its fused kernels alike, `max_fusion_size` = 64). The buffer holds the value's
kernel type (f32 for bfloat16), so materialising rounds nothing."""

MAX_FUSED_OPS = 256
"""The most ATen ops fused into one value (each once, however many paths of its DAG
reach it; views count none): an op that would fuse more reads its largest operands
from buffers, materialised for it (and for the ops after it that read them). A wide
DAG of shallow chains (a sum of hundreds of terms) stays under MAX_FUSED_DEPTH but
would otherwise be one kernel of all its ops. Measured (XLA:CPU interpret mode,
f32[256, 256]): one kernel of 1200 ops still compiles and runs (0.83 GB peak, 3.5 s
first call) and compile time is ~40 ms an op with or without the bound (tracing
dominates), so 256 is Inductor's kind of size with room, not a cliff."""

MAX_SHARED_READS = 8
"""The most buffers a fused value that several ops use may read: one that reads more is
stored by a kernel of its own, and its users read that buffer. Every kernel that needs
a fused value computes it again from all it reads, so a residual stream (`x = x + h`,
layer after layer) fused into each of its users read every earlier layer's outputs
in every layer: a stack of 8 nanoGPT blocks had kernels of 36 operands and 3020 ta ops
(quadratic in depth). Inductor realizes such buffers alike
(`realize_acc_reads_threshold` = 8)."""

LOWERINGS: dict[Any, LoweringFn] = {}
"""ATen op overload (or the name of one registered on import of another package,
such as Inductor's `prims.fma.default`) → its lowering."""


class RunsOn(StrEnum):
    """Where a lowering's work runs (`docs/torch.md`'s table of ATen ops says it)."""

    PALLAS = "Pallas"
    """Element-wise, reductions, matmuls, views, gathers: Pallas kernels (the tiler
    hands an access no Pallas idiom covers to XLA, with a remark)."""
    XLA = "XLA"
    """A library call (`pallas_ir.library`) on XLA, inside the same jitted program."""
    BOTH = "Pallas + XLA"
    """Part of each (a random draw on XLA transformed in Pallas), or one or the other
    by the arguments (a pool with padding on XLA; a scatter of more than a few points
    that are not whole rows)."""
    REFUSED = "refused"
    """A lowering that says why the op cannot compile (an `UnsupportedError`)."""


RUNS_ON: dict[Any, RunsOn] = {}
"""ATen op overload → where its lowering's work runs."""


def lowers(
    *targets, runs_on: RunsOn = RunsOn.PALLAS
) -> Callable[[LoweringFn], LoweringFn]:
    """Register the decorated function as the lowering of `targets` (ATen overloads,
    or their names for ops torch registers only when some package is imported), whose
    work runs `runs_on`."""

    def register(fn: LoweringFn) -> LoweringFn:
        for target in targets:
            assert target not in LOWERINGS, f"{target} has two lowerings"
            LOWERINGS[target] = fn
            RUNS_ON[target] = runs_on
        return fn

    return register


CheckFn = Callable[["Lowering", list[Any], "Value"], None]

CHECKS: dict[Any, list[CheckFn]] = {}
"""ATen op overload → run-time checks its lowered value needs (`Program.check`)."""

WIDE_CONSTANTS: dict[Any, LoweringFn] = {}
"""ATen op overload → its lowering when a Python int argument is outside int32 (which
kernels compute int64 data in): a comparison's answer, or an UnsupportedError."""


def checks(*targets) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated function as a run-time check of `targets`' results,
    called with the lowering context, the arguments and the lowered value."""

    def register(fn: CheckFn) -> CheckFn:
        for target in targets:
            CHECKS.setdefault(target, []).append(fn)
        return fn

    return register


def lowers_wide_constants(*targets) -> Callable[[LoweringFn], LoweringFn]:
    """Register the decorated function as the lowering of `targets` when an argument
    is a Python int outside int32."""

    def register(fn: LoweringFn) -> LoweringFn:
        for target in targets:
            WIDE_CONSTANTS[target] = fn
        return fn

    return register


def _wide(a: Any) -> bool:
    return isinstance(a, int) and not isinstance(a, bool) and not -(2**31) <= a < 2**31


@dataclass
class Lowering:
    """What a lowering knows of the op it converts: the graph node (for its result's
    dtype and the user's source line), the ATen `target` (a lowering may serve
    several), its `kwargs`, result `shape` and kernel `element` type, and the
    program it adds kernels and intermediate buffers to."""

    prog: Program
    node: torch.fx.Node
    target: Any
    kwargs: dict[str, Any]
    shape: tuple[int, ...]
    element: str
    buffers: list[Buffer]

    @property
    def where(self) -> str:
        return where(self.node)

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """The result shapes of an op with several results."""
        return [tuple(v.shape) for v in self.node.meta["val"]]

    def unsupported(self, reason: str) -> UnsupportedError:
        return UnsupportedError(str(self.target), reason, self.where)

    def lower(
        self,
        target,
        args: Sequence[Any],
        kwargs: dict[str, Any] | None = None,
        shape: Sequence[int] | None = None,
        element: str | None = None,
    ) -> Value:
        """The value of ATen op `target` on `args`, for the same node (a lowering made
        of others: mean of sum)."""
        value = lower(
            self.prog,
            self.node,
            target,
            list(args),
            kwargs or {},
            tuple(self.shape if shape is None else shape),
            self.buffers,
            element,
        )
        assert isinstance(value, Value)
        return value


def lower(
    prog: Program,
    node: torch.fx.Node,
    target,
    args: list[Any],
    kwargs: dict[str, Any],
    shape: tuple[int, ...],
    buffers: list[Buffer],
    element: str | None = None,
) -> Value | list[Value]:
    """The value (or values) of ATen op `target` on `args` (of `shape`; `element`
    defaults to the node's result type)."""
    fn = LOWERINGS.get(target) or LOWERINGS.get(str(target))
    if fn is None:
        raise UnsupportedError(str(target), "no lowering to ta yet", where(node))
    if element is None:
        val = node.meta.get("val")
        if isinstance(val, list | tuple):  # several results: the first tensor's
            val = next((v for v in val if isinstance(v, torch.Tensor)), None)
        element = DTYPES.get(val.dtype, "f32") if isinstance(val, torch.Tensor) else "f32"
    ctx = Lowering(prog, node, target, dict(kwargs), shape, element, buffers)
    wide = WIDE_CONSTANTS.get(target)
    if wide is not None and any(_wide(a) for a in args):
        return wide(ctx, args)
    args = _within_op_bound(prog, args, buffers)
    result = fn(ctx, args)
    if prog.checking and isinstance(result, Value):
        for check in CHECKS.get(target, ()):
            check(ctx, args, result)
    operands = [b for a in args for b in (a if isinstance(a, list | tuple) else [a])]
    fused = chained(*operands)
    if isinstance(result, Value):
        return _bounded(prog, result, fused, buffers)
    # (None: a result that holds no data, AOTAutograd's effect token)
    return [v if v is None else _bounded(prog, v, fused, buffers) for v in result]


def stored_if_shared(
    prog: Program, node: torch.fx.Node, value: Value, buffers: list[Buffer]
) -> Value:
    """`value`, the result of `node`, stored into a buffer of its own when several ops
    use it and it reads more than MAX_SHARED_READS buffers."""
    fused = value.fused
    if (
        fused is None
        or not fused.ops
        or len(node.users) < 2
        or len(fused.reads) <= MAX_SHARED_READS
    ):
        return value
    return _materialised(prog, value, buffers)


def _within_op_bound(prog: Program, args: list[Any], buffers: list[Buffer]) -> list[Any]:
    """`args` with the operands materialised, largest first, that the op would
    otherwise fuse into a value of more than MAX_FUSED_OPS ops (an operand stored
    already for an earlier op is read from its buffer)."""

    def stored(a: Any) -> Any:
        if isinstance(a, list | tuple):
            return type(a)(stored(b) for b in a)
        return prog.stored.get(a, a) if isinstance(a, Value) else a

    args = [stored(a) for a in args]
    while True:
        operands = [
            b
            for a in args
            for b in (a if isinstance(a, list | tuple) else [a])
            if isinstance(b, Value) and b.fused is not None and b.fused.ops
        ]
        if len(chained(*operands).ops) <= MAX_FUSED_OPS:
            return args
        largest = max(operands, key=lambda v: len(v.fused.ops))  # type: ignore[union-attr]
        prog.stored[largest] = _materialised(prog, largest, buffers)
        args = [stored(a) for a in args]


def _bounded(prog: Program, value: Value, fused: Fusion, buffers: list[Buffer]) -> Value:
    """`value`, what it fuses filled in where its lowering did not say, or
    materialised into a buffer when its chain reaches MAX_FUSED_DEPTH."""
    if value.fused is None:
        value.fused = fused
    if value.fused.depth < MAX_FUSED_DEPTH:
        return value
    return _materialised(prog, value, buffers)


def _materialised(prog: Program, value: Value, buffers: list[Buffer]) -> Value:
    """`value` computed by a kernel of its own into a fresh buffer, and read from it."""
    buf = Buffer.holding(prog.fresh("t"), value.shape, value.element)
    buffers.append(buf)
    prog.kernel(value, buf)
    return storage_value(buf, value.shape, row_major_strides(value.shape))
