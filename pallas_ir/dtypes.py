"""Element types as numpy dtypes: one mapping for the references, the tiler, the
lowering and the cost model."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute, Operation


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    match t:
        case Float32Type():
            return np.dtype(np.float32)
        case BFloat16Type():
            import ml_dtypes  # loaded when first needed: pallas-opt starts faster

            return np.dtype(ml_dtypes.bfloat16)
        case Float16Type():
            return np.dtype(np.float16)
        case Float64Type():
            return np.dtype(np.float64)
        case IndexType():
            return np.dtype(np.int64)
        case IntegerType():
            w = t.width.data
            if w == 1:
                return np.dtype(np.bool_)
            unsigned = t.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else ''}int{w}")
    raise TypeError(f"no numpy dtype for {t}")


def holds_float64(op: Operation) -> bool:
    """Whether `op` (a module, a function) computes on float64 values: a value of its
    ops or blocks of type f64 or of f64 elements. JAX makes float64 arrays only with
    x64 on (else float32 ones, silently): such a program runs with it on."""

    def f64(t: Attribute) -> bool:
        return isinstance(getattr(t, "element_type", t), Float64Type)

    for inner in op.walk():
        if any(f64(r.type) for r in inner.results):
            return True
        for region in inner.regions:
            for block in region.blocks:
                if any(f64(a.type) for a in block.args):
                    return True
    return False
