"""The `pallas` dialect's kernel ops: loads and stores through static indexers, the grid
position, scalar reads, iota and jnp-level compute on values.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import TypeVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasAncestor,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from pallas_ir.dialects.common import (
    BroadcastOpBase,
    CompareOpBase,
    ConvertOpBase,
    DotOpBase,
    IotaOpBase,
    ReduceTileOpBase,
    ReshapeHasCanonicalizationPatterns,
    ReshapeOpBase,
    RollOpBase,
    SelectOpBase,
    TransposeHasCanonicalizationPatterns,
    TransposeOpBase,
    parse_optional_attributes_keyword,
)
from pallas_ir.dialects.enums import PallasDotPrecisionAttr
from pallas_ir.dialects.pallas.attributes import (
    Indexer,
    MemorySpace,
    RefType,
    SliceAttr,
    _shape_prefix,
)
from pallas_ir.dialects.pallas.call import CallOp
from pallas_ir.tpu_rules import (
    reshape_is_free,
)


def _parse_indexers(parser: Parser) -> list[int | tuple[int, int | None, int]]:
    """`[...]` (whole ref) or `[0, :, ds(0, 8), ds(1, 8, stride = 2)]`.

    A `:` keeps size None until the ref type is known."""
    parser.parse_punctuation("[")
    if parser.parse_optional_punctuation("...") is not None:
        parser.parse_punctuation("]")
        return []

    def one() -> int | tuple[int, int | None, int]:
        if parser.parse_optional_punctuation(":") is not None:
            return (0, None, 1)
        if parser.parse_optional_keyword("ds") is not None:
            parser.parse_punctuation("(")
            start = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False, allow_negative=False)
            stride = 1
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("stride")
                parser.parse_punctuation("=")
                stride = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(")")
            return (start, size, stride)
        return parser.parse_integer(allow_boolean=False, allow_negative=False)

    items = parser.parse_comma_separated_list(parser.Delimiter.NONE, one)
    parser.parse_punctuation("]")
    return items


def _resolve_indexers(
    parser: Parser,
    raw: list[int | tuple[int, int | None, int]],
    shape: Sequence[int],
    span: tuple[int, int] | None = None,
) -> ArrayAttr:
    """`span` is where the indexers were written, for the error's location."""
    if raw and len(raw) != len(shape):
        parser.raise_error(
            f"{len(raw)} indexers for a rank-{len(shape)} ref (use [...] for all of it)",
            *(span or ()),
        )
    out: list[Attribute] = []
    for r, n in zip(raw, shape):
        if isinstance(r, int):
            out.append(IntAttr(r))
        else:
            start, size, stride = r
            try:
                out.append(SliceAttr(start, n if size is None else size, stride))
            except VerifyException as e:
                parser.raise_error(str(e), *(span or ()))
    return ArrayAttr(out)


def _print_indexers(printer: Printer, indexers: ArrayAttr, shape: Sequence[int]) -> None:
    if not indexers.data:
        printer.print_string("[...]")
        return
    parts: list[str] = []
    for ix, n in zip(indexers.data, shape):
        if isinstance(ix, IntAttr):
            parts.append(str(ix.data))
        else:
            assert isinstance(ix, SliceAttr)
            s, z, k = ix.start.data, ix.size.data, ix.stride.data
            if s == 0 and z == n and k == 1:
                parts.append(":")
            elif k == 1:
                parts.append(f"ds({s}, {z})")
            else:
                parts.append(f"ds({s}, {z}, stride = {k})")
    printer.print_string("[" + ", ".join(parts) + "]")


def python_index(indexers: ArrayAttr) -> tuple[int | slice, ...] | EllipsisType:
    """The indexers as a Python index (ints and slices), `...` for the whole ref."""
    if not indexers.data:
        return ...
    out: list[int | slice] = []
    for ix in indexers.data:
        if isinstance(ix, SliceAttr):
            s, n, k = ix.start.data, ix.size.data, ix.stride.data
            out.append(slice(s, s + (n - 1) * k + 1, k))
        else:
            out.append(ix.data)  # type: ignore[union-attr]
    return tuple(out)


