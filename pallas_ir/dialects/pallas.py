"""The `pallas` dialect: one op or attribute per Pallas concept, printed mechanically.

A host function (`func.func @forward`) takes and returns `tensor` values (jax arrays)
and runs `pallas.call` ops. A `pallas.call` is one `pl.pallas_call`: its grid, one
`#pallas.block_spec` per input and output, the scalar-prefetch count, dimension
semantics, scratch shapes, input/output aliases, a cost estimate and a VMEM limit,
with a kernel region whose arguments are refs (`!pallas.ref<8x128xf32, vmem>`).
In the kernel, `pallas.load`/`pallas.store` move tiles between refs and values through
static indexers, `pallas.program_id` reads the grid position, and compute is jnp-level:
`arith`/`math` on tensors plus `pallas.transpose`, `pallas.broadcast`, `pallas.reduce`.

The verifier of `pallas.call` enforces the TPU block rules (`pallas_ir.tpu_rules`), so
IR that verifies lowers for TPU as far as block shapes go.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasAncestor,
    IsolatedFromAbove,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pallas_ir.dialects import xla
from pallas_ir.dialects.common import (
    BroadcastOpBase,
    CompareOpBase,
    ConvertOpBase,
    DotOpBase,
    Interval,
    ReduceTileOpBase,
    ReshapeOpBase,
    SelectOpBase,
    TransposeOpBase,
    map_bounds,
    parse_optional_attributes_keyword,
)
from pallas_ir.tpu_rules import (
    MAX_ELEMENT_BITS,
    SMEM_BYTES,
    block_shape_error,
    reshape_is_free,
)


class MemorySpace(StrEnum):
    VMEM = "vmem"
    SMEM = "smem"
    ANY = "any"
    """Left where it is (HBM); reachable only by DMA."""
    SEMAPHORE = "semaphore"
    """A DMA semaphore (`pltpu.SemaphoreType.DMA(())` as a scratch shape): rank 0, i32."""


class DimensionSemantics(StrEnum):
    PARALLEL = "parallel"
    ARBITRARY = "arbitrary"


@irdl_attr_definition
class DimensionSemanticsAttr(
    EnumAttribute[DimensionSemantics], SpacedOpaqueSyntaxAttribute
):
    """`#pallas<dimension_semantics parallel>` or `arbitrary`."""

    name = "pallas.dimension_semantics"


def _shape_prefix(shape: Sequence[int]) -> str:
    return "".join(f"{d}x" for d in shape)


@irdl_attr_definition
class RefType(ParametrizedAttribute, TypeAttribute):
    """A kernel's view of a block in a memory space: `!pallas.ref<8x128xf32, vmem>`."""

    name = "pallas.ref"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    memory_space: StringAttr

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        memory_space: MemorySpace | str = MemorySpace.VMEM,
    ):
        super().__init__(
            ArrayAttr([IntAttr(d) for d in shape]),
            element_type,
            StringAttr(MemorySpace(memory_space).value),
        )

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def space(self) -> MemorySpace:
        return MemorySpace(self.memory_space.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, elt = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            space = parser.parse_str_enum(MemorySpace)
        return (
            ArrayAttr([IntAttr(d) for d in shape]),
            elt,
            StringAttr(space.value),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(_shape_prefix(self.get_shape()))
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.memory_space.data}")

    def verify(self) -> None:
        if any(d.data <= 0 for d in self.shape.data):
            raise VerifyException("ref dims must be positive")
        if self.memory_space.data not in {m.value for m in MemorySpace}:
            raise VerifyException(f"unknown memory space '{self.memory_space.data}'")


SQUEEZED = -1
"""How a squeezed block dim (`None` / `pl.squeezed` in Pallas) is stored."""


@irdl_attr_definition
class BlockSpecAttr(ParametrizedAttribute):
    """How one operand of a `pallas.call` is cut into blocks: a `pl.BlockSpec`.

    ```mlir
    #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>
    #pallas.block_spec<[squeezed, 1, 256], (d0)[s0] -> (s0, 0, 0), s0 = prefetch0[(d0) -> (d0)]>
    #pallas.block_spec<[8, 128], (d0) -> (d0, 0), smem>
    #pallas.block_spec<[1, 3, 4, 8], (d0) -> (d0, 1, 0, 0), element>
    #pallas.block_spec<any>
    ```

    The index map takes the grid indices (dims) and returns one *block* index per
    block dim. Each symbol is bound to an element of a scalar-prefetch operand, read at
    an affine index of the grid indices. `squeezed` dims have size 1 and are dropped
    from the kernel's ref. `any` leaves the whole operand in HBM for manual DMA.
    `element` makes the index map return *element* offsets instead, on every dim
    (`pl.Element` block dims): a window that starts anywhere, as a leading-dim slice
    `x[:, 1:4]` needs; it has no squeezed dims and no prefetched symbols.
    """

    name = "pallas.block_spec"

    block_shape: DenseArrayBase
    index_map: AffineMapAttr
    memory_space: StringAttr
    prefetch_operands: DenseArrayBase
    prefetch_maps: ArrayAttr[AffineMapAttr]
    indexing: StringAttr
    """`blocked` (block indices) or `element` (element offsets)."""

    def __init__(
        self,
        block_shape: Sequence[int | None],
        index_map: AffineMap,
        memory_space: MemorySpace | str = MemorySpace.VMEM,
        prefetch: Sequence[tuple[int, AffineMap]] = (),
        element: bool = False,
    ):
        super().__init__(
            DenseArrayBase.from_list(
                i64, [SQUEEZED if b is None else b for b in block_shape]
            ),
            AffineMapAttr(index_map),
            StringAttr(MemorySpace(memory_space).value),
            DenseArrayBase.from_list(i64, [p for p, _ in prefetch]),
            ArrayAttr([AffineMapAttr(m) for _, m in prefetch]),
            StringAttr("element" if element else "blocked"),
        )

    @property
    def element(self) -> bool:
        """Whether the index map returns element offsets (`pl.Element` dims)."""
        return self.indexing.data == "element"

    def starts(self, indices: Sequence[int]) -> list[int]:
        """The element where the block starts along each dim, from the map's results."""
        if self.element:
            return list(indices)
        return [i * (1 if b is None else b) for i, b in zip(indices, self.shape)]

    @staticmethod
    def any() -> BlockSpecAttr:
        return BlockSpecAttr([], AffineMap(0, 0, ()), MemorySpace.ANY)

    @property
    def shape(self) -> tuple[int | None, ...]:
        return tuple(None if b == SQUEEZED else b for b in self.block_shape.get_values())

    @property
    def space(self) -> MemorySpace:
        return MemorySpace(self.memory_space.data)

    @property
    def map(self) -> AffineMap:
        return self.index_map.data

    @property
    def prefetch(self) -> list[tuple[int, AffineMap]]:
        return [
            (p, m.data)
            for p, m in zip(
                self.prefetch_operands.get_values(), self.prefetch_maps.data, strict=True
            )
        ]

    def ref_shape(self) -> tuple[int, ...]:
        """The kernel ref's shape: the block without its squeezed dims."""
        return tuple(b for b in self.shape if b is not None)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            if parser.parse_optional_keyword("any") is not None:
                spec = cls.any()
            else:

                def block_dim() -> int:
                    if parser.parse_optional_keyword("squeezed") is not None:
                        return SQUEEZED
                    return parser.parse_integer(allow_boolean=False, allow_negative=False)

                shape = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, block_dim
                )
                parser.parse_punctuation(",")
                index_map = parser.parse_affine_map()
                space = MemorySpace.VMEM
                prefetch: list[tuple[int, AffineMap]] = []
                element = False
                while parser.parse_optional_punctuation(",") is not None:
                    if parser.parse_optional_keyword("element") is not None:
                        element = True
                        continue
                    if (
                        s := parser.parse_optional_keyword_in(
                            [m.value for m in MemorySpace]
                        )
                    ) is not None:
                        space = MemorySpace(s)
                        continue
                    # `sK = prefetchP[map]`
                    pos = parser.pos
                    sym = parser.parse_identifier()
                    if sym != f"s{len(prefetch)}":
                        parser.raise_error(
                            f"expected a memory space (vmem, smem, any) or the binding "
                            f"`s{len(prefetch)} = prefetchN[map]`, got '{sym}'",
                            pos,
                            parser.pos,
                        )
                    parser.parse_punctuation("=")
                    pos = parser.pos
                    ref = parser.parse_identifier()
                    if not ref.startswith("prefetch") or not ref[8:].isdigit():
                        parser.raise_error("expected `prefetchN`", pos, parser.pos)
                    parser.parse_punctuation("[")
                    pmap = parser.parse_affine_map()
                    parser.parse_punctuation("]")
                    prefetch.append((int(ref[8:]), pmap))
                spec = cls(
                    [None if b == SQUEEZED else b for b in shape],
                    index_map,
                    space,
                    prefetch,
                    element,
                )
        return spec.parameters

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            if self.space == MemorySpace.ANY and not self.shape:
                printer.print_string("any")
                return
            printer.print_string("[")
            printer.print_list(
                self.shape,
                lambda b: printer.print_string("squeezed" if b is None else str(b)),
            )
            printer.print_string("], ")
            printer.print_string(str(self.map))
            for k, (p, m) in enumerate(self.prefetch):
                printer.print_string(f", s{k} = prefetch{p}[{m}]")
            if self.space != MemorySpace.VMEM:
                printer.print_string(f", {self.space.value}")
            if self.element:
                printer.print_string(", element")

    def verify(self) -> None:
        if self.memory_space.data not in {m.value for m in MemorySpace}:
            raise VerifyException(f"unknown memory space '{self.memory_space.data}'")
        if self.indexing.data not in ("blocked", "element"):
            raise VerifyException(f"unknown block indexing '{self.indexing.data}'")
        if self.element and (SQUEEZED in self.block_shape.get_values() or self.prefetch):
            raise VerifyException(
                "an element-indexed block spec has no squeezed dims and no prefetched "
                "symbols"
            )
        if self.memory_space.data == MemorySpace.SEMAPHORE:
            raise VerifyException("a block spec cannot be in memory space semaphore")
        if any(b != SQUEEZED and b <= 0 for b in self.block_shape.get_values()):
            raise VerifyException("block dims must be positive or squeezed")
        if self.space == MemorySpace.ANY:
            if self.shape or self.map.results or self.prefetch_maps.data:
                raise VerifyException(
                    "an `any` block spec is the whole operand: no shape, map or prefetch"
                )
            return
        if len(self.map.results) != len(self.shape):
            raise VerifyException(
                f"index map has {len(self.map.results)} results for a rank-"
                f"{len(self.shape)} block"
            )
        if self.map.num_symbols != len(self.prefetch_maps.data):
            raise VerifyException(
                f"index map has {self.map.num_symbols} symbols but "
                f"{len(self.prefetch_maps.data)} prefetch bindings"
            )
        for m in self.prefetch_maps.data:
            if m.data.num_dims != self.map.num_dims or m.data.num_symbols:
                raise VerifyException(
                    "a prefetch binding's map takes the grid indices, like the index map"
                )


