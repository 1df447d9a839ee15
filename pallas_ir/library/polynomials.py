"""The orthogonal polynomials of `torch.special` (Chebyshev T, U, V, W and their shifted
forms, Hermite H and He, Laguerre L, Legendre P) of a per-element degree n: torch's
float32 algorithms (ATen's `native/Math.h`), whose three-term recurrence runs n - 1
steps. A Pallas kernel body has no loop yet, so they are library functions: one
`lax.while_loop` over the whole array, each element's steps masked, until no element
has steps left."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def _degree(n):
    """torch's `static_cast<int64_t>(n)`, as a whole float: n truncated; NaN, +-inf and
    values beyond int64 (which x86 converts to INT64_MIN) negative."""
    whole = jnp.trunc(n)
    representable = jnp.isfinite(n) & (jnp.abs(whole) < 2.0**63)
    return jnp.where(representable, whole, -1.0)


def _recurrence(step, p, q, steps):
    """q after `steps` (per element, at most 0 where none) steps of
    `(p, q) -> (q, step(i, p, q))`, i = 1, 2, ...; an element whose q is NaN stops
    (torch's `!std::isnan(q)`: its result is that NaN)."""

    def live(state):
        i, _, q = state
        return (i <= steps) & ~jnp.isnan(q)

    def body(state):
        i, p, q = state
        go = live(state)
        r = step(i, p, q)
        return i + 1.0, jnp.where(go, q, p), jnp.where(go, r, q)

    def more(state):
        return jnp.any(live(state))

    i = jnp.ones_like(q)
    return lax.while_loop(more, body, (i, p, q))[2]


def _acos(y):
    """acos(y) to float32's precision (computed in float64, rounded): torch's float
    `std::acos` is correctly rounded, XLA's float32 acos up to 2 ulps off, an error
    the trigonometric forms multiply by n."""
    with jax.enable_x64(True):
        return jnp.arccos(y.astype(jnp.float64)).astype(jnp.float32)


def _parity_sign(n):
    """1 for an even n, -1 for an odd one."""
    return jnp.where(jnp.fmod(n, 2.0) == 0.0, 1.0, -1.0)


def _chebyshev(x, n, kind, shifted):
    """torch's `chebyshev_polynomial_{t,u,v,w}_forward` and their shifted forms (at
    y = 2x - 1): the values at y = +-1 (x = 1 and x = 0 when shifted), the trigonometric
    form in acos(y) for |y| < 1 and n beyond a bound, else the recurrence
    r = 2y q - p from q = y, 2y, 2y - 1 or 2y + 1."""
    y = x + x - 1.0 if shifted else x
    two_y = y + y
    first = {"t": y, "u": two_y, "v": two_y - 1.0, "w": two_y + 1.0}[kind]
    if shifted:
        at_one, at_minus_one = x == 1.0, x == 0.0
    else:
        at_one = (jnp.abs(x) == 1.0) & (x > 0.0)
        at_minus_one = (jnp.abs(x) == 1.0) & (x < 0.0)
    sign = _parity_sign(n)
    odd_n = 2.0 * n + 1.0
    ends = {
        "t": (1.0, sign),
        "u": (n + 1.0, sign * (n + 1.0)),
        "v": (1.0, sign * odd_n),
        "w": (odd_n, sign),
    }[kind]
    bound = {"t": 6.0, "u": 8.0, "v": 8.0, "w": 8.0}[kind]
    if shifted:
        bound = 4.0 if kind == "w" else 6.0
    theta = _acos(jnp.clip(y, -1.0, 1.0))
    if kind == "t":
        trig = jnp.cos(n * theta)
    elif kind == "u":
        s = jnp.sin(theta)
        trig = jnp.where(
            s != 0.0,
            jnp.sin((n + 1.0) * theta) / s,
            (n + 1.0) * jnp.cos((n + 1.0) * theta) / y,
        )
    elif kind == "v":
        trig = jnp.where(
            jnp.sin(theta / 2.0) != 1.0,
            jnp.cos((n + 0.5) * theta) / jnp.cos(theta / 2.0),
            sign * odd_n,
        )
    else:
        # torch's shifted W gives +-1 where cos(theta / 2) rounds to 1 (y near 1)
        near_one = sign if shifted else jnp.where(x > 0.0, odd_n, sign)
        trig = jnp.where(
            jnp.cos(theta / 2.0) != 1.0,
            jnp.sin((n + 0.5) * theta) / jnp.sin(theta / 2.0),
            near_one,
        )
    use_trig = (n > bound) & (jnp.abs(y) < 1.0)
    special = at_one | at_minus_one | use_trig | (n < 0.0)
    steps = jnp.where(special, 0.0, n - 1.0)
    value = _recurrence(lambda i, p, q: two_y * q - p, jnp.ones_like(x), first, steps)
    value = jnp.where(n == 0.0, 1.0, value)
    value = jnp.where(use_trig, trig, value)
    value = jnp.where(at_minus_one, ends[1], value)
    value = jnp.where(at_one, ends[0], value)
    return jnp.where(n < 0.0, 0.0, value)


def _hermite(x, n, physicists):
    """torch's `hermite_polynomial_h_forward` (`he`): r = 2x q - 2i p from q = 2x
    (r = x q - i p from q = x); NaN beyond degree 128."""
    if physicists:
        first = x + x

        def step(i, p, q):
            return (x + x) * q - (i + i) * p

    else:
        first = x

        def step(i, p, q):
            return x * q - i * p

    too_high = n > 128.0
    steps = jnp.where(too_high | (n < 0.0), 0.0, n - 1.0)
    value = _recurrence(step, jnp.ones_like(x), first, steps)
    value = jnp.where(n == 0.0, 1.0, value)
    value = jnp.where(too_high, jnp.nan, value)
    return jnp.where(n < 0.0, 0.0, value)


def _laguerre(x, n):
    """torch's `laguerre_polynomial_l_forward`: 1 at x = 0, else
    r = ((2i + (1 - x)) q - i p) / (i + 1) from q = 1 - x."""

    def step(i, p, q):
        return (((i + i) + (1.0 - x)) * q - i * p) / (i + 1.0)

    at_zero = x == 0.0
    steps = jnp.where(at_zero | (n < 0.0), 0.0, n - 1.0)
    value = _recurrence(step, jnp.ones_like(x), 1.0 - x, steps)
    value = jnp.where((n == 0.0) | at_zero, 1.0, value)
    return jnp.where(n < 0.0, 0.0, value)


def _legendre(x, n):
    """torch's `legendre_polynomial_p_forward`: +-1 at x = +-1, else
    r = ((2i + 1) x q - i p) / (i + 1) from q = x."""

    def step(i, p, q):
        return ((i + i + 1.0) * x * q - i * p) / (i + 1.0)

    at_end = jnp.abs(x) == 1.0
    steps = jnp.where(at_end | (n < 0.0), 0.0, n - 1.0)
    value = _recurrence(step, jnp.ones_like(x), x, steps)
    value = jnp.where(n == 0.0, 1.0, value)
    end = jnp.where((x > 0.0) | (jnp.fmod(n, 2.0) == 0.0), 1.0, -1.0)
    value = jnp.where(at_end, end, value)
    return jnp.where(n < 0.0, 0.0, value)


def lib_orthogonal_polynomial(x, n, *, kind):
    """The polynomial `kind` ("chebyshev_t", ..., "shifted_chebyshev_w",
    "hermite_h", "hermite_he", "laguerre_l", "legendre_p") of degree n at x, both
    float32 arrays of one shape: (values,)."""
    x = x.astype(jnp.float32)
    n = _degree(n.astype(jnp.float32))
    family, _, letter = kind.rpartition("_")
    if family in ("chebyshev", "shifted_chebyshev"):
        value = _chebyshev(x, n, letter, family == "shifted_chebyshev")
    elif family == "hermite":
        value = _hermite(x, n, letter == "h")
    elif family == "laguerre":
        value = _laguerre(x, n)
    else:
        value = _legendre(x, n)
    return (value.astype(jnp.float32),)
