"""The jax function of each `LibraryFn`, and its source for an emitted module."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType

import jax
import jax.numpy as jnp
import numpy as np

from pallas_ir.library import (
    LibraryFn,
    convolution,
    fft,
    indexing,
    linalg,
    losses,
    polynomials,
    random,
    scans,
    sorting,
)

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
    LibraryFn.UPSAMPLE_BILINEAR_AA: convolution.lib_upsample_bilinear_aa,
    LibraryFn.GRID_SAMPLE: convolution.lib_grid_sample,
    LibraryFn.LU_FACTOR: linalg.lib_lu_factor,
    LibraryFn.LU: linalg.lib_lu,
    LibraryFn.LU_UNPACK: linalg.lib_lu_unpack,
    LibraryFn.LU_SOLVE: linalg.lib_lu_solve,
    LibraryFn.SOLVE: linalg.lib_solve,
    LibraryFn.INV: linalg.lib_inv,
    LibraryFn.CHOLESKY: linalg.lib_cholesky,
    LibraryFn.CHOLESKY_SOLVE: linalg.lib_cholesky_solve,
    LibraryFn.CHOLESKY_INVERSE: linalg.lib_cholesky_inverse,
    LibraryFn.QR: linalg.lib_qr,
    LibraryFn.SVD: linalg.lib_svd,
    LibraryFn.EIGH: linalg.lib_eigh,
    LibraryFn.TRIANGULAR_SOLVE: linalg.lib_triangular_solve,
    LibraryFn.DET: linalg.lib_det,
    LibraryFn.SLOGDET: linalg.lib_slogdet,
    LibraryFn.PINV: linalg.lib_pinv,
    LibraryFn.LSTSQ: linalg.lib_lstsq,
    LibraryFn.MATRIX_EXP: linalg.lib_matrix_exp,
    LibraryFn.HOUSEHOLDER_PRODUCT: linalg.lib_householder_product,
    LibraryFn.GEQRF: linalg.lib_geqrf,
    LibraryFn.ORMQR: linalg.lib_ormqr,
    LibraryFn.CTC_LOSS: losses.lib_ctc_loss,
    LibraryFn.EMBEDDING_BAG: indexing.lib_embedding_bag,
    LibraryFn.EMBEDDING_BAG_BACKWARD: indexing.lib_embedding_bag_backward,
    LibraryFn.NONZERO_STATIC: indexing.lib_nonzero_static,
    LibraryFn.SEGMENT_REDUCE: indexing.lib_segment_reduce,
    LibraryFn.FFT_R2C: fft.lib_fft_r2c,
    LibraryFn.FFT_C2C: fft.lib_fft_c2c,
    LibraryFn.FFT_C2R: fft.lib_fft_c2r,
    LibraryFn.KTHVALUE: sorting.lib_kthvalue,
    LibraryFn.MEDIAN: sorting.lib_median,
    LibraryFn.MODE: sorting.lib_mode,
    LibraryFn.SEARCHSORTED: sorting.lib_searchsorted,
    LibraryFn.HISTC: sorting.lib_histc,
    LibraryFn.HISTOGRAM_BIN_EDGES: sorting.lib_histogram_bin_edges,
    LibraryFn.HISTOGRAMDD: sorting.lib_histogramdd,
    LibraryFn.CUMSUM: scans.lib_cumsum,
    LibraryFn.CUMPROD: scans.lib_cumprod,
    LibraryFn.CUMEXTREME: scans.lib_cumextreme,
    LibraryFn.LOGCUMSUMEXP: scans.lib_logcumsumexp,
    LibraryFn.ORTHOGONAL_POLYNOMIAL: polynomials.lib_orthogonal_polynomial,
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
    """The source of `fn` and of each function of its module it calls (in its body
    or in functions defined there), callees first."""
    module = sys.modules[fn.__module__]
    for name in _global_names(fn.__code__):
        callee = getattr(module, name, None)
        local = isinstance(callee, FunctionType) and callee.__module__ == fn.__module__
        if local and callee.__name__ not in seen:
            _definitions(callee, seen)
    text = inspect.getsource(fn)
    if seen.setdefault(fn.__name__, text) != text:
        # An emitted module defines each function once, by name.
        raise ValueError(f"two library functions are named {fn.__name__}")


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
