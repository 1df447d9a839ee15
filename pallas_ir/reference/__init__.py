"""Reference semantics: numpy interpreters that say what a module means.

`pallas_ir.reference.ta` runs `ta` kernels and host functions; `pallas_ir.reference.pallas`
runs `pallas` modules grid step by grid step. Passes and lowerings are checked against
them (`pallas-opt --verify-semantics`, the end-to-end tests).
"""

from pallas_ir.reference.ops import ReferenceError
from pallas_ir.reference.ta import random_buffers, run_forward, run_kernel

__all__ = ["ReferenceError", "random_buffers", "run_forward", "run_kernel"]
