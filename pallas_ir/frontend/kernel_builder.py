"""The frontend's IR builders: a `Kernel` builds one `ta.kernel` (its loop, loads,
stores, reductions and scalar `arith`/`math` ops) with xDSL's `Builder`; a `Program`
collects the kernels and assembles `func.func @forward`, which allocates the
intermediates and launches the kernels in order.

A tensor of the graph is a `Value`: a shape and a way to compute its element at any
index, given as affine expressions of the loop dims of the kernel that reads it. The
lowerings (`pallas_ir.frontend.lowerings`) make Values; `Program.kernel` materialises
one into a buffer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.rewriter import InsertPoint

from pallas_ir.affine_analysis import is_division_free, row_major_strides, simplify
from pallas_ir.dialects.arith_ext import ARITH_EXTRA_OPS
from pallas_ir.dialects.common import ArgRole
from pallas_ir.dialects.library_call import Param
from pallas_ir.dialects.special import SPECIAL_OPS
from pallas_ir.dialects.tensor_access import (
    IOTA_ARGUMENT,
    XLA_TARGET,
    AllocOp,
    KernelOp,
    LaunchOp,
    LibraryCallOp,
    LoadOp,
    LoopOp,
    ReduceOp,
    ReshapeOp,
    StoreOp,
)
from pallas_ir.library import LibraryFn

DTYPES = {
    torch.float32: "f32",
    torch.bfloat16: "f32",
    torch.float16: "f32",
    torch.float64: "f64",
    torch.int32: "i32",
    torch.int64: "i32",
    torch.int16: "i32",
    torch.int8: "i32",
    torch.uint8: "i32",
    torch.bool: "i1",
}
"""Element types in kernels. int64 is narrowed to i32 (TPU kernels have no 64-bit types;
the host converts at the boundary), bool is i1 in registers, stored as i32, and
bfloat16 is stored as bf16 and computed in f32 (as Inductor does: rounded where the
program casts to bfloat16 and where a result is stored). int8, uint8 and int16 are
widened to i32 at the boundary (the program converts its inputs, the host narrows its
results) and each op's result wraps to its type's range (`NARROW_INTS`), as eager's
does; float16 is widened to f32 the same way, computed in f32 and rounded where the
program casts to it and where a result leaves the program (as bfloat16). float64 is
f64 everywhere: TPU kernels have no 64-bit types, so a kernel that holds f64 runs on XLA
in float64 (the tiler's `wide_data`); nothing narrows it but a conversion the program
makes (`Kernel.cast` refuses any other)."""

FLOATS = ("f64", "f32")
"""The float element types of values in kernels, widest first."""


def is_float(element: str) -> bool:
    """Whether kernel values of `element` are floats (f32 or f64)."""
    return element in FLOATS


NARROW_INTS: dict[torch.dtype, tuple[int, bool]] = {
    torch.int8: (8, True),
    torch.uint8: (8, False),
    torch.int16: (16, True),
}
"""Integer dtypes held in i32: their width and whether they are signed."""

WIDENED = {torch.float16: torch.float32} | dict.fromkeys(NARROW_INTS, torch.int32)
"""Input dtypes the program widens (in the jitted program, before any kernel)."""

_TYPES: dict[str, Attribute] = {
    "f64": f64,
    "f32": f32,
    "bf16": bf16,
    "f16": f16,
    "i32": i32,
    "i1": i1,
}

_SCALAR_OPS: dict[str, type[Operation]] = {
    op.name: op
    for op in [
        *arith.Arith.operations,
        *ARITH_EXTRA_OPS,
        *math_dialect.Math.operations,
        *SPECIAL_OPS,
    ]
}
"""`arith`, `math` and `special` ops by name: `Kernel.op` builds them through their
constructors."""


def stored_as(dtype: torch.dtype) -> str | None:
    """The element type a buffer of `dtype` holds, where it is not its value type's."""
    return "bf16" if dtype == torch.bfloat16 else None


class UnsupportedError(Exception):
    """A torch program the frontend cannot compile: the ATen op, why, and where."""

    def __init__(self, op: str, reason: str, where: str = ""):
        self.op, self.reason, self.where = op, reason, where
        at = f" (at {where})" if where else ""
        super().__init__(f"{op}: {reason}{at}")


@dataclass(eq=False)
class Buffer:
    """A buffer of @forward: an input's storage, an intermediate, or an output."""

    name: str
    numel: int
    host_shape: tuple[int, ...]
    element: str = "f32"
    """The stored element type (f64, f32, bf16 or i32; bool is stored as i32)."""
    boolean: bool = False
    """Holds bool values (stored as i32 0/1)."""

    @staticmethod
    def holding(
        name: str,
        shape: Sequence[int],
        element: str,
        numel: int = 0,
        stored: str | None = None,
    ) -> Buffer:
        """A buffer for values of `element` (bool is stored as i32; `stored` overrides,
        e.g. bf16 for f32 values); `numel` defaults to the shape's (at least 1)."""
        stored = stored or (element if is_float(element) else "i32")
        return Buffer(
            name, numel or max(math.prod(shape), 1), tuple(shape), stored, element == "i1"
        )

    @property
    def value_element(self) -> str:
        """The element type of the values it holds, in a kernel."""
        return "i1" if self.boolean else "f32" if self.element == "bf16" else self.element

    @property
    def flat(self) -> MemRefType:
        return MemRefType(_TYPES[self.element], [self.numel])

    @property
    def host(self) -> MemRefType:
        return MemRefType(_TYPES[self.element], self.host_shape)


def _symbols_in(expr: AffineExpr, found: set[int]) -> set[int]:
    if isinstance(expr, AffineSymExpr):
        found.add(expr.position)
    elif isinstance(expr, AffineBinaryOpExpr):
        _symbols_in(expr.lhs, found)
        _symbols_in(expr.rhs, found)
    return found


class Kernel:
    """One `ta.kernel` being built: its loop, the buffers it reads (its arguments, in
    order of first use) and a Builder at the end of the loop body.

    Every op goes to the end of the loop body, one block, so a value built earlier
    dominates everything built later: the kernel reuses it instead of building it again
    (each `Value` at an index is emitted once, each scalar op on the same operands
    once). A value used twice is a DAG, not a tree, and emitting a program costs its
    size, not the number of its paths."""

    def __init__(self, name: str, bounds: Sequence[int], reduce_bounds: Sequence[int]):
        self.name = name
        self.block = Block()
        self.loop = LoopOp(bounds, reduce_bounds)
        self.block.add_op(self.loop)
        self.ivs = self.loop.body.block.args
        for j, iv in enumerate(self.ivs):
            iv.name_hint = f"l{j}"
        self.builder = Builder(InsertPoint.at_end(self.loop.body.block))
        self.parallel_dims = len(bounds)
        self.reduce_extents = tuple(reduce_bounds)
        self.dim_ranges = [(0, n - 1) for n in [*bounds, *reduce_bounds]]
        self.inlined = 0
        """The fused reductions computed in this kernel (`fused_reduction`)."""
        self.fuses = True
        """Whether fused reductions may be computed in this kernel."""
        self.reads: list[Buffer] = []
        self.args: dict[int, SSAValue] = {}
        self.count = 0
        self.symbols: list[SSAValue] = []
        """The index values of data-dependent indices: symbol k of an index expression
        stands for symbols[k] (each load renumbers the ones it uses)."""
        self.symbol_of: dict[SSAValue, int] = {}
        """The symbol number of each index value in `symbols`."""
        self.symbol_sizes: list[int | None] = []
        """The range [0, size) each symbol takes when the index is bounds-checked."""
        self.emitted: dict[tuple[Value, tuple[AffineExpr, ...]], SSAValue] = {}
        """The element of a Value at an index, once emitted (`Value.emit`)."""
        self.built: dict[tuple[object, ...], SSAValue] = {}
        """The result of a scalar op (or constant) on given operands, once built."""
        self.literals: dict[SSAValue, float] = {}
        """The Python number of each f32 float constant (`constant`)."""

    def uses_reduction(self, e: AffineExpr) -> bool:
        """Whether index expression `e` varies along the loop's reduction dims (or
        with data, whose dims are not known), once the loop's ranges fold what they
        decide: a row of a flattened view, `(d0 * 128 + d2) floordiv 2048` with d2 in
        [0, 128), is `d0 floordiv 16`."""
        if _symbols_in(e, set()):
            return True
        used = simplify(e, self.dim_ranges).used_dims()
        return any(d >= self.parallel_dims for d in used)

    def region(self) -> Region:
        """The finished loop body as a region, without the float64 constants nothing
        uses (a Python float cast to float32 leaves its double behind): a double in a
        kernel would put the whole program in x64."""
        for op in list(self.block.walk()):
            dead = isinstance(op, arith.ConstantOp) and not op.result.uses
            if dead and op.result.type == f64:
                op.detach()
                op.erase()
        return Region(self.block)

    def _insert(self, op: Operation) -> SSAValue:
        """Insert `op` at the end of the loop body; its result is named `v<n>`, n
        counting the kernel's values (the names the emitted Python keeps)."""
        self.builder.insert(op)
        self.count += 1
        op.results[0].name_hint = f"v{self.count}"
        return op.results[0]

    def arg(self, buf: Buffer) -> SSAValue:
        """The kernel argument holding `buf` (appended at its first use)."""
        if id(buf) not in self.args:
            arg = self.block.insert_arg(buf.flat, len(self.block.args))
            arg.name_hint = buf.name
            self.args[id(buf)] = arg
        return self.args[id(buf)]

    def symbol(self, value: SSAValue, size: int | None = None) -> AffineExpr:
        """A data-dependent index (an i32 value) to use in an index expression; the
        same value is the same symbol, so the elements it indexes are reused too.
        `size`: the dim it indexes, when an index outside [0, size) raises (a bounds
        check): index expressions are then simplified with it in that range, so a row
        of a flattened view, `((d0 * 64 + s0) floordiv 64) * 64 + (d0 * 64 + s0) mod
        64`, is `d0 * 64 + s0`."""
        index = self.op("arith.index_cast", value, IndexType())
        if index not in self.symbol_of:
            self.symbol_of[index] = len(self.symbols)
            self.symbols.append(index)
            self.symbol_sizes.append(size)
        return AffineExpr.symbol(self.symbol_of[index])

    def _in_symbol_ranges(self, index: AffineExpr, used: list[int]) -> AffineExpr:
        """`index` simplified with the loop's ranges and those of its symbols."""
        n = len(self.dim_ranges)
        as_dims = [
            AffineExpr.dimension(n + used.index(s)) if s in used else AffineExpr.symbol(s)
            for s in range(len(self.symbols))
        ]
        bounds = [*self.dim_ranges] + [
            (0, size - 1) if (size := self.symbol_sizes[s]) else None for s in used
        ]
        simple = simplify(
            index.replace_dims_and_symbols(
                [AffineExpr.dimension(d) for d in range(n)], as_dims
            ),
            bounds,
        )
        back = [AffineExpr.dimension(d) for d in range(n)]
        back += [AffineExpr.symbol(s) for s in used]
        return simple.replace_dims_and_symbols(back, [])

    def _access(self, index: AffineExpr) -> tuple[AffineMapAttr, list[SSAValue]]:
        """The map of an access at flat position `index` and its symbol operands: the
        data-dependent indices `index` uses, renumbered from s0."""
        used = sorted(_symbols_in(index, set()))
        if used and not is_division_free(index):
            index = self._in_symbol_ranges(index, used)
        if used:
            renumbered = [
                AffineExpr.symbol(used.index(s) if s in used else s)
                for s in range(len(self.symbols))
            ]
            index = index.replace_dims_and_symbols([], renumbered)
        access = AffineMap(len(self.ivs), len(used), (index,))
        return AffineMapAttr(access), [self.symbols[s] for s in used]

    def load(self, buf: Buffer, index: AffineExpr) -> SSAValue:
        """The element of `buf` at flat position `index`, as a value of its value
        type (bf16 extended to f32, bool compared with 0). `index` may use
        data-dependent indices (`symbol`)."""
        if buf not in self.reads:
            self.reads.append(buf)
        # A kernel stores once, after all its loads: a place reads the same element
        # wherever it is loaded.
        key = ("ta.load", buf, index)
        if key not in self.built:
            access, symbols = self._access(index)
            v = self._insert(LoadOp(self.arg(buf), access, self.ivs, symbols))
            self.built[key] = self.cast(v, buf.element, buf.value_element)
        return self.built[key]

    def store_at(
        self,
        value: SSAValue,
        buf: Buffer,
        index: AffineExpr,
        accumulate: str | None = None,
    ) -> None:
        """Store `value` (of `buf`'s value type) into `buf` at flat position `index`,
        which may use data-dependent indices (a scatter); with `accumulate` (a
        ReductionKind), combine it with the element there instead."""
        v = self.cast(value, buf.value_element, buf.element)
        access, symbols = self._access(index)
        store = StoreOp(v, self.arg(buf), access, self.ivs, symbols, accumulate)
        self.builder.insert(store)

    def store(self, value: SSAValue, buf: Buffer, shape: Sequence[int]) -> None:
        """Store `value` into `buf`, contiguous of `shape`, at the point of the loop's
        first len(shape) dims."""
        n_dims = len(shape)
        strides = row_major_strides(shape)
        flat = AffineExpr.dimension(0) * strides[0]
        for j, s in enumerate(strides[1:], 1):
            flat = flat + AffineExpr.dimension(j) * s
        access = AffineMapAttr(AffineMap(n_dims, 0, (flat,)))
        self.builder.insert(StoreOp(value, self.arg(buf), access, self.ivs[:n_dims]))

    def op(self, name: str, *operands: SSAValue | Attribute | str) -> SSAValue:
        """The result of the `arith`/`math` op `name` on `operands` (a cmp's predicate
        and a cast's target type go after its operands, as its constructor takes them).
        The ops are pure: the same op on the same operands is built once."""
        operands = self._float_literals_as(operands)
        key = (name, *operands)
        if key not in self.built:
            self.built[key] = self._insert(_SCALAR_OPS[name](*operands))
        return self.built[key]

    def reduce(self, kind: str, value: SSAValue) -> SSAValue:
        """`value` combined by `kind` (a ReductionKind) over the loop's reduce dims."""
        return self._insert(ReduceOp(kind, value))

    def constant(self, value: float | bool, element: str = "f32") -> SSAValue:
        """`value` (a Python scalar) as an `arith.constant` of `element`. A float
        constant of f32 that meets f64 values in an op is an f64 one there, of the
        same Python number (`op`): lowerings write their literals once for both."""
        if element == "i1":
            attr = IntegerAttr(int(bool(value)), i1)
        elif element == "i32":
            attr = IntegerAttr(int(value), i32)
        elif element == "f64":
            attr = FloatAttr(float(value), f64)  # the Python float, all of it
        elif math.isfinite(value):
            # Nine significant digits: a float32 round-trips through them.
            attr = FloatAttr(float(f"{float(value):.9e}"), f32)
        else:
            attr = FloatAttr(float(value), f32)
        key = ("arith.constant", attr)
        if key not in self.built:
            self.built[key] = self._insert(arith.ConstantOp(attr))
            if element == "f32":
                self.literals[self.built[key]] = float(value)
        return self.built[key]

    def _float_literals_as(self, operands: tuple) -> tuple:
        """`operands` with each f32 literal (`constant`) an f64 one of its Python
        number where another operand is f64 (torch computes a Python scalar in the
        tensor's type, float64 ones in float64)."""
        if not any(isinstance(o, SSAValue) and o.type == f64 for o in operands):
            return operands
        return tuple(
            self.constant(self.literals[o], "f64")
            if isinstance(o, SSAValue) and o in self.literals
            else o
            for o in operands
        )

    def cmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """`arith.cmpf` (floats) or `arith.cmpi` (integers) with the predicate for it."""
        return self.op(
            "arith.cmpf" if isinstance(lhs.type, AnyFloat) else "arith.cmpi",
            lhs,
            rhs,
            predicate,
        )

    def cast(
        self, v: SSAValue, source: str, target: str, converts: bool = False
    ) -> SSAValue:
        """`v` of element type `source` as `target` (torch's conversion rules). f64
        becomes a narrower type only where the program converts it (`converts`: a
        conversion op, or torch's promotion to an op's result type, which takes a 0-d
        float64 operand of float32 data to float32): never by a lowering's default."""
        if source == target:
            return v
        if source == "f64" and target != "i1" and not converts:
            raise ValueError(f"f64 narrowed to {target} without a conversion")
        if (
            source == "f64"
            and target == "f32"
            and isinstance(v.owner, arith.ConstantOp)
            and isinstance(v.owner.value, FloatAttr)
        ):  # a Python float given as a double (a tolerance): the float32 literal
            return self.constant(float(np.float32(v.owner.value.value.data)), "f32")
        if target in ("bf16", "f16") and source != "f32":
            # torch converts a double to bfloat16 and float16 through float
            return self.cast(self.cast(v, source, "f32", converts), "f32", target)
        if target == "i1":
            zero = self.constant(0, source)
            return self.cmp("une" if is_float(source) else "ne", v, zero)
        ops = {
            ("i1", "i32"): "arith.extui",
            ("i1", "f32"): "arith.uitofp",
            ("i32", "f32"): "arith.sitofp",
            ("f32", "i32"): "arith.fptosi",
            ("f32", "bf16"): "arith.truncf",
            ("bf16", "f32"): "arith.extf",
            ("f32", "f16"): "arith.truncf",
            ("f16", "f32"): "arith.extf",
            ("i1", "f64"): "arith.uitofp",
            ("i32", "f64"): "arith.sitofp",
            ("f64", "i32"): "arith.fptosi",
            ("f32", "f64"): "arith.extf",
            ("f64", "f32"): "arith.truncf",
            ("bf16", "f64"): "arith.extf",
            ("f16", "f64"): "arith.extf",
        }
        return self.op(ops[source, target], v, _TYPES[target])


Index = Sequence[AffineExpr]
Emit = Callable[[Kernel, Index], SSAValue]


@dataclass(frozen=True)
class Fusion:
    """What is fused into a value since data in memory (`lowerings.registry` bounds
    both)."""

    depth: int = 0
    """The longest chain of ATen ops (views included)."""
    ops: frozenset[object] = frozenset()
    """The ops, each once however many paths of the value's DAG reach it (a token
    per op lowered; views add none: they only index)."""
    reductions: tuple[FusedReduction, ...] = ()
    """The reductions fused into the value (`fused_reduction`), first fused first:
    `Program.kernel` lays a kernel's loop out so that they are computed in it."""
    reads: frozenset[object] = frozenset()
    """The buffers the value reads (every kernel that needs it reads them all)."""


@dataclass(frozen=True)
class FusedReduction:
    """A reduction of a value's last dims of `extents`, to a result of shape `kept`."""

    kept: tuple[int, ...]
    extents: tuple[int, ...]


@dataclass(eq=False)
class Value:
    """A tensor of the graph: its shape, how to build its element at an index in a
    kernel, and its element type there."""

    shape: tuple[int, ...]
    build: Emit
    """Builds the element at an index (affine expressions of the kernel's loop dims);
    `emit` calls it once per kernel and index."""
    element: str = "f32"
    fused: Fusion | None = None
    """What is fused into this value since data in memory (nothing for stored data);
    `lowerings.registry.lower` fills it in and materialises a value that fuses too
    much."""
    stored: Buffer | None = None
    """The buffer that holds this value contiguous (row-major from its start), if one
    does: a library call reads it as it is."""

    def emit(self, k: Kernel, idx: Index) -> SSAValue:
        """The element at `idx` in kernel `k`: built at the first ask, then reused."""
        idx = tuple(map(_canonical, idx))
        key = (self, idx)
        if key not in k.emitted:
            k.emitted[key] = self.build(k, idx)
        return k.emitted[key]


def _canonical(e: AffineExpr) -> AffineExpr:
    """`e` with `x mod 1` as 0 and `x floordiv 1` as x (what a part of length 1 of a
    `cat` reads at), constants folded again: equal places get equal expressions, so a
    Value is not emitted twice for one place (nor once per path through the views)."""
    if not isinstance(e, AffineBinaryOpExpr):
        return e
    lhs, rhs = _canonical(e.lhs), _canonical(e.rhs)
    kind = e.kind
    if rhs == AffineExpr.constant(1):
        if kind == AffineBinaryOpKind.Mod:
            return AffineExpr.constant(0)
        if kind in (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.CeilDiv):
            return lhs
    if lhs is e.lhs and rhs is e.rhs:
        return e
    if kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    if kind == AffineBinaryOpKind.Mul:
        return lhs * rhs
    if kind == AffineBinaryOpKind.Mod:
        return lhs % rhs
    if kind == AffineBinaryOpKind.FloorDiv:
        return lhs // rhs
    return lhs.ceil_div(rhs)


def chained(*operands: object) -> Fusion:
    """What a value that fuses one op onto `operands` fuses (Values; others, such as
    Python scalars, count as data in memory)."""
    fused = [v.fused for v in operands if isinstance(v, Value) and v.fused is not None]
    return Fusion(
        1 + max((f.depth for f in fused), default=0),
        frozenset[object]().union(*(f.ops for f in fused)) | {object()},
        tuple(dict.fromkeys(r for f in fused for r in f.reductions)),
        frozenset[object]().union(*(f.reads for f in fused)),
    )


def fused_reduction(
    prog: Program,
    buffers: list[Buffer],
    source: Value,
    kind: str,
    dims: int,
    element: str,
) -> Value:
    """`source` reduced by `kind` over its last `dims` dims, as a value of `element`.
    It is computed in the kernel that needs it wherever that kernel's loop reduces over
    dims of the same extents and needs it at a point of its other dims (a softmax's
    max and sum, a norm's mean and variance: the statistic stays in registers, one
    kernel). Elsewhere a kernel of its own stores it, once, at the first ask, into a
    buffer (appended to `buffers`) that such kernels read."""
    kept, extents = tuple(source.shape[:-dims]), tuple(source.shape[-dims:])
    buf = Buffer.holding(prog.fresh("t"), kept, element)
    stored: list[Value] = []

    def build(k: Kernel, idx: Index) -> SSAValue:
        inline = k.fuses and k.reduce_extents == extents
        if inline and not any(k.uses_reduction(e) for e in idx):
            loop = [AffineExpr.dimension(k.parallel_dims + j) for j in range(dims)]
            k.inlined += 1
            reduced = k.reduce(kind, source.emit(k, [*idx, *loop]))
            # rounded as the stored result would be (a bfloat16 sum), then widened
            held = k.cast(reduced, source.element, buf.element)
            return k.cast(held, buf.element, buf.value_element)
        if not stored:
            prog.unstored.pop(result, None)
            store_into(buf)
            buffers.append(buf)
            result.stored = buf  # (an output that is it returns it as it is)
        return stored[0].emit(k, idx)

    def store_into(into: Buffer) -> None:
        prog.kernel(source, into, range(len(kept), len(source.shape)), kind)
        stored.append(storage_value(into, kept, row_major_strides(kept)))

    base = chained(source)
    own = (FusedReduction(kept, extents), *base.reductions)
    fused = Fusion(base.depth, base.ops, tuple(dict.fromkeys(own)), base.reads)
    result = Value(kept, build, buf.value_element, fused)
    prog.unstored[result] = (store_into, buf.element)
    return result


def _fused_layouts(value: Value) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The loops in which a reduction fused into `value` can be computed in the
    kernel that stores it, each (its parallel extents, its reduction extents): the
    value is the reduction's operand's shape (its leading dims are the parallel ones,
    its last dims the reduced ones) or its result's, keepdim's unit dims or not (the
    parallel dims are the result's)."""
    shape = tuple(value.shape)
    layouts: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    for r in value.fused.reductions if value.fused is not None else ():
        n = len(r.extents)
        kept = _squeezed(r.kept)
        if len(shape) > n and shape[-n:] == r.extents and _squeezed(shape[:-n]) == kept:
            layout = (shape[:-n], r.extents)
        elif _squeezed(shape) == kept:
            layout = (r.kept, r.extents)
        else:
            continue
        if layout not in layouts:
            layouts.append(layout)
    return layouts


def _squeezed(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(n for n in shape if n != 1)


def _kept_index(shape: Sequence[int], kept: Sequence[int]) -> list[AffineExpr]:
    """The index of a value of `shape` (the `kept` dims, with or without unit dims)
    at the point of a loop whose first dims walk `kept`."""
    dims = iter(j for j, n in enumerate(kept) if n != 1)
    return [const(0) if n == 1 else AffineExpr.dimension(next(dims)) for n in shape]


def const(n: int) -> AffineExpr:
    """The index expression `n` (AffineExpr's operators put constants on the right;
    an int on the left of `-` would not mean what it says)."""
    return AffineExpr.constant(n)


def linear(terms: Sequence[AffineExpr], start: AffineExpr | None = None) -> AffineExpr:
    """`start + terms[0] + terms[1] + ...`, left to right (0 when there are none)."""
    total = start
    for t in terms:
        total = t if total is None else total + t
    return const(0) if total is None else total


def wrapped(value: Value, dtype: torch.dtype) -> Value:
    """`value` (i32) wrapped to the range of the narrow integer `dtype`, as eager's
    int8/uint8/int16 arithmetic wraps: a sign-extending shift pair, or a mask."""
    bits, signed = NARROW_INTS[dtype]

    def emit(k: Kernel, idx: Index) -> SSAValue:
        v = value.emit(k, idx)
        if not signed:
            return k.op("arith.andi", v, k.constant(2**bits - 1, "i32"))
        shift = k.constant(32 - bits, "i32")
        return k.op("arith.shrsi", k.op("arith.shli", v, shift), shift)

    return Value(value.shape, emit, "i32", value.fused)


def storage_value(buf: Buffer, shape, strides) -> Value:
    """Stored data viewed with `strides` from the start of `buf`."""

    def emit(k: Kernel, idx: Index) -> SSAValue:
        return k.load(buf, linear([e * s for e, s in zip(idx, strides) if s]))

    shape = tuple(shape)
    whole = math.prod(shape) == buf.numel or (math.prod(shape) == 1 == buf.numel)
    dense = all(
        s == r for n, s, r in zip(shape, strides, row_major_strides(shape)) if n != 1
    )
    return Value(
        shape,
        emit,
        buf.value_element,
        Fusion(reads=frozenset({buf})),
        buf if whole and dense else None,
    )


def remap(v: Value, shape, index: Callable[[Index], list[AffineExpr]]) -> Value:
    """A view of `v`: the element at `idx` is v's element at `index(idx)`."""
    return Value(
        tuple(shape),
        lambda k, idx: v.emit(k, index(idx)),
        v.element,
        None
        if v.fused is None
        else Fusion(v.fused.depth + 1, v.fused.ops, v.fused.reductions, v.fused.reads),
    )


def broadcast_index(v: Value, out_shape: Sequence[int], idx: Index) -> list[AffineExpr]:
    """The index into `v` (broadcast to `out_shape`) of output index `idx`."""
    lead = len(out_shape) - len(v.shape)
    return [const(0) if n == 1 else idx[lead + k] for k, n in enumerate(v.shape)]


def unreduced(idx: Index, dims: Sequence[int], rank: int) -> list[AffineExpr]:
    """The index into a keepdim result (unit `dims`) of the index `idx` without them."""
    it = iter(idx)
    return [const(0) if d in dims else next(it) for d in range(rank)]


@dataclass(frozen=True)
class Failure:
    """What a call raises when a run-time check fails: `error` ("op: reason (at
    where)"), `{value}` in `reason` where the failing value goes."""

    error: type[Exception]
    op: str
    reason: str
    where: str

    def exception(self, value: object) -> Exception:
        reason = self.reason.replace("{value}", str(value))
        if issubclass(self.error, UnsupportedError):
            return self.error(self.op, reason, self.where)
        return self.error(f"{self.op}: {reason} (at {self.where})")


@dataclass(frozen=True)
class Check:
    """A condition the program checks on its data at run time (an index inside its
    dim): two scalar buffers the program returns, 1 when any element failed and the
    largest failing value, and what the call raises when one did."""

    failed: Buffer
    worst: Buffer
    failure: Failure


@dataclass(frozen=True)
class BoundedIndex:
    """An index tensor an op checks against the dim it indexes: every value outside
    it (any int64 value outside int32 too: no dim is that large) is the op's
    `failure`."""

    user: object
    """The graph node of the indexing op."""
    index: Value
    failure: Failure


EPILOGUE_REDUCTION_MAX = 1 << 16
"""The longest rows a fused reduction is computed over in a kernel that stores one
result a row (a variance, a `sum(-1) * 2`, a cross-entropy's loss). A fused reduction
keeps its rows whole in VMEM (the tiler cannot split them over a sequential grid dim);
the tiler views the 1-D results as a column where 128 rows would not fit
(`policy.column_views`), so 8 rows of 65536 f32 are a 2 MiB block. Longer rows are
reduced by a kernel of their own, which the tiler may split. The same bound as
`FUSED_REDUCTION_MAX`, for kernels that store every point of the rows (a softmax)."""


@dataclass
class Program:
    """The kernels built so far and the launches of @forward, in order."""

    kernels: list[KernelOp] = field(default_factory=list[KernelOp])
    launches: list[tuple[str, list[Buffer]]] = field(
        default_factory=list[tuple[str, list[Buffer]]]
    )
    count: int = 0
    iotas: dict[int, Buffer] = field(default_factory=dict[int, Buffer])
    """Constant inputs 0 .. n-1 (i32): a position along a dim as a value, at any
    index expression (`cat`, `arange`), by a load."""
    stored: dict[Value, Value] = field(default_factory=dict[Value, Value])
    """Values materialised for an op that would fuse too much → their stored copy,
    which later ops read too (`lowerings.registry.lower`)."""
    seed: Buffer | None = None
    """The call's random seed (two int32 words the host draws from torch's generator
    at every call), once a random op needs it (`random_op`)."""
    random_ops: int = 0
    """Random ops so far: each draws from the seed's key folded with its number."""
    checking: bool = True
    """Whether `check` adds its kernels (run-time checks on: the default)."""
    checks: list[Check] = field(default_factory=list[Check])
    bounded_indices: list[BoundedIndex] = field(default_factory=list[BoundedIndex])
    """The index values ops check against their dims (`check_in_range`)."""
    values: dict[object, object] = field(default_factory=dict[object, object])
    """The value of each graph node converted so far: `as_strided` reads the storage
    its operand views, from the node that owns it."""
    storage_offsets: dict[object, int] = field(default_factory=dict[object, int])
    """Each input node's storage offset in the caller's tensor, at compile time."""
    unstored: dict[Value, tuple[Callable[[Buffer], None], str]] = field(
        default_factory=dict[Value, tuple[Callable[[Buffer], None], str]]
    )
    """Each fused reduction not stored yet → what stores it into a buffer of the
    element type it holds (a kernel of its own), for one that is an output."""
    specialised_offsets: set[object] = field(default_factory=set[object])
    """The inputs whose storage offset the program depends on (an as_strided with an
    offset in the caller's storage reads them): a call must pass the same."""
    once: dict[tuple, tuple[object, object]] = field(
        default_factory=dict[tuple, tuple[object, object]]
    )
    """What two ops on one index tensor would each compute (its range check, its
    wrapped copy), made for the first, by (what, id of the index Value, ...) → (the
    index Value, kept alive so that its id stays its own; what was made)."""
    in_place: dict[object, Buffer] = field(default_factory=dict[object, Buffer])
    """Scatter nodes that write into the buffer of the input they update (the input
    is read by nothing else and takes their result back), and that buffer: the
    write needs no copy of its base, and the host donates the input."""

    def check(
        self,
        bad: Value,
        shown: Value,
        error: type[Exception],
        op: str,
        reason: str,
        where: str,
        always: bool = False,
    ) -> Failure | None:
        """Check `bad` (an i1 value) when the program runs: two reductions over all of
        it write whether any element is bad and the largest of `shown` (a value of
        the same shape) where one is; the host raises `error` ("op: reason (at
        where)", `{value}` in `reason` the largest bad one) when one was. Returns
        that failure (None with the checks off, unless the check is `always` made)."""
        if not (self.checking or always) or math.prod(bad.shape) == 0:
            return None
        element = shown.element
        lowest = -(2**31) if element == "i32" else -math.inf

        # Unit dims dropped: a loop whose innermost dim is 1 takes a lane tile per
        # element, and two such checks of one index are not fused as siblings.
        kept = [k for k, n in enumerate(bad.shape) if n != 1]
        shape = tuple(bad.shape[k] for k in kept)

        def full(idx: Index) -> list[AffineExpr]:
            at = dict(zip(kept, idx))
            return [at.get(k, AffineConstantExpr(0)) for k in range(len(bad.shape))]

        def failed(k: Kernel, idx: Index) -> SSAValue:
            return k.cast(bad.emit(k, full(idx)), "i1", "i32")

        def worst(k: Kernel, idx: Index) -> SSAValue:
            v, lo = shown.emit(k, full(idx)), k.constant(lowest, element)
            return k.op("arith.select", bad.emit(k, full(idx)), v, lo)

        dims = list(range(len(shape)))
        flag = Buffer.holding(self.fresh("failed"), (), "i32")
        largest = Buffer.holding(self.fresh("worst"), (), element)
        self.kernel(Value(shape, failed, "i32"), flag, dims, "max")
        self.kernel(Value(shape, worst, element), largest, dims, "max")
        failure = Failure(error, op, reason, where)
        self.checks.append(Check(flag, largest, failure))
        return failure

    def random_op(self) -> tuple[Buffer, int]:
        """The seed buffer and the number of a new random op."""
        if self.seed is None:
            self.seed = Buffer.holding("seed", (2,), "i32")
        self.random_ops += 1
        return self.seed, self.random_ops

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def position(self, k: Kernel, index: AffineExpr, n: int) -> SSAValue:
        """The i32 value of the index expression `index` (in [0, n))."""
        if n not in self.iotas:
            self.iotas[n] = Buffer.holding(f"iota{n}", (n,), "i32")
        return k.load(self.iotas[n], index)

    def kernel(
        self,
        value: Value,
        out: Buffer,
        reduce: Sequence[int] = (),
        kind: str = "",
        fuse: bool = True,
    ) -> None:
        """A kernel that computes `value` (reduced over its dims `reduce` by `kind`)
        into the contiguous buffer `out`. An empty result is no kernel (there is
        nothing to store); a reduction over an empty dim stores `kind`'s identity.

        A value with reductions fused into it (`fused_reduction`) is built first in a
        loop that reduces over their dims (`_fused_kernel`), and kept so when one is
        computed in it. With `fuse` off no fused reduction is computed in the kernel (a
        matrix product's, whose contraction the tiler splits and blocks for the MXU: a
        norm's statistics in its prologue would need whole rows of k)."""
        unstored = self.unstored.pop(value, None)
        if unstored is not None and not reduce and unstored[1] == out.element:
            unstored[0](out)  # a fused reduction stored: its kernel, into `out`
            return
        name = self.fresh("k")
        if not reduce and fuse and self._fused_kernel(name, value, out, []):
            return
        self._plain_kernel(name, value, out, list(reduce), kind, fuse)

    def store_all(self, stores: Sequence[tuple[Value, Buffer]]) -> None:
        """Kernels that compute each value into its buffer (`kernel`), where values
        that fuse the same reductions share one kernel with several outputs:
        `var_mean`'s two results, a layer norm's output with its mean and rstd (a
        training forward's), each statistic computed once and every row read once."""
        left = list(stores)
        while left:
            value, out = left.pop(0)
            if value in self.unstored:  # a fused reduction itself: stored into `out`
                self.kernel(value, out)
                continue
            name = self.fresh("k")
            group = self._fused_kernel(name, value, out, left)
            if not group:
                self.kernel(value, out)
            for item in group[1:]:
                left.remove(item)

    def _fused_kernel(
        self, name: str, value: Value, out: Buffer, others: list[tuple[Value, Buffer]]
    ) -> list[tuple[Value, Buffer]]:
        """A kernel `name` whose loop reduces over the dims of a reduction fused into
        `value`: over its leading dims with its last dims as the reduction's, stored
        at every point (softmax), or over the reduction's result's dims with its
        reduced dims added, stored once a row (an epilogue, rows of at most
        EPILOGUE_REDUCTION_MAX). Those of `others` that fuse a reduction of the same
        extents and have the loop's shape or its parallel dims are stored by it too.
        Added when a reduction is computed in it: the values it stores, else none."""
        for kept, extents in _fused_layouts(value):
            full = (*kept, *extents)
            bounds = list(kept) or [1]  # a 0-d result still loops: over a unit dim
            group = [(value, out)] + [
                (v, o)
                for v, o in others
                if (v.shape == full or _squeezed(v.shape) == _squeezed(kept))
                and any(e == extents for _, e in _fused_layouts(v))
            ]
            k = Kernel(name, bounds, list(extents))
            # A kernel that stores one element a row fuses only short rows (see
            # EPILOGUE_REDUCTION_MAX); one that stores every point of them, any.
            every_point = any(v.shape == full for v, _ in group)
            if not every_point and math.prod(extents) > EPILOGUE_REDUCTION_MAX:
                continue  # (nothing could be computed in it)
            results = []
            for v, o in group:
                if v.shape == full:
                    idx, shape = [AffineExpr.dimension(j) for j in range(len(full))], full
                else:  # (a 0-d result's index uses no loop dim)
                    idx, shape = _kept_index(v.shape, kept), tuple(bounds)
                results.append((k.cast(v.emit(k, idx), v.element, o.element), shape))
            if not k.inlined:
                continue
            for (_, o), (r, shape) in zip(group, results, strict=True):
                k.store(r, o, shape)
            self._launch(k, *(o for _, o in group))
            return group
        return []

    def _plain_kernel(
        self,
        name: str,
        value: Value,
        out: Buffer,
        reduce: list[int],
        kind: str,
        fuse: bool = True,
    ) -> None:
        """Kernel `name` computing `value`, reduced over its dims `reduce` by `kind`,
        into `out`: its loop walks the kept dims, then the reduced ones."""
        kept = [d for d in range(len(value.shape)) if d not in reduce]
        order = kept + reduce
        # A 0-d result (a full reduction) still loops: over one unit dim in front.
        unit = 0 if kept else 1
        kept_shape = [value.shape[d] for d in kept] or [1]
        if 0 in kept_shape:  # an empty result
            return
        reduced = [value.shape[d] for d in reduce]
        k = Kernel(name, kept_shape, [] if 0 in reduced else reduced)
        k.fuses = fuse and math.prod(reduced) <= EPILOGUE_REDUCTION_MAX
        # Loop dim j walks value dim order[j]: kept dims first, reductions last.
        idx: list[AffineExpr] = [const(0)] * len(value.shape)
        for j, d in enumerate(order):
            idx[d] = AffineExpr.dimension(j + unit)
        element = value.element
        if 0 in reduced:  # a reduction of no elements: its identity
            identity, element = _identity(kind, element)
            v = k.constant(identity, element)
        else:
            v = value.emit(k, idx)
            if reduce:
                if element == "i1":  # any / all: max / min of 0 and 1
                    v, element = k.cast(v, "i1", "i32"), "i32"
                v = k.reduce(kind, v)
                if kind in ("argmax", "argmin"):
                    element = "i32"
        v = k.cast(v, element, out.element)  # bool is stored as i32
        k.store(v, out, kept_shape)
        self._launch(k, out)

    def _launch(self, k: Kernel, *outs: Buffer) -> None:
        """Kernel `k`, built, added and launched: its arguments are the buffers it
        reads, then `outs` (stored after every load)."""
        for out in outs:
            k.arg(out)
        roles = [ArgRole.IN] * len(k.reads) + [ArgRole.OUT] * len(outs)
        kernel = KernelOp(k.name, [], roles, k.region())
        self.kernels.append(kernel)
        self.launches.append((k.name, [*k.reads, *outs]))

    def scatter(
        self,
        shape: Sequence[int],
        out: Buffer,
        emit: Callable[[Kernel, Index], tuple[SSAValue, AffineExpr]],
        accumulate: str | None = None,
    ) -> None:
        """A kernel over `shape` that stores, at each point, a value into `out` at a
        position both given by `emit` (the position may depend on data, a map
        symbol), combining it with what is there by `accumulate` if given. `out` is
        `inout`: what the kernel does not write keeps what earlier kernels wrote."""
        if 0 in shape:  # no point to write
            return
        k = Kernel(self.fresh("k"), list(shape) or [1], [])
        idx = [AffineExpr.dimension(j) for j in range(len(shape))]
        value, index = emit(k, idx)
        k.store_at(value, out, index, accumulate)
        roles = [ArgRole.IN] * len(k.reads) + [ArgRole.INOUT]
        self.kernels.append(KernelOp(k.name, [], roles, k.region()))
        self.launches.append((k.name, [*k.reads, out]))

    def library_call(
        self,
        fn: LibraryFn,
        inputs: Sequence[tuple[Buffer, Sequence[int]]],
        outputs: Sequence[tuple[Buffer, Sequence[int]]],
        params: Mapping[str, Param],
    ) -> None:
        """A kernel on XLA that calls library function `fn` on the contiguous buffers
        `inputs` and writes its results to `outputs`, each viewed in the shape beside
        it (`ta.library_call`)."""
        name = self.fresh("k")
        block = Block()
        args = []
        for buf, _ in [*inputs, *outputs]:
            arg = block.insert_arg(buf.flat, len(block.args))
            arg.name_hint = buf.name
            args.append(arg)
        shapes = [tuple(shape) for _, shape in [*inputs, *outputs]]
        n = len(inputs)
        block.add_op(LibraryCallOp(fn, args[:n], args[n:], shapes, params))
        roles = [ArgRole.IN] * n + [ArgRole.OUT] * len(outputs)
        kernel = KernelOp(name, [], roles, Region(block))
        kernel.attributes["target"] = XLA_TARGET
        self.kernels.append(kernel)
        self.launches.append((name, [b for b, _ in [*inputs, *outputs]]))

    def module(
        self, inputs: Sequence[Buffer], temps: Sequence[Buffer], outputs: Sequence[Buffer]
    ) -> ModuleOp:
        """The kernels and `func.func @forward(inputs) -> outputs`, which allocates
        `temps` (the intermediates and outputs) and launches the kernels."""
        forward = func.FuncOp(
            "forward", ([b.host for b in inputs], [b.host for b in outputs])
        )
        iotas = {id(b) for b in self.iotas.values()}
        if any(id(b) in iotas for b in inputs):  # what passes may know of their values
            forward.arg_attrs = ArrayAttr(
                [
                    DictionaryAttr({IOTA_ARGUMENT: UnitAttr()} if id(b) in iotas else {})
                    for b in inputs
                ]
            )
        body = forward.body.block
        host = Builder(InsertPoint.at_end(body))
        values: dict[int, SSAValue] = {}
        flats: dict[int, SSAValue] = {}
        for b, arg in zip(inputs, body.args):
            arg.name_hint = b.name
            values[id(b)] = arg
        launched = {id(b) for _, operands in self.launches for b in operands}
        returned = {id(b) for b in outputs}
        for b in [*inputs, *temps]:
            if id(b) not in values.keys() | launched | returned:
                continue  # an empty intermediate: no kernel writes or reads it
            if id(b) not in values:
                values[id(b)] = host.insert(AllocOp(b.host)).result
                values[id(b)].name_hint = b.name
            if id(b) in launched:  # the flat view the kernels take
                flats[id(b)] = host.insert(ReshapeOp(values[id(b)], b.flat)).result
                flats[id(b)].name_hint = f"{b.name}_flat"
        for name, operands in self.launches:
            host.insert(LaunchOp(name, [flats[id(b)] for b in operands]))
        host.insert(func.ReturnOp(*[values[id(b)] for b in outputs]))
        return ModuleOp([*self.kernels, forward])


def _identity(kind: str, element: str) -> tuple[float | int, str]:
    """The value of a `kind` reduction of no elements of `element` (torch's: a sum
    is 0, a product 1, `any` false, `all` true), and its element type there (bool is
    reduced as i32). Eager raises for an amax of an empty dim, but max and min have
    their identities all the same (the lowest and highest value)."""
    lowest, highest = {"i1": (0, 1), "i32": (-(2**31), 2**31 - 1)}.get(
        element, (-math.inf, math.inf)
    )
    element = "i32" if element == "i1" else element  # any / all: max / min of 0, 1
    identities = {"sum": 0, "prod": 1, "max": lowest, "min": highest}
    if kind not in identities:  # argmax / argmin of nothing: eager raises
        raise ValueError(f"a {kind} reduction of no elements has no value")
    return identities[kind], element


def where(node: torch.fx.Node) -> str:
    """The user's source line of `node` (its innermost recorded frame and the code on
    that line), or the graph node's name when the trace recorded none."""
    lines = [ln.strip() for ln in (node.meta.get("stack_trace") or "").splitlines()]
    frames = [i for i, ln in enumerate(lines) if ln.startswith("File")]
    if not frames:
        return f"graph node {node.name}"
    # The innermost frame of the user's code, not of torch's own modules (a
    # torch.nn.BatchNorm2d's forward).
    torch_dir = str(Path(torch.__file__).parent)
    users = [i for i in frames if torch_dir not in lines[i]]
    at = (users or frames)[-1]
    m = re.match(r'File "(.*)", line (\d+), in (.*)', lines[at])
    frame = f"{m[1]}:{m[2]} in {m[3]}" if m else lines[at]
    code = lines[at + 1] if at + 1 < len(lines) else ""
    return f"{frame}: {code}" if code else frame


def scalar_element(x) -> str:
    return "i1" if isinstance(x, bool) else "i32" if isinstance(x, int) else "f32"


def ints(x) -> list[int]:
    return [int(v) for v in (x if isinstance(x, list | tuple) else [x])]
