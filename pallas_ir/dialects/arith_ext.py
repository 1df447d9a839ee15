"""Ops of MLIR's `arith` dialect that xDSL 0.75's `arith` lacks, defined as xDSL
defines its others (`make_context` and pallas-opt load them next to xDSL's `arith`)."""

from __future__ import annotations

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """The remainder of a float division truncated toward zero, with the sign of the
    dividend: C's `fmod`, exact (`jax.lax.rem`, which Mosaic lowers).

    ```mlir
    %r = arith.remf %a, %b : f32
    ```
    """

    name = "arith.remf"

    traits = traits_def(Pure())


ARITH_EXTRA_OPS = (RemFOp,)
"""The ops to load into a context that has xDSL's `arith`."""
