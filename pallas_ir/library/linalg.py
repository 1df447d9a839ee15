"""Linear algebra, as torch computes it (LAPACK's conventions on the CPU): factorizations
with their pivots (1-based, int32) and `info` (0 when it went well, else LAPACK's
1-based index of the step that failed), solves, decompositions and matrix functions,
on batches of matrices (the last two dims).

Where a result is not unique (the signs of singular vectors and eigenvectors), XLA's
is a valid one, not necessarily the one LAPACK gives."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def mT(x):
    """The matrices of `x` transposed."""
    return jnp.swapaxes(x, -1, -2)


def lu_info(lu):
    """LAPACK getrf's info: the 1-based index of the first exactly zero diagonal element
    of U (the factorization went on past it), 0 when there is none."""
    diagonal = jnp.diagonal(lu, axis1=-2, axis2=-1)
    if diagonal.shape[-1] == 0:  # 0x0 matrices: nothing fails
        return jnp.zeros(diagonal.shape[:-1], jnp.int32)
    zero = diagonal == 0
    first = jnp.argmax(zero, axis=-1).astype(jnp.int32) + 1
    return jnp.where(jnp.any(zero, axis=-1), first, 0).astype(jnp.int32)


def lu_factor(a):
    """The LU factorization of `a` with partial pivoting (LAPACK getrf): the packed
    factors, the row swaps (1-based) and the permutation they make, and info."""
    lu, swaps, permutation = lax.linalg.lu(a)
    return lu, swaps + 1, permutation, lu_info(lu)


def permutation_of(pivots, n):
    """The permutation that LAPACK's 1-based row swaps `pivots` make of n rows."""
    return lax.linalg.lu_pivots_to_permutation(pivots - 1, n)


def permute_rows(x, permutation):
    """The rows of the matrices `x` in the order `permutation` gives (batched)."""
    return jnp.take_along_axis(x, permutation[..., :, None], axis=-2)


def unpermute_rows(x, permutation):
    """The rows of `x` put back where `permutation` took them from."""
    inverse = jnp.argsort(permutation, axis=-1)
    return jnp.take_along_axis(x, inverse[..., :, None], axis=-2)


def broadcast_batch(a, b):
    """`a` and `b` with their batch dims (all but the last two) broadcast together."""
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (
        jnp.broadcast_to(a, (*batch, *a.shape[-2:])),
        jnp.broadcast_to(b, (*batch, *b.shape[-2:])),
    )


def lu_solve_left(lu, permutation, b, adjoint):
    """X with M X = B (M^T X = B when `adjoint`), where M = P L U is the
    factorization `lu` with `permutation` (M[permutation] = L U)."""
    lu, b = broadcast_batch(lu, b)
    permutation = jnp.broadcast_to(permutation, (*lu.shape[:-2], lu.shape[-1]))
    if not adjoint:  # L U X = P^T B
        y = permute_rows(b, permutation)
        y = lax.linalg.triangular_solve(
            lu, y, left_side=True, lower=True, unit_diagonal=True
        )
        return lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)
    # U^T L^T P^T X = B
    y = lax.linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True)
    y = lax.linalg.triangular_solve(
        lu, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True
    )
    return unpermute_rows(y, permutation)


def lu_solve_matrix(lu, permutation, b, left, adjoint):
    """X with M X = B (`left`) or X M = B, M^T in place of M when `adjoint`, where
    M = P L U is the factorization `lu` with `permutation`."""
    if left:
        return lu_solve_left(lu, permutation, b, adjoint)
    # X M = B  <=>  M^T X^T = B^T
    return mT(lu_solve_left(lu, permutation, mT(b), not adjoint))


def lib_lu_factor(a):
    """`torch.linalg.lu_factor_ex`: (LU, pivots, info)."""
    lu, pivots, _, info = lu_factor(a)
    return lu, pivots, info


