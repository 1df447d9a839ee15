"""ta-to-xla: a `ta.kernel {target = #ta<target xla>}` as an `xla.func` (the jnp-level form).

tl-to-pallas calls this where it makes the `pallas.xla_call` of a launch, so the pallas
module holds `xla.func`s next to @forward and no `ta` op. The translation is what the
ta reference does in numpy, op by op:

- each kernel argument in order: a readable one is a function argument taken in as the
  kernel's buffer (`xla.buffer`), an `out` one starts as `xla.zeros`; a `ta.reshape`
  view is its root buffer (accesses reach flat positions through the view's shape);
- each `ta.loop`: one `xla.iota` per loop variable over the loop's domain (parallel
  dims, then reduction dims); a load is `xla.window` where its index is a projected
  permutation of the loop's dims plus offsets inside its view (a store
  `xla.update_window`, when each point stores to its own element), else
  `xla.flat_index` (its map, its buffer's shape)
  then `xla.take`, a store `xla.flat_index` then `xla.scatter` (accumulating as the
  store does), whose result is the buffer from then on; `ta.reduce` is `xla.reduce`
  over the reduction axes; `arith`/`math`/`special` ops compute on tensors of the
  domain (constants are `xla.constant`, arith's scalar-only casts, comparisons and
  selects are `xla.convert`, `xla.compare`, `xla.select`; a special function is its
  float32 expansion, `special_functions.XLA_EXPANSIONS`, as in a Pallas kernel);
- `xla.return` gives the written buffers (`out`, `inout`) in argument order.

The function's argument and result types are the shapes @forward holds the arrays in
(the call's types); the buffers inside have the kernel's shapes, the same elements.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import xla
from pallas_ir.dialects.common import (
    ARITH_CASTS,
    ELEMENTWISE_DIALECTS,
    READABLE_ROLES,
    WRITABLE_ROLES,
    ComparePredicate,
    ReductionKind,
    arith_predicate,
)
from pallas_ir.dialects.xla import window_offsets
from pallas_ir.lowering.special_functions import XLA_EXPANSIONS, TileMath


def _part(kernel: ta.KernelOp) -> xla.XlaPart:
    access = kernel.xla_access
    return xla.XlaPart.KERNEL if access is None else xla.XlaPart(access.value)


def _buffer_type(buffer: SSAValue) -> TensorType:
    t = buffer.type
    assert isinstance(t, MemRefType)
    return TensorType(t.element_type, t.get_shape())


class _Converter:
    def __init__(self, kernel: ta.KernelOp, function: xla.FuncOp):
        self.kernel = kernel
        self.block: Block = function.body.block
        self.buffers: dict[SSAValue, SSAValue] = {}
        """Each kernel argument's current value (a store gives a new one)."""

    def add(self, op: Operation, like: Operation | None = None) -> Operation:
        if like is not None:
            op.location = like.location
        self.block.add_op(op)
        return op

    def arguments(self) -> None:
        params = iter(self.block.args)
        for a in self.kernel.body.block.args:
            name = a.name_hint or f"buf{a.index}"
            if self.kernel.role_of(a) in READABLE_ROLES:
                param = next(params)
                param.name_hint = name
                op: Operation = xla.BufferOp(param, _buffer_type(a))
            else:
                op = xla.ZerosOp(_buffer_type(a))
            op.results[0].name_hint = name
            self.buffers[a] = self.add(op).results[0]

    def loop(self, loop: ta.LoopOp) -> None:
        extents = list(loop.extents)
        values: dict[SSAValue, SSAValue] = {}

        def domain(element: Attribute) -> TensorType:
            return TensorType(element, extents)

        for axis, iv in enumerate(loop.body.block.args):
            iota = self.add(xla.IotaOp(axis, domain(IndexType())), loop)
            iota.results[0].name_hint = iv.name_hint or f"x{axis}"
            values[iv] = iota.results[0]
        for op in loop.body.block.ops:
            if isinstance(op, ta.LoadOp | ta.StoreOp):
                self.access(op, values, domain(IndexType()))
                continue
            operands = [values[o] for o in op.operands]  # all of the loop (ta verifies)
            if isinstance(op, ta.ReduceOp):
                kind = ReductionKind(op.kind.data)
                new: Operation = xla.ReduceOp(
                    kind, values[op.value], list(op.reduced_dims(loop))
                )
            elif isinstance(op, arith.ConstantOp):
                value = op.value
                if not isinstance(value, IntegerAttr | FloatAttr):
                    raise PassError(op, f"ta-to-xla: no XLA form of the constant {value}")
                new = xla.ConstantOp(value, extents)
            elif isinstance(op, ARITH_CASTS):  # each is `xla.convert` (jnp `astype`)
                new = xla.ConvertOp(operands[0], domain(op.results[0].type))
            elif isinstance(op, arith.CmpfOp | arith.CmpiOp):
                new = xla.CompareOp(_predicate(op), *operands)
            elif isinstance(op, arith.SelectOp):
                new = xla.SelectOp(*operands)
            elif type(op) in XLA_EXPANSIONS:
                t = domain(op.results[0].type)
                tiles = TileMath(t, op.results[0].name_hint or op.name, xla_function=True)
                result = XLA_EXPANSIONS[type(op)](tiles, *operands)
                for new in tiles.ops:
                    self.add(new, op)
                result.name_hint = op.results[0].name_hint
                values[op.results[0]] = result
                continue
            elif op.dialect_name() in ELEMENTWISE_DIALECTS and not op.regions:
                new = type(op).create(
                    operands=operands,
                    result_types=[domain(r.type) for r in op.results],
                    properties=dict(op.properties),
                    attributes=dict(op.attributes),
                )
            else:
                raise PassError(op, f"ta-to-xla: no XLA form of '{op.name}'")
            self.add(new, op)
            for old, result in zip(op.results, new.results, strict=True):
                result.name_hint = old.name_hint
                values[old] = result

    def library_call(self, op: ta.LibraryCallOp) -> None:
        """The call on the buffers' tensors; its results are the outputs from then on."""
        outputs = list(op.outputs)
        call = xla.LibraryCallOp(
            op.function,
            [self.buffers[ta.root_buffer(v)] for v in op.inputs],
            [_buffer_type(v) for v in outputs],
            op.call_shapes,
            op.arguments,
        )
        self.add(call, op)
        for out, result in zip(outputs, call.outputs, strict=True):
            root = ta.root_buffer(out)
            result.name_hint = self.buffers[root].name_hint
            self.buffers[root] = result

    def window(
        self,
        op: ta.LoadOp | ta.StoreOp,
        values: dict[SSAValue, SSAValue],
        domain: TensorType,
    ) -> bool:
        """An access whose index is a projected permutation of the loop's dims plus
        offsets, inside its view, as `xla.window` or `xla.update_window` (a slice, not
        a gather or scatter); False, with nothing added, for any other access, or a
        store of a value that varies along a loop dim it does not index (or that
        accumulates across one)."""
        loop = op.parent_op()
        view = op.buffer.type
        assert isinstance(loop, ta.LoopOp) and isinstance(view, MemRefType)
        ivs = loop.body.block.args
        if op.symbols or any(d not in ivs for d in op.dims):
            return False
        axes = [AffineDimExpr(ivs.index(d)) for d in op.dims]  # type: ignore[arg-type]
        m = op.map.data
        domain_map = AffineMap(
            len(ivs), 0, tuple(e.replace_dims_and_symbols(axes, []) for e in m.results)
        )
        offsets = window_offsets(domain_map)
        extents = domain.get_shape()
        if offsets is None or any(
            c + (1 if axis is None else extents[axis]) > n
            for (axis, c), n in zip(offsets, view.get_shape(), strict=True)
        ):
            return False
        root = ta.root_buffer(op.buffer)
        if isinstance(op, ta.LoadOp):
            window = self.add(
                xla.WindowOp(self.buffers[root], domain_map, view.get_shape(), extents),
                op,
            )
            window.results[0].name_hint = op.result.name_hint
            values[op.result] = window.results[0]
            return True
        walked = {axis for axis, _ in offsets if axis is not None}
        varies = set(ta.value_dims(op.value, loop))
        unwalked = [k for k, n in enumerate(extents) if k not in walked and n > 1]
        if unwalked and (op.combine is not None or varies & set(unwalked)):
            return False
        update = xla.UpdateWindowOp(
            values[op.value], self.buffers[root], domain_map, view.get_shape(), op.combine
        )
        update.result.name_hint = self.buffers[root].name_hint
        self.buffers[root] = self.add(update, op).results[0]
        return True

    def access(
        self,
        op: ta.LoadOp | ta.StoreOp,
        values: dict[SSAValue, SSAValue],
        index_type: TensorType,
    ) -> None:
        view = op.buffer.type
        assert isinstance(view, MemRefType)
        if self.window(op, values, index_type):
            return
        at = xla.FlatIndexOp(
            op.map.data,
            view.get_shape(),
            [values[d] for d in op.dims],
            [values[s] for s in op.symbols],
            index_type,
        )
        self.add(at, op)
        root = ta.root_buffer(op.buffer)
        if isinstance(op, ta.LoadOp):
            take = self.add(xla.TakeOp(self.buffers[root], at.result), op)
            take.results[0].name_hint = op.result.name_hint
            values[op.result] = take.results[0]
            return
        scatter = xla.ScatterOp(
            values[op.value], self.buffers[root], at.result, op.combine
        )
        scatter.result.name_hint = self.buffers[root].name_hint
        self.buffers[root] = self.add(scatter, op).results[0]


