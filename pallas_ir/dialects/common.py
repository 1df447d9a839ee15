"""Syntax and verification helpers shared by the ta, tl and pallas dialects.

Nothing here defines a concrete op: this module holds the pieces that every level spells
the same way (kernel signatures with argument roles, `%buf[map](dims)[symbols]`
accesses, the reductions and tile-level compute that tl and pallas share), so that the
three dialects cannot drift apart. The enum contracts (roles, reduction kinds, compare
predicates) are in `enums`; interval bounds of index maps in `pallas_ir.interval_bounds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Region,
    SSAValue,
)
from xdsl.ir.affine import (
    AffineDimExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    IsolatedFromAbove,
    NoTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

# The contracts live in `enums`, interval bounds in `interval_bounds`; these names stay
# importable from here too.
from pallas_ir.dialects.enums import (  # noqa: F401
    FLOAT_PREDICATES,
    INT_PREDICATES,
    READABLE_ROLES,
    WRITABLE_ROLES,
    ArgRole,
    ArgRoleAttr,
    ComparePredicate,
    ComparePredicateAttr,
    DotPrecision,
    DotPrecisionAttr,
    ReductionKind,
    ReductionKindAttr,
    arg_role_attrs,
    check_dialect,
    compare_predicate_attr,
    dialect_of,
    dot_precision_attr,
    reduction_kind_attr,
    verify_reduction_kind,
)
from pallas_ir.interval_bounds import (  # noqa: F401
    Interval,
    expr_bounds,
    loop_bounds_of,
    map_bounds,
)

# ---------------------------------------------------------------------------------------
# Kernel argument roles


def parse_kernel_signature(
    parser: Parser,
) -> tuple[StringAttr, list[Parser.Argument], list[ArgRole]]:
    """Parse `@name(%a: T {role = "in"}, ...)` and return name, block args and roles."""
    name = parser.parse_symbol_name()

    def parse_one() -> tuple[Parser.Argument, ArgRole]:
        arg = parser.parse_argument()
        pos = parser.pos
        attrs = parser.parse_optional_attr_dict()
        role = attrs.get("role", None)
        if not isinstance(role, StringAttr):
            parser.raise_error(
                'kernel argument needs a role: {role = "in" | "out" | "inout" | "prefetch"}',
                pos,
                parser.pos,
            )
        if set(attrs) != {"role"}:
            parser.raise_error(
                "kernel arguments take only a role attribute", pos, parser.pos
            )
        valid = {r.value for r in ArgRole}
        if role.data not in valid:
            parser.raise_error(
                f"argument #{len(roles)} has role '{role.data}'; expected one of "
                + ", ".join(sorted(valid)),
                pos,
                parser.pos,
            )
        roles.append(ArgRole(role.data))
        return arg, roles[-1]

    roles: list[ArgRole] = []
    pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_one)
    return name, [a for a, _ in pairs], [r for _, r in pairs]


def print_kernel_signature(
    printer: Printer, name: StringAttr, block: Block, roles: ArrayAttr[ArgRoleAttr]
) -> None:
    printer.print_string(" ")
    printer.print_symbol_name(name.data)
    printer.print_string("(")
    for i, (arg, role) in enumerate(zip(block.args, roles.data, strict=True)):
        if i:
            printer.print_string(", ")
        printer.print_block_argument(arg)
        printer.print_string(f' {{role = "{role.data}"}}')
    printer.print_string(")")


def verify_roles(roles: ArrayAttr[ArgRoleAttr], region: Region, what: str) -> None:
    if not region.blocks:
        raise VerifyException(f"{what} needs a body")
    block = region.block
    if len(block.args) != len(roles.data):
        raise VerifyException(
            f"{what} has {len(block.args)} arguments but {len(roles.data)} roles"
        )
    for role in roles.data:
        check_dialect(role, what, "role")
    if not any(r.data in WRITABLE_ROLES for r in roles.data):
        raise VerifyException(f"{what} has no output argument (role 'out' or 'inout')")


def parse_optional_attributes_keyword(parser: Parser) -> dict[str, Attribute]:
    """Parse `attributes {...}` if present (the spelling of func.func)."""
    if parser.parse_optional_keyword("attributes") is None:
        return {}
    return parser.parse_optional_attr_dict()


def print_optional_attributes_keyword(
    printer: Printer, attributes: dict[str, Attribute]
) -> None:
    if attributes:
        printer.print_string(" attributes ")
        printer.print_attr_dict(attributes)


class KernelOpBase(IRDLOperation):
    """Fields, syntax and checks of `ta.kernel` and `tl.kernel` (they differ in name only).

    `@name(%a: memref<...> {role = "in"}, ...) attributes {...} { body }`
    """

    sym_name = prop_def(SymbolNameConstraint())
    roles = prop_def(ArrayAttr[ArgRoleAttr])
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(
        self,
        name: str,
        arg_types: Sequence[Attribute],
        roles: Sequence[str | ArgRole],
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=arg_types))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "roles": arg_role_attrs(self.name, roles),
            },
            regions=[body],
        )

    def role_of(self, arg: BlockArgument) -> ArgRole:
        return self.roles.data[arg.index].data

    def set_roles(self, roles: Sequence[str | ArgRole]) -> None:
        """Replace the roles (one per argument), e.g. after adding an argument."""
        self.roles = arg_role_attrs(self.name, roles)

    @classmethod
    def parse(cls, parser: Parser):
        name, args, roles = parse_kernel_signature(parser)
        attrs = parse_optional_attributes_keyword(parser)
        body = parser.parse_region(args)
        op = cls(name.data, [a.type for a in args], roles, body)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.sym_name, self.body.block, self.roles)
        print_optional_attributes_keyword(printer, dict(self.attributes))
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        verify_roles(self.roles, self.body, self.name)
        for arg in self.body.block.args:
            if not isinstance(arg.type, MemRefType):
                raise VerifyException(
                    f"argument #{arg.index} must be a memref buffer, got {arg.type}"
                )
            if self.role_of(arg) == ArgRole.PREFETCH and not isinstance(
                arg.type.element_type, IntegerType
            ):
                raise VerifyException(
                    f"prefetch argument #{arg.index} must hold integers, got "
                    f"{arg.type.element_type}"
                )


# ---------------------------------------------------------------------------------------
# `%buf[map](%d0, %d1)[%s0]` accesses


@dataclass
class ParsedAccess:
    buffer: UnresolvedOperand
    map: AffineMap
    dims: list[UnresolvedOperand]
    symbols: list[UnresolvedOperand]


def parse_access(parser: Parser, buffer: UnresolvedOperand | None = None) -> ParsedAccess:
    """Parse `%buf[affine_map<...>](%d...)[%s...]` (the symbol list is optional); with
    `buffer`, the part after it (already parsed)."""
    if buffer is None:
        buffer = parser.parse_unresolved_operand()
    parser.parse_punctuation("[")
    pos = parser.pos
    attr = parser.parse_attribute()
    if not isinstance(attr, AffineMapAttr):
        parser.raise_error("expected an affine_map", pos, parser.pos)
    parser.parse_punctuation("]")
    dims = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    symbols = (
        parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        if parser._current_token.text == "["  # pyright: ignore[reportPrivateUsage]
        else []
    )
    return ParsedAccess(buffer, attr.data, dims, symbols)


def resolve_indices(parser: Parser, values: list[UnresolvedOperand]) -> list[SSAValue]:
    return [parser.resolve_operand(v, IndexType()) for v in values]


def print_access(
    printer: Printer,
    buffer: SSAValue,
    map: AffineMapAttr,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
) -> None:
    printer.print_operand(buffer)
    printer.print_string("[")
    printer.print_attribute(map)
    printer.print_string("](")
    printer.print_list(dims, printer.print_operand)
    printer.print_string(")")
    if symbols:
        printer.print_string("[")
        printer.print_list(symbols, printer.print_operand)
        printer.print_string("]")


def verify_map_arity(
    map: AffineMap, n_dims: int, n_symbols: int, n_results: int, what: str
) -> None:
    if map.num_dims != n_dims:
        raise VerifyException(
            f"{what} map has {map.num_dims} dims but {n_dims} dim operands"
        )
    if map.num_symbols != n_symbols:
        raise VerifyException(
            f"{what} map has {map.num_symbols} symbols but {n_symbols} symbol operands"
        )
    if len(map.results) != n_results:
        raise VerifyException(
            f"{what} map has {len(map.results)} results but the buffer needs {n_results}"
        )
    for e in map.results:
        used = [d for d in e.dfs() if isinstance(d, AffineDimExpr | AffineSymExpr)]
        for d in used:
            bound = map.num_dims if isinstance(d, AffineDimExpr) else map.num_symbols
            if d.position >= bound:
                raise VerifyException(f"{what} map uses {d}, which it does not declare")


# ---------------------------------------------------------------------------------------
# Reductions


def parse_reduction_kind(parser: Parser) -> ReductionKind:
    """Parse `<sum>`."""
    parser.parse_punctuation("<")
    kind = parser.parse_str_enum(ReductionKind)
    parser.parse_punctuation(">")
    return kind


def reduction_result_type(kind: ReductionKind, element_or_tensor: Attribute) -> Attribute:
    """argmax/argmin give i32 positions; the other kinds keep the operand's type."""
    if not kind.returns_index:
        return element_or_tensor
    if isinstance(element_or_tensor, TensorType):
        return TensorType(i32, element_or_tensor.get_shape())
    return i32


