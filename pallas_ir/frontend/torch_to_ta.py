"""torch → ta: trace a function to ATen (make_fx with core-ATen decompositions), specialised
on its example inputs' shapes, dtypes and strides, and emit a ta module.

Every tensor of the graph is a `_Value`: a shape and a way to compute the element at any
index, given as affine expressions of the loop dims of the kernel that reads it.

- Inputs are storage: the element at index `i` is `load buf[offset + sum(stride_k *
  i_k)]` on the flat storage buffer of the input (any strides, any storage offset).
- Views (slice with any step, select, permute, expand, unsqueeze, squeeze, view/reshape,
  alias, clone) only rewrite the index expressions, so they fold into the loads' maps;
  a reshape of a non-contiguous value unravels through `floordiv`/`mod`, which
  canonicalize-permutation splits.
- Element-wise ops (arith and math, broadcasting, Python scalars) emit their scalar op
  on the operands' values at the broadcast index, so a chain of them fuses into the
  kernel that needs its result.
- A reduction (sum, amax, amin; mean and softmax decompose to them) is materialised: its
  own kernel (`ta.loop [kept] reduce [reduced]`, the element-wise prologue fused) writes
  a `ta.alloc` buffer, which later values read as storage (the epilogue fuses into its
  consumers).
- Each graph output gets one kernel that stores it, contiguous, into its output buffer.

`func.func @forward` takes the inputs (contiguous ones in their torch shape, others as
the flat storage span they view) and runs the kernels in order.

Anything else raises `UnsupportedError`, naming the ATen op and why.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch._decomp import core_aten_decompositions, get_decompositions
from torch.func import functionalize
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.proxy import _register_stack_trace_anchor  # private; pinned torch
from torch.fx.traceback import preserve_node_meta

from pallas_ir.affine_analysis import row_major_strides

aten = torch.ops.aten
prims = torch.ops.prims

_DTYPES = {
    torch.float32: "f32",
    torch.bfloat16: "f32",
    torch.int32: "i32",
    torch.int64: "i32",
    torch.bool: "i1",
}
"""Element types in kernels. int64 is narrowed to i32 (TPU kernels have no 64-bit types;
the host converts at the boundary), bool is i1 in registers, stored as i32, and
bfloat16 is stored as bf16 and computed in f32 (as Inductor does: rounded where the
program casts to bfloat16 and where a result is stored)."""


def _stored_as(dtype: torch.dtype) -> str | None:
    """The element type a buffer of `dtype` holds, where it is not its value type's."""
    return "bf16" if dtype == torch.bfloat16 else None


class UnsupportedError(Exception):
    """A torch program the frontend cannot compile: the ATen op, why, and where."""

    def __init__(self, op: str, reason: str, where: str = ""):
        self.op, self.reason, self.where = op, reason, where
        at = f" (at {where})" if where else ""
        super().__init__(f"{op}: {reason}{at}")


@dataclass
class _Buffer:
    """A buffer of @forward: an input's storage, an intermediate, or an output."""

    name: str
    numel: int
    host_shape: tuple[int, ...]
    element: str = "f32"
    """The stored element type (f32, bf16 or i32; bool is stored as i32)."""
    boolean: bool = False
    """Holds bool values (stored as i32 0/1)."""

    @staticmethod
    def holding(
        name: str,
        shape: Sequence[int],
        element: str,
        numel: int = 0,
        stored: str | None = None,
    ) -> _Buffer:
        """A buffer for values of `element` (bool is stored as i32; `stored` overrides,
        e.g. bf16 for f32 values); `numel` defaults to the shape's (at least 1)."""
        stored = stored or ("f32" if element == "f32" else "i32")
        return _Buffer(
            name, numel or max(math.prod(shape), 1), tuple(shape), stored, element == "i1"
        )

    @property
    def value_element(self) -> str:
        """The element type of the values it holds, in a kernel."""
        return "i1" if self.boolean else "f32" if self.element == "bf16" else self.element

    @property
    def flat(self) -> str:
        return f"memref<{self.numel}x{self.element}>"

    @property
    def host(self) -> str:
        dims = "x".join(map(str, self.host_shape))
        return f"memref<{dims}x{self.element}>" if dims else f"memref<{self.element}>"


class _Kernel:
    """The text of one ta.kernel being emitted: its loop dims, body lines and buffers."""

    def __init__(self, name: str, n_dims: int):
        self.name = name
        self.n_dims = n_dims
        self.lines: list[str] = []
        self.reads: list[_Buffer] = []
        self.count = 0
        self.symbols: dict[str, str] = {}  # token -> the index SSA value it stands for

    def symbol(self, value: str) -> str:
        """A token for a data-dependent index (an i32 SSA value) to use in an index
        expression; each load turns its tokens into map symbols."""
        as_index = self.op(f"arith.index_cast {value} : i32 to index")
        token = f"S{len(self.symbols)}_"
        self.symbols[token] = as_index
        return token

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def dims(self) -> str:
        return ", ".join(f"d{k}" for k in range(self.n_dims))

    def ivs(self) -> str:
        return ", ".join(f"%l{k}" for k in range(self.n_dims))

    def load(self, buf: _Buffer, index: str) -> str:
        if buf not in self.reads:
            self.reads.append(buf)
        tokens = [t for t in self.symbols if t in index]
        for j, t in enumerate(tokens):
            index = index.replace(t, f"s{j}")
        syms = f"[{', '.join(f's{j}' for j in range(len(tokens)))}]" if tokens else ""
        operands = f"[{', '.join(self.symbols[t] for t in tokens)}]" if tokens else ""
        v = self.fresh()
        self.lines.append(
            f"{v} = ta.load %{buf.name}[affine_map<({self.dims()}){syms} -> ({index})>]"
            f"({self.ivs()}){operands} : {buf.flat}"
        )
        return self.cast(v, buf.element, buf.value_element)

    def op(self, text: str) -> str:
        v = self.fresh()
        self.lines.append(f"{v} = {text}")
        return v

    def constant(self, value: float | bool, element: str = "f32") -> str:
        if element == "i1":
            return self.op(f"arith.constant {'true' if value else 'false'}")
        if element == "i32":
            return self.op(f"arith.constant {int(value)} : i32")
        if not math.isfinite(value):  # MLIR spells these as bit patterns
            bits = torch.tensor(float(value), dtype=torch.float32).view(torch.int32)
            return self.op(f"arith.constant 0x{int(bits) & 0xFFFFFFFF:08X} : f32")
        return self.op(f"arith.constant {float(value):.9e} : f32")

    def cast(self, v: str, source: str, target: str) -> str:
        """`v` of element type `source` as `target` (torch's conversion rules)."""
        if source == target:
            return v
        if target == "bf16" and source != "f32":
            return self.cast(self.cast(v, source, "f32"), "f32", target)
        if target == "i1":
            zero = self.constant(0, source)
            cmp = "arith.cmpf une" if source == "f32" else "arith.cmpi ne"
            return self.op(f"{cmp}, {v}, {zero} : {source}")
        ops = {
            ("i1", "i32"): "arith.extui",
            ("i1", "f32"): "arith.uitofp",
            ("i32", "f32"): "arith.sitofp",
            ("f32", "i32"): "arith.fptosi",
            ("f32", "bf16"): "arith.truncf",
            ("bf16", "f32"): "arith.extf",
        }
        return self.op(f"{ops[source, target]} {v} : {source} to {target}")


Emit = Callable[[_Kernel, Sequence[str]], str]