def unpacked(lu, permutation):
    """(P, L, U) with A = P L U from the packed factors `lu` of A and the permutation
    of its rows (A[permutation] = L U)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    upper = jnp.triu(lu[..., :k, :])
    # P[permutation[i], i] = 1: row i of L U is row permutation[i] of A
    p = jnp.swapaxes(jax.nn.one_hot(permutation, m, dtype=lu.dtype), -1, -2)
    return p, lower, upper


def lib_lu(a):
    """`torch.linalg.lu`: (P, L, U) with A = P L U."""
    lu, _, permutation, _ = lu_factor(a)
    return unpacked(lu, permutation)


def lib_lu_unpack(lu, pivots):
    """`torch.lu_unpack`: (P, L, U) from `lu_factor`'s results."""
    return unpacked(lu, permutation_of(pivots, lu.shape[-2]))


def lib_lu_solve(lu, pivots, b, *, left, adjoint, vector):
    """`torch.linalg.lu_solve` (and the solve of `torch.linalg.solve`): X with
    A X = B (or X A = B when not `left`; A^T for A when `adjoint`), A = P L U given
    by `lu` and `pivots`; a `vector` B is one column."""
    permutation = permutation_of(pivots, lu.shape[-1])
    if vector:
        x = lu_solve_matrix(lu, permutation, b[..., :, None], left, adjoint)
        return (x[..., 0],)
    return (lu_solve_matrix(lu, permutation, b, left, adjoint),)


def lib_solve(a, b, *, left, vector, factor_transposed):
    """`torch.linalg.solve_ex`: (X, LU, pivots, info), X with A X = B (X A = B when
    not `left`); LU and pivots factor A (A^T when `factor_transposed`, as eager does
    for a row-major A)."""
    m = mT(a) if factor_transposed else a
    lu, pivots, permutation, info = lu_factor(m)
    if vector:
        b = b[..., :, None]
    x = lu_solve_matrix(lu, permutation, b, left, factor_transposed)
    return (x[..., 0] if vector else x), lu, pivots, info


def lib_inv(a):
    """`torch.linalg.inv_ex`: (A^-1, info)."""
    lu, _, permutation, info = lu_factor(a)
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return lu_solve_matrix(lu, permutation, eye, True, False), info


def cholesky_failure(a):
    """The order (1-based) of the first leading minor of `a` (its lower triangle) that
    is not positive-definite, 0 when there is none: LAPACK potrf's info, from the
    unblocked algorithm (its pivot `a_jj - sum_k l_jk^2` not > 0, or NaN)."""
    n = a.shape[-1]
    rows = jnp.arange(n)

    def step(j, carry):
        lower, info = carry
        row = lower[..., j, :]  # l_jk, zero for k >= j
        pivot = a[..., j, j] - jnp.sum(row * row, axis=-1)
        bad = ~(pivot > 0)
        info = jnp.where((info == 0) & bad, j + 1, info)
        diagonal = jnp.sqrt(jnp.where(bad, 1.0, pivot))
        column = a[..., :, j] - jnp.einsum("...ik,...k->...i", lower, row)
        column = jnp.where(rows > j, column / diagonal[..., None], 0.0)
        column = jnp.where(rows == j, diagonal[..., None], column)
        return lower.at[..., :, j].set(column), info

    info = jnp.zeros(a.shape[:-2], jnp.int32)
    return lax.fori_loop(0, n, step, (jnp.zeros_like(a), info))[1]


def no_failure(a):
    """The info of a factorization of each matrix of `a` that went well."""
    return jnp.zeros(a.shape[:-2], jnp.int32)


def lib_cholesky(a, *, upper):
    """`torch.linalg.cholesky_ex`: (L, info) with A = L L^T, reading A's lower
    triangle (or U with A = U^T U, reading the upper one). Where A is not
    positive-definite the factor is NaN (eager's holds what LAPACK left there)."""
    if a.shape[-1] == 0:  # 0x0 matrices: their (empty) factors
        return a, no_failure(a)
    lower = lax.linalg.cholesky(mT(a) if upper else a, symmetrize_input=False)
    lower = jnp.tril(lower)
    # the order of the failing minor costs a loop: only where one failed
    ok = jnp.all(jnp.isfinite(lower))
    info = lax.cond(ok, no_failure, cholesky_failure, mT(a) if upper else a)
    return (mT(lower) if upper else lower), info


def lib_cholesky_solve(b, factor, *, upper):
    """`torch.cholesky_solve`: X with A X = B, A = L L^T (or U^T U)."""
    factor, b = broadcast_batch(factor, b)
    lower = mT(factor) if upper else factor
    y = lax.linalg.triangular_solve(lower, b, left_side=True, lower=True)
    x = lax.linalg.triangular_solve(
        lower, y, left_side=True, lower=True, transpose_a=True
    )
    return (x,)