# ---------------------------------------------------------------------------------------
# Tile-level compute shared by tl and pallas (same meaning, different level)


def _shape_str(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape))


def verify_same_elements(src: Attribute, dst: Attribute) -> None:
    """A reshape (of a tensor or a memref) keeps the element type and count."""
    assert isinstance(src, TensorType | MemRefType)
    assert isinstance(dst, TensorType | MemRefType)
    if src.element_type != dst.element_type:
        raise VerifyException(
            f"reshape changes the element type from {src.element_type} to "
            f"{dst.element_type}"
        )
    if src.element_count() != dst.element_count():
        raise VerifyException(
            f"reshape from {src.element_count()} to {dst.element_count()} elements"
        )


class ReshapeHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    """tl.reshape and pallas.reshape fold, and the element-wise compute between them
    drops unit dims (dialects/canonicalization/tensor_values.py)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from pallas_ir.dialects.canonicalization.tensor_values import (
            IdentityReshape,
            ReshapeOfReshape,
            SqueezeUnitDims,
        )

        return (ReshapeOfReshape(), IdentityReshape(), SqueezeUnitDims())


class TransposeHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    """tl.transpose and pallas.transpose fold (dialects/canonicalization/tensor_values.py)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from pallas_ir.dialects.canonicalization.tensor_values import (
            IdentityTranspose,
            TransposeOfTranspose,
        )

        return (TransposeOfTranspose(), IdentityTranspose())


