"""Linear algebra (`torch.linalg`): library functions on XLA
(`pallas_ir.library.linalg`). Each ATen op is one call with the op's results, in
eager's shapes and dtypes (pivots, info and rank as int data); a result eager gives
empty (a QR's Q in mode "r", the residuals of a driver that computes none) is an
empty value. `_linalg_check_errors`, which eager runs after a factorization to raise
on a singular or indefinite input, is a run-time check of its `info`: the call
raises `torch.linalg.LinAlgError` as eager does.

Not here: `linalg_eig` (complex results, and XLA has no eig on TPU), `ldl_factor`
(LAPACK's Bunch-Kaufman pivoting has no XLA form), and LU without pivoting (eager
runs it only on CUDA)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from pallas_ir.dialects.library_call import Param
from pallas_ir.frontend.kernel_builder import (
    DTYPES,
    UnsupportedError,
    Value,
    broadcast_index,
    remap,
)
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def bound(c: Lowering, args: Sequence[Any]) -> dict[str, Any]:
    """The op's arguments by name (its schema's), defaults filled in."""
    named: dict[str, Any] = {}
    for i, a in enumerate(c.target._schema.arguments):
        if i < len(args):
            named[a.name] = args[i]
        elif a.name in c.kwargs:
            named[a.name] = c.kwargs[a.name]
        else:
            named[a.name] = a.default_value if a.has_default_value() else None
    return named


def results(c: Lowering) -> list[tuple[tuple[int, ...], str]]:
    """The shape and kernel element type of each of the op's results."""
    return [(tuple(v.shape), DTYPES[v.dtype]) for v in c.node.meta["val"]]


def empty(shape: Sequence[int], element: str) -> Value:
    """A result eager gives with no elements (or one nobody reads)."""
    return Value(tuple(shape), lambda k, idx: k.constant(0, element), element)


def call(
    c: Lowering,
    fn: LibraryFn,
    operands: Sequence[Value],
    wanted: Sequence[tuple[Sequence[int], str]],
    **params: Param,
) -> list[Value]:
    """`library_call`, or, where an operand has no elements (a batch of none, 0x0
    matrices), its results computed now: with no data to read they are constants
    (the determinant of a 0x0 matrix is 1, its info 0)."""
    if all(math.prod(v.shape) for v in operands):
        return library_call(c, fn, operands, wanted, **params)
    if not any(math.prod(shape) for shape, _ in wanted):
        return [empty(shape, element) for shape, element in wanted]
    if any(math.prod(v.shape) for v in operands):
        raise c.unsupported("operands with no elements beside ones with elements")
    dtypes = {"f64": np.float64, "f32": np.float32, "i32": np.int32, "i1": np.int32}
    arrays = [np.zeros(v.shape, dtypes[v.element]) for v in operands]
    try:
        # jax is imported only here: most programs never need it while tracing
        from pallas_ir.library import functions as library

        computed = library.run(fn, arrays, params)
    except (ValueError, IndexError, TypeError) as e:  # jax's refusal of empty ones
        raise c.unsupported(f"operands with no elements ({e})") from e
    values = []
    for result, (shape, element) in zip(computed, wanted):
        if result.size and not np.all(result == result.flat[0]):
            raise c.unsupported("results of operands with no elements that vary")
        fill = result.flat[0].item() if result.size else 0
        values.append(
            Value(
                tuple(shape), lambda k, idx, f=fill, e=element: k.constant(f, e), element
            )
        )
    return values


def row_major(c: Lowering, i: int = 0) -> bool:
    """Whether the op's tensor argument `i` is contiguous in eager (which then factors
    its transpose, a column-major matrix, and so reports that LU)."""
    val = c.node.args[i].meta.get("val")  # type: ignore[union-attr]
    return isinstance(val, torch.Tensor) and val.is_contiguous()


def is_vector_rhs(a: Value, b: Value) -> bool:
    """torch's rule for a solve: B is one vector (per batch), not a matrix."""
    return len(b.shape) == 1 or (
        len(b.shape) == len(a.shape) - 1 and b.shape == a.shape[:-1]
    )


@lowers(aten.linalg_lu_factor_ex.default, runs_on=RunsOn.XLA)
def lu_factor_ex(c: Lowering, args) -> list[Value]:
    if not bound(c, args)["pivot"]:
        raise c.unsupported("LU without pivoting (eager computes it only on CUDA)")
    return call(c, LibraryFn.LU_FACTOR, [args[0]], results(c))