def indexed_shape(indexers: ArrayAttr, ref_shape: Sequence[int]) -> list[int]:
    """The shape a load gives (or a store takes): slices keep a dim, ints drop it."""
    if not indexers.data:
        return list(ref_shape)
    return [ix.size.data for ix in indexers.data if isinstance(ix, SliceAttr)]


def _verify_indexers(
    indexers: ArrayAttr, shape: Sequence[int], what: str = "ref"
) -> None:
    if indexers.data and len(indexers.data) != len(shape):
        raise VerifyException(
            f"{len(indexers.data)} indexers for a rank-{len(shape)} {what}"
        )
    for k, (ix, n) in enumerate(zip(indexers.data, shape)):
        if isinstance(ix, IntAttr):
            if not 0 <= ix.data < n:
                raise VerifyException(
                    f"index {ix.data} is out of bounds for dim {k} of {n}"
                )
        elif isinstance(ix, SliceAttr):
            last = ix.start.data + (ix.size.data - 1) * ix.stride.data
            if last >= n:
                raise VerifyException(
                    f"slice of dim {k} reaches element {last} of {n}: out of bounds"
                )
        else:
            raise VerifyException(f"indexer {ix} is neither an int nor a ds")


def _verify_tile_against_ref(
    tile: Attribute, ref: Attribute, indexers: ArrayAttr, what: str
) -> None:
    if not isinstance(ref, RefType):
        raise VerifyException(f"{what} needs a !pallas.ref, got {ref}")
    if ref.space == MemorySpace.ANY:
        raise VerifyException(
            f"{what} cannot touch a ref in memory space any: it is reachable only by DMA"
        )
    if ref.space == MemorySpace.SEMAPHORE:
        raise VerifyException(f"{what} cannot touch a semaphore ref")
    _verify_indexers(indexers, ref.get_shape())
    want = indexed_shape(indexers, ref.get_shape())
    if not isinstance(tile, TensorType):
        raise VerifyException(f"{what} moves tensors, got {tile}")
    if ref.space == MemorySpace.SMEM and want:
        raise VerifyException(f"{what} of SMEM moves scalars only; index every dim")
    if list(tile.get_shape()) != want or tile.element_type != ref.element_type:
        raise VerifyException(
            f"{what} of {ref} at these indexers is tensor<{_shape_prefix(want)}"
            f"{ref.element_type}>, not {tile}"
        )


_Indexed = TypeVar("_Indexed", bound=IRDLOperation)


def _parse_indexed(
    cls: type[_Indexed], parser: Parser, source_kind: type[Attribute], spelled: str
) -> _Indexed:
    """`%source[indexers] {attrs} : SourceType -> tensor<...>`, the syntax of
    `pallas.load` (a ref) and `pallas.slice` (a value)."""
    source = parser.parse_unresolved_operand()
    ix_pos = parser.pos
    raw = _parse_indexers(parser)
    ix_span = (ix_pos, parser.pos)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    stype = parser.parse_type()
    parser.parse_punctuation("->")
    rtype = parser.parse_type()
    if not isinstance(stype, source_kind) or not isinstance(rtype, TensorType):
        parser.raise_error(f"expected `{spelled} -> tensor<...>`", pos, parser.pos)
    shape = stype.get_shape()  # type: ignore[attr-defined]
    op = cls(
        parser.resolve_operand(source, stype),
        rtype,
        _resolve_indexers(parser, raw, shape, ix_span).data,
    )  # type: ignore[call-arg]
    op.attributes.update(attrs)
    return op