_COST_FIELDS = ("flops", "transcendentals", "bytes_accessed")


@irdl_attr_definition
class CostEstimateAttr(ParametrizedAttribute):
    """`pl.CostEstimate`: `#pallas.cost_estimate<flops = 0, transcendentals = 0, bytes_accessed = 4096>`."""

    name = "pallas.cost_estimate"

    flops: IntAttr
    transcendentals: IntAttr
    bytes_accessed: IntAttr

    def __init__(self, flops: int, transcendentals: int, bytes_accessed: int):
        super().__init__(
            IntAttr(flops), IntAttr(transcendentals), IntAttr(bytes_accessed)
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: list[int] = []
        with parser.in_angle_brackets():
            for i, field in enumerate(_COST_FIELDS):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(field)
                parser.parse_punctuation("=")
                values.append(parser.parse_integer(allow_boolean=False))
        return tuple(IntAttr(v) for v in values)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<flops = {self.flops.data}, transcendentals = {self.transcendentals.data}, "
            f"bytes_accessed = {self.bytes_accessed.data}>"
        )

    def verify(self) -> None:
        for f in _COST_FIELDS:
            if getattr(self, f).data < 0:
                raise VerifyException(f"cost estimate {f} must be non-negative")


def _bitwidth(t: Attribute) -> int | None:
    if isinstance(t, IntegerType):
        return t.width.data
    width = getattr(t, "bitwidth", None)
    return width if isinstance(width, int) else None


