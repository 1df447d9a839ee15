"""emit-python: print a `pallas` module as one self-contained Python module.

The module imports only jax, jax.numpy, jax.experimental.pallas (and its tpu module)
and defines `forward(*arrays, interpret=False)`, jax arrays in and out, plus one named
kernel function per `pallas.call`. Printing is mechanical: one Python statement per op.
The same text runs in interpret mode on a CPU and lowers for TPU. A module with float64
values runs its `forward` with x64 on (`jax.enable_x64`), which JAX needs to make
float64 arrays at all; its caller passes float64 arrays, made and jitted with x64 on
too (outside it, JAX narrows them to float32 on the way in).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
)
from xdsl.utils.target import Target

from pallas_ir.dialects import pallas, xla
from pallas_ir.dialects.common import ARITH_CASTS, DotPrecision, ReductionKind
from pallas_ir.dialects.pallas import DONATED_ARGUMENT
from pallas_ir.dtypes import holds_float64
from pallas_ir.lowering import emit_xla
from pallas_ir.lowering.jnp_spelling import (
    BINARY,
    CMPF,
    CMPI,
    UNARY,
    EmitError,
    Namer,
    affine_to_python,
    bitcast_text,
    compare_text,
    dtype_name,
    literal_text,
    reduction_text,
    tuple_text,
)

HEADER = """\
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
"""


def _grid_index_names(rank: int) -> list[str]:
    letters = "ijklmn"
    return [letters[d] if rank <= len(letters) else f"i{d}" for d in range(rank)]


def _strip_parens(text: str) -> str:
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, c in enumerate(text):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i != len(text) - 1:
                return text
        return text[1:-1]
    return text


def emit_index_map(
    spec: pallas.BlockSpecAttr, grid_rank: int, prefetch_names: Sequence[str]
) -> str:
    """`lambda i, j, idx_ref: (idx_ref[i], jnp.int32(0))`: results are int32 (a bare
    literal would be int64 under x64 and break the TPU compile)."""
    dims = _grid_index_names(grid_rank)
    symbols = [
        f"{prefetch_names[p]}["
        + ", ".join(_strip_parens(affine_to_python(e, dims, [])) for e in m.results)
        + "]"
        for p, m in spec.prefetch
    ]
    results: list[str] = []
    for e in spec.map.results:
        if isinstance(e, AffineConstantExpr):
            results.append(f"jnp.int32({e.value})")
        else:
            results.append(_strip_parens(affine_to_python(e, dims, symbols)))
    params = ", ".join([*dims, *prefetch_names])
    body = ", ".join(results) + ("," if len(results) == 1 else "")
    return f"lambda {params}: ({body})"


def emit_block_spec(
    spec: pallas.BlockSpecAttr, grid_rank: int, prefetch_names: Sequence[str]
) -> str:
    if spec.space == pallas.MemorySpace.ANY:
        return "pl.BlockSpec(memory_space=pl.ANY)"
    shape = ", ".join(
        "None" if b is None else f"pl.Element({b})" if spec.element else str(b)
        for b in spec.shape
    )
    shape = f"({shape}{',' if len(spec.shape) == 1 else ''})"
    text = f"pl.BlockSpec({shape}, {emit_index_map(spec, grid_rank, prefetch_names)}"
    if spec.space == pallas.MemorySpace.SMEM:
        text += ", memory_space=pltpu.SMEM"
    return text + ")"


def _shape_dtype(t: Attribute, op: Operation) -> str:
    assert isinstance(t, TensorType)
    return f"jax.ShapeDtypeStruct({tuple_text(t.get_shape())}, {dtype_name(t.element_type, op)})"


def _index_text(
    indexers: Sequence[Attribute],
    shape: Sequence[int],
    value: str,
    part: Callable[[int, int, int], str],
) -> str:
    """`value[...]` at `indexers`: an int as itself, a whole dim as `:`, another slice
    (start, size, stride) as `part` spells it."""
    if not indexers:
        return f"{value}[...]"
    parts: list[str] = []
    for ix, n in zip(indexers, shape):
        if isinstance(ix, pallas.SliceAttr):
            s, z, k = ix.start.data, ix.size.data, ix.stride.data
            parts.append(":" if (s, z, k) == (0, n, 1) else part(s, z, k))
        else:
            parts.append(str(ix.data))  # type: ignore[attr-defined]
    return f"{value}[{', '.join(parts)}]"


def _ref_slice(s: int, z: int, k: int) -> str:
    return f"pl.ds({s}, {z})" if k == 1 else f"pl.ds({s}, {z}, stride={k})"


def _value_slice(s: int, z: int, k: int) -> str:
    return f"{s}:{s + z}" if k == 1 else f"{s}:{s + (z - 1) * k + 1}:{k}"


def _indexers(op: pallas.LoadOp | pallas.StoreOp, ref: str) -> str:
    """A ref indexed as Pallas reads it: `ref[pl.ds(0, 8), :]`."""
    shape = op.ref.type.get_shape()  # type: ignore[attr-defined]
    return _index_text(op.indexers.data, shape, ref, _ref_slice)


@dataclass
class KernelEmitter:
    """The statements of one kernel body: one method per op class (`emit` for
    statements, `expression` for the value of a one-result op), as xDSL's WGSL printer.
    Each spells its op as it is; `pallas-legalize-mosaic` has already made it legal."""

    namer: Namer
    lines: list[str] = field(default_factory=list[str])

    def operand_names(self, op: Operation) -> list[str]:
        return [self.namer[o] for o in op.operands]

    # -- statements ------------------------------------------------------------------

    @functools.singledispatchmethod
    def emit(self, op: Operation) -> None:
        """A one-result op: `name = <expression>`."""
        out = self.expression(op)
        (result,) = op.results
        self.lines.append(f"{self.namer.define(result)} = {out}")

    @emit.register
    def _(self, op: pallas.WhenOp) -> None:
        self.lines.append(f"@pl.when({self.namer[op.condition]})")
        self.lines.append(f"def {self.namer.fresh('_when')}():")
        self._body(op.body.block)

    @emit.register
    def _(self, op: pallas.LoopOp) -> None:
        lower, upper = op.bounds
        self.lines.append(f"@pl.loop({lower}, {upper})")
        name = self.namer.fresh("_loop")
        self.lines.append(f"def {name}({self.namer.define(op.index)}):")
        self._body(op.body.block)

    def _body(self, block: Block) -> None:
        """A region's ops as the body of the function just opened (`pass` if none)."""
        inner = KernelEmitter(self.namer)
        for nested in block.ops:
            inner.emit(nested)
        self.lines += [f"    {line}" for line in inner.lines or ["pass"]]

    def _local_row(self, static: IntegerAttr, at: SSAValue | None) -> str:
        """A row of a VMEM buffer: static, or a loop's index plus a static part."""
        if at is None:
            return str(static.value.data)
        if static.value.data == 0:
            return self.namer[at]
        return f"{self.namer[at]} + {static.value.data}"

    def _rows_at(
        self, ref: SSAValue, lead: Sequence[SSAValue], row: SSAValue, p: int
    ) -> str:
        """The rows a DMA addresses at dynamic indices: `ref.at[b, pl.ds(row, p)]`."""
        n = self.namer
        return f"{n[ref]}.at[{''.join(f'{n[v]}, ' for v in lead)}pl.ds({n[row]}, {p})]"

    def _row_at(self, ref: SSAValue, r: str, p: int) -> str:
        """Row (or, for `p > 1`, slab) `r` of a VMEM buffer: `rows.at[pl.ds(r, 1)]`."""
        return (
            f"{self.namer[ref]}.at[{r}]"
            if p > 1
            else f"{self.namer[ref]}.at[pl.ds({r}, 1)]"
        )

    def _copy(self, src: str, dst: str, op: Operation, sem: SSAValue) -> None:
        start = isinstance(op, pallas.DmaStartOp | pallas.DmaWriteStartOp)
        phase = "start" if start else "wait"
        self.lines.append(
            f"pltpu.make_async_copy({src}, {dst}, {self.namer[sem]}).{phase}()"
        )

    @emit.register
    def _(self, op: pallas.DmaStartOp | pallas.DmaWaitOp) -> None:
        p = op.row_count
        src = self._rows_at(op.src, op.src_lead, op.src_row, p)
        dst = self._row_at(op.dst, self._local_row(op.dst_row, op.dst_at), p)
        self._copy(src, dst, op, op.sem)

    @emit.register
    def _(self, op: pallas.RowCopyOp) -> None:
        n = self.namer
        lead = "".join(f"{n[v]}, " for v in op.src_lead)
        row = f"{n[op.src]}[{lead}pl.ds({n[op.src_row]}, 1)]"
        at = self._local_row(op.dst_row, op.dst_at)
        self.lines.append(f"{n[op.dst]}[pl.ds({at}, 1)] = {row}")

    @emit.register
    def _(self, op: pallas.DmaWriteStartOp | pallas.DmaWriteWaitOp) -> None:
        src = self._row_at(op.src, self._local_row(op.src_row, op.src_at), 1)
        self._copy(src, self._rows_at(op.dst, op.dst_lead, op.dst_row, 1), op, op.sem)

    @emit.register
    def _(self, op: pallas.StoreOp) -> None:
        self.lines.append(f"{_indexers(op, self.namer[op.ref])} = {self.namer[op.value]}")

    # -- expressions -----------------------------------------------------------------

    @functools.singledispatchmethod
    def expression(self, op: Operation) -> str:
        raise EmitError(op, f"emit-python: no Python for '{op.name}' in a kernel")

    @expression.register
    def _(self, op: pallas.SliceOp) -> str:
        shape = op.source.type.get_shape()  # type: ignore[attr-defined]
        # `pallas.slice` as a Python index of a jax array: `v[:, 3:67]`, `v[:, :, 1]`.
        return _index_text(op.indexers.data, shape, self.namer[op.source], _value_slice)

    @expression.register
    def _(self, op: pallas.LoadOp) -> str:
        return _indexers(op, self.namer[op.ref])

    @expression.register
    def _(self, op: pallas.IotaOp) -> str:
        shape = tuple_text(op.result.type.get_shape())  # type: ignore[attr-defined]
        iota = f"jax.lax.broadcasted_iota(jnp.int32, {shape}, {op.dim.value.data})"
        return f"{iota} + {self.namer[op.offset]}"

    @expression.register
    def _(self, op: pallas.ReadOp) -> str:
        index = ", ".join(self.namer[i] for i in op.indices) or "..."  # rank 0: ref[...]
        return f"{self.namer[op.ref]}[{index}]"

    @expression.register
    def _(self, op: pallas.DotOp) -> str:
        a, b = self.operand_names(op)
        acc = dtype_name(op.result.type.element_type, op)  # type: ignore[attr-defined]
        highest = op.precision_of() == DotPrecision.HIGHEST
        precision = ", precision=jax.lax.Precision.HIGHEST" if highest else ""
        if op.lhs.type.get_num_dims() == 3:  # type: ignore[attr-defined]
            # one product per batch index (jnp.dot of 3-D tiles is a tensordot)
            dims = "(((2,), (1,)), ((0,), (0,)))"
            return (
                f"jax.lax.dot_general({a}, {b}, {dims}, "
                f"preferred_element_type={acc}{precision})"
            )
        return f"jnp.dot({a}, {b}, preferred_element_type={acc}{precision})"

    @expression.register
    def _(self, op: pallas.ProgramIdOp) -> str:
        return f"pl.program_id({op.axis.value.data})"

    @expression.register
    def _(self, op: pallas.TransposeOp) -> str:
        perm = op.permutation.get_values()
        if perm == (1, 0):
            return f"{self.namer[op.source]}.T"
        return f"jnp.transpose({self.namer[op.source]}, {tuple_text(perm)})"

    @expression.register
    def _(self, op: pallas.RollOp) -> str:
        shift, dim = op.shift.value.data, op.dim.value.data
        return f"pltpu.roll({self.namer[op.source]}, {shift}, {dim})"

    @expression.register
    def _(self, op: pallas.ReshapeOp) -> str:
        assert isinstance(op.result.type, TensorType)
        return (
            f"{self.namer[op.source]}.reshape({tuple_text(op.result.type.get_shape())})"
        )

    @expression.register
    def _(self, op: pallas.BroadcastOp) -> str:
        assert isinstance(op.result.type, TensorType)
        shape = tuple_text(op.result.type.get_shape())
        return f"jnp.broadcast_to({self.namer[op.source]}, {shape})"

    @expression.register
    def _(self, op: pallas.ConvertOp) -> str:
        # jnp astype is XLA convert_element_type: float → int truncates toward zero.
        elt = op.result.type.element_type  # type: ignore[attr-defined]
        return f"{self.namer[op.source]}.astype({dtype_name(elt, op)})"

    @expression.register
    def _(self, op: pallas.SelectOp | arith.SelectOp) -> str:
        return "jnp.where({}, {}, {})".format(*self.operand_names(op))

    @expression.register
    def _(self, op: pallas.CompareOp) -> str:
        return compare_text(op, *self.operand_names(op))

    @expression.register
    def _(self, op: pallas.ReduceOp) -> str:
        kind = ReductionKind(op.kind.data)
        return reduction_text(kind, self.namer[op.source], op.dims.get_values(), op)

    @expression.register
    def _(self, op: arith.ConstantOp) -> str:
        value = op.value
        t = op.result.type
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, TensorType):
            # Splat when every element has the same bits (NaN != NaN, 0.0 == -0.0).
            data, count = value.data.data, len(value)
            if data != data[: len(data) // count] * count:
                raise EmitError(
                    op, "emit-python: only splat tensor constants are supported"
                )
            (first,) = value.get_element_type().unpack(data[: len(data) // count], 1)
            lit = literal_text(first, t.element_type)
            return f"jnp.full({tuple_text(t.get_shape())}, {lit}, {dtype_name(t.element_type, op)})"
        if isinstance(value, FloatAttr | IntegerAttr):
            return f"{dtype_name(t, op)}({literal_text(value.value.data, t)})"
        raise EmitError(op, f"emit-python: unsupported constant {value}")

    def _cast(self, op: Operation) -> str:
        t = op.results[0].type
        elt = t.element_type if isinstance(t, TensorType) else t
        return f"{self.operand_names(op)[0]}.astype({dtype_name(elt, op)})"

    @expression.register
    def _(self, op: arith.BitcastOp) -> str:
        return bitcast_text(op, self.operand_names(op)[0])

    def _table(self, op: Operation) -> str:
        """An `arith`/`math`/`special` op in `BINARY` or `UNARY`: a jnp expression."""
        return (BINARY.get(type(op)) or UNARY[type(op)]).format(*self.operand_names(op))

    for _op_class in (*BINARY, *UNARY):
        expression.register(_op_class, _table)
    for _op_class in ARITH_CASTS:
        expression.register(_op_class, _cast)
    del _op_class

    @expression.register
    def _(self, op: arith.BitcastOp) -> str:
        t = op.result.type
        elt = t.element_type if isinstance(t, TensorType) else t
        name = self.operand_names(op)[0]
        return f"jax.lax.bitcast_convert_type({name}, {dtype_name(elt, op)})"

    @expression.register
    def _(self, op: arith.CmpfOp | arith.CmpiOp) -> str:
        table = CMPF if isinstance(op, arith.CmpfOp) else CMPI
        pred = op.predicate.value.data
        names = (
            arith.CMPF_COMPARISON_OPERATIONS
            if isinstance(op, arith.CmpfOp)
            else arith.CMPI_COMPARISON_OPERATIONS
        )
        sym = table.get(names[pred])
        if sym is None:
            raise EmitError(op, f"emit-python: no Python for predicate {names[pred]}")
        a, b = self.operand_names(op)
        return f"{a} {sym} {b}"


def _kernel_function(call: pallas.CallOp, name: str) -> list[str]:
    namer = Namer()
    params = [namer.define(a, f"ref{a.index}") for a in call.body.block.args]
    em = KernelEmitter(namer)
    for op in call.body.block.ops:
        em.emit(op)
    body = em.lines or ["pass"]
    return [f"def {name}({', '.join(params)}):", *(f"    {line}" for line in body)]


_KERNEL, _CALL = "__kernel__", "__call__"
"""Placeholders for the names of a call's kernel function and jitted wrapper, while its
text is compared with the calls emitted before it."""


def _call_function(call: pallas.CallOp) -> list[str]:
    """The `pallas.call` as a jitted function of its operands: jax traces and lowers a
    jitted function once for every call with the same operand types, so launches of
    one kernel (the layers of a model) cost one trace and lowering between them."""
    params = [f"x{i}" for i in range(len(call.args))]
    lines = _pallas_call_lines(call, Namer(params))
    return [
        '@functools.partial(jax.jit, static_argnames=("interpret",))',
        f"def {_CALL}({', '.join([*params, 'interpret=False'])}):",
        "    return pl.pallas_call(",
        *lines,
        f"    )({', '.join(params)})",
    ]


def _pallas_call_lines(call: pallas.CallOp, call_namer: Namer) -> list[str]:
    """The arguments of `pl.pallas_call` for `call` (its kernel named `_KERNEL`)."""
    grid_rank = len(call.grid.get_values())
    ref_names = [call_namer.fresh(a.name_hint or f"prefetch{i}") for i, a in
                 enumerate(call.body.block.args[: call.n_prefetch])]  # fmt: skip
    in_specs = [emit_block_spec(s, grid_rank, ref_names) for s in call.in_specs.data]
    out_specs = [emit_block_spec(s, grid_rank, ref_names) for s in call.out_specs.data]
    outs = [_shape_dtype(r.type, call) for r in call.outs]
    ind = " " * 8
    lines: list[str] = [f"{ind}{_KERNEL},"]
    if len(outs) == 1:
        lines.append(f"{ind}out_shape={outs[0]},")
    else:
        lines.append(f"{ind}out_shape=(")
        lines += [f"{ind}    {o}," for o in outs]
        lines.append(f"{ind}),")

    def spec_list(key: str, specs: list[str], single: bool, pad: str) -> list[str]:
        if single and len(specs) == 1:
            return [f"{pad}{key}={specs[0]},"]
        return [f"{pad}{key}=[", *(f"{pad}    {s}," for s in specs), f"{pad}],"]

    scratch = [
        "pltpu.SemaphoreType.DMA(())"
        if s.space == pallas.MemorySpace.SEMAPHORE
        else f"pltpu.{s.space.value.upper()}({tuple_text(s.get_shape())}, "
        f"{dtype_name(s.element_type, call)})"
        for s in call.scratch_shapes.data
    ]
    grid = tuple_text(call.grid.get_values())
    if call.n_prefetch:
        p = ind + "    "
        lines.append(f"{ind}grid_spec=pltpu.PrefetchScalarGridSpec(")
        lines.append(f"{p}num_scalar_prefetch={call.n_prefetch},")
        lines.append(f"{p}grid={grid},")
        lines += spec_list("in_specs", in_specs, False, p)
        lines += spec_list("out_specs", out_specs, True, p)
        if scratch:
            lines.append(f"{p}scratch_shapes=[{', '.join(scratch)}],")
        lines.append(f"{ind}),")
    else:
        lines.append(f"{ind}grid={grid},")
        lines += spec_list("in_specs", in_specs, False, ind)
        lines += spec_list("out_specs", out_specs, True, ind)
        if scratch:
            lines.append(f"{ind}scratch_shapes=[{', '.join(scratch)}],")
    if call.aliases:
        pairs = ", ".join(f"{i}: {o}" for i, o in call.aliases)
        lines.append(f"{ind}input_output_aliases={{{pairs}}},")
    semantics = tuple_text([f'"{s.data.value}"' for s in call.dimension_semantics.data])
    params = [f"dimension_semantics={semantics}"]
    if call.vmem_limit_bytes is not None:
        params.append(f"vmem_limit_bytes={call.vmem_limit_bytes.value.data}")
    lines.append(f"{ind}compiler_params=pltpu.CompilerParams({', '.join(params)}),")
    if (c := call.cost_estimate) is not None:
        lines.append(
            f"{ind}cost_estimate=pl.CostEstimate(flops={c.flops.data}, "
            f"transcendentals={c.transcendentals.data}, "
            f"bytes_accessed={c.bytes_accessed.data}),"
        )
    lines.append(f'{ind}name="{call.kernel_name.data}",')
    lines.append(f"{ind}interpret=interpret,")
    return lines


@dataclass
class HostEmitter:
    """The statements of `forward` and the functions it calls: one method per op class
    of `@forward`."""

    xla_functions: dict[str, xla.FuncOp]
    namer: Namer = field(default_factory=Namer)
    lines: list[str] = field(default_factory=list[str])
    kernels: list[list[str]] = field(default_factory=list[list[str]])
    """The kernel (and XLA) functions, in call order."""
    calls: dict[str, str] = field(default_factory=dict[str, str])
    """The jitted wrapper emitted for each text of a kernel and its call: launches of
    one kernel whose calls print alike share it."""

    @functools.singledispatchmethod
    def emit(self, op: Operation) -> None:
        raise EmitError(op, f"emit-python: no Python for '{op.name}' in @forward")

    @emit.register
    def _(self, op: pallas.CallOp) -> None:
        functions = [*_kernel_function(op, _KERNEL), "", "", *_call_function(op)]
        text = "\n".join(functions)
        if (wrapper := self.calls.get(text)) is None:
            kernel = self.namer.fresh(f"{op.kernel_name.data}_kernel")
            wrapper = self.namer.fresh(f"{op.kernel_name.data}_call")
            self.calls[text] = wrapper
            self.kernels.append(
                [
                    line.replace(_KERNEL, kernel).replace(_CALL, wrapper)
                    for line in functions
                ]
            )
        results = [self.namer.define(r, "out") for r in op.outs]
        target = results[0] if len(results) == 1 else ", ".join(results)
        args = ", ".join([*(self.namer[a] for a in op.args), "interpret=interpret"])
        self.lines.append(f"    {target} = {wrapper}({args})")

    @emit.register
    def _(self, op: pallas.ReshapeOp) -> None:
        assert isinstance(op.result.type, TensorType)
        shape = tuple_text(op.result.type.get_shape())
        source = self.namer[op.source]
        self.lines.append(
            f"    {self.namer.define(op.result)} = jnp.reshape({source}, {shape})"
        )

    @emit.register
    def _(self, op: pallas.ConvertOp) -> None:
        elt = op.result.type.element_type  # type: ignore[attr-defined]
        self.lines.append(
            f"    {self.namer.define(op.result)} = "
            f"{self.namer[op.source]}.astype({dtype_name(elt, op)})"
        )

    @emit.register
    def _(self, op: pallas.XlaCallOp) -> None:
        function = self.xla_functions[op.callee.string_value()]
        kname = self.namer.fresh(f"{function.sym_name.data}_xla")
        self.kernels.append(emit_xla.xla_function(function, kname))
        results = [self.namer.define(r, "out") for r in op.outs]
        args = ", ".join(self.namer[a] for a in op.args)
        target = results[0] if len(results) == 1 else ", ".join(results)
        self.lines.append(f"    {target or '_'} = {kname}({args})")

    @emit.register
    def _(self, op: func.ReturnOp) -> None:
        vals = [self.namer[v] for v in op.arguments]
        self.lines.append(f"    return {', '.join(vals)}" if vals else "    return None")


def emit_python(module: ModuleOp) -> str:
    """The Python module for a verified `pallas` module."""
    forward = None
    xla_functions: dict[str, xla.FuncOp] = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "forward":
            forward = op
        elif isinstance(op, xla.FuncOp):
            xla_functions[op.sym_name.data] = op
        else:
            raise EmitError(
                op,
                f"emit-python: expected only func.func @forward at top level, got {op.name}",
            )
    if forward is None or not forward.body.blocks:
        raise EmitError(module, "emit-python: the module has no func.func @forward")

    host = HostEmitter(xla_functions)
    params = [host.namer.define(a, f"arg{a.index}") for a in forward.body.block.args]
    for op in forward.body.block.ops:
        host.emit(op)
    kernels, body = host.kernels, host.lines
    parts = [HEADER]
    called = [
        op.function
        for function in xla_functions.values()
        for op in function.body.block.ops
        if isinstance(op, xla.LibraryCallOp)
    ]
    if called:  # the library functions' own source, so the module stays self-contained
        # (they import jax: only a module that calls one pays for it)
        from pallas_ir.library import functions as library

        parts.append("from jax import lax\n")
        parts += ["\n\n" + text for text in library.source(called)]
    for k in kernels:
        parts.append("\n\n" + "\n".join(k) + "\n")
    signature = ", ".join([*params, "interpret=False"])
    if holds_float64(module):
        # JAX makes float64 arrays only with x64 on (else float32 ones, silently).
        lines = "\n".join(body).splitlines()
        body = ["    with jax.enable_x64(True):", *("    " + line for line in lines)]
    parts.append(f"\n\ndef forward({signature}):\n" + "\n".join(body) + "\n")
    donated = donated_arguments(forward)
    if donated:
        parts.append(
            f"\n\nDONATE_ARGNUMS = {tuple(donated)!r}\n"
            '"""The arguments whose arrays forward\'s kernels overwrite: jit it with\n'
            'donate_argnums=DONATE_ARGNUMS, or XLA copies each one first."""\n'
        )
    return "".join(parts)


def donated_arguments(forward: func.FuncOp) -> list[int]:
    """The positions of @forward's arguments marked `pallas.donated`."""
    if forward.arg_attrs is None:
        return []
    return [
        k
        for k, attrs in enumerate(forward.arg_attrs.data)
        if DONATED_ARGUMENT in attrs.data
    ]


@dataclass(frozen=True)
class PythonTarget(Target):
    """`-t python`: the Pallas module as Python source."""

    name = "python"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_python(module))