@dataclass
class _Value:
    shape: tuple[int, ...]
    emit: Emit
    """The element at an index (affine expressions of the kernel's loop dims)."""
    element: str = "f32"


def _storage_value(buf: _Buffer, shape, strides) -> _Value:
    """Stored data viewed with `strides` from the start of `buf`."""

    def emit(k: _Kernel, idx: Sequence[str]) -> str:
        terms = [f"({e}) * {s}" for e, s in zip(idx, strides) if s]
        return k.load(buf, " + ".join(terms) or "0")

    return _Value(tuple(shape), emit, buf.value_element)


def _remap(v: _Value, shape, index: Callable[[Sequence[str]], list[str]]) -> _Value:
    """A view of `v`: the element at `idx` is v's element at `index(idx)`."""
    return _Value(tuple(shape), lambda k, idx: v.emit(k, index(idx)), v.element)


def _broadcast_index(
    v: _Value, out_shape: Sequence[int], idx: Sequence[str]
) -> list[str]:
    """The index into `v` (broadcast to `out_shape`) of output index `idx`."""
    lead = len(out_shape) - len(v.shape)
    return ["0" if n == 1 else idx[lead + k] for k, n in enumerate(v.shape)]


_FLOAT_UNARY = {
    aten.exp.default: "math.exp",
    aten.log.default: "math.log",
    aten.tanh.default: "math.tanh",
    aten.sqrt.default: "math.sqrt",
    aten.rsqrt.default: "math.rsqrt",
    aten.sin.default: "math.sin",
    aten.cos.default: "math.cos",
    aten.tan.default: "math.tan",
    aten.erf.default: "math.erf",
    aten.floor.default: "math.floor",
    aten.ceil.default: "math.ceil",
    aten.log1p.default: "math.log1p",
    aten.expm1.default: "math.expm1",
}

_FLOAT_COMPOSED = {
    aten.sigmoid.default,
    aten.reciprocal.default,
    aten.sinh.default,
    aten.cosh.default,
    aten.asin.default,
    aten.acos.default,
    aten.atan.default,
}
"""Unary ops with a float result made of other scalar ops (see `_unary`)."""


def _unary(target, k: _Kernel, a: str, element: str) -> str | None:
    """The scalar op of an element-wise unary ATen op on `a` (already of `element`)."""
    if target in _FLOAT_UNARY:
        return k.op(f"{_FLOAT_UNARY[target]} {a} : f32")
    f = element == "f32"
    if target is aten.neg.default:
        return k.op(
            f"arith.negf {a} : f32"
            if f
            else f"arith.subi {k.constant(0, element)}, {a} : {element}"
        )
    if target is aten.abs.default:
        return k.op(f"math.absf {a} : f32" if f else f"math.absi {a} : {element}")
    if target is aten.relu.default:
        op = "arith.maximumf" if f else "arith.maxsi"
        return k.op(f"{op} {a}, {k.constant(0, element)} : {element}")
    if target is aten.sigmoid.default:  # 1 / (1 + exp(-a))
        e = k.op("math.exp " + k.op(f"arith.negf {a} : f32") + " : f32")
        return k.op(
            f"arith.divf {k.constant(1.0)}, "
            + k.op(f"arith.addf {k.constant(1.0)}, {e} : f32")
            + " : f32"
        )
    if target is aten.reciprocal.default:
        return k.op(f"arith.divf {k.constant(1.0)}, {a} : f32")
    if target in (aten.sinh.default, aten.cosh.default):  # (e^a -+ e^-a) / 2
        up = k.op(f"math.exp {a} : f32")
        down = k.op("math.exp " + k.op(f"arith.negf {a} : f32") + " : f32")
        op = "arith.subf" if target is aten.sinh.default else "arith.addf"
        return k.op(
            f"arith.mulf {k.op(f'{op} {up}, {down} : f32')}, {k.constant(0.5)} : f32"
        )
    if target in (aten.asin.default, aten.acos.default):  # atan2 of the sides
        square = k.op(f"arith.mulf {a}, {a} : f32")
        side = k.op(
            "math.sqrt "
            + k.op(f"arith.subf {k.constant(1.0)}, {square} : f32")
            + " : f32"
        )
        y, x = (a, side) if target is aten.asin.default else (side, a)
        return k.op(f"math.atan2 {y}, {x} : f32")
    if target is aten.atan.default:
        return k.op(f"math.atan2 {a}, {k.constant(1.0)} : f32")
    if target in (aten.round.default, aten.trunc.default) and not f:
        return a  # integers are whole already
    if target is aten.round.default:  # half to even, as torch
        return k.op(f"math.roundeven {a} : f32")
    if target is aten.trunc.default:  # toward zero
        negative = k.op(f"arith.cmpf olt, {a}, {k.constant(0.0)} : f32")
        up, down = k.op(f"math.ceil {a} : f32"), k.op(f"math.floor {a} : f32")
        return k.op(f"arith.select {negative}, {up}, {down} : f32")
    if target is aten.sign.default:
        zero = k.constant(0, element)
        gt, lt = (
            ("arith.cmpf ogt", "arith.cmpf olt")
            if f
            else ("arith.cmpi sgt", "arith.cmpi slt")
        )
        pos = k.op(f"{gt}, {a}, {zero} : {element}")
        neg = k.op(f"{lt}, {a}, {zero} : {element}")
        # A float zero (or NaN) keeps its value: a * 0.
        rest = k.op(f"arith.mulf {a}, {zero} : f32") if f else zero
        v = k.op(f"arith.select {neg}, {k.constant(-1, element)}, {rest} : {element}")
        return k.op(f"arith.select {pos}, {k.constant(1, element)}, {v} : {element}")
    if target is aten.logical_not.default:
        return k.op(f"arith.xori {a}, {k.constant(True, 'i1')} : i1")
    if target is aten.bitwise_not.default:  # all bits flipped (true for a bool)
        ones = k.constant(True, "i1") if element == "i1" else k.constant(-1, element)
        return k.op(f"arith.xori {a}, {ones} : {element}") if element != "f32" else None
    return None


_UNARY = {
    *_FLOAT_UNARY,
    *_FLOAT_COMPOSED,
    aten.neg.default,
    aten.abs.default,
    aten.relu.default,
    aten.round.default,
    aten.trunc.default,
    aten.sign.default,
    aten.logical_not.default,
    aten.bitwise_not.default,
}

_BINARY = {
    # target: (float op, integer op, bool op)
    aten.add.Tensor: ("arith.addf", "arith.addi", "arith.ori"),
    aten.add.Scalar: ("arith.addf", "arith.addi", "arith.ori"),
    aten.sub.Tensor: ("arith.subf", "arith.subi", None),
    aten.sub.Scalar: ("arith.subf", "arith.subi", None),
    aten.mul.Tensor: ("arith.mulf", "arith.muli", "arith.andi"),
    aten.mul.Scalar: ("arith.mulf", "arith.muli", "arith.andi"),
    aten.div.Tensor: ("arith.divf", None, None),
    aten.div.Scalar: ("arith.divf", None, None),
    aten.pow.Scalar: ("math.powf", None, None),
    aten.atan2.default: ("math.atan2", None, None),
    aten.maximum.default: ("arith.maximumf", "arith.maxsi", "arith.ori"),
    aten.minimum.default: ("arith.minimumf", "arith.minsi", "arith.andi"),
    aten.pow.Tensor_Tensor: ("math.powf", None, None),
    aten.pow.Tensor_Scalar: ("math.powf", None, None),
    aten.logical_and.default: (None, None, "arith.andi"),
    aten.logical_or.default: (None, None, "arith.ori"),
    aten.bitwise_and.Tensor: (None, "arith.andi", "arith.andi"),
    aten.bitwise_or.Tensor: (None, "arith.ori", "arith.ori"),
    aten.bitwise_xor.Tensor: (None, "arith.xori", "arith.xori"),
    aten.bitwise_and.Scalar: (None, "arith.andi", "arith.andi"),
    aten.bitwise_or.Scalar: (None, "arith.ori", "arith.ori"),
    aten.bitwise_xor.Scalar: (None, "arith.xori", "arith.xori"),
    aten.logical_xor.default: (None, None, "arith.xori"),
}