_CALL_CLAUSES = ("grid", "prefetch", "in", "out", "semantics", "scratch", "aliases")
"""Keyword clauses of `pallas.call`, in print order."""


def _parse_block_spec(parser: Parser) -> Attribute:
    """One entry of an `in`/`out` clause; a non-spec is rejected where it is written."""
    pos = parser.pos
    spec = parser.parse_attribute()
    if not isinstance(spec, BlockSpecAttr):
        parser.raise_error(f"expected a #pallas.block_spec, got {spec}", pos, parser.pos)
    return spec


def _parse_scratch_ref(parser: Parser) -> Attribute:
    pos = parser.pos
    ref = parser.parse_type()
    if not isinstance(ref, RefType):
        parser.raise_error(
            f"scratch shapes are !pallas.ref types, got {ref}", pos, parser.pos
        )
    return ref


@irdl_op_definition
class CallOp(IRDLOperation):
    """One `pl.pallas_call`.

    ```mlir
    %o = pallas.call @add(%x, %y) grid [4, 2]
        in [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>,
            #pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
        out [#pallas.block_spec<[128, 512], (d0, d1) -> (d0, d1)>]
        semantics [parallel, parallel]
        attributes {cost_estimate = #pallas.cost_estimate<...>, vmem_limit_bytes = 33554432}
        : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<512x1024xf32>
        kernel(%x_ref: !pallas.ref<128x512xf32, vmem>, %y_ref: ..., %o_ref: ...) {
      ...
    }
    ```

    Optional clauses: `prefetch N` (the first N operands are scalar-prefetch arrays,
    whole in SMEM, with no block spec), `scratch [!pallas.ref<...>, ...]` and
    `aliases [0 -> 0]` (input index to output index). The kernel's arguments are, in
    order: the prefetch refs, one ref per input, one per output, then the scratch refs.
    """

    name = "pallas.call"

    kernel_name = prop_def(StringAttr)
    grid = prop_def(DenseArrayBase[I64])
    in_specs = prop_def(ArrayAttr[BlockSpecAttr])
    out_specs = prop_def(ArrayAttr[BlockSpecAttr])
    num_scalar_prefetch = prop_def(IntegerAttr[I64])
    dimension_semantics = prop_def(ArrayAttr[DimensionSemanticsAttr])
    scratch_shapes = prop_def(ArrayAttr[RefType])
    input_output_aliases = prop_def(DenseArrayBase[I64])
    cost_estimate = opt_prop_def(CostEstimateAttr)
    vmem_limit_bytes = opt_prop_def(IntegerAttr[I64])

    args = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator())

    def __init__(
        self,
        kernel_name: str,
        args: Sequence[SSAValue],
        result_types: Sequence[TensorType],
        grid: Sequence[int],
        in_specs: Sequence[BlockSpecAttr],
        out_specs: Sequence[BlockSpecAttr],
        dimension_semantics: Sequence[DimensionSemantics | str],
        num_scalar_prefetch: int = 0,
        scratch_shapes: Sequence[RefType] = (),
        input_output_aliases: Sequence[tuple[int, int]] = (),
        cost_estimate: CostEstimateAttr | None = None,
        vmem_limit_bytes: int | None = None,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block())
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={
                "kernel_name": StringAttr(kernel_name),
                "grid": DenseArrayBase.from_list(i64, grid),
                "in_specs": ArrayAttr(in_specs),
                "out_specs": ArrayAttr(out_specs),
                "num_scalar_prefetch": IntegerAttr(num_scalar_prefetch, i64),
                "dimension_semantics": ArrayAttr(
                    [
                        DimensionSemanticsAttr(DimensionSemantics(s))
                        for s in dimension_semantics
                    ]
                ),
                "scratch_shapes": ArrayAttr(scratch_shapes),
                "input_output_aliases": DenseArrayBase.from_list(
                    i64, [x for pair in input_output_aliases for x in pair]
                ),
                "cost_estimate": cost_estimate,
                "vmem_limit_bytes": None
                if vmem_limit_bytes is None
                else IntegerAttr(vmem_limit_bytes, i64),
            },
            regions=[body],
        )

    # -- convenient views -----------------------------------------------------------

    @property
    def n_prefetch(self) -> int:
        return self.num_scalar_prefetch.value.data

    @property
    def prefetch_args(self) -> Sequence[SSAValue]:
        return self.args[: self.n_prefetch]

    @property
    def block_args(self) -> Sequence[SSAValue]:
        return self.args[self.n_prefetch :]

    @property
    def aliases(self) -> list[tuple[int, int]]:
        flat = self.input_output_aliases.get_values()
        return list(zip(flat[::2], flat[1::2]))

    def expected_kernel_arg_types(self) -> list[Attribute]:
        types: list[Attribute] = []
        for a in self.prefetch_args:
            assert isinstance(a.type, TensorType)
            types.append(
                RefType(a.type.get_shape(), a.type.element_type, MemorySpace.SMEM)
            )
        for value, spec in (
            *zip(self.block_args, self.in_specs.data),
            *zip(self.outs, self.out_specs.data),
        ):
            t = value.type
            assert isinstance(t, TensorType)
            if spec.space == MemorySpace.ANY:
                types.append(RefType(t.get_shape(), t.element_type, MemorySpace.ANY))
            else:
                types.append(RefType(spec.ref_shape(), t.element_type, spec.space))
        types.extend(self.scratch_shapes.data)
        return types

    # -- syntax -------------------------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        name = parser.parse_symbol_name()
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        grid: list[int] = []
        in_specs: list[Attribute] = []
        out_specs: list[Attribute] = []
        semantics: list[DimensionSemantics] = []
        scratch: list[Attribute] = []
        aliases: list[tuple[int, int]] = []
        n_prefetch = 0
        while True:
            clause = parser.parse_optional_keyword_in(_CALL_CLAUSES)
            if clause is None:
                break
            if clause == "grid":
                grid = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_integer
                )
            elif clause == "in":
                in_specs = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_block_spec(parser)
                )
            elif clause == "out":
                out_specs = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_block_spec(parser)
                )
            elif clause == "prefetch":
                n_prefetch = parser.parse_integer(
                    allow_boolean=False, allow_negative=False
                )
            elif clause == "semantics":
                semantics = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE,
                    lambda: parser.parse_str_enum(DimensionSemantics),
                )
            elif clause == "scratch":
                scratch = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_scratch_ref(parser)
                )
            else:

                def alias() -> tuple[int, int]:
                    i = parser.parse_integer(allow_boolean=False, allow_negative=False)
                    parser.parse_punctuation("->")
                    o = parser.parse_integer(allow_boolean=False, allow_negative=False)
                    return i, o

                aliases = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, alias
                )
        attrs = parse_optional_attributes_keyword(parser)
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        if len(ftype.inputs.data) != len(operands):
            parser.raise_error(
                f"{len(operands)} operands but {len(ftype.inputs.data)} operand types",
                pos,
                parser.pos,
            )
        args = [
            parser.resolve_operand(o, t)
            for o, t in zip(operands, ftype.inputs.data, strict=True)
        ]
        parser.parse_keyword("kernel")
        kargs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        body = parser.parse_region(kargs)
        props: dict[str, Attribute] = {}
        for key in ("cost_estimate", "vmem_limit_bytes"):
            if key in attrs:
                props[key] = attrs.pop(key)
        op = cls(
            name.data,
            args,
            list(ftype.outputs.data),  # type: ignore[arg-type]
            grid,
            in_specs,  # type: ignore[arg-type]
            out_specs,  # type: ignore[arg-type]
            semantics,
            n_prefetch,
            scratch,  # type: ignore[arg-type]
            aliases,
            body=body,
        )
        op.properties.update(props)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.kernel_name.data)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(")")
        with printer.indented():
            printer.print_string(" grid [")
            printer.print_list(
                self.grid.get_values(), lambda n: printer.print_string(str(n))
            )
            printer.print_string("]")
            if self.n_prefetch:
                printer.print_string(f" prefetch {self.n_prefetch}")
            for keyword, specs in (("in", self.in_specs), ("out", self.out_specs)):
                printer.print_string("\n")
                printer.print_string(f"{keyword} [")
                printer.print_list(specs.data, printer.print_attribute)
                printer.print_string("]")
            printer.print_string("\n")
            printer.print_string("semantics [")
            printer.print_list(
                self.dimension_semantics.data,
                lambda s: printer.print_string(s.data.value),
            )
            printer.print_string("]")
            if self.scratch_shapes.data:
                printer.print_string(" scratch [")
                printer.print_list(self.scratch_shapes.data, printer.print_attribute)
                printer.print_string("]")
            if self.aliases:
                printer.print_string(" aliases [")
                printer.print_list(
                    self.aliases, lambda a: printer.print_string(f"{a[0]} -> {a[1]}")
                )
                printer.print_string("]")
            extra: dict[str, Attribute] = dict(self.attributes)
            if self.cost_estimate is not None:
                extra["cost_estimate"] = self.cost_estimate
            if self.vmem_limit_bytes is not None:
                extra["vmem_limit_bytes"] = self.vmem_limit_bytes
            if extra:
                printer.print_string("\n")
                printer.print_string("attributes ")
                printer.print_attr_dict(extra)
            printer.print_string("\n")
            printer.print_string(": (")
            printer.print_list([a.type for a in self.args], printer.print_attribute)
            printer.print_string(") -> ")
            outs = [r.type for r in self.outs]
            if len(outs) == 1:
                printer.print_attribute(outs[0])
            else:
                printer.print_string("(")
                printer.print_list(outs, printer.print_attribute)
                printer.print_string(")")
            printer.print_string("\n")
            printer.print_string("kernel(")
            printer.print_list(self.body.block.args, printer.print_block_argument)
            printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=False)

    # -- checks -------------------------------------------------------------------

    def verify_(self) -> None:
        grid = self.grid.get_values()
        n_pre = self.n_prefetch
        if any(n <= 0 for n in grid):
            raise VerifyException("grid extents must be positive")
        if not 0 <= n_pre <= len(self.args):
            raise VerifyException(f"prefetch {n_pre} but only {len(self.args)} operands")
        if len(self.dimension_semantics.data) != len(grid):
            raise VerifyException(
                f"grid has {len(grid)} dims but dimension_semantics has "
                f"{len(self.dimension_semantics.data)} entries"
            )
        if len(self.in_specs.data) != len(self.args) - n_pre:
            raise VerifyException(
                f"{len(self.args) - n_pre} block operands but "
                f"{len(self.in_specs.data)} in_specs"
            )
        if len(self.out_specs.data) != len(self.outs):
            raise VerifyException(
                f"{len(self.outs)} results but {len(self.out_specs.data)} out_specs"
            )
        smem = 0
        for i, a in enumerate(self.prefetch_args):
            t = a.type
            assert isinstance(t, TensorType)
            if t.element_type != i32:
                raise VerifyException(
                    f"scalar-prefetch operand #{i} must be i32 (SMEM holds 32-bit "
                    f"scalars), got {t.element_type}"
                )
            smem += 4 * t.element_count()
        if smem > SMEM_BYTES:
            raise VerifyException(
                f"scalar-prefetch operands take {smem} bytes; SMEM holds {SMEM_BYTES}"
            )
        for k, (value, spec) in enumerate(
            [
                *zip(self.block_args, self.in_specs.data),
                *zip(self.outs, self.out_specs.data),
            ]
        ):
            what = (
                f"in_specs[{k}]"
                if k < len(self.in_specs.data)
                else f"out_specs[{k - len(self.in_specs.data)}]"
            )
            self._verify_spec(what, value, spec, len(grid))
        for i, o in self.aliases:
            if not (n_pre <= i < len(self.args)) or not (0 <= o < len(self.outs)):
                raise VerifyException(f"alias {i} -> {o} names no block operand/result")
            if self.args[i].type != self.outs[o].type:
                raise VerifyException(
                    f"alias {i} -> {o} joins {self.args[i].type} and {self.outs[o].type}"
                )
        for k, ref in enumerate(self.scratch_shapes.data):
            if ref.space == MemorySpace.ANY:
                raise VerifyException(
                    f"scratch_shapes[{k}] is in memory space any; scratch lives in vmem or smem"
                )
            if ref.space == MemorySpace.SEMAPHORE and (
                ref.get_shape() or ref.element_type != i32
            ):
                raise VerifyException(
                    f"scratch_shapes[{k}]: a DMA semaphore is a rank-0 i32 ref"
                )
        if self.vmem_limit_bytes is not None and self.vmem_limit_bytes.value.data <= 0:
            raise VerifyException("vmem_limit_bytes must be positive")
        got = [a.type for a in self.body.block.args]
        want = self.expected_kernel_arg_types()
        if got != want:
            raise VerifyException(
                "kernel arguments must be ("
                + ", ".join(map(str, want))
                + "), got ("
                + ", ".join(map(str, got))
                + ")"
            )

    def _verify_spec(
        self, what: str, value: SSAValue, spec: BlockSpecAttr, grid_rank: int
    ) -> None:
        t = value.type
        assert isinstance(t, TensorType)
        bits = _bitwidth(t.element_type)
        if bits is not None and bits > MAX_ELEMENT_BITS:
            raise VerifyException(
                f"{what}: TPU kernels have no 64-bit types; got {t.element_type}"
            )
        if spec.space == MemorySpace.ANY:
            return
        if len(spec.shape) != t.get_num_dims():
            raise VerifyException(
                f"{what}: the block spec has rank {len(spec.shape)} but its operand "
                f"{t} has rank {t.get_num_dims()}"
            )
        if spec.map.num_dims != grid_rank:
            raise VerifyException(
                f"{what}: the index map takes {spec.map.num_dims} grid indices but "
                f"the grid has {grid_rank} dims"
            )
        for p, m in spec.prefetch:
            if p >= self.n_prefetch:
                raise VerifyException(
                    f"{what}: binds prefetch{p} but the call has "
                    f"{self.n_prefetch} prefetch operands"
                )
            pt = self.args[p].type
            assert isinstance(pt, TensorType)
            if len(m.results) != pt.get_num_dims():
                raise VerifyException(
                    f"{what}: prefetch{p} has rank {pt.get_num_dims()} but its "
                    f"binding gives {len(m.results)} indices"
                )
        if (err := block_shape_error(spec.shape, t.get_shape(), bits or 32)) is not None:
            raise VerifyException(f"{what}: {err}")
        # Block indices must name blocks of the array at every grid point (interpret
        # mode clamps a stray index silently; on a TPU it reads the wrong memory).
        grid = [(0, n - 1) for n in self.grid.get_values()]
        symbols: list[Interval | None] = [None] * spec.map.num_symbols
        for k, (b, size, n) in enumerate(
            zip(map_bounds(spec.map, grid, symbols), spec.shape, t.get_shape())
        ):
            if spec.element:
                # Element offsets: every window lies inside the array.
                if b is not None and (b[0] < 0 or b[1] + (size or 1) > n):
                    raise VerifyException(
                        f"{what}: element offset {k} ranges over [{b[0]}, {b[1]}] but "
                        f"windows of {size} must fit in the dim of {n}"
                    )
                continue
            blocks = -(-n // (size or 1))
            if b is not None and (b[0] < 0 or b[1] >= blocks):
                raise VerifyException(
                    f"{what}: block index {k} ranges over [{b[0]}, {b[1]}] but the "
                    f"operand has {blocks} blocks of {size or 1} along dim {k}"
                )


# ---------------------------------------------------------------------------------------
# Static indexers: an int, a full slice `:`, or `ds(start, size)` / `ds(start, size, stride = k)`


@irdl_attr_definition
class SliceAttr(ParametrizedAttribute):
    """`pl.ds(start, size, stride)` with static ints: `#pallas.ds<0, 8, 2>`."""

    name = "pallas.ds"

    start: IntAttr
    size: IntAttr
    stride: IntAttr

    def __init__(self, start: int, size: int, stride: int = 1):
        super().__init__(IntAttr(start), IntAttr(size), IntAttr(stride))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            vals = [parser.parse_integer(allow_boolean=False)]
            while parser.parse_optional_punctuation(",") is not None:
                vals.append(parser.parse_integer(allow_boolean=False))
        if len(vals) not in (2, 3):
            parser.raise_error("expected #pallas.ds<start, size[, stride]>")
        return tuple(IntAttr(v) for v in (*vals, 1)[:3])

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.start.data}, {self.size.data}, {self.stride.data}>")

    def verify(self) -> None:
        if self.start.data < 0 or self.size.data <= 0 or self.stride.data <= 0:
            raise VerifyException("ds needs start >= 0, size > 0 and stride > 0")


