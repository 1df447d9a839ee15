"""The `pallas` dialect's attributes and types: memory spaces, refs, block specs,
dimension semantics, cost estimates and static slices.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    TypeAttribute,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    irdl_attr_definition,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class MemorySpace(StrEnum):
    VMEM = "vmem"
    SMEM = "smem"
    ANY = "any"
    """Left where it is (HBM); reachable only by DMA."""
    SEMAPHORE = "semaphore"
    """A DMA semaphore (`pltpu.SemaphoreType.DMA(())` as a scratch shape): rank 0, i32."""


@irdl_attr_definition
class MemorySpaceAttr(EnumAttribute[MemorySpace], SpacedOpaqueSyntaxAttribute):
    """`#pallas<memory_space vmem>`; in a `!pallas.ref` or block spec, just `vmem`."""

    name = "pallas.memory_space"


class BlockIndexing(StrEnum):
    """What a block spec's index map returns."""

    BLOCKED = "blocked"
    """Block indices (`pl.Blocked` dims): element offset = index * block size."""
    ELEMENT = "element"
    """Element offsets (`pl.Element` dims): a window that starts anywhere."""


@irdl_attr_definition
class BlockIndexingAttr(EnumAttribute[BlockIndexing], SpacedOpaqueSyntaxAttribute):
    """`#pallas<block_indexing blocked>` or `element`."""

    name = "pallas.block_indexing"


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
    memory_space: MemorySpaceAttr

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        memory_space: MemorySpace | str = MemorySpace.VMEM,
    ):
        super().__init__(
            ArrayAttr([IntAttr(d) for d in shape]),
            element_type,
            MemorySpaceAttr(MemorySpace(memory_space)),
        )

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def space(self) -> MemorySpace:
        return self.memory_space.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, elt = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            space = parser.parse_str_enum(MemorySpace)
        return (
            ArrayAttr([IntAttr(d) for d in shape]),
            elt,
            MemorySpaceAttr(space),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(_shape_prefix(self.get_shape()))
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.memory_space.data.value}")

    def verify(self) -> None:
        if any(d.data <= 0 for d in self.shape.data):
            raise VerifyException("ref dims must be positive")


SQUEEZED = -1
"""How a squeezed block dim (`None` / `pl.squeezed` in Pallas) is stored."""

DONATED_ARGUMENT = "pallas.donated"
"""The unit attribute on an argument of `func.func @forward` whose array a kernel
overwrites (an `inout` input, aliased to a result): the caller donates it
(`jax.jit(..., donate_argnums=...)`), or XLA copies it first."""


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
    memory_space: MemorySpaceAttr
    prefetch_operands: DenseArrayBase
    prefetch_maps: ArrayAttr[AffineMapAttr]
    indexing: BlockIndexingAttr

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
            MemorySpaceAttr(MemorySpace(memory_space)),
            DenseArrayBase.from_list(i64, [p for p, _ in prefetch]),
            ArrayAttr([AffineMapAttr(m) for _, m in prefetch]),
            BlockIndexingAttr(
                BlockIndexing.ELEMENT if element else BlockIndexing.BLOCKED
            ),
        )

    @property
    def element(self) -> bool:
        """Whether the index map returns element offsets (`pl.Element` dims)."""
        return self.indexing.data == BlockIndexing.ELEMENT

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
        return self.memory_space.data

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
        if self.element and (SQUEEZED in self.block_shape.get_values() or self.prefetch):
            raise VerifyException(
                "an element-indexed block spec has no squeezed dims and no prefetched "
                "symbols"
            )
        if self.space == MemorySpace.SEMAPHORE:
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
