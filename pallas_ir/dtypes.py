"""Element types as numpy dtypes: one mapping for the references, the tiler, the
lowering and the cost model."""

from __future__ import annotations

from typing import Any

import ml_dtypes
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
from xdsl.ir import Attribute


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    match t:
        case Float32Type():
            return np.dtype(np.float32)
        case BFloat16Type():
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