Indexer = IntAttr | SliceAttr


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


def _verify_indexers(indexers: ArrayAttr, ref: RefType) -> None:
    shape = ref.get_shape()
    if indexers.data and len(indexers.data) != len(shape):
        raise VerifyException(
            f"{len(indexers.data)} indexers for a rank-{len(shape)} ref"
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
    _verify_indexers(indexers, ref)
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
        ref = parser.parse_unresolved_operand()
        ix_pos = parser.pos
        raw = _parse_indexers(parser)
        ix_span = (ix_pos, parser.pos)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        rtype = parser.parse_type()
        parser.parse_punctuation("->")
        ttype = parser.parse_type()
        if not isinstance(rtype, RefType) or not isinstance(ttype, TensorType):
            parser.raise_error(
                "expected `!pallas.ref<...> -> tensor<...>`", pos, parser.pos
            )
        op = cls(
            parser.resolve_operand(ref, rtype),
            ttype,
            _resolve_indexers(parser, raw, rtype.get_shape(), ix_span).data,  # type: ignore[arg-type]
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ref)
        rtype = self.ref.type
        assert isinstance(rtype, RefType)
        _print_indexers(printer, self.indexers, rtype.get_shape())
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(rtype)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

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
    """`jnp.dot(a, b, preferred_element_type=f32)` in the kernel: the MXU.

    ```mlir
    %c = pallas.dot %a, %b : tensor<128x256xbf16>, tensor<256x128xbf16> -> tensor<128x128xf32>
    ```
    """

    name = "pallas.dot"


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


class DmaOpBase(IRDLOperation):
    """Shared by `pallas.dma_start` and `pallas.dma_wait`: one row of `src` (in HBM,
    memory space `any`, or a VMEM-resident block: a local copy) at a dynamic row index,
    to row `dst_row` of `dst` (VMEM), signalling `sem`:
    `pltpu.make_async_copy(src.at[pl.ds(row, 1)], dst.at[pl.ds(r, 1)], sem)`. With
    leading indices (`%src at [%b, %c] [%row]`), the row is one of `src[b, c]`:
    `src.at[b, c, pl.ds(row, 1)]`. With `{rows = P}`, P consecutive rows from `row`
    land in slab `dst_row` of a `(R, P, ...)` destination:
    `make_async_copy(src.at[pl.ds(row, P)], dst.at[r], sem)` (the packed rows of 8- or
    16-bit data, which one-row slices cannot address, move a 32-bit sublane at a time).
    """

    src = operand_def(RefType)
    src_lead = var_operand_def(i32)
    src_row = operand_def(i32)
    dst = operand_def(RefType)
    sem = operand_def(RefType)
    dst_row = prop_def(IntegerAttr[I64])
    rows = opt_attr_def(IntegerAttr[I64])

    traits = traits_def(HasAncestor(CallOp))
    assembly_format = (
        "$src (`at` ` ` `[` $src_lead^ `]`)? `[` $src_row `]` `,` $dst `[` $dst_row `]` `,` $sem "
        "attr-dict `:` type($src) `,` type($dst) `,` type($sem)"
    )

    def __init__(
        self,
        src: SSAValue,
        src_row: SSAValue,
        dst: SSAValue,
        dst_row: int,
        sem: SSAValue,
        src_lead: Sequence[SSAValue] = (),
        rows: int = 1,
    ):
        super().__init__(
            operands=[src, src_lead, src_row, dst, sem],
            properties={"dst_row": IntegerAttr(dst_row, i64)},
            attributes={"rows": IntegerAttr(rows, i64)} if rows > 1 else {},
        )

    @property
    def row_count(self) -> int:
        """Rows one copy moves (1, or P for a slab of packed rows)."""
        return 1 if self.rows is None else self.rows.value.data

    def verify_(self) -> None:
        src, dst, sem = self.src.type, self.dst.type, self.sem.type
        assert isinstance(src, RefType) and isinstance(dst, RefType)
        assert isinstance(sem, RefType)
        if src.space not in (MemorySpace.ANY, MemorySpace.VMEM) or (
            dst.space != MemorySpace.VMEM
        ):
            raise VerifyException(
                "a row DMA copies from an `any` or `vmem` ref into a `vmem` ref"
            )
        if (
            sem.space != MemorySpace.SEMAPHORE
            or sem.get_shape()
            or sem.element_type != i32
        ):
            raise VerifyException("a row DMA signals a rank-0 i32 `semaphore` ref")
        lead = len(self.src_lead)
        if len(src.get_shape()) <= lead or not dst.get_shape():
            raise VerifyException(
                f"a row DMA copies rows: {src} needs a dim after its {lead} leading "
                "indices, and the destination rank >= 1"
            )
        trailing = list(dst.get_shape()[1:])
        if self.row_count > 1:
            if trailing[:1] != [self.row_count]:
                raise VerifyException(
                    f"a copy of {self.row_count} rows lands in a slab of a "
                    f"(R, {self.row_count}, ...) destination, not {dst}"
                )
            trailing = trailing[1:]
        if (
            list(src.get_shape()[lead + 1 :]) != trailing
            or src.element_type != dst.element_type
        ):
            raise VerifyException(
                f"rows of {src} do not fit rows of {dst}: same trailing dims and type needed"
            )
        if not 0 <= self.dst_row.value.data < dst.get_shape()[0]:
            raise VerifyException(f"row {self.dst_row.value.data} is outside {dst}")


@irdl_op_definition
class DmaStartOp(DmaOpBase):
    """Start a row copy (from HBM, or from a VMEM-resident block; see `DmaOpBase`).

    ```mlir
    pallas.dma_start %table_ref[%row], %rows_ref[3], %sem
        : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    ```
    """

    name = "pallas.dma_start"


@irdl_op_definition
class DmaWaitOp(DmaOpBase):
    """Wait for a row copy started with the same operands.

    ```mlir
    pallas.dma_wait %table_ref[%row], %rows_ref[3], %sem
        : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    ```
    """

    name = "pallas.dma_wait"


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
class IotaOp(IRDLOperation):
    """`jax.lax.broadcasted_iota(jnp.int32, shape, dim) + offset`: indices along one dim
    of a tile, from an i32 scalar offset.

    ```mlir
    %j = pallas.iota %offset dim 1 : i32 -> tensor<8x128xi32>
    ```
    """

    name = "pallas.iota"

    offset = operand_def(i32)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    traits = traits_def(HasAncestor(CallOp), Pure())
    assembly_format = "$offset `dim` $dim attr-dict `:` type($offset) `->` type($result)"

    def __init__(self, offset: SSAValue, dim: int, tile_type: TensorType):
        super().__init__(
            operands=[offset],
            properties={"dim": IntegerAttr(dim, i64)},
            result_types=[tile_type],
        )

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, TensorType)
        if t.element_type != i32:
            raise VerifyException("pallas.iota gives i32 values")
        if not 0 <= self.dim.value.data < t.get_num_dims():
            raise VerifyException(f"dim {self.dim.value.data} is not a dim of {t}")


