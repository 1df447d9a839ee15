"""Print an `xla.func` as a jnp function: one statement per op, mechanically.

emit-python calls this for each `pallas.xla_call`. A domain value is held as an array
that broadcasts to its tensor (an iota as an `arange` along its axis, a constant as a
scalar, a reduction with its axes kept at size 1), so ops that need every point
(`xla.scatter`, `xla.reduce`) broadcast their operands to the domain; a buffer is held
flat, so `xla.buffer` ravels its argument and `xla.zeros` is flat. An `xla.flat_index`
is an expression, printed inside the `xla.take` or `xla.scatter` that uses it. An
`xla.window` is a subscript of the buffer's view (slices, constant indices), then a
transpose into axis order; an `xla.update_window` the reverse, as `.at[...]`.
"""

from __future__ import annotations

from functools import singledispatchmethod

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from pallas_ir.dialects import xla
from pallas_ir.dialects.common import ReductionKind
from pallas_ir.lowering import jnp_spelling as py

_SCATTER_METHODS = {
    None: "set",
    ReductionKind.SUM: "add",
    ReductionKind.PROD: "multiply",
    ReductionKind.MAX: "max",
    ReductionKind.MIN: "min",
}
"""The jnp `.at[...]` update of an `xla.scatter`, by how it accumulates."""


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