_LOGICAL = {aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default}
"""Their operands are truth values: any dtype, compared with zero."""


def _divide(k: _Kernel, a: str, b: str, element: str, mode: str | None) -> str:
    """a / b rounded as `mode` (None: true division, "trunc", "floor"), as torch."""
    if element != "f32":
        return k.op(
            f"arith.{'floordivsi' if mode == 'floor' else 'divsi'} {a}, {b} : {element}"
        )
    q = k.op(f"arith.divf {a}, {b} : f32")
    return q if mode is None else _unary(getattr(aten, mode).default, k, q, "f32")


def _remainder(k: _Kernel, a: str, b: str, element: str, floor: bool) -> str:
    """torch.fmod (`floor` False: the sign of a) or torch.remainder (the sign of b)."""
    if element == "f32":
        q = _divide(k, a, b, element, "floor" if floor else "trunc")
        return k.op(f"arith.subf {a}, {k.op(f'arith.mulf {q}, {b} : f32')} : f32")
    r = k.op(f"arith.remsi {a}, {b} : {element}")
    if not floor:
        return r
    zero = k.constant(0, element)
    nonzero = k.op(f"arith.cmpi ne, {r}, {zero} : {element}")
    differ = k.op(
        f"arith.xori {k.op(f'arith.cmpi slt, {r}, {zero} : {element}')}, "
        f"{k.op(f'arith.cmpi slt, {b}, {zero} : {element}')} : i1"
    )
    fix = k.op(f"arith.andi {nonzero}, {differ} : i1")
    shifted = k.op(f"arith.addi {r}, {b} : {element}")
    return k.op(f"arith.select {fix}, {shifted}, {r} : {element}")


_ARITHMETIC = {
    # target: the scalar op on (kernel, lhs, rhs, element, kwargs)
    aten.fmod.Tensor: lambda k, a, b, e, kw: _remainder(k, a, b, e, False),
    aten.fmod.Scalar: lambda k, a, b, e, kw: _remainder(k, a, b, e, False),
    aten.remainder.Tensor: lambda k, a, b, e, kw: _remainder(k, a, b, e, True),
    aten.remainder.Scalar: lambda k, a, b, e, kw: _remainder(k, a, b, e, True),
    aten.div.Tensor_mode: lambda k, a, b, e, kw: _divide(
        k, a, b, e, kw.get("rounding_mode")
    ),
    aten.div.Scalar_mode: lambda k, a, b, e, kw: _divide(
        k, a, b, e, kw.get("rounding_mode")
    ),
}
"""Binary ops made of several scalar ops."""

_COMPARE = {
    # target: (cmpf predicate, cmpi predicate)
    aten.gt.Tensor: ("ogt", "sgt"), aten.gt.Scalar: ("ogt", "sgt"),
    aten.ge.Tensor: ("oge", "sge"), aten.ge.Scalar: ("oge", "sge"),
    aten.lt.Tensor: ("olt", "slt"), aten.lt.Scalar: ("olt", "slt"),
    aten.le.Tensor: ("ole", "sle"), aten.le.Scalar: ("ole", "sle"),
    aten.eq.Tensor: ("oeq", "eq"), aten.eq.Scalar: ("oeq", "eq"),
    aten.ne.Tensor: ("une", "ne"), aten.ne.Scalar: ("une", "ne"),
}  # fmt: skip

_REDUCE = {
    aten.sum.dim_IntList: "sum",
    aten.amax.default: "max",
    aten.amin.default: "min",
    aten.prod.dim_int: "prod",
    aten.argmax.default: "argmax",
    aten.argmin.default: "argmin",
    aten.any.dim: "max",
    aten.any.dims: "max",
    aten.all.dim: "min",
}

_DECOMPOSE = [
    aten._softmax,
    aten._log_softmax,
    aten.native_batch_norm,
    aten._native_batch_norm_legit_no_training,
    aten._native_batch_norm_legit,
    aten.native_group_norm,
]

_EMPTY = {
    aten.empty_permuted.default,
    aten.empty.memory_format,
    aten.empty_like.default,
    aten.empty_strided.default,
}


@dataclass
class _Program:
    kernels: list[str] = field(default_factory=list[str])
    host: list[str] = field(default_factory=list[str])
    count: int = 0
    iotas: dict[int, _Buffer] = field(default_factory=dict[int, _Buffer])
    """Constant inputs 0 .. n-1 (i32): a position along a dim as a value, at any
    index expression (`cat`, `arange`), by a load."""

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def position(self, k: _Kernel, index: str, n: int) -> str:
        """The i32 value of the index expression `index` (in [0, n))."""
        if n not in self.iotas:
            self.iotas[n] = _Buffer.holding(f"iota{n}", (n,), "i32")
        return k.load(self.iotas[n], index)

    def kernel(
        self, value: _Value, out: _Buffer, reduce: Sequence[int] = (), kind: str = ""
    ) -> None:
        """A kernel that computes `value` (reduced over its dims `reduce` by `kind`)
        into the contiguous buffer `out`."""
        kept = [d for d in range(len(value.shape)) if d not in reduce]
        order = kept + list(reduce)
        # A 0-d result (a full reduction) still loops: over one unit dim in front.
        unit = 0 if kept else 1
        k = _Kernel(self.fresh("k"), len(value.shape) + unit)
        # Loop dim j walks value dim order[j]: kept dims first, reductions last.
        idx = [""] * len(value.shape)
        for j, d in enumerate(order):
            idx[d] = f"d{j + unit}"
        v = value.emit(k, idx)
        element = value.element
        if reduce:
            if element == "i1":  # any / all: max / min of 0 and 1
                v, element = k.cast(v, "i1", "i32"), "i32"
            if kind in ("argmax", "argmin"):
                v = k.op(f"ta.reduce <{kind}> {v} : {element} -> i32")
                element = "i32"
            else:
                v = k.op(f"ta.reduce <{kind}> {v} : {element}")
        v = k.cast(v, element, out.element)  # bool is stored as i32
        kept_shape = [value.shape[d] for d in kept] or [1]
        strides = row_major_strides(kept_shape)
        flat = " + ".join([f"d{j} * {s}" for j, s in enumerate(strides)])
        pdims = ", ".join(f"d{j}" for j in range(len(kept_shape)))
        pivs = ", ".join(f"%l{j}" for j in range(len(kept_shape)))
        k.lines.append(
            f"ta.store {v}, %{out.name}[affine_map<({pdims}) -> ({flat})>]({pivs}) : {out.flat}"
        )
        extents = ", ".join(str(n) for n in kept_shape)
        red = ", ".join(str(value.shape[d]) for d in reduce)
        loop = f"ta.loop [{extents}]" + (f" reduce [{red}]" if reduce else "")
        args = [f'%{b.name}: {b.flat} {{role = "in"}}' for b in k.reads]
        args.append(f'%{out.name}: {out.flat} {{role = "out"}}')
        body = "\n".join(f"    {line}" for line in k.lines)
        self.kernels.append(
            f"ta.kernel @{k.name}({', '.join(args)}) {{\n"
            f"  {loop} ({k.ivs()}) {{\n{body}\n  }}\n}}"
        )
        operands = [*k.reads, out]
        self.host.append(
            f"ta.launch @{k.name}({', '.join('%' + b.name + '_flat' for b in operands)}) : "
            + ", ".join(b.flat for b in operands)
        )


