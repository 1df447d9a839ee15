"""`special`: the special functions of torch (`torch.special`, `lgamma`, `erfinv`, ...)
that MLIR's `math` dialect does not have, one op each, element-wise on floats like
`math`'s ops (scalars in `ta`, tiles in `tl` and `pallas`).

Each op means the function of `scipy.special` of the same name, computed on the
operands' type (the reference interpreters evaluate it so, in float64, rounded). An
XLA kernel prints the jax function (`jax.lax.lgamma`, ...); a Pallas kernel keeps an op
Mosaic lowers (`erf_inv`, `nextafter`) and has the others expanded into `arith`/`math`
ops by `pallas-legalize-mosaic` (`lowering/special_functions.py`).

```mlir
%y = special.lgamma %x : f32
%z = special.igamma %a, %x : tensor<8x128xf32>
```
"""

from __future__ import annotations

from xdsl.dialects.math import (
    FloatingPointLikeBinaryMathOperation,
    FloatingPointLikeUnaryMathOperation,
)
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure, SameOperandsAndResultType


class SpecialUnaryOp(FloatingPointLikeUnaryMathOperation):
    traits = traits_def(Pure(), SameOperandsAndResultType())


class SpecialBinaryOp(FloatingPointLikeBinaryMathOperation):
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class ErfcOp(SpecialUnaryOp):
    """1 - erf(x), accurate where erf(x) is near 1 (`scipy.special.erfc`)."""

    name = "special.erfc"


@irdl_op_definition
class ErfcxOp(SpecialUnaryOp):
    """exp(x^2) erfc(x), the scaled complementary error function."""

    name = "special.erfcx"


@irdl_op_definition
class ErfInvOp(SpecialUnaryOp):
    """The inverse of erf on [-1, 1] (`scipy.special.erfinv`)."""

    name = "special.erf_inv"


@irdl_op_definition
class NdtriOp(SpecialUnaryOp):
    """The inverse of the standard normal distribution function."""

    name = "special.ndtri"


@irdl_op_definition
class LgammaOp(SpecialUnaryOp):
    """log |Gamma(x)| (`scipy.special.gammaln`)."""

    name = "special.lgamma"


@irdl_op_definition
class DigammaOp(SpecialUnaryOp):
    """Gamma'(x) / Gamma(x) (`scipy.special.digamma`)."""

    name = "special.digamma"


@irdl_op_definition
class I0eOp(SpecialUnaryOp):
    """exp(-|x|) I0(x), the scaled modified Bessel function of order 0."""

    name = "special.i0e"


@irdl_op_definition
class I1eOp(SpecialUnaryOp):
    """exp(-|x|) I1(x), the scaled modified Bessel function of order 1."""

    name = "special.i1e"


@irdl_op_definition
class BesselJ0Op(SpecialUnaryOp):
    """J0(x), the Bessel function of the first kind of order 0 (`scipy.special.j0`)."""

    name = "special.bessel_j0"


@irdl_op_definition
class BesselJ1Op(SpecialUnaryOp):
    """J1(x), the Bessel function of the first kind of order 1 (`scipy.special.j1`)."""

    name = "special.bessel_j1"


@irdl_op_definition
class BesselY0Op(SpecialUnaryOp):
    """Y0(x), the Bessel function of the second kind of order 0 (`scipy.special.y0`;
    NaN at +-inf, as torch)."""

    name = "special.bessel_y0"


@irdl_op_definition
class BesselY1Op(SpecialUnaryOp):
    """Y1(x), the Bessel function of the second kind of order 1 (`scipy.special.y1`;
    NaN at +-inf, as torch)."""

    name = "special.bessel_y1"


@irdl_op_definition
class BesselK0Op(SpecialUnaryOp):
    """K0(x), the modified Bessel function of the second kind of order 0
    (`scipy.special.k0`)."""

    name = "special.bessel_k0"


@irdl_op_definition
class BesselK1Op(SpecialUnaryOp):
    """K1(x), the modified Bessel function of the second kind of order 1
    (`scipy.special.k1`)."""

    name = "special.bessel_k1"


@irdl_op_definition
class BesselK0eOp(SpecialUnaryOp):
    """exp(x) K0(x), the scaled modified Bessel function of the second kind of order 0
    (`scipy.special.k0e`)."""

    name = "special.bessel_k0e"


@irdl_op_definition
class BesselK1eOp(SpecialUnaryOp):
    """exp(x) K1(x), the scaled modified Bessel function of the second kind of order 1
    (`scipy.special.k1e`)."""

    name = "special.bessel_k1e"


@irdl_op_definition
class AiryAiOp(SpecialUnaryOp):
    """Ai(x), the Airy function of the first kind (`scipy.special.airy`'s first
    result; NaN at +-inf, as torch)."""

    name = "special.airy_ai"


@irdl_op_definition
class NextAfterOp(SpecialBinaryOp):
    """The float next to `lhs` in the direction of `rhs` (C's `nextafter`)."""

    name = "special.nextafter"


@irdl_op_definition
class ZetaOp(SpecialBinaryOp):
    """The Hurwitz zeta function zeta(x = lhs, q = rhs) (`scipy.special.zeta`)."""

    name = "special.zeta"


@irdl_op_definition
class IgammaOp(SpecialBinaryOp):
    """The regularized lower incomplete gamma function P(a = lhs, x = rhs)
    (`scipy.special.gammainc`)."""

    name = "special.igamma"


@irdl_op_definition
class IgammacOp(SpecialBinaryOp):
    """The regularized upper incomplete gamma function Q(a = lhs, x = rhs)
    (`scipy.special.gammaincc`)."""

    name = "special.igammac"


SPECIAL_OPS = (
    ErfcOp,
    ErfcxOp,
    ErfInvOp,
    NdtriOp,
    LgammaOp,
    DigammaOp,
    I0eOp,
    I1eOp,
    BesselJ0Op,
    BesselJ1Op,
    BesselY0Op,
    BesselY1Op,
    BesselK0Op,
    BesselK1Op,
    BesselK0eOp,
    BesselK1eOp,
    AiryAiOp,
    NextAfterOp,
    ZetaOp,
    IgammaOp,
    IgammacOp,
)

Special = Dialect("special", list(SPECIAL_OPS), [])
