"""The frontend's ATen lowerings, one small function per op family, registered with
`@lowers` (see `registry`). Importing the package registers them all."""

from pallas_ir.frontend.lowerings import (  # noqa: F401  (registers the lowerings)
    complex_pairs,
    convolution,
    creation,
    data_checks,
    elementwise,
    float_parts,
    index_writes,
    indexing,
    linalg,
    losses,
    matmul,
    norms,
    random,
    reductions,
    scans,
    scatter,
    scatter_reduce,
    segments,
    sorting,
    special,
    specialised,
    views,
)
from pallas_ir.frontend.lowerings.registry import LOWERINGS, Lowering, lower, lowers

__all__ = ["LOWERINGS", "Lowering", "lower", "lowers"]