def _where(node) -> str:
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


def _scalar_element(x) -> str:
    return "i1" if isinstance(x, bool) else "i32" if isinstance(x, int) else "f32"


def _ints(x) -> list[int]:
    return [int(v) for v in (x if isinstance(x, list | tuple) else [x])]


def trace_to_aten(
    fn: Callable, example_inputs: Sequence[torch.Tensor]
) -> torch.fx.GraphModule:
    """`fn` on `example_inputs` as a graph of core ATen ops with no mutation, each node
    carrying the user's source line (`meta["stack_trace"]`)."""
    decompositions = {**core_aten_decompositions(), **get_decompositions(_DECOMPOSE)}
    if isinstance(fn, torch.fx.GraphModule):
        # dynamo's graph: its nodes carry the user's lines; the interpreter replays them.
        traced = fn
    else:
        # make_fx keeps the frames of functions named `forward` and of registered
        # anchors: the user's function is one.
        _register_stack_trace_anchor(getattr(fn, "forward", fn))
        traced = _traced(
            make_fx(fn, decomposition_table=decompositions, record_stack_traces=True),
            example_inputs,
        )
    # Decompositions may write in place (rms_norm's `add_`): a second trace through
    # functionalization removes every mutation, keeping each node's source line.
    with preserve_node_meta():
        graph = _traced(
            make_fx(
                functionalize(torch.fx.Interpreter(traced).run, remove="mutations"),
                decomposition_table=decompositions,
            ),
            example_inputs,
        )
    for node in graph.graph.nodes:
        if node.target is aten.copy_.default:  # functionalization's write-back
            raise UnsupportedError(
                str(node.target),
                "the function writes to an input in place; compiled inputs are read-only",
                _where(node),
            )
    return graph


def _traced(trace: Callable, example_inputs: Sequence[torch.Tensor]):
    """`trace` run on the inputs; a program the tracer cannot follow (a value read back
    to Python with `.item()`, control flow on data) is an UnsupportedError."""
    try:
        return trace(*example_inputs)
    except UnsupportedError:
        raise
    except Exception as e:  # the tracer's reason, first line, and the cause chained
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UnsupportedError("trace", f"{type(e).__name__}: {first}") from e


def torch_to_ta(fn: Callable, example_inputs: Sequence[torch.Tensor]):
    """The ta module text for `fn` on `example_inputs`, and how @forward takes each input:
    a list of (host shape, flat storage span or None for a contiguous input)."""
    for t in example_inputs:
        if not isinstance(t, torch.Tensor) or t.dtype not in _DTYPES:
            raise UnsupportedError(
                "input",
                "inputs are float32, bfloat16, int32, int64 or bool tensors, got "
                f"{getattr(t, 'dtype', type(t))}",
            )
    graph = trace_to_aten(fn, example_inputs)
    prog = _Program()
    env: dict[object, _Value | float | int] = {}
    inputs: list[tuple[tuple[int, ...], int | None]] = []
    buffers: list[_Buffer] = []
    outputs: list[_Buffer] = []
    output_dtypes: list[torch.dtype] = []
    placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
    # Parameters and constants the trace captured (get_attr) are inputs too: the
    # compiled object passes them after the caller's tensors.
    constants = [n for n in graph.graph.nodes if n.op == "get_attr"]
    constant_values = [getattr(graph, n.target).detach() for n in constants]
    for t in constant_values:
        if t.dtype not in _DTYPES:
            raise UnsupportedError("constant", f"dtype {t.dtype} is not supported yet")
    for node, t in zip(
        [*placeholders, *constants], [*example_inputs, *constant_values], strict=True
    ):
        name = f"in{len(buffers)}"
        element, stored = _DTYPES[t.dtype], _stored_as(t.dtype)
        if t.is_contiguous():
            buf = _Buffer.holding(name, t.shape, element, stored=stored)
            inputs.append((tuple(t.shape), None))
        else:
            # The call passes the span the tensor views, from its storage offset.
            span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
            buf = _Buffer.holding(name, (span,), element, stored=stored)
            inputs.append((tuple(t.shape), span))
        buffers.append(buf)
        env[node] = _storage_value(buf, t.shape, t.stride())

    def arg(a):
        return env[a] if isinstance(a, torch.fx.Node) else a

    for node in graph.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:  # one result of a multi-result op
            env[node] = env[node.args[0]][node.args[1]]  # type: ignore[index]
            continue
        args = [
            [arg(b) for b in a] if isinstance(a, list | tuple) else arg(a)
            for a in node.args
        ]
        env[node] = _convert_node(prog, node, args, buffers)
    (out_node,) = [n for n in graph.graph.nodes if n.op == "output"]
    results = out_node.args[0]
    results = list(results) if isinstance(results, list | tuple) else [results]
    for r in results:
        v = env.get(r) if isinstance(r, torch.fx.Node) else None
        if not isinstance(v, _Value):
            raise UnsupportedError(
                "output",
                "the function must return a tensor or a tuple or list of tensors",
            )
        dtype = r.meta["val"].dtype
        out = _Buffer.holding(
            prog.fresh("out"), v.shape, v.element, stored=_stored_as(dtype)
        )
        buffers.append(out)
        outputs.append(out)
        output_dtypes.append(dtype)
        prog.kernel(v, out)
    host_inputs = buffers[: len(inputs)]
    for n, buf in prog.iotas.items():  # passed after the captured constants
        host_inputs.append(buf)
        inputs.append(((n,), None))
        constant_values.append(torch.arange(n, dtype=torch.int32))
    text = _module_text(
        prog, host_inputs, buffers[len(inputs) - len(prog.iotas) :], outputs
    )
    return text, inputs, constant_values, output_dtypes


def _convert_node(prog, node, args, buffers) -> _Value | list[_Value]:
    """The value (or values) of graph node `node`, its tensor arguments given."""
    val = node.meta.get("val")
    if isinstance(val, list | tuple):
        return _convert_multi(prog, node, node.target, args, node.kwargs, val, buffers)
    shape = tuple(val.shape) if isinstance(val, torch.Tensor) else ()
    if node.target in _EMPTY and not node.users:
        # An unused scratch of any dtype (batch norm's decomposition allocates a uint8
        # reserve buffer it never reads).
        return _Value(shape, lambda k, idx: k.constant(0, "i32"), "i32")
    if isinstance(val, torch.Tensor) and val.dtype not in _DTYPES:
        raise UnsupportedError(
            str(node.target), f"dtype {val.dtype} is not supported yet", _where(node)
        )
    return _convert(prog, node, node.target, args, node.kwargs, shape, buffers)