def _print_indexed(
    printer: Printer, op: IRDLOperation, source: SSAValue, indexers: ArrayAttr
) -> None:
    printer.print_string(" ")
    printer.print_operand(source)
    stype = source.type
    _print_indexers(printer, indexers, stype.get_shape())  # type: ignore[attr-defined]
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(stype)
    printer.print_string(" -> ")
    printer.print_attribute(op.results[0].type)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read a ref, whole or through static indexers: `x_ref[...]`, `x_ref[0, pl.ds(0, 8, stride=2)]`.

    ```mlir
    %a = pallas.load %x_ref[...] : !pallas.ref<128x512xf32, vmem> -> tensor<128x512xf32>
    %r = pallas.load %x_ref[ds(0, 8, stride = 2), :] : !pallas.ref<16x128xf32, vmem> -> tensor<8x128xf32>
    ```
    """

    name = "pallas.load"

    ref = operand_def(RefType)
    indexers = prop_def(ArrayAttr)
    result = result_def(TensorType)

    traits = traits_def(HasAncestor(CallOp), MemoryReadEffect())

    def __init__(
        self, ref: SSAValue, result_type: TensorType, indexers: Sequence[Indexer] = ()
    ):
        super().__init__(
            operands=[ref],
            properties={"indexers": ArrayAttr(indexers)},
            result_types=[result_type],
        )

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        return _parse_indexed(cls, parser, RefType, "!pallas.ref<...>")

    def print(self, printer: Printer) -> None:
        _print_indexed(printer, self, self.ref, self.indexers)

    def verify_(self) -> None:
        _verify_tile_against_ref(self.result.type, self.ref.type, self.indexers, "load")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write a value to a ref, whole or through static indexers: `o_ref[...] = v`.

    ```mlir
    pallas.store %v, %o_ref[...] : tensor<128x512xf32>, !pallas.ref<128x512xf32, vmem>
    ```
    """

    name = "pallas.store"

    value = operand_def(TensorType)
    ref = operand_def(RefType)
    indexers = prop_def(ArrayAttr)

    traits = traits_def(HasAncestor(CallOp), MemoryWriteEffect())

    def __init__(self, value: SSAValue, ref: SSAValue, indexers: Sequence[Indexer] = ()):
        super().__init__(
            operands=[value, ref], properties={"indexers": ArrayAttr(indexers)}
        )

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        ref = parser.parse_unresolved_operand()
        ix_pos = parser.pos
        raw = _parse_indexers(parser)
        ix_span = (ix_pos, parser.pos)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ttype = parser.parse_type()
        parser.parse_punctuation(",")
        rtype = parser.parse_type()
        if not isinstance(rtype, RefType) or not isinstance(ttype, TensorType):
            parser.raise_error(
                "expected `tensor<...>, !pallas.ref<...>`", pos, parser.pos
            )
        op = cls(
            parser.resolve_operand(value, ttype),
            parser.resolve_operand(ref, rtype),
            _resolve_indexers(parser, raw, rtype.get_shape(), ix_span).data,  # type: ignore[arg-type]
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.ref)
        rtype = self.ref.type
        assert isinstance(rtype, RefType)
        _print_indexers(printer, self.indexers, rtype.get_shape())
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(", ")
        printer.print_attribute(rtype)

    def verify_(self) -> None:
        _verify_tile_against_ref(self.value.type, self.ref.type, self.indexers, "store")


