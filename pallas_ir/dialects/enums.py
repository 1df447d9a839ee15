"""The enumerations that pass between the ta, tl and pallas levels, and their attributes.

A kernel argument's role, a reduction's kind and a comparison's predicate are typed
contracts (`EnumAttribute`s), not strings: each dialect that holds one registers its
own attribute class (an attribute's name carries its dialect, and a context loads each
name once), so `tl.reduce` holds a `#tl<reduction_kind sum>` and `pallas.reduce` a
`#pallas<reduction_kind sum>`. The custom syntax spells them as before (`<sum>`,
`{role = "in"}`, `<olt>`). Constructors take the StrEnum or its string; reading
`op.kind.data` gives the StrEnum member, which compares equal to the string.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntegerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# ---------------------------------------------------------------------------------------
# Kernel argument roles


class ArgRole(StrEnum):
    """What a kernel does with a buffer argument."""

    IN = "in"
    OUT = "out"
    INOUT = "inout"
    PREFETCH = "prefetch"
    """A small integer buffer whose values choose blocks (scalar prefetch, SMEM on TPU)."""


READABLE_ROLES = frozenset({ArgRole.IN, ArgRole.INOUT, ArgRole.PREFETCH})
WRITABLE_ROLES = frozenset({ArgRole.OUT, ArgRole.INOUT})


# One attribute class per dialect that uses it (an attribute's name carries its
# dialect, and a context loads each name once); each dialect registers its own.


@irdl_attr_definition
class TaArgRoleAttr(EnumAttribute[ArgRole], SpacedOpaqueSyntaxAttribute):
    """`#ta<arg_role in>`: a `ta.kernel` argument's role (custom form: `{role = "in"}`)."""

    name = "ta.arg_role"


@irdl_attr_definition
class TlArgRoleAttr(EnumAttribute[ArgRole], SpacedOpaqueSyntaxAttribute):
    """`#tl<arg_role in>`: a `tl.kernel` argument's role (custom form: `{role = "in"}`)."""

    name = "tl.arg_role"


ArgRoleAttr = TaArgRoleAttr | TlArgRoleAttr
_ARG_ROLE_ATTRS: dict[str, type[TaArgRoleAttr | TlArgRoleAttr]] = {
    "ta": TaArgRoleAttr,
    "tl": TlArgRoleAttr,
}


def dialect_of(op_name: str) -> str:
    return op_name.split(".", 1)[0]


def arg_role_attrs(
    op_name: str, roles: Sequence[str | ArgRole]
) -> ArrayAttr[ArgRoleAttr]:
    """The `roles` property of kernel `op_name` (`ta.kernel` or `tl.kernel`)."""
    attr = _ARG_ROLE_ATTRS[dialect_of(op_name)]
    return ArrayAttr([attr(ArgRole(r)) for r in roles])


def check_dialect(attr: Attribute, op_name: str, what: str) -> None:
    """An enum attribute of another dialect on this op is a mix-up of levels."""
    if attr.name.split(".", 1)[0] != dialect_of(op_name):  # pyright: ignore
        raise VerifyException(f"{op_name} needs a {what} of its own dialect, got {attr}")


# ---------------------------------------------------------------------------------------
# Reductions


class ReductionKind(StrEnum):
    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ARGMAX = "argmax"
    ARGMIN = "argmin"

    @property
    def returns_index(self) -> bool:
        return self in (ReductionKind.ARGMAX, ReductionKind.ARGMIN)

    @property
    def idempotent(self) -> bool:
        """Whether an element counted twice leaves the result as it was (max, min), so
        a value reduced over dims it does not vary along needs no broadcast first."""
        return self in (ReductionKind.MAX, ReductionKind.MIN)

    def identity(self, element: Attribute) -> float | int:
        """The value that changes no combination of this kind of `element`s (an
        integer or float type): 0, 1, or the lowest or highest value. A running
        total starts at it; a padded row that must not count is set to it."""
        if isinstance(element, IntegerType):
            bits = element.width.data
            lowest, highest = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        else:
            lowest, highest = -math.inf, math.inf
        identities = {"sum": 0, "prod": 1, "max": lowest, "min": highest}
        value = identities[self.value]
        return value if isinstance(element, IntegerType) else float(value)


@irdl_attr_definition
class TaReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    """`#ta<reduction_kind sum>`: what `ta.reduce` computes (custom form: `<sum>`)."""

    name = "ta.reduction_kind"


@irdl_attr_definition
class TlReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    """`#tl<reduction_kind sum>`: what `tl.reduce` computes, or how an accumulating
    `tl.store` combines (custom form: `<sum>`)."""

    name = "tl.reduction_kind"


@irdl_attr_definition
class PallasReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    """`#pallas<reduction_kind sum>`: what `pallas.reduce` computes (custom form:
    `<sum>`)."""

    name = "pallas.reduction_kind"


@irdl_attr_definition
class XlaReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    """`#xla<reduction_kind sum>`: what `xla.reduce` computes (custom form: `<sum>`)."""

    name = "xla.reduction_kind"


ReductionKindAttr = (
    TaReductionKindAttr
    | TlReductionKindAttr
    | PallasReductionKindAttr
    | XlaReductionKindAttr
)
_REDUCTION_KIND_ATTRS: dict[str, type[ReductionKindAttr]] = {
    "ta": TaReductionKindAttr,
    "tl": TlReductionKindAttr,
    "pallas": PallasReductionKindAttr,
    "xla": XlaReductionKindAttr,
}


