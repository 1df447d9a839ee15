"""The jax function of each `LibraryFn`, and its source for an emitted module."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType

import jax.numpy as jnp
import numpy as np

from pallas_ir.library import LibraryFn, convolution, random, sorting

FUNCTIONS: dict[LibraryFn, Callable[..., tuple]] = {
    LibraryFn.SORT: sorting.lib_sort,
    LibraryFn.TOPK: sorting.lib_topk,
    LibraryFn.UNIFORM: random.lib_uniform,
    LibraryFn.NORMAL: random.lib_normal,
    LibraryFn.RANDINT: random.lib_randint,
    LibraryFn.RANDPERM: random.lib_randperm,
    LibraryFn.MULTINOMIAL: random.lib_multinomial,
    LibraryFn.CONVOLUTION: convolution.lib_convolution,
    LibraryFn.CONVOLUTION_BACKWARD: convolution.lib_convolution_backward,
    LibraryFn.MAX_POOL: convolution.lib_max_pool,
    LibraryFn.ADAPTIVE_MAX_POOL: convolution.lib_adaptive_max_pool,
    LibraryFn.MAX_POOL_BACKWARD: convolution.lib_max_pool_backward,
    LibraryFn.AVG_POOL: convolution.lib_avg_pool,
    LibraryFn.AVG_POOL_BACKWARD: convolution.lib_avg_pool_backward,
    LibraryFn.ADAPTIVE_AVG_POOL: convolution.lib_adaptive_avg_pool,
    LibraryFn.ADAPTIVE_AVG_POOL_BACKWARD: convolution.lib_adaptive_avg_pool_backward,
    LibraryFn.UPSAMPLE_LINEAR: convolution.lib_upsample_linear,
    LibraryFn.UPSAMPLE_BICUBIC: convolution.lib_upsample_bicubic,
}
"""What each library function computes: a jax function of whole arrays (in the call's
shapes) and keyword parameters, giving a tuple of arrays."""

IMPORTS = ("jax", "jnp", "lax")
"""The names a library function may use besides its module's own functions: what an
emitted module imports (`import jax`, `jax.numpy as jnp`, `from jax import lax`)."""


def _global_names(code: CodeType) -> Iterator[str]:
    """The global names `code` uses, those of the functions defined inside it too."""
    yield from code.co_names
    for inner in code.co_consts:
        if isinstance(inner, CodeType):
            yield from _global_names(inner)


def _definitions(fn: FunctionType, seen: dict[str, str]) -> None:
    """The source of `fn` and of each function of its module it calls, callees first."""
    module = sys.modules[fn.__module__]
    for name in _global_names(fn.__code__):
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
    results = FUNCTIONS[fn](*(jnp.asarray(a) for a in operands), **params)
    return [np.asarray(r) for r in results]