class RollOpBase(IRDLOperation):
    """`%r = D.roll %v by 16 along 1 : tensor<8x32xf32>`: the tile rotated along dim
    `dim` as `jnp.roll` rotates it: result element j of that dim is source element
    `(j - shift) mod n`, 0 <= shift < n. Where a kernel reads a whole dim at a rotated
    index, `(j + c) mod n` (`torch.roll`, a rotary embedding's rotate-half), the tile is
    loaded whole and rolled by `n - c`."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    source = operand_def(T)
    shift = prop_def(IntegerAttr[I64])
    dim = prop_def(IntegerAttr[I64])
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$source `by` $shift `along` $dim attr-dict `:` type($result)"

    def __init__(self, source: SSAValue, shift: int, dim: int):
        super().__init__(
            operands=[source],
            properties={
                "shift": IntegerAttr(shift, i64),
                "dim": IntegerAttr(dim, i64),
            },
            result_types=[source.type],
        )

    def verify_(self) -> None:
        t = self.source.type
        assert isinstance(t, TensorType)
        dim, shift = self.dim.value.data, self.shift.value.data
        if not 0 <= dim < t.get_num_dims():
            raise VerifyException(f"dim {dim} is not a dim of {t}")
        if not 0 <= shift < t.get_shape()[dim]:
            raise VerifyException(
                f"shift {shift} is not in [0, {t.get_shape()[dim]}), the extent of "
                f"dim {dim}"
            )


class IotaOpBase(IRDLOperation):
    """The i32 indices along dim `dim` of a tile, from an offset (the same across the
    other dims). Each dialect says where the offset comes from: `tl` from the grid
    indices through a map, `pallas` from an i32 scalar."""

    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    def along(self, dim: int, tile_type: TensorType) -> IotaOpBase:
        """The same indices, from the same offset, along dim `dim` of a tile of
        `tile_type` (a canonicalization that drops unit dims renumbers `dim`)."""
        return type(self).create(
            operands=list(self.operands),
            properties={**self.properties, "dim": IntegerAttr(dim, i64)},
            result_types=[tile_type],
        )

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, TensorType)
        if t.element_type != i32:
            raise VerifyException(f"{self.name} gives i32 values")
        if not 0 <= self.dim.value.data < t.get_num_dims():
            raise VerifyException(f"dim {self.dim.value.data} is not a dim of {t}")


class TileToTileOpBase(IRDLOperation):
    """`%r = D.op %v : tensor<...> to tensor<...>`: one tile in, one tile out."""

    source = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: TensorType):
        super().__init__(operands=[source], result_types=[result_type])


class ReshapeOpBase(TileToTileOpBase):
    """`%r = D.reshape %v : tensor<8x1x128xf32> to tensor<8x128xf32>`: the same elements
    in row-major order under another shape."""

    def verify_(self) -> None:
        verify_same_elements(self.source.type, self.result.type)


class TransposeOpBase(IRDLOperation):
    """`%t = D.transpose %v [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>`:
    result dim i is source dim permutation[i]."""

    source = operand_def(TensorType)
    permutation = prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$source $permutation attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, source: SSAValue, permutation: Sequence[int]):
        assert isinstance(source.type, TensorType)
        shape = source.type.get_shape()
        super().__init__(
            operands=[source],
            properties={"permutation": DenseArrayBase.from_list(i64, permutation)},
            result_types=[
                TensorType(source.type.element_type, [shape[p] for p in permutation])
            ],
        )

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        perm = self.permutation.get_values()
        if sorted(perm) != list(range(src.get_num_dims())):
            raise VerifyException(
                f"[{', '.join(map(str, perm))}] is not a permutation of "
                f"{src.get_num_dims()} dims"
            )
        want = [src.get_shape()[p] for p in perm]
        if list(res.get_shape()) != want or res.element_type != src.element_type:
            raise VerifyException(
                f"transposing {src} by [{', '.join(map(str, perm))}] gives "
                f"tensor<{_shape_str(want)}x{src.element_type}>, not {res}"
            )


class BroadcastOpBase(TileToTileOpBase):
    """`%b = D.broadcast %v : tensor<1x128xf32> to tensor<8x128xf32>`: dims of size 1
    are repeated; ranks are equal."""

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        if src.element_type != res.element_type:
            raise VerifyException("broadcast cannot change the element type")
        if src.get_num_dims() != res.get_num_dims():
            raise VerifyException(
                f"broadcast keeps the rank: {src.get_num_dims()} vs {res.get_num_dims()}"
            )
        for i, (a, b) in enumerate(zip(src.get_shape(), res.get_shape())):
            if a != b and a != 1:
                raise VerifyException(
                    f"dim {i} of size {a} cannot be broadcast to {b} (only size-1 dims can)"
                )


class ConvertOpBase(TileToTileOpBase):
    """`%r = D.convert %v : tensor<8x128xi8> to tensor<8x128xi32>`: each element
    converted to another element type, as numpy's and jnp's `astype` do.

    - int → int: two's-complement wrap (narrowing keeps the low bits; widening
      sign-extends a signless or signed source, zero-extends an unsigned one);
    - float → int: truncates toward zero (out-of-range values are undefined);
    - int → float, float → float: rounds to nearest even;
    - to `i1`: nonzero is true; from `i1`: true is 1 (so a sign-extension of `i1` is a
      convert then a negation).

    Shapes are equal; the element types must differ (a same-type convert is no op;
    use the value). Integer, float and index element types are allowed; signless
    integers are signed, and `ui8`/`ui32` give the unsigned readings.
    """

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        if src.get_shape() != res.get_shape():
            raise VerifyException(
                f"convert keeps the shape: {_shape_str(src.get_shape())} vs "
                f"{_shape_str(res.get_shape())}"
            )
        for t in (src.element_type, res.element_type):
            if not isinstance(t, IntegerType | IndexType | AnyFloat):
                raise VerifyException(
                    f"convert takes integer, index or float elements, not {t}"
                )
        if src.element_type == res.element_type:
            raise VerifyException(
                f"convert to the same element type {src.element_type}; use the value"
            )


class SelectOpBase(IRDLOperation):
    """`%r = D.select %cond, %a, %b : tensor<8x128xi1>, tensor<8x128xf32>`: the element
    of `a` where `cond` is true, else of `b` (`jnp.where(cond, a, b)`). `cond` is an
    `i1` tile of the same shape; `a`, `b` and the result have one type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    cond = operand_def(TensorType)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,` "
        "type($result)"
    )

    def __init__(self, cond: SSAValue, true_value: SSAValue, false_value: SSAValue):
        super().__init__(
            operands=[cond, true_value, false_value], result_types=[true_value.type]
        )

    def verify_(self) -> None:
        cond, res = self.cond.type, self.result.type
        assert isinstance(cond, TensorType) and isinstance(res, TensorType)
        if cond.element_type != IntegerType(1):
            raise VerifyException(
                f"select condition must be an i1 tile, got {cond.element_type} elements"
            )
        if cond.get_shape() != res.get_shape():
            raise VerifyException(
                f"select condition shape {_shape_str(cond.get_shape())} differs from "
                f"the value shape {_shape_str(res.get_shape())}"
            )


class CompareOpBase(IRDLOperation):
    """`%c = D.compare <olt> %a, %b : tensor<8x128xf32>`: an elementwise comparison of
    two tiles of one type, giving an `i1` tile of their shape. The predicates are
    arith's (`FLOAT_PREDICATES` on floats, `INT_PREDICATES` on integers and index)."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    predicate = prop_def(ComparePredicateAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    def __init__(self, predicate: ComparePredicate | str, lhs: SSAValue, rhs: SSAValue):
        assert isinstance(lhs.type, TensorType)
        super().__init__(
            operands=[lhs, rhs],
            properties={"predicate": compare_predicate_attr(self.name, predicate)},
            result_types=[TensorType(IntegerType(1), lhs.type.get_shape())],
        )

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_punctuation("<")
        predicate = parser.parse_str_enum(ComparePredicate)
        parser.parse_punctuation(">")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(
            predicate, parser.resolve_operand(lhs, t), parser.resolve_operand(rhs, t)
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" <{self.predicate.data}> ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    def verify_(self) -> None:
        check_dialect(self.predicate, self.name, "predicate")
        src, res = self.lhs.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        elt = src.element_type
        if isinstance(elt, AnyFloat):
            allowed, what = FLOAT_PREDICATES, "a float"
        elif isinstance(elt, IntegerType | IndexType):
            allowed, what = INT_PREDICATES, "an integer"
        else:
            raise VerifyException(f"compare takes integer or float elements, not {elt}")
        if self.predicate.data not in allowed:
            raise VerifyException(
                f"'{self.predicate.data}' is not {what} predicate; expected one of "
                + ", ".join(allowed)
            )
        want = TensorType(IntegerType(1), src.get_shape())
        if res != want:
            raise VerifyException(f"compare gives {want}, not {res}")


class ReduceTileOpBase(IRDLOperation):
    """`%r = D.reduce <sum> %v [1] : tensor<8x128xf32> -> tensor<8x1xf32>`: reduced
    dims are kept with size 1; argmax/argmin reduce one dim and give i32 positions."""

    kind = prop_def(ReductionKindAttr)
    dims = prop_def(DenseArrayBase[I64])
    source = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    def __init__(self, kind: ReductionKind | str, source: SSAValue, dims: Sequence[int]):
        kind = ReductionKind(kind)
        assert isinstance(source.type, TensorType)
        shape = [1 if i in dims else n for i, n in enumerate(source.type.get_shape())]
        elt = i32 if kind.returns_index else source.type.element_type
        super().__init__(
            operands=[source],
            properties={
                "kind": reduction_kind_attr(self.name, kind),
                "dims": DenseArrayBase.from_list(i64, dims),
            },
            result_types=[TensorType(elt, shape)],
        )

    @classmethod
    def parse(cls, parser: Parser):
        kind = parse_reduction_kind(parser)
        source = parser.parse_unresolved_operand()
        dims = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_integer
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        stype = parser.parse_type()
        parser.parse_punctuation("->")
        pos = parser.pos
        rtype = parser.parse_type()
        op = cls(kind, parser.resolve_operand(source, stype), dims)
        if rtype != op.result.type:
            parser.raise_error(
                f"reducing {stype} over [{', '.join(map(str, dims))}] gives "
                f"{op.result.type}, not {rtype}",
                pos,
                parser.pos,
            )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" <{self.kind.data}> ")
        printer.print_operand(self.source)
        printer.print_string(" [")
        printer.print_list(self.dims.get_values(), lambda d: printer.print_string(str(d)))
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        kind = verify_reduction_kind(self.kind, self.name)
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        dims = self.dims.get_values()
        rank = src.get_num_dims()
        if (
            not dims
            or len(set(dims)) != len(dims)
            or any(not 0 <= d < rank for d in dims)
        ):
            raise VerifyException(
                f"reduction dims [{', '.join(map(str, dims))}] must be distinct dims "
                f"of a rank-{rank} tensor"
            )
        if kind.returns_index and len(dims) != 1:
            raise VerifyException(f"<{kind}> reduces exactly one dim")
        shape = [1 if i in dims else n for i, n in enumerate(src.get_shape())]
        elt = i32 if kind.returns_index else src.element_type
        if list(res.get_shape()) != shape or res.element_type != elt:
            raise VerifyException(
                f"result must be tensor<{_shape_str(shape)}x{elt}>, got {res}"
            )


class DotOpBase(IRDLOperation):
    """`%c = D.dot %a, %b : tensor<MxKxbf16>, tensor<KxNxbf16> -> tensor<MxNxf32>`: a
    matrix product on the MXU, accumulated in f32 for floats (i32 for integers). With a
    leading batch dim, `tensor<BxMxK>` by `tensor<BxKxN>` gives `tensor<BxMxN>`: one
    product per batch index (attention's heads; `jnp.matmul`).

    `precision <highest>` multiplies f32 operands as f32 (what the program means);
    without it the MXU's default precision applies, one bfloat16 pass. Each dialect's
    op declares `precision` with its own attribute class."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs (`precision` ` ` `<` $precision^ `>`)? attr-dict "
        "`:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, precision: DotPrecision | str | None = None
    ):
        a, b = lhs.type, rhs.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        acc = i32 if isinstance(a.element_type, IntegerType) else Float32Type()
        shape = [*a.get_shape()[:-1], b.get_shape()[-1]]
        properties = (
            {}
            if precision is None
            else {"precision": dot_precision_attr(self.name, precision)}
        )
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TensorType(acc, shape)],
            properties=properties,
        )

    def precision_of(self) -> DotPrecision | None:
        """The `precision` property's value (declared by each dialect's op)."""
        attr: DotPrecisionAttr | None = self.precision  # type: ignore[attr-defined]
        return None if attr is None else attr.data

    def verify_(self) -> None:
        a, b, c = self.lhs.type, self.rhs.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        assert isinstance(c, TensorType)
        rank = a.get_num_dims()
        if rank not in (2, 3) or b.get_num_dims() != rank:
            raise VerifyException(
                "dot multiplies two rank-2 tiles, or two rank-3 tiles with a batch dim"
            )
        if a.get_shape()[-1] != b.get_shape()[-2]:
            raise VerifyException(
                f"dot of {_shape_str(a.get_shape())} by {_shape_str(b.get_shape())}: "
                "the contracted dims differ"
            )
        if a.get_shape()[:-2] != b.get_shape()[:-2]:
            raise VerifyException(
                f"dot of {_shape_str(a.get_shape())} by {_shape_str(b.get_shape())}: "
                "the batch dims differ"
            )
        if a.element_type != b.element_type:
            raise VerifyException("dot operands have one element type")
        acc = i32 if isinstance(a.element_type, IntegerType) else Float32Type()
        want = [*a.get_shape()[:-1], b.get_shape()[-1]]
        if list(c.get_shape()) != want or c.element_type != acc:
            raise VerifyException(f"dot gives tensor<{_shape_str(want)}x{acc}>, not {c}")
        if self.precision_of() is not None and isinstance(a.element_type, IntegerType):
            raise VerifyException("an integer dot is exact: it takes no precision")