def check_node(node: torch.fx.Node) -> UnsupportedError | None:
    """Why the frontend cannot compile `node` (of a graph from `trace_to_aten`), or None
    when it can: the node is converted alone, on stand-in inputs, and every result is
    stored, so errors raised while emitting its kernels count too."""
    if node.op != "call_function" or node.target is operator.getitem:
        return None
    prog, buffers = _Program(), []

    def stand_in(a):
        if not isinstance(a, torch.fx.Node):
            return a
        val = a.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype not in _DTYPES:
            raise UnsupportedError(
                str(node.target),
                f"takes a {getattr(val, 'dtype', type(val).__name__)} value",
                _where(node),
            )
        buf = _Buffer.holding(f"in{len(buffers)}", val.shape, _DTYPES[val.dtype])
        buffers.append(buf)
        return _storage_value(buf, val.shape, row_major_strides(val.shape))

    try:
        args = [
            [stand_in(b) for b in a] if isinstance(a, list | tuple) else stand_in(a)
            for a in node.args
        ]
        results = _convert_node(prog, node, args, buffers)
        for v in results if isinstance(results, list) else [results]:
            if not isinstance(v, _Value):
                raise UnsupportedError(str(node.target), "has a non-tensor result")
            prog.kernel(v, _Buffer.holding(prog.fresh("out"), v.shape, v.element))
    except UnsupportedError as e:
        return e
    return None


