"""The library functions: whole-array operations with no Pallas idiom yet, run by XLA.

An ATen op such as `sort`, a convolution or a matrix inverse is not a loop of scalar
ops: the frontend lowers it to a `ta.library_call` of one of these functions, in a
`ta.kernel` that runs on XLA, inside the same jitted `forward` as the Pallas kernels.
Each function is a plain jax function of whole arrays (`functions.py` and the family
modules beside it); emit-python copies the source of each one a module calls into the
module, and the reference interpreters run the same function on numpy arrays. This
module only names them (no jax import): the dialects hold a `LibraryFn` as an enum
attribute.

A call passes its operands in the shapes the op's `shapes` give (the buffers are
flat), and keyword parameters from its `params`; the function returns a tuple of
arrays, one per output, which the call casts to its outputs' element types.
"""

from __future__ import annotations

from xdsl.utils.str_enum import StrEnum


class LibraryFn(StrEnum):
    """A library function (see `functions.FUNCTIONS` for what each computes)."""

    # sorting and selection
    SORT = "sort"
    TOPK = "topk"
    KTHVALUE = "kthvalue"
    MEDIAN = "median"
    MODE = "mode"
    SEARCHSORTED = "searchsorted"
    HISTC = "histc"
    # scans
    CUMSUM = "cumsum"
    CUMPROD = "cumprod"
    CUMEXTREME = "cumextreme"
    LOGCUMSUMEXP = "logcumsumexp"
