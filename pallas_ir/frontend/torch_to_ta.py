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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch._decomp import core_aten_decompositions, get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

from pallas_ir.affine_analysis import row_major_strides

aten = torch.ops.aten
prims = torch.ops.prims

_DTYPES = {torch.float32: "f32", torch.int32: "i32", torch.int64: "i32", torch.bool: "i1"}
"""Element types in kernels. int64 is narrowed to i32 (TPU kernels have no 64-bit types;
the host converts at the boundary) and bool is i1 in registers, stored as i32."""


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
    """The stored element type (f32 or i32; bool is stored as i32)."""
    boolean: bool = False
    """Holds bool values (stored as i32 0/1)."""

    @staticmethod
    def holding(name: str, shape: Sequence[int], element: str, numel: int = 0) -> _Buffer:
        """A buffer for values of `element` (bool is stored as i32); `numel` defaults to
        the shape's (at least 1)."""
        stored = "f32" if element == "f32" else "i32"
        return _Buffer(
            name, numel or max(math.prod(shape), 1), tuple(shape), stored, element == "i1"
        )

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
        if buf.boolean:
            return self.op(f"arith.cmpi ne, {v}, {self.constant(0, 'i32')} : i32")
        return v

    def op(self, text: str) -> str:
        v = self.fresh()
        self.lines.append(f"{v} = {text}")
        return v

    def constant(self, value: float | int | bool, element: str = "f32") -> str:
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
        if target == "i1":
            zero = self.constant(0, source)
            cmp = "arith.cmpf une" if source == "f32" else "arith.cmpi ne"
            return self.op(f"{cmp}, {v}, {zero} : {source}")
        ops = {
            ("i1", "i32"): "arith.extui",
            ("i1", "f32"): "arith.uitofp",
            ("i32", "f32"): "arith.sitofp",
            ("f32", "i32"): "arith.fptosi",
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

    element = "i1" if buf.boolean else buf.element
    return _Value(tuple(shape), emit, element)


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
}


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
    if target is aten.logical_not.default:
        return k.op(f"arith.xori {a}, {k.constant(True, 'i1')} : i1")
    if target is aten.bitwise_not.default and element == "i1":
        return k.op(f"arith.xori {a}, {k.constant(True, 'i1')} : i1")
    return None


_UNARY = {
    *_FLOAT_UNARY,
    aten.neg.default,
    aten.abs.default,
    aten.relu.default,
    aten.sigmoid.default,
    aten.logical_not.default,
    aten.bitwise_not.default,
}

_BINARY = {
    # target: (float op, integer op, bool op)
    aten.add.Tensor: ("arith.addf", "arith.addi", "arith.ori"),
    aten.sub.Tensor: ("arith.subf", "arith.subi", None),
    aten.mul.Tensor: ("arith.mulf", "arith.muli", "arith.andi"),
    aten.div.Tensor: ("arith.divf", None, None),
    aten.maximum.default: ("arith.maximumf", "arith.maxsi", "arith.ori"),
    aten.minimum.default: ("arith.minimumf", "arith.minsi", "arith.andi"),
    aten.pow.Tensor_Tensor: ("math.powf", None, None),
    aten.pow.Tensor_Scalar: ("math.powf", None, None),
    aten.logical_and.default: (None, None, "arith.andi"),
    aten.logical_or.default: (None, None, "arith.ori"),
    aten.bitwise_and.Tensor: (None, "arith.andi", "arith.andi"),
    aten.bitwise_or.Tensor: (None, "arith.ori", "arith.ori"),
}

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

_DECOMPOSE = [aten._softmax, aten._log_softmax]


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
    trace = node.meta.get("stack_trace") or ""
    lines = [
        ln.strip() for ln in trace.strip().splitlines() if ln.strip().startswith("File")
    ]
    return lines[-1] if lines else f"graph node {node.name}"


def _scalar_element(x) -> str:
    return "i1" if isinstance(x, bool) else "i32" if isinstance(x, int) else "f32"


def _ints(x) -> list[int]:
    return [int(v) for v in (x if isinstance(x, list | tuple) else [x])]