@lowers(aten.linalg_lu.default, runs_on=RunsOn.XLA)
def lu(c: Lowering, args) -> list[Value]:
    if not bound(c, args)["pivot"]:
        raise c.unsupported("LU without pivoting (eager computes it only on CUDA)")
    return call(c, LibraryFn.LU, [args[0]], results(c))


@lowers(aten.lu_unpack.default, runs_on=RunsOn.XLA)
def lu_unpack(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    lu = named["LU_data"]
    *batch, m, n = lu.shape
    k = min(m, n)
    shapes = [(*batch, m, m), (*batch, m, k), (*batch, k, n)]
    factors = call(
        c,
        LibraryFn.LU_UNPACK,
        [lu, named["LU_pivots"]],
        [(shape, c.element) for shape in shapes],
    )
    # eager leaves P empty without unpack_pivots, and L and U without unpack_data
    kept = [named["unpack_pivots"], named["unpack_data"], named["unpack_data"]]
    return [
        factor if keep else empty(*result)
        for factor, keep, result in zip(factors, kept, results(c))
    ]


@lowers(aten.linalg_lu_solve.default, runs_on=RunsOn.XLA)
def lu_solve(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    return call(
        c,
        LibraryFn.LU_SOLVE,
        [named["LU"], named["pivots"], named["B"]],
        [(c.shape, c.element)],
        left=bool(named["left"]),
        adjoint=bool(named["adjoint"]),
        vector=False,
    )[0]


@lowers(aten._linalg_solve_ex.default, runs_on=RunsOn.XLA)
def solve_ex(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    a, b = named["A"], named["B"]
    return call(
        c,
        LibraryFn.SOLVE,
        [a, b],
        results(c),
        left=bool(named["left"]),
        vector=is_vector_rhs(a, b),
        factor_transposed=False,
    )


@lowers(aten.linalg_inv_ex.default, runs_on=RunsOn.XLA)
def inv_ex(c: Lowering, args) -> list[Value]:
    return call(c, LibraryFn.INV, [args[0]], results(c))


@lowers(aten.linalg_cholesky_ex.default, runs_on=RunsOn.XLA)
def cholesky_ex(c: Lowering, args) -> list[Value]:
    upper = bool(bound(c, args)["upper"])
    return call(c, LibraryFn.CHOLESKY, [args[0]], results(c), upper=upper)


@lowers(aten.cholesky.default, runs_on=RunsOn.XLA)
def cholesky(c: Lowering, args) -> Value:
    upper = bool(bound(c, args)["upper"])
    info = (c.shape[:-2], "i32")
    return call(
        c, LibraryFn.CHOLESKY, [args[0]], [(c.shape, c.element), info], upper=upper
    )[0]


@lowers(aten.cholesky_solve.default, runs_on=RunsOn.XLA)
def cholesky_solve(c: Lowering, args) -> Value:
    named = bound(c, args)
    return call(
        c,
        LibraryFn.CHOLESKY_SOLVE,
        [named["self"], named["input2"]],
        [(c.shape, c.element)],
        upper=bool(named["upper"]),
    )[0]


@lowers(aten.cholesky_inverse.default, runs_on=RunsOn.XLA)
def cholesky_inverse(c: Lowering, args) -> Value:
    upper = bool(bound(c, args)["upper"])
    return call(
        c, LibraryFn.CHOLESKY_INVERSE, [args[0]], [(c.shape, c.element)], upper=upper
    )[0]


@lowers(aten.linalg_qr.default, runs_on=RunsOn.XLA)
def qr(c: Lowering, args) -> list[Value]:
    mode = str(bound(c, args)["mode"])
    (q_shape, q_element), r = results(c)
    if mode == "r":
        (r_value,) = call(c, LibraryFn.QR, [args[0]], [r], mode=mode)
        return [empty(q_shape, q_element), r_value]
    return call(c, LibraryFn.QR, [args[0]], results(c), mode=mode)


@lowers(aten._linalg_svd.default, runs_on=RunsOn.XLA)
def svd(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    u, s, vh = results(c)
    compute_uv = bool(named["compute_uv"])
    full_matrices = bool(named["full_matrices"])
    if not compute_uv:
        (values,) = call(
            c,
            LibraryFn.SVD,
            [args[0]],
            [s],
            full_matrices=full_matrices,
            compute_uv=False,
        )
        return [empty(*u), values, empty(*vh)]
    return call(
        c,
        LibraryFn.SVD,
        [args[0]],
        [u, s, vh],
        full_matrices=full_matrices,
        compute_uv=True,
    )


@lowers(aten._linalg_eigh.default, runs_on=RunsOn.XLA)
def eigh(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    w, v = results(c)
    uplo, compute_v = str(named["UPLO"]), bool(named["compute_v"])
    if not compute_v:
        (values,) = call(c, LibraryFn.EIGH, [args[0]], [w], uplo=uplo, compute_v=False)
        return [values, empty(*v)]
    return call(c, LibraryFn.EIGH, [args[0]], [w, v], uplo=uplo, compute_v=True)


@lowers(aten.linalg_solve_triangular.default, runs_on=RunsOn.XLA)
def solve_triangular(c: Lowering, args) -> Value:
    named = bound(c, args)
    return call(
        c,
        LibraryFn.TRIANGULAR_SOLVE,
        [named["self"], named["B"]],
        [(c.shape, c.element)],
        upper=bool(named["upper"]),
        left=bool(named["left"]),
        unitriangular=bool(named["unitriangular"]),
        transpose=False,
    )[0]


@lowers(aten.triangular_solve.default, runs_on=RunsOn.XLA)
def triangular_solve(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    b, a = named["self"], named["A"]
    (x_shape, element), (a_shape, _) = results(c)
    (x,) = call(
        c,
        LibraryFn.TRIANGULAR_SOLVE,
        [a, b],
        [(x_shape, element)],
        upper=bool(named["upper"]),
        left=True,
        unitriangular=bool(named["unitriangular"]),
        transpose=bool(named["transpose"]),
    )
    # the second result is a copy of A (broadcast to the batch)
    coefficient = remap(a, a_shape, lambda idx: broadcast_index(a, a_shape, idx))
    return [x, coefficient]


@lowers(aten._linalg_det.default, runs_on=RunsOn.XLA)
def det(c: Lowering, args) -> list[Value]:
    return call(c, LibraryFn.DET, [args[0]], results(c), factor_transposed=row_major(c))


@lowers(aten._linalg_slogdet.default, runs_on=RunsOn.XLA)
def slogdet(c: Lowering, args) -> list[Value]:
    return call(
        c, LibraryFn.SLOGDET, [args[0]], results(c), factor_transposed=row_major(c)
    )


def _as_element(v: Value, element: str) -> Value:
    """A 0-d float operand as the op's element type, as torch promotes it."""
    if v.element == element or v.element != "f64":
        return v
    return Value(
        v.shape,
        lambda k, idx: k.cast(v.emit(k, idx), v.element, element, converts=True),
        element,
    )


@lowers(aten.linalg_pinv.atol_rtol_tensor, runs_on=RunsOn.XLA)
def pinv(c: Lowering, args) -> Value:
    named = bound(c, args)
    # Eager makes a float64 tolerance of a Python float (`pinverse(rcond=...)`). A 0-d
    # one compares with float32 singular values in float32 (torch's promotion), so it
    # is converted here: a float64 operand would put the whole program in x64, where
    # libtpu aborts compiling an SVD that returns U and V (measured, libtpu 0.0.42.1).
    atol, rtol = (
        _as_element(t, c.element) if t is not None and not t.shape else t
        for t in (named["atol"], named["rtol"])
    )
    return call(
        c,
        LibraryFn.PINV,
        [named["self"], *[t for t in (atol, rtol) if t is not None]],
        [(c.shape, c.element)],
        hermitian=bool(named["hermitian"]),
        has_atol=atol is not None,
        has_rtol=rtol is not None,
    )[0]


@lowers(aten.linalg_lstsq.default, runs_on=RunsOn.XLA)
def lstsq(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    a, b = named["self"], named["b"]
    solution, residuals, rank, singular_values = results(c)
    rcond = named["rcond"]
    has_residuals = residuals[0] != (0,)
    has_rank = rank[0] != (0,)
    has_values = singular_values[0] != (0,)
    vector = is_vector_rhs(a, b)
    batch = solution[0][:-1] if vector else solution[0][:-2]
    wanted = [solution, *([residuals] if has_residuals else []), (batch, "i32")]
    wanted += [singular_values] if has_values else []
    computed = call(
        c,
        LibraryFn.LSTSQ,
        [a, b],
        wanted,
        driver=str(named["driver"] or "gelsy"),
        rcond=-1.0 if rcond is None else float(rcond),
        vector=vector,
        residuals=has_residuals,
        rank=True,
        singular_values=has_values,
    )
    x = computed.pop(0)
    r = computed.pop(0) if has_residuals else empty(*residuals)
    k = computed.pop(0)
    s = computed.pop(0) if has_values else empty(*singular_values)
    if has_residuals and _used(c, 1):
        # Eager's residuals are empty where a matrix is rank-deficient: a shape that
        # depends on the data, which a compiled program cannot give.
        n = a.shape[-1]

        def deficient(kernel, idx):
            return kernel.cmp("ne", k.emit(kernel, idx), kernel.constant(n, "i32"))

        c.prog.check(
            Value(k.shape, deficient, "i1"),
            k,
            UnsupportedError,
            str(c.target),
            "the residuals of a rank-deficient A (rank {value}) are empty in eager, "
            "a shape that depends on the data",
            c.where,
        )
    return [x, r, k if has_rank else empty(*rank), s]


def _used(c: Lowering, i: int) -> bool:
    """Whether result `i` of the op is read."""
    return any(u.args[1] == i and u.users for u in c.node.users)


@lowers(aten.linalg_matrix_exp.default, runs_on=RunsOn.XLA)
def matrix_exp(c: Lowering, args) -> Value:
    return call(c, LibraryFn.MATRIX_EXP, [args[0]], [(c.shape, c.element)])[0]


@lowers(aten.linalg_householder_product.default, runs_on=RunsOn.XLA)
def householder_product(c: Lowering, args) -> Value:
    return call(c, LibraryFn.HOUSEHOLDER_PRODUCT, args[:2], [(c.shape, c.element)])[0]


@lowers(aten.geqrf.default, runs_on=RunsOn.XLA)
def geqrf(c: Lowering, args) -> list[Value]:
    return call(c, LibraryFn.GEQRF, args[:1], results(c))


@lowers(aten.ormqr.default, runs_on=RunsOn.XLA)
def ormqr(c: Lowering, args) -> Value:
    named = bound(c, args)
    a, tau, other = named["self"], named["input2"], named["input3"]
    return call(
        c,
        LibraryFn.ORMQR,
        [a, tau, other],
        [(c.shape, c.element)],
        left=bool(named["left"]),
        transpose=bool(named["transpose"]),
    )[0]


@lowers(
    aten.linalg_ldl_factor_ex.default,
    aten.linalg_ldl_factor.default,
    aten.linalg_ldl_solve.default,
    runs_on=RunsOn.REFUSED,
)
def ldl(c: Lowering, args) -> Value:
    raise c.unsupported(
        "LAPACK's sytrf (Bunch-Kaufman pivoting) has no XLA form, and its pivots "
        "(which ldl_solve reads) cannot be matched without a port of it"
    )


_CHECK_REASONS = {
    "inv": "The diagonal element {value} is zero, the inversion could not be "
    "completed because the input matrix is singular.",
    "solve": "The solver failed because the input matrix is singular.",
    "cholesky": "The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order {value} is not positive-definite).",
    "lu_factor": "U[{value},{value}] is zero and using it on lu_solve would result in "
    "a division by zero.",
}
"""What eager says of a failed factorization, by the API that made it."""


@lowers(aten._linalg_check_errors.default)
def check_errors(c: Lowering, args) -> Value:
    info, api = args[0], str(args[1])
    reason = next(
        (text for key, text in _CHECK_REASONS.items() if key in api),
        "the factorization failed (LAPACK info {value}).",
    )

    def failed(k, idx):
        return k.cmp("ne", info.emit(k, idx), k.constant(0, "i32"))

    c.prog.check(
        Value(info.shape, failed, "i1"),
        info,
        torch.linalg.LinAlgError,
        api,
        reason,
        c.where,
    )
    return empty((), "i32")  # no result: nothing reads it


@lowers(torch.ops.higher_order.with_effects)
def with_effects(c: Lowering, args) -> list[Value]:
    """An op with a side effect (a check that raises), ordered by AOTAutograd's effect
    token: the op, and the new token, None (no data: the runtime passes None for the
    old one and drops the new; the checks run after the call whatever their order)."""
    _, op, *operands = args
    return [None, c.lower(op, operands, c.kwargs, ())]
