"""Max and average pools as Pallas element-wise kernels: each output element reads
its window's elements (a load each, unrolled in eager's order) and reduces them in
registers, so the pool fuses with what produces its input (a CNN's `relu`). The
tiler reads a strided window element by row DMAs and lane compaction.

This covers the unpadded pools of CNNs (`F.max_pool2d(x, 2)`) in float32 and
bfloat16: windows of at most `WINDOW_LIMIT` elements, all inside the input, and no
dilation for a max pool. The rest (padding, `ceil_mode` windows past the end, larger
windows, integers) are the library calls on XLA (`convolution.py`): a window element
outside the input has no block to read it from."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from pallas_ir.frontend.kernel_builder import Kernel, Program, Value

WINDOW_LIMIT = 16
"""The most window elements a pool unrolls in a Pallas kernel (each is a load)."""


@dataclass(frozen=True)
class Window:
    """A pool's windows over the last `len(kernel)` dims of an input of `shape`."""

    shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    kernel: Sequence[int]
    stride: Sequence[int]
    padding: Sequence[int]

    @property
    def nd(self) -> int:
        return len(self.kernel)

    def in_pallas(self) -> bool:
        """Whether the pool is a Pallas kernel: a window of at most `WINDOW_LIMIT`
        elements, every one inside the input (no padding, no `ceil_mode` window past
        the end). A window element outside would be read at its place modulo the
        input's length, which no block covers: the tiler would move the kernel to XLA,
        where the library call's `reduce_window` reads the input once."""
        spatial, out = self.shape[-self.nd :], self.out_shape[-self.nd :]
        return (
            math.prod(self.kernel) <= WINDOW_LIMIT
            and not any(self.padding)
            and all(
                (o - 1) * s + k <= n
                for o, s, k, n in zip(out, self.stride, self.kernel, spatial)
            )
        )

    def starts(self, prog: Program, k: Kernel, idx: Sequence[AffineExpr]) -> list:
        """Per spatial dim, the i32 value of the window's first place, `o * stride`."""
        starts = []
        for d in range(self.nd):
            i = prog.position(
                k, idx[len(idx) - self.nd + d], self.out_shape[-self.nd + d]
            )
            starts.append(k.op("arith.muli", i, k.constant(self.stride[d], "i32")))
        return starts

    def elements(
        self, k: Kernel, x: Value, idx: Sequence[AffineExpr]
    ) -> Iterator[tuple[tuple[int, ...], SSAValue]]:
        """Each window element of output `idx`, in eager's (row-major) order: its
        offset in the window and its value."""
        lead, nd = list(idx[: len(idx) - self.nd]), self.nd
        for offsets in itertools.product(*(range(n) for n in self.kernel)):
            at = [i * s + o for i, s, o in zip(idx[-nd:], self.stride, offsets)]
            yield offsets, x.emit(k, lead + at)

    def flat(self, k: Kernel, places: Sequence[SSAValue]) -> SSAValue:
        """The flat position (i32) of `places` in the input's spatial plane."""
        spatial = self.shape[-self.nd :]
        flat = places[0]
        for d in range(1, self.nd):
            flat = k.op("arith.muli", flat, k.constant(spatial[d], "i32"))
            flat = k.op("arith.addi", flat, places[d])
        return flat


def max_pool(prog: Program, x: Value, w: Window) -> tuple[Value, Value]:
    """The maxima and their flat places in the input's spatial plane, as eager's loop
    finds them: NaN wins and the last NaN's place is kept; of equal maxima the first;
    a window of -inf keeps its first place."""

    def reduce(k: Kernel, idx) -> tuple[SSAValue, SSAValue]:
        starts = w.starts(prog, k, idx)
        best, place = k.constant(-math.inf, "f32"), w.flat(k, starts)
        for offsets, v in w.elements(k, x, idx):
            take = k.op("arith.ori", k.cmp("ogt", v, best), k.cmp("uno", v, v))
            best = k.op("arith.select", take, v, best)
            at = [
                k.op("arith.addi", s, k.constant(o, "i32"))
                for s, o in zip(starts, offsets)
            ]
            place = k.op("arith.select", take, w.flat(k, at), place)
        return best, place

    return (
        Value(w.out_shape, lambda k, idx: reduce(k, idx)[0], "f32"),
        Value(w.out_shape, lambda k, idx: reduce(k, idx)[1], "i32"),
    )


def avg_pool(prog: Program, x: Value, w: Window, divisor_override: int) -> Value:
    """The windows' sums, in eager's order, over `divisor_override` or the window's
    size (with no padding, `count_include_pad` changes nothing)."""
    divisor = float(divisor_override or math.prod(w.kernel))

    def emit(k: Kernel, idx) -> SSAValue:
        total = None
        for _, v in w.elements(k, x, idx):
            total = v if total is None else k.op("arith.addf", total, v)
        assert total is not None
        return k.op("arith.divf", total, k.constant(divisor, "f32"))

    return Value(w.out_shape, emit, "f32")