def xla_function(
    kernel: ta.KernelOp,
    name: str,
    arg_types: Sequence[TensorType],
    result_types: Sequence[TensorType],
) -> xla.FuncOp:
    """The `xla.func` of an XLA kernel: its readable buffers in, as `arg_types`, its
    written buffers out, as `result_types` (same elements; @forward's shapes)."""
    function = xla.FuncOp(name, arg_types, result_types, _part(kernel))
    function.location = kernel.location
    conv = _Converter(kernel, function)
    conv.arguments()
    for op in kernel.body.block.ops:
        if isinstance(op, ta.LoopOp):
            conv.loop(op)
        elif isinstance(op, ta.LibraryCallOp):
            conv.library_call(op)
        elif not isinstance(op, ta.ReshapeOp):  # a view: accesses reach its root
            raise PassError(op, f"ta-to-xla: no XLA form of '{op.name}'")
    written = [
        conv.buffers[a]
        for a in kernel.body.block.args
        if kernel.role_of(a) in WRITABLE_ROLES
    ]
    conv.add(xla.ReturnOp(written), kernel)
    return function


class XlaFunctions:
    """The `xla.func`s of a module's XLA kernels, one per kernel and call signature
    (a kernel called with arrays of other shapes gets a function of its own)."""

    def __init__(self, kernel_names: Sequence[str] = ()):
        self.functions: list[xla.FuncOp] = []
        self._by_signature: dict[tuple[str, tuple[Attribute, ...]], str] = {}
        self._kernel_names = set(kernel_names)
        self._used: set[str] = set()

    def get(
        self,
        kernel: ta.KernelOp,
        arg_types: Sequence[TensorType],
        result_types: Sequence[TensorType],
    ) -> str:
        """The symbol of the function for calls of `kernel` with these types."""
        base = kernel.sym_name.data
        key = (base, (*arg_types, *result_types))
        if key not in self._by_signature:
            name, n = base, 1
            while name in self._used or (name != base and name in self._kernel_names):
                name, n = f"{base}_{n}", n + 1
            self._used.add(name)
            self.functions.append(xla_function(kernel, name, arg_types, result_types))
            self._by_signature[key] = name
        return self._by_signature[key]


def _predicate(op: arith.CmpfOp | arith.CmpiOp) -> ComparePredicate:
    predicate = arith_predicate(op)
    if predicate is None:
        raise PassError(op, "ta-to-xla: no XLA form of a constant comparison")
    return predicate