def torch_to_ta(fn: Callable, example_inputs: Sequence[torch.Tensor]):
    """The ta module text for `fn` on `example_inputs`, and how @forward takes each input:
    a list of (host shape, flat storage span or None for a contiguous input)."""
    for t in example_inputs:
        if not isinstance(t, torch.Tensor) or t.dtype not in _DTYPES:
            raise UnsupportedError(
                "input",
                "inputs are float32, int32, int64 or bool tensors, got "
                f"{getattr(t, 'dtype', type(t))}",
            )
    decompositions = {**core_aten_decompositions(), **get_decompositions(_DECOMPOSE)}
    graph = make_fx(fn, decomposition_table=decompositions, record_stack_traces=True)(
        *example_inputs
    )
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
        if t.is_contiguous():
            buf = _Buffer.holding(name, t.shape, _DTYPES[t.dtype])
            inputs.append((tuple(t.shape), None))
        else:
            # The call passes the span the tensor views, from its storage offset.
            span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
            buf = _Buffer.holding(name, (span,), _DTYPES[t.dtype])
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
        target = node.target
        args = [
            [arg(b) for b in a] if isinstance(a, list | tuple) else arg(a)
            for a in node.args
        ]
        val = node.meta.get("val")
        shape = tuple(val.shape) if isinstance(val, torch.Tensor) else ()
        if isinstance(val, list | tuple):
            env[node] = _convert_multi(
                prog, node, target, args, node.kwargs, val, buffers
            )
            continue
        if isinstance(val, torch.Tensor) and val.dtype not in _DTYPES:
            raise UnsupportedError(
                str(target), f"dtype {val.dtype} is not supported yet", _where(node)
            )
        env[node] = _convert(prog, node, target, args, node.kwargs, shape, buffers)
    (out_node,) = [n for n in graph.graph.nodes if n.op == "output"]
    results = out_node.args[0]
    results = list(results) if isinstance(results, list | tuple) else [results]
    for r in results:
        v = env[r]
        if not isinstance(v, _Value):
            raise UnsupportedError("output", "outputs must be tensors")
        out = _Buffer.holding(prog.fresh("out"), v.shape, v.element)
        buffers.append(out)
        outputs.append(out)
        output_dtypes.append(r.meta["val"].dtype)
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


def _convert(prog, node, target, args, kwargs, shape, buffers) -> _Value:
    where = _where(node)
    val = node.meta.get("val")
    element = _DTYPES.get(val.dtype, "f32") if isinstance(val, torch.Tensor) else "f32"
    if target in _UNARY:
        a = args[0]
        # exp of an int tensor is float: the operand takes the result's type first.
        source = (
            element
            if target in _FLOAT_UNARY or target is aten.sigmoid.default
            else a.element
        )

        def unary(k, idx):
            v = k.cast(a.emit(k, idx), a.element, source)
            out = _unary(target, k, v, source)
            if out is None:
                raise UnsupportedError(str(target), f"not for {a.element} data", where)
            return out

        return _Value(shape, unary, element)
    if target in _BINARY or target in _COMPARE:
        a, b = args[0], args[1]
        alpha = kwargs.get("alpha", 1)
        compare = target in _COMPARE
        # Operands meet in the result's type (a comparison's: the wider operand's).
        widths = ["f32", "i32", "i1"]
        kinds = [
            x.element if isinstance(x, _Value) else _scalar_element(x) for x in (a, b)
        ]
        common = min(kinds, key=widths.index) if compare else element

        def operand(k, x, idx):
            if isinstance(x, _Value):
                return k.cast(
                    x.emit(k, _broadcast_index(x, shape, idx)), x.element, common
                )
            return k.constant(x, common)

        def binary(k, idx):
            lhs, rhs = operand(k, a, idx), operand(k, b, idx)
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
    if target in (aten._to_copy.default, prims.convert_element_type.default):
        a = args[0]
        return _Value(
            shape,
            lambda k, idx: k.cast(a.emit(k, idx), a.element, element),
            element,
        )
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
    if any(i is None for i in indices) or not all(isinstance(i, _Value) for i in indices):
        raise UnsupportedError(
            str(target), "only index tensors on the leading dims are supported yet", where
        )
    lead = len(shape) - (len(x.shape) - len(indices))
    lead_shape = shape[:lead]

    def index(k, idx):
        rows = [
            _row_of(k, i, _broadcast_index(i, lead_shape, idx[:lead]), x.shape[d], True)
            for d, i in enumerate(indices)
        ]
        return x.emit(k, [*rows, *idx[lead:]])

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
    if target is aten.native_layer_norm.default:
        x, normalized, weight, bias, eps = args
        dims = list(range(len(x.shape) - len(normalized), len(x.shape)))
        stat_shape = shapes[1]
        mean = _convert(
            prog, node, aten.mean.dim, [x, dims, True], {}, stat_shape, buffers
        )

        def centered(k, idx):
            return k.op(
                f"arith.subf {x.emit(k, idx)}, {mean.emit(k, _broadcast_index(mean, x.shape, idx))} : f32"
            )

        def square(k, idx):
            c = centered(k, idx)
            return k.op(f"arith.mulf {c}, {c} : f32")

        var = _convert(
            prog,
            node,
            aten.mean.dim,
            [_Value(x.shape, square), dims, True],
            {},
            stat_shape,
            buffers,
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