def reduction_kind_attr(op_name: str, kind: ReductionKind | str) -> ReductionKindAttr:
    """The reduction kind property of op `op_name`, in the op's dialect."""
    return _REDUCTION_KIND_ATTRS[dialect_of(op_name)](ReductionKind(kind))


def verify_reduction_kind(kind: ReductionKindAttr, op_name: str) -> ReductionKind:
    check_dialect(kind, op_name, "reduction kind")
    return kind.data


# ---------------------------------------------------------------------------------------
# Matrix product precision


class DotPrecision(StrEnum):
    """How the MXU multiplies float32 operands (`jax.lax.Precision`; Mosaic has these two).

    `highest` is the float32 product the program asks for (Mosaic's fp32 contract
    precision); `default` is the MXU's default, a single bfloat16 pass that keeps about
    8 bits of each operand. Operands already in bfloat16 multiply exactly either way.
    """

    DEFAULT = "default"
    HIGHEST = "highest"


@irdl_attr_definition
class TlDotPrecisionAttr(EnumAttribute[DotPrecision], SpacedOpaqueSyntaxAttribute):
    """`#tl<dot_precision highest>`: a `tl.dot`'s precision (custom form: `<highest>`)."""

    name = "tl.dot_precision"


@irdl_attr_definition
class PallasDotPrecisionAttr(EnumAttribute[DotPrecision], SpacedOpaqueSyntaxAttribute):
    """`#pallas<dot_precision highest>`: a `pallas.dot`'s precision (custom form:
    `<highest>`)."""

    name = "pallas.dot_precision"


DotPrecisionAttr = TlDotPrecisionAttr | PallasDotPrecisionAttr
_DOT_PRECISION_ATTRS: dict[str, type[DotPrecisionAttr]] = {
    "tl": TlDotPrecisionAttr,
    "pallas": PallasDotPrecisionAttr,
}


def dot_precision_attr(op_name: str, precision: DotPrecision | str) -> DotPrecisionAttr:
    """The dot precision property of op `op_name`, in the op's dialect."""
    return _DOT_PRECISION_ATTRS[dialect_of(op_name)](DotPrecision(precision))


# ---------------------------------------------------------------------------------------
# Comparisons


class ComparePredicate(StrEnum):
    """arith's comparison predicates (cmpf's and cmpi's; `ult`..`uge` are in both)."""

    OEQ = "oeq"
    OGT = "ogt"
    OGE = "oge"
    OLT = "olt"
    OLE = "ole"
    ONE = "one"
    ORD = "ord"
    UEQ = "ueq"
    UGT = "ugt"
    UGE = "uge"
    ULT = "ult"
    ULE = "ule"
    UNE = "une"
    UNO = "uno"
    EQ = "eq"
    NE = "ne"
    SLT = "slt"
    SLE = "sle"
    SGT = "sgt"
    SGE = "sge"


P = ComparePredicate
FLOAT_PREDICATES = (
    P.OEQ, P.OGT, P.OGE, P.OLT, P.OLE, P.ONE, P.ORD,
    P.UEQ, P.UGT, P.UGE, P.ULT, P.ULE, P.UNE, P.UNO,
)  # fmt: skip
"""arith.cmpf's predicates but the constant `false`/`true`: `o*` are false where either
side is NaN, `u*` true; `ord` is "neither is NaN", `uno` "either is"."""

INT_PREDICATES = (P.EQ, P.NE, P.SLT, P.SLE, P.SGT, P.SGE, P.ULT, P.ULE, P.UGT, P.UGE)
"""arith.cmpi's predicates: `s*` compare as signed, `u*` as unsigned."""
del P


@irdl_attr_definition
class TlComparePredicateAttr(
    EnumAttribute[ComparePredicate], SpacedOpaqueSyntaxAttribute
):
    """`#tl<compare_predicate olt>`: what `tl.compare` tests (custom form: `<olt>`)."""

    name = "tl.compare_predicate"


@irdl_attr_definition
class PallasComparePredicateAttr(
    EnumAttribute[ComparePredicate], SpacedOpaqueSyntaxAttribute
):
    """`#pallas<compare_predicate olt>`: what `pallas.compare` tests (custom form:
    `<olt>`)."""

    name = "pallas.compare_predicate"


@irdl_attr_definition
class XlaComparePredicateAttr(
    EnumAttribute[ComparePredicate], SpacedOpaqueSyntaxAttribute
):
    """`#xla<compare_predicate slt>`: what `xla.compare` tests (custom form: `<slt>`)."""

    name = "xla.compare_predicate"


ComparePredicateAttr = (
    TlComparePredicateAttr | PallasComparePredicateAttr | XlaComparePredicateAttr
)
_COMPARE_PREDICATE_ATTRS: dict[str, type[ComparePredicateAttr]] = {
    "tl": TlComparePredicateAttr,
    "pallas": PallasComparePredicateAttr,
    "xla": XlaComparePredicateAttr,
}


def compare_predicate_attr(
    op_name: str, predicate: ComparePredicate | str
) -> ComparePredicateAttr:
    """The predicate property of op `op_name`, in the op's dialect."""
    return _COMPARE_PREDICATE_ATTRS[dialect_of(op_name)](ComparePredicate(predicate))