def lib_cholesky_inverse(factor, *, upper):
    """`torch.cholesky_inverse`: A^-1 for A = L L^T (or U^T U)."""
    eye = jnp.broadcast_to(jnp.eye(factor.shape[-1], dtype=factor.dtype), factor.shape)
    return lib_cholesky_solve(eye, factor, upper=upper)


def lib_qr(a, *, mode):
    """`torch.linalg.qr`: (Q, R) for modes "reduced" and "complete"; R alone for "r"."""
    q, r = lax.linalg.qr(a, full_matrices=mode == "complete")
    return (r,) if mode == "r" else (q, r)


def lib_svd(a, *, full_matrices, compute_uv):
    """`torch.linalg.svd`: (U, S, Vh) with A = U diag(S) Vh, S descending; S alone
    without `compute_uv`."""
    if not compute_uv:
        return (lax.linalg.svd(a, full_matrices=False, compute_uv=False),)
    u, s, vh = lax.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def lib_eigh(a, *, uplo, compute_v):
    """`torch.linalg.eigh`: (eigenvalues ascending, eigenvectors as columns), reading
    the `uplo` ("L" or "U") triangle of A; the eigenvalues alone without
    `compute_v`."""
    w, v = jnp.linalg.eigh(a, UPLO=uplo, symmetrize_input=False)
    return (w, v) if compute_v else (w,)


def lib_triangular_solve(a, b, *, upper, left, unitriangular, transpose):
    """`torch.linalg.solve_triangular` (and `torch.triangular_solve`): X with
    op(A) X = B (`left`) or X op(A) = B, op(A) = A^T when `transpose`, reading A's
    `upper` or lower triangle."""
    a, b = broadcast_batch(a, b)
    x = lax.linalg.triangular_solve(
        a,
        b,
        left_side=left,
        lower=not upper,
        transpose_a=transpose,
        unit_diagonal=unitriangular,
    )
    return (x,)


def lu_determinant(lu, pivots):
    """The sign (+1, -1, or 0 for a singular matrix) and the log of the absolute value
    of the determinant of the matrix `lu` and `pivots` factor."""
    diagonal = jnp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = jnp.sum(pivots != jnp.arange(1, pivots.shape[-1] + 1), axis=-1)
    negative = jnp.sum(diagonal < 0, axis=-1)
    sign = jnp.where((swaps + negative) % 2 == 0, 1.0, -1.0).astype(lu.dtype)
    sign = jnp.where(jnp.any(diagonal == 0, axis=-1), 0.0, sign).astype(lu.dtype)
    return sign, jnp.sum(jnp.log(jnp.abs(diagonal)), axis=-1)


def lib_det(a, *, factor_transposed):
    """`torch.linalg.det`: (det, LU, pivots), LU factoring A (A^T when
    `factor_transposed`, as eager does for a row-major A)."""
    lu, pivots, _, _ = lu_factor(mT(a) if factor_transposed else a)
    diagonal = jnp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = jnp.sum(pivots != jnp.arange(1, pivots.shape[-1] + 1), axis=-1)
    sign = jnp.where(swaps % 2 == 0, 1.0, -1.0).astype(a.dtype)
    return sign * jnp.prod(diagonal, axis=-1), lu, pivots


def lib_slogdet(a, *, factor_transposed):
    """`torch.linalg.slogdet`: (sign, log|det|, LU, pivots)."""
    lu, pivots, _, _ = lu_factor(mT(a) if factor_transposed else a)
    sign, logabsdet = lu_determinant(lu, pivots)
    return sign, logabsdet, lu, pivots