@irdl_op_definition
class XlaCallOp(IRDLOperation):
    """A call of an `xla.func` from @forward: it runs as XLA (a jnp function), not as a
    Pallas kernel.

    ```mlir
    %g = pallas.xla_call @gather_0(%idx, %emb)
        : (tensor<64xi64>, tensor<1000x256xf32>) -> tensor<64x256xf32>
    ```

    The operands and results have exactly the function's types: the arrays as @forward
    holds them (the function reads and writes them as its kernel's buffers, the same
    elements, so no relayout is needed).
    """

    name = "pallas.xla_call"

    callee = prop_def(SymbolRefAttr)
    args = var_operand_def(TensorType)
    outs = var_result_def(TensorType)

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $outs)"

    def __init__(
        self, callee: str, args: Sequence[SSAValue], result_types: Sequence[TensorType]
    ):
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": SymbolRefAttr(callee)},
        )

    def function(self) -> xla.FuncOp | None:
        found = SymbolTable.lookup_symbol(self, self.callee)
        return found if isinstance(found, xla.FuncOp) else None

    def verify_(self) -> None:
        function = self.function()
        if function is None:
            raise VerifyException(f"{self.callee} is not an xla.func")
        function.verify_call(self.args.types, self.outs.types)


Pallas = Dialect(
    "pallas",
    [
        IotaOp,
        DmaStartOp,
        DmaWaitOp,
        ReadOp,
        WhenOp,
        DotOp,
        CallOp,
        ReshapeOp,
        LoadOp,
        StoreOp,
        ProgramIdOp,
        TransposeOp,
        BroadcastOp,
        ReduceOp,
        ConvertOp,
        CompareOp,
        SelectOp,
        XlaCallOp,
    ],
    [
        RefType,
        BlockSpecAttr,
        CostEstimateAttr,
        DimensionSemanticsAttr,
        SliceAttr,
    ],
)