def _convert(
    prog, node, target, args, kwargs, shape, buffers, element: str | None = None
) -> _Value:
    """The value of ATen op `target` on `args` (of `shape`; `element` defaults to the
    node's result type)."""
    where = _where(node)
    val = node.meta.get("val")
    if element is None:
        element = (
            _DTYPES.get(val.dtype, "f32") if isinstance(val, torch.Tensor) else "f32"
        )
    if target in _UNARY:
        a = args[0]
        # exp of an int tensor is float: the operand takes the result's type first.
        source = (
            element if target in _FLOAT_UNARY or target in _FLOAT_COMPOSED else a.element
        )

        def unary(k, idx):
            v = k.cast(a.emit(k, idx), a.element, source)
            out = _unary(target, k, v, source)
            if out is None:
                raise UnsupportedError(str(target), f"not for {a.element} data", where)
            return out

        return _Value(shape, unary, element)
    if target in _BINARY or target in _COMPARE or target in _ARITHMETIC:
        a, b = args[0], args[1]
        alpha = kwargs.get("alpha", 1)
        compare = target in _COMPARE
        # Operands meet in the result's type (a comparison's: the wider operand's).
        widths = ["f32", "i32", "i1"]
        kinds = [
            x.element if isinstance(x, _Value) else _scalar_element(x) for x in (a, b)
        ]
        common = min(kinds, key=widths.index) if compare else element
        if target in _LOGICAL:
            common = "i1"

        def operand(k, x, idx):
            if isinstance(x, _Value):
                return k.cast(
                    x.emit(k, _broadcast_index(x, shape, idx)), x.element, common
                )
            return k.constant(x, common)

        def binary(k, idx):
            lhs, rhs = operand(k, a, idx), operand(k, b, idx)
            if target in _ARITHMETIC:
                if common == "i1":
                    raise UnsupportedError(str(target), "not for bool data", where)
                return _ARITHMETIC[target](k, lhs, rhs, common, kwargs)
            if compare:
                fp, ip = _COMPARE[target]
                cmp = f"arith.cmpf {fp}" if common == "f32" else f"arith.cmpi {ip}"
                return k.op(f"{cmp}, {lhs}, {rhs} : {common}")
            if alpha != 1:
                mul = "arith.mulf" if common == "f32" else "arith.muli"
                rhs = k.op(f"{mul} {rhs}, {k.constant(alpha, common)} : {common}")
            op = dict(zip(["f32", "i32", "i1"], _BINARY[target]))[common]
            if op is None:
                raise UnsupportedError(str(target), f"not for {common} data", where)
            return k.op(f"{op} {lhs}, {rhs} : {common}")

        return _Value(shape, binary, element)
    if target is aten.where.self:
        cond, a, b = args

        def pick(k, idx):
            c = cond.emit(k, _broadcast_index(cond, shape, idx))
            vals = [
                k.cast(x.emit(k, _broadcast_index(x, shape, idx)), x.element, element)
                if isinstance(x, _Value)
                else k.constant(x, element)
                for x in (a, b)
            ]
            return k.op(f"arith.select {c}, {vals[0]}, {vals[1]} : {element}")

        return _Value(shape, pick, element)
    if target is aten.hardtanh.default:  # clamp to [min_val, max_val]
        low, high = (list(args[1:]) + [-1.0, 1.0][len(args) - 1 :])[:2]
        return _convert(
            prog, node, aten.clamp.default, [args[0], low, high], {}, shape, buffers
        )
    if target in (aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default):
        a = args[0]
        low = args[1] if target is not aten.clamp_max.default else None
        high = (
            args[2]
            if target is aten.clamp.default and len(args) > 2
            else (args[1] if target is aten.clamp_max.default else None)
        )

        def clamp(k, idx):
            v = k.cast(a.emit(k, idx), a.element, element)
            f = element == "f32"
            if low is not None:
                v = k.op(
                    f"{'arith.maximumf' if f else 'arith.maxsi'} {v}, {k.constant(low, element)} : {element}"
                )
            if high is not None:
                v = k.op(
                    f"{'arith.minimumf' if f else 'arith.minsi'} {v}, {k.constant(high, element)} : {element}"
                )
            return v

        return _Value(shape, clamp, element)
    if target in (aten.leaky_relu.default, aten.elu.default):
        a = args[0]
        if target is aten.leaky_relu.default:
            slope = args[1] if len(args) > 1 else 0.01
            alpha, scale, input_scale = 0.0, 1.0, 1.0
        else:
            alpha, scale, input_scale = (list(args[1:]) + [1.0, 1.0, 1.0])[:3]

        def rectified(k, idx):
            x = a.emit(k, idx)
            positive = k.op(f"arith.cmpf ogt, {x}, {k.constant(0.0)} : f32")
            if target is aten.leaky_relu.default:
                low = k.op(f"arith.mulf {x}, {k.constant(slope)} : f32")
            else:  # scale * alpha * (exp(x * input_scale) - 1)
                e = k.op(
                    "math.expm1 "
                    + k.op(f"arith.mulf {x}, {k.constant(input_scale)} : f32")
                    + " : f32"
                )
                low = k.op(f"arith.mulf {e}, {k.constant(alpha * scale)} : f32")
            high = k.op(f"arith.mulf {x}, {k.constant(scale)} : f32")
            return k.op(f"arith.select {positive}, {high}, {low} : f32")

        return _Value(shape, rectified)
    if target in (aten.isnan.default, aten.isinf.default):
        a = args[0]

        def test(k, idx):
            x = a.emit(k, idx)
            if target is aten.isnan.default:
                return k.op(f"arith.cmpf uno, {x}, {x} : f32")
            magnitude = k.op(f"math.absf {x} : f32")
            return k.op(f"arith.cmpf oeq, {magnitude}, {k.constant(math.inf)} : f32")

        return _Value(shape, test, "i1")
    if target in _EMPTY:  # contents undefined: zeros are as good as any
        return _Value(shape, lambda k, idx: k.constant(0, element), element)
    if target is aten.copy.default:  # dst's shape and type, src's values
        src = args[1]
        return _Value(
            shape,
            lambda k, idx: k.cast(
                src.emit(k, _broadcast_index(src, shape, idx)), src.element, element
            ),
            element,
        )
    if target is aten.flip.default:
        a, dims = args[0], {d % len(args[0].shape) for d in _ints(args[1])}
        return _remap(
            a,
            shape,
            lambda idx: [
                f"{n - 1} - ({i})" if d in dims else i
                for d, (i, n) in enumerate(zip(idx, a.shape))
            ],
        )
    if target is aten.repeat.default:
        a = args[0]
        lead = len(shape) - len(a.shape)
        return _remap(
            a,
            shape,
            lambda idx: [
                f"({i}) mod {n}" if n > 1 else "0" for i, n in zip(idx[lead:], a.shape)
            ],
        )
    if target is aten.diagonal.default:
        a = args[0]
        offset = int(args[1]) if len(args) > 1 else 0
        d1 = (int(args[2]) if len(args) > 2 else 0) % len(a.shape)
        d2 = (int(args[3]) if len(args) > 3 else 1) % len(a.shape)

        def index(idx):
            rest, i = iter(idx[:-1]), idx[-1]
            out = []
            for d in range(len(a.shape)):
                if d == d1:
                    out.append(f"({i}) + {max(-offset, 0)}")
                elif d == d2:
                    out.append(f"({i}) + {max(offset, 0)}")
                else:
                    out.append(next(rest))
            return out

        return _remap(a, shape, index)
    if target is aten.as_strided.default:
        a, size, stride = args[0], _ints(args[1]), _ints(args[2])
        source = node.args[0].meta["val"]
        offset = (args[3] if len(args) > 3 and args[3] is not None else 0) - (
            source.storage_offset()
        )
        reach = offset + sum((n - 1) * st for n, st in zip(size, stride))
        if not source.is_contiguous() or offset < 0 or reach >= max(source.numel(), 1):
            raise UnsupportedError(
                str(target),
                "as_strided is supported on contiguous data, within its elements",
                where,
            )
        in_strides = row_major_strides(a.shape)

        def index(idx):
            flat = " + ".join(
                [str(offset), *(f"({i}) * {st}" for i, st in zip(idx, stride) if st)]
            )
            return [
                f"(({flat}) floordiv {st}) mod {n}" for st, n in zip(in_strides, a.shape)
            ]

        return _remap(a, shape, index)
    if target is aten.linalg_vector_norm.default:
        a = args[0]
        order = args[1] if len(args) > 1 else kwargs.get("ord", 2)
        dims = args[2] if len(args) > 2 else kwargs.get("dim")
        keep = args[3] if len(args) > 3 else kwargs.get("keepdim", False)
        dims = list(range(len(a.shape))) if dims is None else _ints(dims)

        def magnitude(k, idx):
            return k.op(f"math.absf {a.emit(k, idx)} : f32")

        if order in (math.inf, -math.inf):
            kind = aten.amax.default if order > 0 else aten.amin.default
            return _convert(
                prog,
                node,
                kind,
                [_Value(a.shape, magnitude), dims, keep],
                {},
                shape,
                buffers,
            )
        if order == 0 or not isinstance(order, int | float):
            raise UnsupportedError(str(target), f"ord={order} is not supported", where)

        def powered(k, idx):
            if order == 1:
                return magnitude(k, idx)
            if order == 2:
                x = a.emit(k, idx)
                return k.op(f"arith.mulf {x}, {x} : f32")
            return k.op(f"math.powf {magnitude(k, idx)}, {k.constant(order)} : f32")

        total = _convert(
            prog,
            node,
            aten.sum.dim_IntList,
            [_Value(a.shape, powered), dims, keep],
            {},
            shape,
            buffers,
        )

        def root(k, idx):
            v = total.emit(k, idx)
            if order == 1:
                return v
            if order == 2:
                return k.op(f"math.sqrt {v} : f32")
            return k.op(f"math.powf {v}, {k.constant(1.0 / order)} : f32")

        return _Value(shape, root)
    if target in (aten.var.correction, aten.var.dim):
        return _variance(prog, node, args, kwargs, shape, buffers)[0]
    if target in (aten.max.default, aten.min.default):
        kind = aten.amax.default if target is aten.max.default else aten.amin.default
        return _convert(prog, node, kind, [args[0], []], {}, shape, buffers, element)
    if target in (aten._to_copy.default, prims.convert_element_type.default):
        a = args[0]
        bf16 = isinstance(val, torch.Tensor) and _stored_as(val.dtype) == "bf16"
        source = (
            node.args[0].meta.get("val")
            if isinstance(node.args[0], torch.fx.Node)
            else None
        )
        rounds = bf16 and getattr(source, "dtype", None) != torch.bfloat16

        def convert(k, idx):
            v = k.cast(a.emit(k, idx), a.element, element)
            if rounds:  # to bfloat16's precision, and on in f32
                v = k.cast(k.cast(v, "f32", "bf16"), "bf16", "f32")
            return v

        return _Value(shape, convert, element)
    if target in (aten.alias.default, aten.clone.default, aten.lift_fresh_copy.default):
        return args[0]
    if target is aten.permute.default:
        a, perm = args[0], _ints(args[1])
        inverse = [perm.index(d) for d in range(len(perm))]
        return _remap(a, shape, lambda idx: [idx[inverse[d]] for d in range(len(perm))])
    if target is aten.slice.Tensor:
        a = args[0]
        dim = int(args[1]) if len(args) > 1 else 0
        dim %= len(a.shape)
        start = args[2] if len(args) > 2 and args[2] is not None else 0
        step = args[4] if len(args) > 4 else 1
        start = max(0, start + a.shape[dim] if start < 0 else min(start, a.shape[dim]))

        def index(idx, dim=dim, start=start, step=step):
            out = list(idx)
            out[dim] = f"{start} + ({idx[dim]}) * {step}"
            return out

        return _remap(a, shape, index)
    if target is aten.select.int:
        a, dim, i = args[0], int(args[1]) % len(args[0].shape), int(args[2])
        i %= a.shape[dim]
        return _remap(a, shape, lambda idx: [*idx[:dim], str(i), *idx[dim:]])
    if target is aten.unsqueeze.default:
        a, dim = args[0], int(args[1]) % (len(args[0].shape) + 1)
        return _remap(a, shape, lambda idx: [*idx[:dim], *idx[dim + 1 :]])
    if target in (aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default):
        a = args[0]
        dims = (
            set(range(len(a.shape)))
            if len(args) < 2
            else {d % max(len(a.shape), 1) for d in _ints(args[1])}
        )
        dropped = [d for d in range(len(a.shape)) if d in dims and a.shape[d] == 1]

        def index(idx):
            it = iter(idx)
            return ["0" if d in dropped else next(it) for d in range(len(a.shape))]

        return _remap(a, shape, index)
    if target is aten.expand.default:
        a = args[0]
        return _remap(a, shape, lambda idx: _broadcast_index(a, shape, idx))
    if target in (aten.view.default, aten._unsafe_view.default, aten.reshape.default):
        a = args[0]
        out_strides = row_major_strides(shape)
        in_strides = row_major_strides(a.shape)

        def index(idx):
            flat = " + ".join(f"({e}) * {s}" for e, s in zip(idx, out_strides)) or "0"
            return [
                f"(({flat}) floordiv {s}) mod {n}" for s, n in zip(in_strides, a.shape)
            ]

        return _remap(a, shape, index)
    if target in (aten.mm.default, aten.bmm.default, aten.addmm.default):
        if target is aten.addmm.default:
            bias, a, b = args[0], args[1], args[2]
        else:
            (a, b), bias = args[:2], None
        beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
        return _matmul(prog, a, b, shape, buffers, bias, beta, alpha)
    if target is aten.gelu.default:
        a = args[0]
        tanh_form = kwargs.get("approximate", "none") == "tanh"

        def gelu(k, idx):
            x = a.emit(k, idx)
            if tanh_form:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
                x3 = k.op(
                    f"arith.mulf {x}, " + k.op(f"arith.mulf {x}, {x} : f32") + " : f32"
                )
                inner = k.op(
                    f"arith.addf {x}, "
                    + k.op(f"arith.mulf {x3}, {k.constant(0.044715)} : f32")
                    + " : f32"
                )
                t = k.op(
                    "math.tanh "
                    + k.op(
                        f"arith.mulf {inner}, {k.constant(math.sqrt(2 / math.pi))} : f32"
                    )
                    + " : f32"
                )
            else:  # 0.5 x (1 + erf(x / sqrt(2)))
                t = k.op(
                    "math.erf "
                    + k.op(f"arith.mulf {x}, {k.constant(1 / math.sqrt(2))} : f32")
                    + " : f32"
                )
            one_plus = k.op(f"arith.addf {k.constant(1.0)}, {t} : f32")
            half_x = k.op(f"arith.mulf {x}, {k.constant(0.5)} : f32")
            return k.op(f"arith.mulf {half_x}, {one_plus} : f32")

        return _Value(shape, gelu)
    if target in (
        aten.embedding.default,
        aten.index_select.default,
        aten.index.Tensor,
        aten.gather.default,
    ):
        return _indexing(node, target, args, shape, element, where)
    if target in (aten.full.default, aten.scalar_tensor.default, aten.full_like.default):
        value = args[1] if target is not aten.scalar_tensor.default else args[0]
        return _Value(shape, lambda k, idx: k.constant(value, element), element)
    if target in (aten.zeros_like.default, aten.ones_like.default):
        value = 1 if target is aten.ones_like.default else 0
        return _Value(shape, lambda k, idx: k.constant(value, element), element)
    if target in (aten.arange.start_step, aten.arange.default, aten.arange.start):
        start = args[0] if target is not aten.arange.default else 0
        step = args[2] if target is aten.arange.start_step and len(args) > 2 else 1
        n = shape[0]

        def arange(k, idx):
            i = k.cast(prog.position(k, idx[0], n), "i32", element)
            mul, add = (
                ("arith.mulf", "arith.addf")
                if element == "f32"
                else ("arith.muli", "arith.addi")
            )
            v = k.op(f"{mul} {i}, {k.constant(step, element)} : {element}")
            return k.op(f"{add} {v}, {k.constant(start, element)} : {element}")

        return _Value(shape, arange, element)
    if target is aten.cat.default:
        parts = [p for p in args[0] if math.prod(p.shape) > 0]
        dim = (int(args[1]) if len(args) > 1 else 0) % len(shape)
        n = shape[dim]

        def cat(k, idx):
            # Every part is read in bounds at every point (its index taken mod its
            # length) and the position along `dim` picks the part.
            at = prog.position(k, idx[dim], n)
            value, start = None, 0
            for part in parts:
                m = part.shape[dim]
                local = list(idx)
                local[dim] = f"({idx[dim]} - {start}) mod {m}"
                v = k.cast(part.emit(k, local), part.element, element)
                if value is None:
                    value = v
                else:
                    here = k.op(f"arith.cmpi sge, {at}, {k.constant(start, 'i32')} : i32")
                    value = k.op(f"arith.select {here}, {v}, {value} : {element}")
                start += m
            return value

        return _Value(shape, cat, element)
    if target in (aten.mean.dim, aten.mean.default):
        a = args[0]
        given = args[1] if len(args) > 1 else None
        dims = list(range(len(a.shape))) if given is None or given == [] else _ints(given)
        n = math.prod(a.shape[d % len(a.shape)] for d in dims)
        total = _convert(
            prog, node, aten.sum.dim_IntList, [a, dims, *args[2:3]], {}, shape, buffers
        )
        return _Value(
            shape,
            lambda k, idx: k.op(
                f"arith.mulf {total.emit(k, idx)}, {k.constant(1.0 / n)} : f32"
            ),
        )
    if target in _REDUCE:
        a = args[0]
        given = args[1] if len(args) > 1 else None
        dims = list(range(len(a.shape))) if given is None or given == [] else _ints(given)
        dims = sorted({d % len(a.shape) for d in dims})
        keep = bool(args[2]) if len(args) > 2 else False
        kept = [n for d, n in enumerate(a.shape) if d not in dims]
        buf = _Buffer.holding(prog.fresh("t"), kept, element)
        buffers.append(buf)
        prog.kernel(a, buf, dims, _REDUCE[target])
        stored = _storage_value(buf, kept, row_major_strides(kept))
        if not keep:
            return stored

        def index(idx):
            return [i for d, i in enumerate(idx) if d not in dims]

        return _remap(stored, shape, index)
    raise UnsupportedError(str(target), "no lowering to ta yet", where)