@irdl_op_definition
class SliceOp(IRDLOperation):
    """A static slice of a value in registers, through the indexers of `pallas.load`:
    `v[:, 3:67]`, `v[:, :, 1]` (an int drops its dim).

    ```mlir
    %s = pallas.slice %v[:, ds(3, 64)] : tensor<8x128xf32> -> tensor<8x64xf32>
    %e = pallas.slice %p[:, :, 0] : tensor<8x64x2xf32> -> tensor<8x64xf32>
    ```

    Mosaic cannot load some windows of a ref directly (a lane slice of a strided load,
    a lane stride): `pallas-legalize-mosaic` loads more and slices the value.
    """

    name = "pallas.slice"

    source = operand_def(TensorType)
    indexers = prop_def(ArrayAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    def __init__(
        self, source: SSAValue, result_type: TensorType, indexers: Sequence[Indexer]
    ):
        super().__init__(
            operands=[source],
            properties={"indexers": ArrayAttr(indexers)},
            result_types=[result_type],
        )

    @classmethod
    def parse(cls, parser: Parser) -> SliceOp:
        return _parse_indexed(cls, parser, TensorType, "tensor<...>")

    def print(self, printer: Printer) -> None:
        _print_indexed(printer, self, self.source, self.indexers)

    def verify_(self) -> None:
        stype, rtype = self.source.type, self.result.type
        assert isinstance(stype, TensorType) and isinstance(rtype, TensorType)
        _verify_indexers(self.indexers, stype.get_shape(), "value")
        want = indexed_shape(self.indexers, stype.get_shape())
        if list(rtype.get_shape()) != want or rtype.element_type != stype.element_type:
            raise VerifyException(
                f"slice of {stype} at these indexers is tensor<{_shape_prefix(want)}"
                f"{stype.element_type}>, not {rtype}"
            )


@irdl_op_definition
class ProgramIdOp(IRDLOperation):
    """`pl.program_id(axis)`: this grid point's index along one grid dim.

    ```mlir
    %k = pallas.program_id 2 : i32
    ```
    """

    name = "pallas.program_id"

    axis = prop_def(IntegerAttr[I64])
    result = result_def(i32)

    traits = traits_def(HasAncestor(CallOp), Pure())
    assembly_format = "$axis attr-dict `:` type($result)"

    def __init__(self, axis: int):
        super().__init__(properties={"axis": IntegerAttr(axis, i64)}, result_types=[i32])

    def verify_(self) -> None:
        call = self.parent_op()
        while call is not None and not isinstance(call, CallOp):
            call = call.parent_op()
        assert call is not None  # HasAncestor
        rank = len(call.grid.get_values())
        if not 0 <= self.axis.value.data < rank:
            raise VerifyException(
                f"axis {self.axis.value.data} is not a dim of the rank-{rank} grid"
            )


@irdl_op_definition
class TransposeOp(TransposeOpBase):
    """`jnp.transpose` of a value in the kernel.

    ```mlir
    %t = pallas.transpose %v [1, 0] : tensor<128x128xf32> -> tensor<128x128xf32>
    ```
    """

    name = "pallas.transpose"

    traits = traits_def(Pure(), TransposeHasCanonicalizationPatterns())


@irdl_op_definition
class RollOp(RollOpBase):
    """`pltpu.roll` of a value in the kernel (a rotation on the XLU; `jnp.roll`'s
    direction).

    ```mlir
    %r = pallas.roll %v by 16 along 1 : tensor<64x32xf32>
    ```
    """

    name = "pallas.roll"


@irdl_op_definition
class BroadcastOp(BroadcastOpBase):
    """`jnp.broadcast_to` of a value in the kernel.

    ```mlir
    %b = pallas.broadcast %v : tensor<1x128xf32> to tensor<8x128xf32>
    ```
    """

    name = "pallas.broadcast"


@irdl_op_definition
class ReduceOp(ReduceTileOpBase):
    """`jnp.sum/prod/max/min/argmax/argmin(v, axis, keepdims=True)` in the kernel.

    ```mlir
    %s = pallas.reduce <sum> %v [1] : tensor<8x128xf32> -> tensor<8x1xf32>
    ```
    """

    name = "pallas.reduce"


@irdl_op_definition
class ReshapeOp(ReshapeOpBase):
    """`jnp.reshape` (row-major, same elements), on the host or in a kernel.

    ```mlir
    %t3 = pallas.reshape %t : tensor<1000x256xf32> to tensor<1000x1x256xf32>
    ```

    On the host, between calls: TPU arrays are stored in (8, 128) tiles, so a reshape
    that changes the last two dims is an HBM relayout copy (the cost model counts a full
    read and write); one that only splits or merges leading dims is free. In a kernel,
    a value reshape (a Mosaic shape cast), typically adding or dropping unit dims.
    """

    name = "pallas.reshape"

    traits = traits_def(Pure(), ReshapeHasCanonicalizationPatterns())

    @property
    def is_relayout(self) -> bool:
        """Whether a TPU must copy the data: the trailing two dims change, other than by
        regrouping whole (8, 128) tiles of rows (`tpu_rules.reshape_is_free`)."""
        src, dst = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        bits = getattr(src.element_type, "bitwidth", 32)
        return not reshape_is_free(src.get_shape(), dst.get_shape(), bits)


@irdl_op_definition
class ConvertOp(ConvertOpBase):
    """`v.astype(dtype)` of a value in the kernel. Float → int truncates toward zero (XLA
    `convert_element_type`), int → int wraps; see `ConvertOpBase`.

    ```mlir
    %w = pallas.convert %v : tensor<32x128xi8> to tensor<32x128xi32>
    ```
    """

    name = "pallas.convert"


@irdl_op_definition
class CompareOp(CompareOpBase):
    """A comparison of two values in the kernel (`a < b`, `~(a >= b)` for `ult` on
    floats, ...), giving a bool value.

    ```mlir
    %c = pallas.compare <ogt> %a, %b : tensor<8x128xf32>
    ```
    """

    name = "pallas.compare"


@irdl_op_definition
class SelectOp(SelectOpBase):
    """`jnp.where(cond, a, b)` in the kernel.

    ```mlir
    %r = pallas.select %c, %a, %b : tensor<8x128xi1>, tensor<8x128xf32>
    ```
    """

    name = "pallas.select"


@irdl_op_definition
class DotOp(DotOpBase):
    """`jnp.dot(a, b, preferred_element_type=f32)` in the kernel: the MXU. With
    `precision <highest>`, `precision=jax.lax.Precision.HIGHEST` (f32 products).

    ```mlir
    %c = pallas.dot %a, %b : tensor<128x256xbf16>, tensor<256x128xbf16> -> tensor<128x128xf32>
    %d = pallas.dot %x, %y precision <highest>
        : tensor<8x128xf32>, tensor<128x128xf32> -> tensor<8x128xf32>
    ```
    """

    name = "pallas.dot"

    precision = opt_prop_def(PallasDotPrecisionAttr)


@irdl_op_definition
class WhenOp(IRDLOperation):
    """`@pl.when(cond)`: run the body only when the i1 scalar is true (e.g. to initialise
    an accumulator at the first step of a sequential grid dim).

    ```mlir
    %k = pallas.program_id 1 : i32
    %zero = arith.constant 0 : i32
    %first = arith.cmpi eq, %k, %zero : i32
    pallas.when %first {
      pallas.store %init, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
    }
    ```
    """

    name = "pallas.when"

    condition = operand_def(IntegerType(1))
    body = region_def("single_block")

    traits = traits_def(HasAncestor(CallOp), NoTerminator())

    def __init__(self, condition: SSAValue, body: Region):
        super().__init__(operands=[condition], regions=[body])

    @classmethod
    def parse(cls, parser: Parser) -> WhenOp:
        condition = parser.resolve_operand(
            parser.parse_unresolved_operand(), IntegerType(1)
        )
        attrs = parse_optional_attributes_keyword(parser)
        body = parser.parse_region()
        if not body.blocks:  # `{}`: an empty body
            body.add_block(Block())
        op = cls(condition, body)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.condition)
        if self.attributes:
            printer.print_string(" attributes ")
            printer.print_attr_dict(dict(self.attributes))
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