def find_forward(module: ModuleOp) -> func.FuncOp | None:
    """The module's host program, `func.func @forward`, if it has one."""
    return next(
        (
            op
            for op in module.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data == "forward"
        ),
        None,
    )


ELEMENTWISE_DIALECTS = ("arith", "math", "special")
"""The dialects of scalar (ta) and element-wise tile (tl, pallas) compute."""

ARITH_CASTS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.FPToSIOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.UIToFPOp,
    arith.FPToUIOp,
    arith.IndexCastOp,
)
"""The `arith` casts a ta kernel body may hold."""

SCALAR_ONLY_CASTS = tuple(
    c for c in ARITH_CASTS if c not in (arith.ExtFOp, arith.TruncFOp)
)
"""Casts that `arith` verifies on scalars only (extf/truncf also take tensors)."""


def arith_predicate(op: arith.CmpfOp | arith.CmpiOp) -> ComparePredicate | None:
    """The predicate of an `arith.cmpf`/`cmpi` as the tile levels spell it, or None for
    cmpf's constant `false`/`true` (no level has them)."""
    floating = isinstance(op, arith.CmpfOp)
    names = (
        arith.CMPF_COMPARISON_OPERATIONS if floating else arith.CMPI_COMPARISON_OPERATIONS
    )
    name = names[op.predicate.value.data]
    allowed = FLOAT_PREDICATES if floating else INT_PREDICATES
    return ComparePredicate(name) if name in allowed else None