def _variance(prog, node, args, kwargs, shape, buffers) -> tuple[_Value, _Value]:
    """torch.var's value and the mean it is taken about: sum((x - mean)^2) / (N -
    correction) over the reduced dims."""
    a = args[0]
    given = args[1] if len(args) > 1 else kwargs.get("dim")
    dims = list(range(len(a.shape))) if given is None or given == [] else _ints(given)
    dims = sorted({d % len(a.shape) for d in dims})
    correction = kwargs.get("correction", 1)
    if node.target is aten.var.dim:  # var(x, dim, unbiased, keepdim)
        correction = int(args[2]) if len(args) > 2 else 1
        keep = bool(args[3]) if len(args) > 3 else kwargs.get("keepdim", False)
    else:
        correction = 1 if correction is None else correction
        keep = kwargs.get("keepdim", False)
    kept_shape = tuple(1 if d in dims else n for d, n in enumerate(a.shape))
    mean = _convert(prog, node, aten.mean.dim, [a, dims, True], {}, kept_shape, buffers)

    def square(k, idx):
        c = k.op(
            f"arith.subf {a.emit(k, idx)}, "
            f"{mean.emit(k, _broadcast_index(mean, a.shape, idx))} : f32"
        )
        return k.op(f"arith.mulf {c}, {c} : f32")

    total = _convert(
        prog,
        node,
        aten.sum.dim_IntList,
        [_Value(a.shape, square), dims, keep],
        {},
        shape,
        buffers,
        "f32",
    )
    n = math.prod(a.shape[d] for d in dims)
    scale = 1.0 / (n - correction) if n > correction else math.nan

    def var(k, idx):
        return k.op(f"arith.mulf {total.emit(k, idx)}, {k.constant(scale)} : f32")

    if keep:
        return _Value(shape, var), mean
    return _Value(shape, var), _remap(
        mean, shape, lambda idx: _unreduced(idx, dims, len(a.shape))
    )


def _unreduced(idx: Sequence[str], dims: Sequence[int], rank: int) -> list[str]:
    """The index into a keepdim result (unit `dims`) of the index `idx` without them."""
    it = iter(idx)
    return ["0" if d in dims else next(it) for d in range(rank)]


def _row_of(k: _Kernel, index: _Value, at: Sequence[str], n: int, wrap: bool) -> str:
    """A data-dependent index: the index tensor's value at `at`, as a symbol token
    (torch's wrap of negative indices when `wrap`)."""
    v = k.cast(index.emit(k, at), index.element, "i32")
    if wrap:
        negative = k.op(f"arith.cmpi slt, {v}, {k.constant(0, 'i32')} : i32")
        up = k.op(f"arith.addi {v}, {k.constant(n, 'i32')} : i32")
        v = k.op(f"arith.select {negative}, {up}, {v} : i32")
    return k.symbol(v)


