"""The `xla` dialect: the jnp-level body of a kernel that runs as XLA, not as Pallas.

An `xla.func` is what tl-to-pallas makes of a `ta.kernel {target = #ta<target xla>}` (see
`lowering/ta_to_xla.py`); `pallas.xla_call` calls it from @forward. Its body computes on
whole `tensor` values, the way numpy (the ta reference) and jnp run a loop: every value
of a loop's body is a tensor over the loop's domain (parallel dims, then reduction
dims), a loop variable is an `xla.iota`, element-wise compute is `arith`/`math` on
those tensors (`xla.convert`, `xla.compare`, `xla.select` where `arith` takes scalars
only), and a `ta.reduce` is an `xla.reduce` over the reduction axes.

Buffers are tensors too, of the kernel's buffer shapes: `xla.buffer` takes an argument
in, `xla.zeros` starts an `out` buffer, `xla.take` gathers from a buffer and
`xla.scatter` gives the buffer with the stores done (or accumulated), both at the
row-major (flat) positions `xla.flat_index` computes; an access whose index is a
projected permutation plus offsets is `xla.window` or `xla.update_window` instead (a
slice and a transpose: XLA's gather and scatter over computed positions are 10 to 20
times slower on a TPU). `xla.return` gives the written buffers back.

```mlir
xla.func @flip(%x: tensor<64x64xf32>) -> tensor<64x64xf32>
    attributes {part = #xla<part gather>} {
  %xb = xla.buffer %x : tensor<64x64xf32> to tensor<64x64xf32>
  %out = xla.zeros : tensor<64x64xf32>
  %i = xla.iota 0 : tensor<64x64xindex>
  %j = xla.iota 1 : tensor<64x64xindex>
  %at = xla.flat_index affine_map<(d0, d1) -> (63 - d0, d1)> (%i, %j) [] in [64, 64]
      : tensor<64x64xindex>
  %v = xla.take %xb[%at] : tensor<64x64xf32>, tensor<64x64xindex> -> tensor<64x64xf32>
  %to = xla.flat_index affine_map<(d0, d1) -> (d0, d1)> (%i, %j) [] in [64, 64]
      : tensor<64x64xindex>
  %out_1 = xla.scatter %v, %out[%to] : tensor<64x64xf32>, tensor<64x64xf32>,
      tensor<64x64xindex>
  xla.return %out_1 : tensor<64x64xf32>
}
```

Printed Python (`lowering/emit_xla.py`) holds a domain value as an array that
broadcasts to its tensor (an iota varies along its axis only, a splat constant is a
scalar, a reduction keeps its reduced axes at size 1) and a buffer flat; both are the
same values as the tensors here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    i64,
)
from xdsl.dialects.utils import (
    EnumAttribute,
    parse_func_op_like,
    print_func_op_like,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pallas_ir.affine_analysis import linearize, row_major_strides
from pallas_ir.dialects.common import (
    CompareOpBase,
    ConvertOpBase,
    ReductionKind,
    SelectOpBase,
    parse_reduction_kind,
    reduction_result_type,
)
from pallas_ir.dialects.enums import XlaComparePredicateAttr, XlaReductionKindAttr
from pallas_ir.dialects.library_call import (
    LibraryCallOpBase,
    Param,
    params_attr,
    shapes_attr,
)
from pallas_ir.library import LibraryFn


class XlaPart(StrEnum):
    """What an XLA function is of the program the tiler saw: a whole kernel, or the one
    access (or a gather's row indices) the tiler moved out of a Pallas kernel."""

    KERNEL = "kernel"
    GATHER = "gather"
    SCATTER = "scatter"
    INDEX = "index"


@irdl_attr_definition
class XlaPartAttr(EnumAttribute[XlaPart], SpacedOpaqueSyntaxAttribute):
    """`#xla<part gather>`."""

    name = "xla.part"


def _tensor(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def _same_elements(what: str, src: TensorType, dst: TensorType) -> None:
    if src.element_type != dst.element_type or src.element_count() != dst.element_count():
        raise VerifyException(
            f"{what} must hold the {dst.element_count()} {dst.element_type} elements "
            f"of {dst}, got {src}"
        )


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A kernel that runs as XLA: host arrays in, the buffers it writes out.

    ```mlir
    xla.func @gather_0(%idx: tensor<64xi64>, %emb: tensor<1000x256xf32>)
        -> tensor<64x256xf32> attributes {part = #xla<part gather>} { ... }
    ```

    Arguments and results have the shapes @forward holds the arrays in; the body reads
    and writes them as the kernel's buffers (`xla.buffer`, `xla.return`), which hold
    the same elements. `part` says what the tiler handed to XLA.
    """

    name = "xla.func"

    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    part = prop_def(XlaPartAttr)
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    def __init__(
        self,
        name: str,
        inputs: Sequence[Attribute],
        outputs: Sequence[Attribute],
        part: XlaPart = XlaPart.KERNEL,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=inputs))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(inputs, outputs),
                "part": XlaPartAttr(part),
            },
            regions=[body],
        )

    @property
    def access(self) -> XlaPart:
        return self.part.data

    def verify_(self) -> None:
        if tuple(self.body.block.arg_types) != tuple(self.function_type.inputs.data):
            raise VerifyException(
                "xla.func: the block's arguments must have the function's input types"
            )
        for t in [*self.function_type.inputs.data, *self.function_type.outputs.data]:
            if not isinstance(t, TensorType):
                raise VerifyException(f"xla.func takes and gives tensors, not {t}")

    def verify_call(self, args: Sequence[Attribute], outs: Sequence[Attribute]) -> None:
        """A call passes and gets exactly the function's types."""
        want = (tuple(self.function_type.inputs), tuple(self.function_type.outputs))
        if (tuple(args), tuple(outs)) != want:
            raise VerifyException(
                f"@{self.sym_name.data} has type {self.function_type}, called with "
                f"{FunctionType.from_lists(args, outs)}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, inputs, outputs, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        attrs = dict(extra.data) if extra is not None else {}
        part = attrs.pop("part", XlaPartAttr(XlaPart.KERNEL))
        if not isinstance(part, XlaPartAttr):
            parser.raise_error(f"xla.func: part must be an #xla<part ...>, got {part}")
        op = cls(name, inputs, outputs, part.data, region)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            {**self.attributes, "part": self.part},
            reserved_attr_names=("sym_name", "function_type"),
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """The written buffers, each as the function's result of the same elements.

    ```mlir
    xla.return %out, %rows : tensor<64x256xf32>, tensor<64xi32>
    ```
    """

    name = "xla.return"

    values = var_operand_def(TensorType)

    traits = traits_def(IsTerminator(), HasParent(FuncOp))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        func = self.parent_op()
        assert isinstance(func, FuncOp)
        outputs = func.function_type.outputs.data
        if len(outputs) != len(self.values):
            raise VerifyException(
                f"xla.return gives {len(self.values)} values, @{func.sym_name.data} "
                f"returns {len(outputs)}"
            )
        for k, (v, t) in enumerate(zip(self.values, outputs)):
            assert isinstance(t, TensorType)
            _same_elements(f"xla.return value #{k}", _tensor(v), t)


@irdl_op_definition
class BufferOp(IRDLOperation):
    """A function argument as the kernel's buffer: the same elements, row-major.

    ```mlir
    %emb_b = xla.buffer %emb : tensor<1000x256xf32> to tensor<256000xf32>
    ```
    """

    name = "xla.buffer"

    source = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: TensorType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        _same_elements("xla.buffer", _tensor(self.source), _tensor(self.result))


@irdl_op_definition
class ZerosOp(IRDLOperation):
    """A buffer of zeros: where an `out` buffer starts.

    ```mlir
    %out = xla.zeros : tensor<64x256xf32>
    ```
    """

    name = "xla.zeros"

    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: TensorType):
        super().__init__(result_types=[result_type])


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor every element of which is `value` (a constant of a loop's body, over
    the loop's domain).

    ```mlir
    %c = xla.constant 3.000000e+00 : f32 : tensor<64x256xf32>
    ```
    """

    name = "xla.constant"

    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: IntegerAttr | FloatAttr, shape: Sequence[int]):
        super().__init__(
            properties={"value": value}, result_types=[TensorType(value.type, shape)]
        )

    def verify_(self) -> None:
        if _tensor(self.result).element_type != self.value.type:
            raise VerifyException(
                f"xla.constant: a {self.value.type} value gives "
                f"{self.value.type} elements, not {_tensor(self.result).element_type}"
            )


@irdl_op_definition
class IotaOp(IRDLOperation):
    """A loop variable over its loop's domain: the index along `axis`, the same
    along every other axis.

    ```mlir
    %j = xla.iota 1 : tensor<64x256xindex>
    ```
    """

    name = "xla.iota"

    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$axis attr-dict `:` type($result)"

    def __init__(self, axis: int, result_type: TensorType):
        super().__init__(
            properties={"axis": IntegerAttr(axis, i64)}, result_types=[result_type]
        )

    def verify_(self) -> None:
        t = _tensor(self.result)
        if not isinstance(t.element_type, IntegerType | IndexType):
            raise VerifyException(f"xla.iota gives integers, not {t.element_type}")
        if not 0 <= self.axis.value.data < t.get_num_dims():
            raise VerifyException(
                f"xla.iota axis {self.axis.value.data} is not a dim of {t}"
            )


@irdl_op_definition
class FlatIndexOp(IRDLOperation):
    """Row-major positions in a buffer viewed as `shape`: the map gives one index per
    dim of the view, from domain tensors (dims, usually iotas) and data (symbols),
    each element on its own; the result is `sum(index[k] * stride[k])` with the view's
    row-major strides.

    ```mlir
    %at = xla.flat_index affine_map<(d0, d1)[s0] -> (s0, d1)> (%i, %j) [%row] in
        [1000, 256] : tensor<64x256xindex>
    ```

    Dims, symbols and the result are `index` tensors over one domain.
    """

    name = "xla.flat_index"

    T: ClassVar = VarConstraint("T", base(TensorType))
    map = prop_def(AffineMapAttr)
    shape = prop_def(DenseArrayBase[I64])
    dims = var_operand_def(T)
    symbols = var_operand_def(T)
    result = result_def(T)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())
    assembly_format = (
        "$map `(` $dims `)` `[` $symbols `]` `in` $shape attr-dict `:` type($result)"
    )

    def __init__(
        self,
        map: AffineMap,
        shape: Sequence[int],
        dims: Sequence[SSAValue],
        symbols: Sequence[SSAValue],
        result_type: TensorType,
    ):
        super().__init__(
            operands=[dims, symbols],
            result_types=[result_type],
            properties={
                "map": AffineMapAttr(map),
                "shape": DenseArrayBase.from_list(i64, shape),
            },
        )

    @property
    def strides(self) -> list[int]:
        return row_major_strides(self.shape.get_values())

    def verify_(self) -> None:
        m = self.map.data
        if m.num_dims != len(self.dims) or m.num_symbols != len(self.symbols):
            raise VerifyException(
                f"xla.flat_index: the map takes {m.num_dims} dims and {m.num_symbols} "
                f"symbols, got {len(self.dims)} and {len(self.symbols)}"
            )
        if len(m.results) != len(self.shape.get_values()):
            raise VerifyException(
                f"xla.flat_index: the map gives {len(m.results)} indices for a view "
                f"of rank {len(self.shape.get_values())}"
            )
        if _tensor(self.result).element_type != IndexType():
            raise VerifyException("xla.flat_index gives index tensors")


@irdl_op_definition
class TakeOp(IRDLOperation):
    """Gather: the buffer's elements at the flat positions, shaped like them.

    ```mlir
    %v = xla.take %emb_b[%at] : tensor<256000xf32>, tensor<64x256xindex>
        -> tensor<64x256xf32>
    ```
    """

    name = "xla.take"

    buffer = operand_def(TensorType)
    index = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$buffer `[` $index `]` attr-dict `:` type($buffer) `,` type($index) `->` "
        "type($result)"
    )

    def __init__(self, buffer: SSAValue, index: SSAValue):
        t = TensorType(_tensor(buffer).element_type, _tensor(index).get_shape())
        super().__init__(operands=[buffer, index], result_types=[t])

    def verify_(self) -> None:
        b, i, r = _tensor(self.buffer), _tensor(self.index), _tensor(self.result)
        if i.element_type != IndexType():
            raise VerifyException("xla.take: positions are index tensors")
        if r.element_type != b.element_type or r.get_shape() != i.get_shape():
            raise VerifyException(
                f"xla.take gives {b.element_type} elements shaped like the positions "
                f"({i}), not {r}"
            )


@irdl_op_definition
class ScatterOp(IRDLOperation):
    """The buffer with `value` stored at the flat positions, in row-major order over
    the domain (where two points store to one element, the later point wins, as in a
    sequential loop); with `accumulate <sum|prod|max|min>`, combined with the elements
    there instead, every point counting (jnp `.at[...].add`).

    ```mlir
    %out_1 = xla.scatter %v, %out[%at] : tensor<64x256xf32>, tensor<16384xf32>,
        tensor<64x256xindex>
    %acc_1 = xla.scatter %g, %acc[%at] accumulate <sum> : tensor<16x64xf32>,
        tensor<1000x64xf32>, tensor<16x64xindex>
    ```
    """

    name = "xla.scatter"

    B: ClassVar = VarConstraint("B", base(TensorType))
    value = operand_def(TensorType)
    buffer = operand_def(B)
    index = operand_def(TensorType)
    accumulate = opt_prop_def(XlaReductionKindAttr)
    result = result_def(B)

    traits = traits_def(Pure())
    assembly_format = (
        "$value `,` $buffer `[` $index `]` (`accumulate` ` ` `<` $accumulate^ `>`)? "
        "attr-dict `:` type($value) `,` type($buffer) `,` type($index)"
    )

    def __init__(
        self,
        value: SSAValue,
        buffer: SSAValue,
        index: SSAValue,
        accumulate: ReductionKind | None = None,
    ):
        super().__init__(
            operands=[value, buffer, index],
            result_types=[buffer.type],
            properties={"accumulate": _accumulate_attr(accumulate)},
        )

    @property
    def combine(self) -> ReductionKind | None:
        """How the stores combine with what is there, or None (they replace it)."""
        return None if self.accumulate is None else self.accumulate.data

    def verify_(self) -> None:
        v, b, i = _tensor(self.value), _tensor(self.buffer), _tensor(self.index)
        if i.element_type != IndexType():
            raise VerifyException("xla.scatter: positions are index tensors")
        if v.element_type != b.element_type or v.get_shape() != i.get_shape():
            raise VerifyException(
                f"xla.scatter stores {b.element_type} values shaped like the "
                f"positions ({i}), got {v}"
            )
        _verify_combine(self.name, self.combine)


def _accumulate_attr(accumulate: ReductionKind | None) -> XlaReductionKindAttr | None:
    """A store's `accumulate` property (None: it replaces what is there)."""
    return None if accumulate is None else XlaReductionKindAttr(ReductionKind(accumulate))


def _verify_combine(name: str, combine: ReductionKind | None) -> None:
    """A store combines with a kind that gives values, not positions."""
    if combine is not None and combine.returns_index:
        raise VerifyException(f"{name} cannot accumulate with <{combine.value}>")


def window_offsets(map: AffineMap) -> list[tuple[int | None, int]] | None:
    """Per view dim of a window map, (the domain axis that walks it, or None, and its
    constant offset), or None when the map is not a window's: each result `d + c` or
    `c` (c >= 0, linear: `d0 mod 64` is no window), each dim at most once (a projected
    permutation plus offsets)."""
    found: list[tuple[int | None, int]] = []
    for e in map.results:
        form = linearize(e)
        if form is None or form.symbols or form.constant < 0:
            return None
        dims = [d for d, c in form.dims.items() if c != 0]
        if not dims:
            found.append((None, form.constant))
        elif len(dims) == 1 and form.dims[dims[0]] == 1:
            found.append((dims[0], form.constant))
        else:
            return None
    walked = [d for d, _ in found if d is not None]
    return found if len(walked) == len(set(walked)) else None


class _WindowOpBase(IRDLOperation):
    map = prop_def(AffineMapAttr)
    shape = prop_def(DenseArrayBase[I64])

    def offsets(self) -> list[tuple[int | None, int]]:
        found = window_offsets(self.map.data)
        assert found is not None  # verified
        return found

    def verify_window(self, domain: TensorType) -> None:
        m = self.map.data
        view = self.shape.get_values()
        if m.num_symbols or m.num_dims != domain.get_num_dims():
            raise VerifyException(
                f"{self.name}: the map takes the {domain.get_num_dims()} domain axes as "
                f"dims and no symbols, not {m}"
            )
        if len(m.results) != len(view):
            raise VerifyException(
                f"{self.name}: the map gives {len(m.results)} indices for a view of "
                f"rank {len(view)}"
            )
        found = window_offsets(m)
        if found is None:
            raise VerifyException(
                f"{self.name}: each index is an axis plus a constant, or a constant, "
                f"each axis at most once: not {m}"
            )
        extents = domain.get_shape()
        for (axis, c), n in zip(found, view, strict=True):
            if c + (1 if axis is None else extents[axis]) > n:
                raise VerifyException(
                    f"{self.name}: the window leaves the view {list(view)} along a dim "
                    f"of {n} (from {c})"
                )


@irdl_op_definition
class WindowOp(_WindowOpBase):
    """The elements of a buffer (held flat) viewed as `shape` at a window: each view
    dim walked by one domain axis from a constant, or held at a constant (the map, its
    dims the domain's axes). The value of a load whose index is a projected permutation
    plus offsets: what `xla.flat_index` and `xla.take` would give, as a slice and a
    transpose, not a gather.

    ```mlir
    %v = xla.window %xb affine_map<(d0, d1) -> (d1 + 2, 0, d0)> in [66, 4, 32]
        : tensor<8448xf32> -> tensor<32x64xf32>
    ```
    """

    name = "xla.window"

    buffer = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$buffer $map `in` $shape attr-dict `:` type($buffer) `->` type($result)"
    )

    def __init__(
        self,
        buffer: SSAValue,
        map: AffineMap,
        shape: Sequence[int],
        domain: Sequence[int],
    ):
        t = TensorType(_tensor(buffer).element_type, list(domain))
        super().__init__(
            operands=[buffer],
            result_types=[t],
            properties={
                "map": AffineMapAttr(map),
                "shape": DenseArrayBase.from_list(i64, shape),
            },
        )

    def verify_(self) -> None:
        b, r = _tensor(self.buffer), _tensor(self.result)
        if r.element_type != b.element_type:
            raise VerifyException(f"xla.window gives {b.element_type} elements, not {r}")
        self.verify_window(r)


@irdl_op_definition
class UpdateWindowOp(_WindowOpBase):
    """The buffer with `value` (over the domain) stored at a window (as `xla.window`),
    or, with `accumulate <sum|prod|max|min>`, combined with the elements there. Every
    domain axis the window does not walk has extent 1, or (no `accumulate`) the value
    is the same along it: each point stores to its own element. The store of a
    projected permutation plus offsets, as a slice update, not a scatter.

    ```mlir
    %out_1 = xla.update_window %v, %out affine_map<(d0, d1) -> (d1, d0)> in [64, 32]
        : tensor<32x64xf32>, tensor<2048xf32>
    ```
    """

    name = "xla.update_window"

    B: ClassVar = VarConstraint("B", base(TensorType))
    value = operand_def(TensorType)
    buffer = operand_def(B)
    accumulate = opt_prop_def(XlaReductionKindAttr)
    result = result_def(B)

    traits = traits_def(Pure())
    assembly_format = (
        "$value `,` $buffer $map `in` $shape (`accumulate` ` ` `<` $accumulate^ `>`)? "
        "attr-dict `:` type($value) `,` type($buffer)"
    )

    def __init__(
        self,
        value: SSAValue,
        buffer: SSAValue,
        map: AffineMap,
        shape: Sequence[int],
        accumulate: ReductionKind | None = None,
    ):
        super().__init__(
            operands=[value, buffer],
            result_types=[buffer.type],
            properties={
                "map": AffineMapAttr(map),
                "shape": DenseArrayBase.from_list(i64, shape),
                "accumulate": _accumulate_attr(accumulate),
            },
        )

    @property
    def combine(self) -> ReductionKind | None:
        return None if self.accumulate is None else self.accumulate.data

    def verify_(self) -> None:
        v, b = _tensor(self.value), _tensor(self.buffer)
        if v.element_type != b.element_type:
            raise VerifyException(
                f"xla.update_window stores {b.element_type} values, got {v}"
            )
        _verify_combine(self.name, self.combine)
        self.verify_window(v)
        walked = {axis for axis, _ in self.offsets() if axis is not None}
        extents = v.get_shape()
        if self.combine is not None and any(
            n > 1 for k, n in enumerate(extents) if k not in walked
        ):
            raise VerifyException(
                "xla.update_window: an accumulating window walks every domain axis over 1"
            )


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """A reduction over `axes` of the domain, the same at every point of them (a
    `ta.reduce`: its result is a function of the parallel point). argmax/argmin give
    i32 positions (row-major over the axes), the other kinds keep the element type.

    ```mlir
    %s = xla.reduce <sum> %p axes [2] : tensor<64x128x256xf32> -> tensor<64x128x256xf32>
    ```
    """

    name = "xla.reduce"

    kind = prop_def(XlaReductionKindAttr)
    axes = prop_def(DenseArrayBase[I64])
    source = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    def __init__(self, kind: ReductionKind, source: SSAValue, axes: Sequence[int]):
        super().__init__(
            operands=[source],
            result_types=[reduction_result_type(kind, source.type)],
            properties={
                "kind": XlaReductionKindAttr(ReductionKind(kind)),
                "axes": DenseArrayBase.from_list(i64, axes),
            },
        )

    def verify_(self) -> None:
        kind = self.kind.data
        src, res = _tensor(self.source), _tensor(self.result)
        if res != reduction_result_type(kind, src):
            raise VerifyException(
                f"xla.reduce <{kind.value}> of {src} gives "
                f"{reduction_result_type(kind, src)}, not {res}"
            )
        axes = self.axes.get_values()
        if not axes or any(not 0 <= a < src.get_num_dims() for a in axes):
            raise VerifyException(f"xla.reduce: axes {list(axes)} are not dims of {src}")
        if kind.returns_index and len(axes) != 1:
            raise VerifyException(f"xla.reduce <{kind.value}> takes one axis")

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parse_reduction_kind(parser)
        source = parser.parse_unresolved_operand()
        parser.parse_keyword("axes")
        axes = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_integer
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_punctuation("->")
        res_type = parser.parse_type()
        return cls.create(  # the result type as written: the verifier checks it
            operands=[parser.resolve_operand(source, src_type)],
            result_types=[res_type],
            properties={
                "kind": XlaReductionKindAttr(ReductionKind(kind)),
                "axes": DenseArrayBase.from_list(i64, axes),
            },
            attributes=attrs,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" <{self.kind.data}> ")
        printer.print_operand(self.source)
        printer.print_string(" axes [")
        printer.print_list(self.axes.get_values(), lambda a: printer.print_string(str(a)))
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class ConvertOp(ConvertOpBase):
    """Each element converted to another element type (jnp `astype`); see
    `ConvertOpBase`. It stands for arith's casts, which take scalars only.

    ```mlir
    %i = xla.convert %v : tensor<64x1xi64> to tensor<64x1xindex>
    ```
    """

    name = "xla.convert"


@irdl_op_definition
class CompareOp(CompareOpBase):
    """An element-wise comparison (arith's predicates), giving an `i1` tensor.

    ```mlir
    %c = xla.compare <slt> %a, %b : tensor<64xi64>
    ```
    """

    name = "xla.compare"


@irdl_op_definition
class SelectOp(SelectOpBase):
    """Choose element-wise by an `i1` tensor.

    ```mlir
    %r = xla.select %c, %a, %b : tensor<64xi1>, tensor<64xi64>
    ```
    """

    name = "xla.select"


@irdl_attr_definition
class LibraryFnAttr(EnumAttribute[LibraryFn], SpacedOpaqueSyntaxAttribute):
    """The function of an `xla.library_call`: `#xla<library_fn sort>`."""

    name = "xla.library_fn"


@irdl_op_definition
class LibraryCallOp(LibraryCallOpBase):
    """A library function (`pallas_ir.library`) on whole tensors: a `ta.library_call`
    at the jnp level. Operands and results are flat, in the kernel's buffers' types;
    `shapes` gives the shape each has for the function (operands first).

    ```mlir
    %v, %i = xla.library_call #xla<library_fn sort> (%x)
        shapes [array<i64: 4, 16>, array<i64: 4, 16>, array<i64: 4, 16>]
        params {descending = false, dim = 1 : i64, stable = false}
        : (tensor<64xf32>) -> (tensor<64xf32>, tensor<64xi32>)
    ```
    """

    name = "xla.library_call"

    fn = prop_def(LibraryFnAttr)
    shapes = prop_def(ArrayAttr[DenseArrayBase])
    params = prop_def(DictionaryAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$fn `(` $inputs `)` `shapes` $shapes `params` $params "
        "attr-dict `:` `(` type($inputs) `)` `->` `(` type($outputs) `)`"
    )

    def __init__(
        self,
        fn: LibraryFn,
        inputs: Sequence[SSAValue],
        output_types: Sequence[TensorType],
        shapes: Sequence[Sequence[int]],
        params: Mapping[str, Param],
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={
                "fn": LibraryFnAttr(fn),
                "shapes": shapes_attr(shapes),
                "params": params_attr(params),
            },
        )


Xla = Dialect(
    "xla",
    [
        FuncOp,
        ReturnOp,
        BufferOp,
        ZerosOp,
        ConstantOp,
        IotaOp,
        FlatIndexOp,
        TakeOp,
        ScatterOp,
        WindowOp,
        UpdateWindowOp,
        ReduceOp,
        ConvertOp,
        CompareOp,
        SelectOp,
        LibraryCallOp,
    ],
    [XlaPartAttr, XlaReductionKindAttr, XlaComparePredicateAttr, LibraryFnAttr],
)
