"""The jax function of each `LibraryFn`, and its source for an emitted module."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from types import CodeType, FunctionType

import jax
import jax.numpy as jnp
import numpy as np

from pallas_ir.library import LibraryFn, scans, sorting

FUNCTIONS: dict[LibraryFn, Callable[..., tuple]] = {
    LibraryFn.SORT: sorting.lib_sort,
    LibraryFn.TOPK: sorting.lib_topk,
    LibraryFn.KTHVALUE: sorting.lib_kthvalue,
    LibraryFn.MEDIAN: sorting.lib_median,
    LibraryFn.MODE: sorting.lib_mode,
    LibraryFn.SEARCHSORTED: sorting.lib_searchsorted,
    LibraryFn.HISTC: sorting.lib_histc,
    LibraryFn.CUMSUM: scans.lib_cumsum,
    LibraryFn.CUMPROD: scans.lib_cumprod,
    LibraryFn.CUMEXTREME: scans.lib_cumextreme,
    LibraryFn.LOGCUMSUMEXP: scans.lib_logcumsumexp,
}
"""What each library function computes: a jax function of whole arrays (in the call's
shapes) and keyword parameters, giving a tuple of arrays."""

IMPORTS = ("jax", "jnp", "lax")
"""The names a library function may use besides its module's own functions: what an
emitted module imports (`import jax`, `jax.numpy as jnp`, `from jax import lax`)."""


def _names(code: CodeType) -> list[str]:
    """The global names `code` uses, and those of the functions defined in it."""
    nested = [c for c in code.co_consts if isinstance(c, CodeType)]
    return [*code.co_names, *(name for c in nested for name in _names(c))]


def _definitions(fn: FunctionType, seen: dict[str, str]) -> None:
    """The source of `fn` and of each function of its module it calls (in its body
    or in functions defined there), callees first."""
    module = sys.modules[fn.__module__]
    for name in _names(fn.__code__):
        callee = getattr(module, name, None)
        local = isinstance(callee, FunctionType) and callee.__module__ == fn.__module__
        if local and callee.__name__ not in seen:
            _definitions(callee, seen)
    seen.setdefault(fn.__name__, inspect.getsource(fn))


def source(fns: list[LibraryFn]) -> list[str]:
    """The definitions (Python source) of the functions `fns` call, each once, in an
    order where every function is defined before a function that uses it."""
    seen: dict[str, str] = {}
    for fn in fns:
        _definitions(FUNCTIONS[fn], seen)  # type: ignore[arg-type]
    return list(seen.values())


def name(fn: LibraryFn) -> str:
    """The name an emitted module calls `fn` by."""
    return FUNCTIONS[fn].__name__


def run(fn: LibraryFn, operands: list[np.ndarray], params: dict) -> list[np.ndarray]:
    """`fn` on numpy arrays (in the call's shapes), its results as numpy arrays: what
    the reference interpreters compute for a library call."""
    # jitted: a scan or a loop of small steps is slow op by op
    static = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    function = jax.jit(FUNCTIONS[fn], static_argnames=tuple(static))
    results = function(*(jnp.asarray(a) for a in operands), **static)
    return [np.asarray(r) for r in results]