def _indexing(node, target, args, shape, element, where) -> _Value:
    """Gathers: the table is read at an index that is data (a map symbol), which
    indirect-load-to-scalar-prefetch turns into row DMAs or scalar prefetch."""
    if target is aten.embedding.default:
        weight, index = args[0], args[1]
        n = len(index.shape)

        def emb(k, idx):
            row = _row_of(k, index, idx[:n], weight.shape[0], False)
            return weight.emit(k, [row, *idx[n:]])

        return _Value(shape, emb, weight.element)
    if target is aten.index_select.default:
        x, dim, index = args[0], int(args[1]) % len(args[0].shape), args[2]

        def select(k, idx):
            row = _row_of(k, index, [idx[dim]], x.shape[dim], False)
            return x.emit(k, [*idx[:dim], row, *idx[dim + 1 :]])

        return _Value(shape, select, x.element)
    if target is aten.gather.default:
        x, dim, index = args[0], int(args[1]) % len(args[0].shape), args[2]

        def gather(k, idx):
            row = _row_of(k, index, list(idx), x.shape[dim], False)
            return x.emit(k, [*idx[:dim], row, *idx[dim + 1 :]])

        return _Value(shape, gather, x.element)
    # x[i0, i1, ...]: index tensors for the leading dims, broadcast together.
    x, indices = args[0], args[1]
    masks = [n for n in node.args[1] if isinstance(n, torch.fx.Node)]
    if any(n.meta["val"].dtype == torch.bool for n in masks):
        raise UnsupportedError(
            str(target), "a boolean mask index has a data-dependent shape", where
        )
    # x[:, i, j]: index tensors (broadcast together) on some dims, the others sliced
    # whole. As numpy: the broadcast dims replace the indexed ones where those are
    # adjacent, and go first otherwise.
    indexed = [d for d, i in enumerate(indices) if i is not None]
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    at = indexed[0] if adjacent else 0
    n_kept = len(x.shape) - len(indexed)
    n_bcast = len(shape) - n_kept
    bcast_shape = shape[at : at + n_bcast]

    def index(k, idx):
        bcast = idx[at : at + n_bcast]
        kept = iter([*idx[:at], *idx[at + n_bcast :]])
        full = []
        for d, n in enumerate(x.shape):
            i = indices[d] if d < len(indices) else None
            if i is None:
                full.append(next(kept))
            else:
                full.append(
                    _row_of(k, i, _broadcast_index(i, bcast_shape, bcast), n, True)
                )
        return x.emit(k, full)

    return _Value(shape, index, x.element)


def _matmul(prog, a: _Value, b: _Value, shape, buffers, bias, beta, alpha) -> _Value:
    """`a @ b` (batched over leading dims) as a materialised sum over k of products: tile
    makes it a `tl.dot` on the MXU. The bias of addmm is added by the consumers."""
    k_len = a.shape[-1]
    full = (*shape, k_len)

    def product(k, idx):
        *lead, i, j, kk = idx
        lhs = a.emit(k, [*lead, i, kk])
        rhs = b.emit(k, [*lead, kk, j])
        return k.op(f"arith.mulf {lhs}, {rhs} : f32")

    buf = _Buffer.holding(prog.fresh("t"), shape, "f32")
    buffers.append(buf)
    prog.kernel(_Value(full, product), buf, [len(shape)], "sum")
    out = _storage_value(buf, shape, row_major_strides(shape))
    if bias is None and alpha == 1:
        return out

    def emit(k, idx):
        v = out.emit(k, idx)
        if alpha != 1:
            v = k.op(f"arith.mulf {v}, {k.constant(alpha)} : f32")
        if bias is not None:
            c = bias.emit(k, _broadcast_index(bias, shape, idx))
            if beta != 1:
                c = k.op(f"arith.mulf {c}, {k.constant(beta)} : f32")
            v = k.op(f"arith.addf {v}, {c} : f32")
        return v

    return _Value(tuple(shape), emit)


def _convert_multi(prog, node, target, args, kwargs, vals, buffers) -> list:
    """Ops with several results: split_with_sizes (views) and native_layer_norm."""
    shapes = [tuple(v.shape) for v in vals]
    if target in (aten.split_with_sizes.default, aten.split.Tensor):
        a = args[0]
        dim = int(args[2]) % len(a.shape) if len(args) > 2 else 0
        out, start = [], 0
        for shape in shapes:
            out.append(
                _convert(
                    prog,
                    node,
                    aten.slice.Tensor,
                    [a, dim, start, start + shape[dim], 1],
                    {},
                    shape,
                    buffers,
                )
            )
            start += shape[dim]
        return out
    if target is aten.var_mean.correction:
        var, mean = _variance(prog, node, args, kwargs, shapes[0], buffers)
        return [var, mean]
    if target in (aten.max.dim, aten.min.dim):  # (values, indices)
        x, dim = args[0], int(args[1])
        keep = bool(args[2]) if len(args) > 2 else False
        value, index = (
            (aten.amax.default, aten.argmax.default)
            if target is aten.max.dim
            else (aten.amin.default, aten.argmin.default)
        )
        element = _DTYPES[vals[0].dtype]
        return [
            _convert(
                prog, node, value, [x, [dim], keep], {}, shapes[0], buffers, element
            ),
            _convert(prog, node, index, [x, dim, keep], {}, shapes[1], buffers, "i32"),
        ]
    if target is aten.native_layer_norm.default:
        x, normalized, weight, bias, eps = args
        dims = list(range(len(x.shape) - len(normalized), len(x.shape)))
        stat_shape = shapes[1]
        var, mean = _variance(
            prog, node, [x, dims], {"correction": 0, "keepdim": True}, stat_shape, buffers
        )

        def centered(k, idx):
            return k.op(
                f"arith.subf {x.emit(k, idx)}, {mean.emit(k, _broadcast_index(mean, x.shape, idx))} : f32"
            )

        def rstd_at(k, idx):
            v = k.op(f"arith.addf {var.emit(k, idx)}, {k.constant(float(eps))} : f32")
            return k.op(f"math.rsqrt {v} : f32")

        rstd = _Value(stat_shape, rstd_at)

        def out(k, idx):
            v = k.op(
                f"arith.mulf {centered(k, idx)}, {rstd.emit(k, _broadcast_index(rstd, x.shape, idx))} : f32"
            )
            if weight is not None:
                v = k.op(
                    f"arith.mulf {v}, {weight.emit(k, _broadcast_index(weight, x.shape, idx))} : f32"
                )
            if bias is not None:
                v = k.op(
                    f"arith.addf {v}, {bias.emit(k, _broadcast_index(bias, x.shape, idx))} : f32"
                )
            return v

        return [_Value(x.shape, out), mean, rstd]
    raise UnsupportedError(str(target), "no lowering to ta yet", _where(node))


def _module_text(prog: _Program, inputs, temps, outputs) -> str:
    params = ", ".join(f"%{b.name}: {b.host}" for b in inputs)
    lines = []
    for b in [*inputs, *temps]:
        if b in temps:
            lines.append(f"%{b.name} = ta.alloc : {b.host}")
        lines.append(f"%{b.name}_flat = ta.reshape %{b.name} : {b.host} to {b.flat}")
    lines += prog.host
    results = ", ".join(f"%{b.name}" for b in outputs)
    types = ", ".join(b.host for b in outputs)
    ret = f"({types})" if len(outputs) > 1 else types
    body = "\n".join(f"  {line}" for line in lines)
    forward = (
        f"func.func @forward({params}) -> {ret} {{\n{body}\n"
        f"  func.return {results} : {types}\n}}"
    )
    return "\n".join([*prog.kernels, forward]) + "\n"