def lib_pinv(a, *tolerances, hermitian, has_atol, has_rtol):
    """`torch.linalg.pinv`: the pseudo-inverse, singular values at most
    max(atol, rtol * largest) counted as zero. The tolerances (arrays broadcasting
    with the batch) are the operands after A that `has_atol` and `has_rtol` say;
    without either, rtol = eps * max(m, n), and with atol alone (> 0), rtol = 0."""
    m, n = a.shape[-2:]
    given = list(tolerances)
    atol = given.pop(0) if has_atol else jnp.zeros((), a.dtype)
    if has_rtol:
        rtol = given.pop(0)
    elif has_atol:
        rtol = jnp.where(atol > 0, 0.0, jnp.finfo(a.dtype).eps * max(m, n))
    else:
        rtol = jnp.asarray(jnp.finfo(a.dtype).eps * max(m, n), a.dtype)
    if hermitian:
        w, v = jnp.linalg.eigh(a, UPLO="L", symmetrize_input=False)
        s = jnp.abs(w)
    else:
        u, s, vh = lax.linalg.svd(a, full_matrices=False)
    largest = jnp.max(s, axis=-1, initial=0.0)
    cutoff = jnp.maximum(atol, rtol * largest)[..., None]
    if hermitian:
        inverse = jnp.where(s > cutoff, 1 / w, 0.0)
        return (jnp.matmul(v * inverse[..., None, :], mT(v)),)
    inverse = jnp.where(s > cutoff, 1 / s, 0.0)
    return (jnp.matmul(mT(vh) * inverse[..., None, :], mT(u)),)


def lib_lstsq(a, b, *, driver, rcond, vector, residuals, rank, singular_values):
    """`torch.linalg.lstsq`: the least-squares (minimum-norm where A is
    rank-deficient) solution of A X = B by the SVD, singular values at most
    rcond * largest counted as zero (rcond < 0: eps * max(m, n)), then the results
    `driver` gives: residuals (when `residuals`: the squared norms of B - A X, m > n),
    the rank (when `rank`) and the singular values (when `singular_values`)."""
    del driver  # each driver's solution, where it is defined, is this one
    m, n = a.shape[-2:]
    if vector:
        b = b[..., :, None]
    a, b = broadcast_batch(a, b)
    if rcond < 0:
        rcond = jnp.finfo(a.dtype).eps * max(m, n)
    u, s, vh = lax.linalg.svd(a, full_matrices=False)
    largest = jnp.max(s, axis=-1, initial=0.0, keepdims=True)
    kept = s > rcond * largest
    inverse = jnp.where(kept, 1 / s, 0.0)
    x = jnp.matmul(mT(vh), inverse[..., :, None] * jnp.matmul(mT(u), b))
    results = [x[..., 0] if vector else x]
    if residuals:
        r = jnp.sum(jnp.square(jnp.matmul(a, x) - b), axis=-2)
        results.append(r[..., 0] if vector else r)
    if rank:
        results.append(jnp.sum(kept, axis=-1).astype(jnp.int32))
    if singular_values:
        results.append(s)
    return tuple(results)


def lib_matrix_exp(a):
    """`torch.linalg.matrix_exp`; 16-bit floats in float32 (`expm` takes neither
    bfloat16 nor float16; the call rounds the result back)."""
    if a.dtype in (jnp.bfloat16, jnp.float16):
        a = a.astype(jnp.float32)
    return (jax.scipy.linalg.expm(a),)


def lib_householder_product(a, tau):
    """`torch.linalg.householder_product`: the first n columns of the product of the
    Householder reflectors (columns of A below the diagonal, scaled by tau)."""
    return (lax.linalg.householder_product(a, tau),)


def lib_geqrf(a):
    """`torch.geqrf`: LAPACK's QR, R on and above the diagonal, the Householder
    reflectors below it, and their scales tau."""
    qr, tau = jax._src.lax.linalg.geqrf(a)  # public jax wraps it in `qr` only
    return qr, tau


def lib_ormqr(a, tau, other, *, left, transpose):
    """`torch.ormqr`: `other` times Q (on the left or right, transposed if asked),
    Q the full square product of the reflectors in `a` and `tau` (as `geqrf` gives
    them: the first columns of `a`, one per tau; past them, the identity)."""
    m, k = a.shape[-2], tau.shape[-1]
    pad = [(0, 0)] * (a.ndim - 1)
    full = jnp.pad(a[..., :k], pad + [(0, m - k)])
    scales = jnp.pad(tau, pad[:-1] + [(0, m - tau.shape[-1])])
    q = lax.linalg.householder_product(full, scales)
    if transpose:
        q = jnp.swapaxes(q, -1, -2)
    product = (q, other) if left else (other, q)
    return (jnp.matmul(*product, precision=lax.Precision.HIGHEST),)