@irdl_op_definition
class LoopOp(IRDLOperation):
    """`@pl.loop(lower, upper)`: run the body once for each i32 index from `lower` up to
    `upper` (static), in order; the body's block argument is the index. A row gather
    or scatter is one of these around one row's copy, not a copy per row: the kernel,
    its trace and its compile stay the size of one row's work.

    ```mlir
    pallas.loop %r = 0 to 16 {
      %at = arith.addi %first, %r : i32
      %row = pallas.read %idx_ref[%at] : !pallas.ref<128xi32, smem> -> i32
      pallas.copy_row %table_ref[%row], %rows[0 + %r]
          : !pallas.ref<64x32xf32, vmem>, !pallas.ref<16x32xf32, vmem>
    }
    ```
    """

    name = "pallas.loop"

    lower = prop_def(IntegerAttr[I64])
    upper = prop_def(IntegerAttr[I64])
    body = region_def("single_block")

    traits = traits_def(HasAncestor(CallOp), NoTerminator())

    def __init__(self, lower: int, upper: int, body: Region):
        super().__init__(
            properties={
                "lower": IntegerAttr(lower, i64),
                "upper": IntegerAttr(upper, i64),
            },
            regions=[body],
        )

    @property
    def index(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def bounds(self) -> tuple[int, int]:
        return self.lower.value.data, self.upper.value.data

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        index = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lower = parser.parse_integer()
        parser.parse_keyword("to")
        upper = parser.parse_integer()
        attrs = parse_optional_attributes_keyword(parser)
        body = parser.parse_region((index.resolve(i32),))
        op = cls(lower, upper, body)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_block_argument(self.index, print_type=False)
        lower, upper = self.bounds
        printer.print_string(f" = {lower} to {upper}")
        if self.attributes:
            printer.print_string(" attributes ")
            printer.print_attr_dict(dict(self.attributes))
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        lower, upper = self.bounds
        if not 0 <= lower < upper:
            raise VerifyException(
                f"a loop runs from 0 <= lower < upper, not {lower} to {upper}"
            )
        args = self.body.block.args
        if len(args) != 1 or args[0].type != i32:
            raise VerifyException("a loop's body takes its i32 index, and only that")


@irdl_op_definition
class ReadOp(IRDLOperation):
    """A scalar read at dynamic indices: `idx_ref[i]` (scalar-prefetch data in SMEM).

    ```mlir
    %row = pallas.read %idx_ref[%i] : !pallas.ref<64xi32, smem> -> i32
    ```
    """

    name = "pallas.read"

    ref = operand_def(RefType)
    indices = var_operand_def(i32)
    result = result_def()

    traits = traits_def(HasAncestor(CallOp), MemoryReadEffect())
    assembly_format = "$ref `[` $indices `]` attr-dict `:` type($ref) `->` type($result)"

    def __init__(self, ref: SSAValue, indices: Sequence[SSAValue]):
        t = ref.type
        assert isinstance(t, RefType)
        super().__init__(operands=[ref, indices], result_types=[t.element_type])

    def verify_(self) -> None:
        t = self.ref.type
        assert isinstance(t, RefType)
        if t.space != MemorySpace.SMEM:
            raise VerifyException("pallas.read reads scalars from an SMEM ref")
        if len(self.indices) != len(t.get_shape()):
            raise VerifyException(
                f"{len(self.indices)} indices for a rank-{len(t.get_shape())} ref"
            )
        if self.result.type != t.element_type:
            raise VerifyException(f"reads {t.element_type}, not {self.result.type}")


@irdl_op_definition
class IotaOp(IotaOpBase):
    """`jax.lax.broadcasted_iota(jnp.int32, shape, dim) + offset`: indices along one dim
    of a tile, from an i32 scalar offset.

    ```mlir
    %j = pallas.iota %offset dim 1 : i32 -> tensor<8x128xi32>
    ```
    """

    name = "pallas.iota"

    offset = operand_def(i32)

    traits = traits_def(HasAncestor(CallOp), Pure())
    assembly_format = "$offset `dim` $dim attr-dict `:` type($offset) `->` type($result)"

    def __init__(self, offset: SSAValue, dim: int, tile_type: TensorType):
        super().__init__(
            operands=[offset],
            properties={"dim": IntegerAttr(dim, i64)},
            result_types=[tile_type],
        )