class XlaFunctionPrinter:
    """The statements of one `xla.func`."""

    def __init__(self) -> None:
        self.namer = py.Namer()
        self.lines: list[str] = []
        self.expressions: dict[SSAValue, str] = {}
        """`xla.flat_index` results, as the text their users print."""

    def name(self, value: SSAValue) -> str:
        if value in self.expressions:
            return self.expressions[value]
        return self.namer[value]

    def assign(self, result: SSAValue, text: str, fallback: str = "v") -> None:
        self.lines.append(f"{self.namer.define(result, fallback)} = {text}")

    def function(self, function: xla.FuncOp, name: str) -> list[str]:
        for op in function.body.block.ops:
            self.print_op(op)
        params = []
        for a in function.body.block.args:
            if a not in self.namer.names:  # an argument the body does not read
                self.namer.define(a, f"buf{a.index}")
            params.append(self.namer[a])
        return [f"def {name}({', '.join(params)}):", *(f"    {x}" for x in self.lines)]

    @singledispatchmethod
    def print_op(self, op: Operation) -> None:
        args = [self.name(o) for o in op.operands]
        if (fmt := py.BINARY.get(type(op)) or py.UNARY.get(type(op))) is None:
            raise py.EmitError(op, f"emit-python: no Python for '{op.name}' in a kernel")
        self.assign(op.results[0], fmt.format(*args))

    @print_op.register
    def _(self, op: arith.BitcastOp) -> None:
        self.assign(op.result, py.bitcast_text(op, self.name(op.input)))

    @print_op.register
    def _(self, op: xla.BufferOp) -> None:
        name = self.namer.define(op.source, f"buf{op.source.index}")  # type: ignore[attr-defined]
        self.namer.names[op.result] = name  # the argument, held flat from here on
        self.lines.append(f"{name} = jnp.ravel(jnp.asarray({name}))")  # numpy in, too

    @print_op.register
    def _(self, op: xla.ZerosOp) -> None:
        t = op.result.type
        assert isinstance(t, TensorType)
        dtype = py.dtype_name(t.element_type, op)
        self.assign(op.result, f"jnp.zeros(({t.element_count()},), {dtype})")

    @print_op.register
    def _(self, op: xla.ConstantOp) -> None:
        t = op.value.type
        literal = py.literal_text(op.value.value.data, t)
        self.assign(op.result, f"{py.dtype_name(t, op)}({literal})")

    @print_op.register
    def _(self, op: xla.IotaOp) -> None:
        shape = _shape(op.result)
        axis = op.axis.value.data
        along = [1] * len(shape)
        along[axis] = shape[axis]
        elt = op.result.type.element_type  # type: ignore[attr-defined]
        self.assign(
            op.result,
            f"jnp.arange({shape[axis]}, dtype={py.dtype_name(elt, op)})"
            f".reshape({py.tuple_text(along)})",
            f"x{axis}",
        )

    @print_op.register
    def _(self, op: xla.FlatIndexOp) -> None:
        dims = [self.name(d) for d in op.dims]
        symbols = [f"{self.name(s)}.astype(jnp.int32)" for s in op.symbols]
        terms = []
        for e, stride in zip(op.map.data.results, op.strides):
            text = py.affine_to_python(e, dims, symbols)
            terms.append(text if stride == 1 else f"{text} * {stride}")
        text = " + ".join(terms) or "0"
        users = {u.operation for u in op.result.uses}
        if all(
            isinstance(u, xla.TakeOp | xla.ScatterOp) and u.index == op.result
            for u in users
        ):
            self.expressions[op.result] = text  # a subscript or a call argument
        else:
            self.assign(op.result, text)

    @print_op.register
    def _(self, op: xla.TakeOp) -> None:
        self.assign(op.result, f"{self.name(op.buffer)}[{self.name(op.index)}]")

    def stored(
        self, op: xla.ScatterOp | xla.UpdateWindowOp, buffer: str, text: str
    ) -> None:
        """The buffer after a store, `text`: the buffer's name again, or a new name
        when the buffer before the store is read later."""
        later = [
            u.operation
            for u in op.buffer.uses
            if u.operation is not op and op.is_before_in_block(u.operation)
        ]
        if later:
            self.assign(op.result, text)
        else:
            self.namer.names[op.result] = buffer
            self.lines.append(f"{buffer} = {text}")

    @print_op.register
    def _(self, op: xla.ScatterOp) -> None:
        buffer = self.name(op.buffer)
        full = py.tuple_text(_shape(op.index))
        method = _SCATTER_METHODS[op.combine]
        text = (
            f"{buffer}.at[jnp.broadcast_to({self.name(op.index)}, {full}).reshape(-1)]"
            f".{method}(jnp.broadcast_to({self.name(op.value)}, {full}).reshape(-1))"
        )
        self.stored(op, buffer, text)

    @staticmethod
    def window_subscript(op: xla.WindowOp | xla.UpdateWindowOp, extents) -> str:
        """The view's subscript: a slice along each walked dim, an index elsewhere."""
        parts = [
            str(c) if axis is None else f"{c}:{c + extents[axis]}"
            for axis, c in op.offsets()
        ]
        return ", ".join(parts) if parts else "()"

    @print_op.register
    def _(self, op: xla.WindowOp) -> None:
        extents = _shape(op.result)
        view = py.tuple_text(op.shape.get_values())
        text = f"{self.name(op.buffer)}.reshape({view})[{self.window_subscript(op, extents)}]"
        walked = [axis for axis, _ in op.offsets() if axis is not None]
        order = sorted(range(len(walked)), key=lambda k: walked[k])  # to axis order
        if order != list(range(len(walked))):
            text = f"jnp.transpose({text}, {py.tuple_text(order)})"
        along = [n if k in walked else 1 for k, n in enumerate(extents)]
        self.assign(op.result, f"{text}.reshape({py.tuple_text(along)})")

    @print_op.register
    def _(self, op: xla.UpdateWindowOp) -> None:
        buffer = self.name(op.buffer)
        extents = _shape(op.value)
        walked = [axis for axis, _ in op.offsets() if axis is not None]
        value = f"jnp.broadcast_to({self.name(op.value)}, {py.tuple_text(extents)})"
        if len(walked) < len(extents):  # the same along the others: one point of them
            picked = ", ".join(":" if k in walked else "0" for k in range(len(extents)))
            value = f"{value}[{picked}]"
        in_axis_order = sorted(walked)
        order = [in_axis_order.index(axis) for axis in walked]  # to the view's order
        if order != list(range(len(walked))):
            value = f"jnp.transpose({value}, {py.tuple_text(order)})"
        view = py.tuple_text(op.shape.get_values())
        method = _SCATTER_METHODS[op.combine]
        text = (
            f"{buffer}.reshape({view}).at[{self.window_subscript(op, extents)}]"
            f".{method}({value}).reshape(-1)"
        )
        self.stored(op, buffer, text)

    @print_op.register
    def _(self, op: xla.ReduceOp) -> None:
        kind = ReductionKind(op.kind.data)
        value = f"jnp.broadcast_to({self.name(op.source)}, {py.tuple_text(_shape(op.source))})"
        text = py.reduction_text(kind, value, op.axes.get_values(), op)
        if not kind.returns_index:
            elt = op.result.type.element_type  # type: ignore[attr-defined]
            text += f".astype({py.dtype_name(elt, op)})"
        self.assign(op.result, text)

    @print_op.register
    def _(self, op: xla.ConvertOp) -> None:
        elt = op.result.type.element_type  # type: ignore[attr-defined]
        self.assign(op.result, f"{self.name(op.source)}.astype({py.dtype_name(elt, op)})")

    @print_op.register
    def _(self, op: xla.CompareOp) -> None:
        # As pallas.compare prints: `u*` float predicates are true on NaN, unsigned
        # integer ones compare as `uintN` (for `slt`, `oeq`, ... just `a < b`, `a == b`).
        text = py.compare_text(op, self.name(op.lhs), self.name(op.rhs))  # type: ignore[arg-type]
        self.assign(op.result, text)

    @print_op.register
    def _(self, op: xla.SelectOp) -> None:
        args = ", ".join(self.name(o) for o in op.operands)
        self.assign(op.result, f"jnp.where({args})")

    @print_op.register
    def _(self, op: xla.LibraryCallOp) -> None:
        from pallas_ir.library import functions as library  # jax: only when called

        shapes = op.call_shapes
        args = [
            f"jnp.reshape({self.name(v)}, {py.tuple_text(shape)})"
            for v, shape in zip(op.inputs, shapes)
        ]
        args += [f"{key}={value!r}" for key, value in sorted(op.arguments.items())]
        results = [self.namer.define(r, "r") for r in op.outputs]
        self.lines.append(
            f"{', '.join(results)}, = {library.name(op.function)}({', '.join(args)})"
        )
        for r in op.outputs:
            elt = r.type.element_type  # type: ignore[attr-defined]
            name = self.namer[r]
            self.lines.append(
                f"{name} = jnp.ravel({name}).astype({py.dtype_name(elt, op)})"
            )

    @print_op.register
    def _(self, op: xla.ReturnOp) -> None:
        function = op.parent_op()
        assert isinstance(function, xla.FuncOp)
        returns = [
            f"jnp.reshape({self.name(v)}, {py.tuple_text(t.get_shape())})"  # type: ignore[attr-defined]
            for v, t in zip(op.values, function.function_type.outputs.data, strict=True)
        ]
        self.lines.append(f"return {', '.join(returns)}" if returns else "return None")


def xla_function(function: xla.FuncOp, name: str) -> list[str]:
    """The lines of `def name(...)` for an `xla.func`: its arguments in, its results
    (as `jnp` arrays of the function's result shapes) out."""
    return XlaFunctionPrinter().function(function, name)
