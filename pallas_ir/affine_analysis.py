"""Index-map analysis shared by the ta passes, the tiler, tl-to-pallas and the reference.

Four tools, each independent of the IR around the map:

* `linearize(expr)`: an affine expression as a `LinearExpr` (one coefficient per dim
  and per symbol, plus a constant), or None when the expression is not linear
  (`floordiv`, `ceildiv`, `mod` of anything that is not constant). `LinearExpr.to_affine`
  goes back.
* `simplify(expr, dim_bounds)`: a quasi-affine simplifier that knows the range of every
  dim (xDSL's own does not simplify `(d0 * 4 + d1) floordiv 4` even when d1 < 4). It
  folds `floordiv`/`mod` by a constant whose dividend splits into a multiple of the
  divisor and a remainder whose range fits below it: with d1 in [0, 3],
  `(d0 * 4 + d1) floordiv 4` is `d0` and `(d0 * 4 + d1) mod 4` is `d1`.
* `decompose_on_shape(offset, extents, shape)`: the one reading of a flat storage
  offset on an N-D shape of that storage: one index per dim, `step * d + c` or `c`.
  The tiler reads an access on the shape the host holds its storage in with it.
* `find_reinterpretation(offset, extents, size)`: given a flat storage offset that is
  linear in loop dims with constant strides, the contiguous row-major N-D shape of the
  storage in which every loop dim walks exactly one buffer dim with unit step (a
  projected permutation with constant offsets), and the offset decomposed on it by
  `decompose_on_shape`. See its docstring for the canonical shape it picks and for
  what it refuses.

And `rotation(expr, extents)`: the one non-linear index the canonical access form
keeps, `(d + c) mod n` over a dim d of extent n (a whole dim read rotated: `torch.roll`,
rotate-half); `without_rotations` reads a map with each rotation as its dim alone.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from pallas_ir.interval_bounds import Interval, expr_bounds

# ---------------------------------------------------------------------------------------
# Linear forms


@dataclass(frozen=True)
class LinearExpr:
    """`sum(dims[p] * d_p) + sum(symbols[q] * s_q) + constant`, zero coefficients
    omitted (so two equal expressions compare equal)."""

    dims: Mapping[int, int] = field(default_factory=dict[int, int])
    symbols: Mapping[int, int] = field(default_factory=dict[int, int])
    constant: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "dims", {p: c for p, c in self.dims.items() if c})
        object.__setattr__(self, "symbols", {p: c for p, c in self.symbols.items() if c})

    def __hash__(self) -> int:
        return hash(
            (
                tuple(sorted(self.dims.items())),
                tuple(sorted(self.symbols.items())),
                self.constant,
            )
        )

    @property
    def is_constant(self) -> bool:
        return not self.dims and not self.symbols

    def __add__(self, other: LinearExpr) -> LinearExpr:
        dims = dict(self.dims)
        for p, c in other.dims.items():
            dims[p] = dims.get(p, 0) + c
        symbols = dict(self.symbols)
        for p, c in other.symbols.items():
            symbols[p] = symbols.get(p, 0) + c
        return LinearExpr(dims, symbols, self.constant + other.constant)

    def scaled(self, factor: int) -> LinearExpr:
        return LinearExpr(
            {p: c * factor for p, c in self.dims.items()},
            {p: c * factor for p, c in self.symbols.items()},
            self.constant * factor,
        )

    def to_affine(self) -> AffineExpr:
        """Dims in increasing position, then symbols, then the constant:
        `d0 * 256 + d1 * 2 + 1`."""
        terms = [(AffineExpr.dimension(p), c) for p, c in sorted(self.dims.items())]
        terms += [(AffineExpr.symbol(p), c) for p, c in sorted(self.symbols.items())]
        return _sum_of_terms(terms, self.constant)


def linearize(expr: AffineExpr) -> LinearExpr | None:
    """`expr` as a linear form, or None if it is not linear in its dims and symbols.

    Sums and products by constants are linear; `floordiv`, `ceildiv` and `mod` are linear
    only when both sides are constant (then they are folded). A product of two
    non-constant parts (which xDSL cannot build anyway) is not linear.
    """
    match expr:
        case AffineConstantExpr(value=v):
            return LinearExpr(constant=v)
        case AffineDimExpr(position=p):
            return LinearExpr(dims={p: 1})
        case AffineSymExpr(position=p):
            return LinearExpr(symbols={p: 1})
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a, b = linearize(lhs), linearize(rhs)
            if a is None or b is None:
                return None
            if kind == AffineBinaryOpKind.Add:
                return a + b
            if kind == AffineBinaryOpKind.Mul:
                if b.is_constant:
                    return a.scaled(b.constant)
                if a.is_constant:
                    return b.scaled(a.constant)
                return None
            if a.is_constant and b.is_constant and b.constant != 0:
                return LinearExpr(constant=expr.eval([], []))
            return None
    return None


def _sum_of_terms(terms: Sequence[tuple[AffineExpr, int]], constant: int) -> AffineExpr:
    out: AffineExpr | None = None
    for atom, c in terms:
        term = atom if c == 1 else atom * c
        out = term if out is None else out + term
    if out is None:
        return AffineExpr.constant(constant)
    return out + constant if constant else out


# ---------------------------------------------------------------------------------------
# Quasi-affine simplification with known dim ranges

_DIVISIONS = (
    AffineBinaryOpKind.FloorDiv,
    AffineBinaryOpKind.Mod,
    AffineBinaryOpKind.CeilDiv,
)

# A sum of atoms (dims, symbols, floordiv/mod/ceildiv nodes) with integer coefficients.
_Terms = dict[AffineExpr, int]


def simplify(expr: AffineExpr, dim_bounds: Sequence[Interval | None]) -> AffineExpr:
    """`expr` with every `floordiv`/`mod` that the dims' ranges decide folded away.

    `dim_bounds[p]` is the inclusive range of d_p (None: unknown); symbols are unknown.
    The rules, for a dividend `E` and a positive constant `c`:

    * `E`'s range lies in one block `[q*c, q*c + c - 1]`: `E floordiv c = q` and
      `E mod c = E - q*c` (also `ceildiv` when its result is the same at both ends);
    * `E = g*A + R` for a `g > 1` dividing `c`, with `R`'s range inside `[0, g - 1]`:
      `E floordiv c = A floordiv (c/g)` and `E mod c = g * (A mod (c/g)) + R`, the
      rule that undoes a split `d = d_outer * c + d_inner`;
    * `(E floordiv a) floordiv c = E floordiv (a*c)`, and `(E mod a + F) mod c =
      (E + F) mod c` when `c` divides `a` (a rotation of a rotation is one).

    The result is a sum in a fixed order (dims by position, symbols, other atoms), so
    equal inputs print equally. Linear expressions come back as `linearize` would
    rebuild them.
    """
    return _simplify(expr, tuple(dim_bounds))


@functools.lru_cache(maxsize=1 << 16)
def _simplify(expr: AffineExpr, dim_bounds: tuple[Interval | None, ...]) -> AffineExpr:
    # The passes ask again for the same accesses (each kernel's index maps, once per
    # candidate rewrite): a cache, as both arguments are immutable.
    terms, constant = _collect(expr, dim_bounds)
    return _to_expr(terms, constant)


def _atom_order(atom: AffineExpr) -> tuple[int, int, str]:
    if isinstance(atom, AffineDimExpr):
        return (0, atom.position, "")
    if isinstance(atom, AffineSymExpr):
        return (1, atom.position, "")
    return (2, 0, str(atom))


def _to_expr(terms: _Terms, constant: int) -> AffineExpr:
    ordered = sorted(
        ((a, c) for a, c in terms.items() if c), key=lambda t: _atom_order(t[0])
    )
    return _sum_of_terms(ordered, constant)


def _add_terms(into: _Terms, terms: _Terms, factor: int = 1) -> None:
    for atom, c in terms.items():
        into[atom] = into.get(atom, 0) + c * factor
        if into[atom] == 0:
            del into[atom]


def _collect(expr: AffineExpr, bounds: Sequence[Interval | None]) -> tuple[_Terms, int]:
    match expr:
        case AffineConstantExpr(value=v):
            return {}, v
        case AffineDimExpr() | AffineSymExpr():
            return {expr: 1}, 0
        case AffineBinaryOpExpr(kind=AffineBinaryOpKind.Add, lhs=lhs, rhs=rhs):
            (ta, ca), (tb, cb) = _collect(lhs, bounds), _collect(rhs, bounds)
            out = dict(ta)
            _add_terms(out, tb)
            extra = _recombine(out, bounds)
            return out, ca + cb + extra
        case AffineBinaryOpExpr(kind=AffineBinaryOpKind.Mul, lhs=lhs, rhs=rhs):
            (ta, ca), (tb, cb) = _collect(lhs, bounds), _collect(rhs, bounds)
            if not tb:
                return {a: c * cb for a, c in ta.items() if c * cb}, ca * cb
            if not ta:
                return {a: c * ca for a, c in tb.items() if c * ca}, ca * cb
            return {expr: 1}, 0  # not affine: keep as an opaque atom
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            tr, cr = _collect(rhs, bounds)
            if tr or cr <= 0:
                return {expr: 1}, 0  # division by a non-constant: opaque
            tl, cl = _collect(lhs, bounds)
            return _divide(tl, cl, kind, cr, bounds)
    return {expr: 1}, 0


def _recombine(terms: _Terms, bounds: Sequence[Interval | None]) -> int:
    """Rewrite `b*c*(E floordiv c) + b*(E mod c)` in `terms` as `b*E` (true for every
    integer E and c > 0): what a dim split by `d floordiv c`, `d mod c` and put back
    together leaves. Returns the constant that E's constants add."""
    added = 0
    divisions = {
        (str(a.lhs), a.rhs.value, a.kind): a
        for a in terms
        if isinstance(a, AffineBinaryOpExpr)
        and a.kind in (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.Mod)
        and isinstance(a.rhs, AffineConstantExpr)
    }
    for (lhs, c, kind), quotient in divisions.items():
        if kind != AffineBinaryOpKind.FloorDiv:
            continue
        rest = divisions.get((lhs, c, AffineBinaryOpKind.Mod))
        if rest is None or quotient not in terms or rest not in terms:
            continue
        b = terms[rest]
        if terms[quotient] != b * c:
            continue
        del terms[quotient], terms[rest]
        inner, inner_constant = _collect(quotient.lhs, bounds)
        _add_terms(terms, inner, b)
        added += b * inner_constant
    return added


def _bounds(
    terms: _Terms, constant: int, dims: Sequence[Interval | None]
) -> Interval | None:
    lo = hi = constant
    for atom, c in terms.items():
        b = expr_bounds(atom, dims, [])
        if b is None:
            return None
        lo += min(c * b[0], c * b[1])
        hi += max(c * b[0], c * b[1])
    return lo, hi


def _divide(
    terms: _Terms,
    constant: int,
    kind: AffineBinaryOpKind,
    c: int,
    dims: Sequence[Interval | None],
) -> tuple[_Terms, int]:
    """Simplified `(terms + constant) <kind> c` for a constant c > 0."""
    if c == 1:
        return ({}, 0) if kind == AffineBinaryOpKind.Mod else (dict(terms), constant)
    if not terms:
        value = AffineBinaryOpExpr(
            kind, AffineExpr.constant(constant), AffineExpr.constant(c)
        )
        return {}, value.eval([], [])

    if kind == AffineBinaryOpKind.Mod:
        # `X mod m` is X modulo c when c divides m: a rotation of a rotation,
        # `((d + a) mod n + b) mod n`, is `(d + a + b) mod n`.
        inner = [
            a
            for a in terms
            if isinstance(a, AffineBinaryOpExpr)
            and a.kind == AffineBinaryOpKind.Mod
            and isinstance(a.rhs, AffineConstantExpr)
            and a.rhs.value % c == 0
        ]
        if inner:
            out = {a: k for a, k in terms.items() if a not in inner}
            for a in inner:
                tl, cl = _collect(a.lhs, dims)  # type: ignore[attr-defined]
                _add_terms(out, tl, terms[a])
                constant += cl * terms[a]
            return _divide(out, constant, kind, c, dims)

    # The dividend's range lies inside one block of c.
    if (b := _bounds(terms, constant, dims)) is not None:
        lo, hi = b
        if kind == AffineBinaryOpKind.FloorDiv and lo // c == hi // c:
            return {}, lo // c
        if kind == AffineBinaryOpKind.CeilDiv and -(-lo // c) == -(-hi // c):
            return {}, -(-lo // c)
        if kind == AffineBinaryOpKind.Mod and lo // c == hi // c:
            return dict(terms), constant - (lo // c) * c

    if kind != AffineBinaryOpKind.CeilDiv:
        # Multiples of c leave through the division whatever the rest is:
        # (c*A + R) floordiv c = A + R floordiv c and (c*A + R) mod c = R mod c.
        a_terms = {a: k // c for a, k in terms.items() if k % c == 0}
        a_const, r_const = divmod(constant, c)
        if a_terms or a_const:
            r_terms = {a: k for a, k in terms.items() if k % c != 0}
            q_terms, q_const = _divide(r_terms, r_const, kind, c, dims)
            if kind == AffineBinaryOpKind.Mod:
                return q_terms, q_const
            _add_terms(q_terms, a_terms)
            return q_terms, q_const + a_const

        # E = g*A + R with 0 <= R < g for a g > 1 that divides c.
        candidates = {c} | {math.gcd(c, k) for k in terms.values()}
        for g in sorted((g for g in candidates if g > 1), reverse=True):
            a_terms = {a: k // g for a, k in terms.items() if k % g == 0}
            r_terms = {a: k for a, k in terms.items() if k % g != 0}
            a_const, r_const = divmod(constant, g)
            rb = _bounds(r_terms, r_const, dims)
            if rb is None or rb[0] < 0 or rb[1] > g - 1:
                continue
            m = c // g
            if kind == AffineBinaryOpKind.FloorDiv:
                return _divide(a_terms, a_const, kind, m, dims)
            q_terms, q_const = _divide(a_terms, a_const, kind, m, dims)
            out = {a: k * g for a, k in q_terms.items()}
            _add_terms(out, r_terms)
            return out, q_const * g + r_const

    # Nested divisions of a single atom.
    if constant == 0 and len(terms) == 1:
        ((atom, k),) = terms.items()
        if (
            k == 1
            and isinstance(atom, AffineBinaryOpExpr)
            and isinstance(inner := atom.rhs, AffineConstantExpr)
        ):
            if kind == atom.kind == AffineBinaryOpKind.FloorDiv:
                tl, cl = _collect(atom.lhs, dims)
                return _divide(tl, cl, kind, inner.value * c, dims)
            if kind == atom.kind == AffineBinaryOpKind.Mod and inner.value % c == 0:
                tl, cl = _collect(atom.lhs, dims)
                return _divide(tl, cl, kind, c, dims)

    node = AffineBinaryOpExpr(kind, _to_expr(terms, constant), AffineExpr.constant(c))
    return {node: 1}, 0


def is_division_free(expr: AffineExpr) -> bool:
    return not any(
        isinstance(e, AffineBinaryOpExpr) and e.kind in _DIVISIONS for e in expr.dfs()
    )


def divisions(expr: AffineExpr) -> list[AffineBinaryOpExpr]:
    """The `floordiv`/`mod`/`ceildiv` nodes of `expr`, outermost first."""
    return [
        e
        for e in expr.dfs()
        if isinstance(e, AffineBinaryOpExpr) and e.kind in _DIVISIONS
    ]


# ---------------------------------------------------------------------------------------
# Contiguous N-D reinterpretation of a flat offset


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return strides[::-1]


@dataclass(frozen=True)
class StridedIndex:
    """One index of an access on a given N-D shape: `step * d_dim + offset`, or the
    constant `offset` when `dim` is None."""

    dim: int | None
    step: int
    offset: int

    def to_affine(self) -> AffineExpr:
        if self.dim is None:
            return AffineExpr.constant(self.offset)
        d = AffineExpr.dimension(self.dim)
        if self.step != 1:
            d = d * self.step
        return d + self.offset if self.offset else d


@dataclass(frozen=True)
class Reinterpretation:
    """A row-major N-D view of the storage and the access's index into it."""

    shape: tuple[int, ...]
    indices: tuple[StridedIndex, ...]
    """`decompose_on_shape`'s indices of the offset on `shape`: every step is 1."""

    def results(self) -> list[AffineExpr]:
        return [i.to_affine() for i in self.indices]


@dataclass(frozen=True)
class Rejection:
    """Why an access has no reinterpretation. `reason` is the sentence for the remark,
    `key` the statistics bucket that groups sentences differing in numbers only."""

    reason: str
    key: str


def find_reinterpretation(
    offset: LinearExpr,
    extents: Mapping[int, int],
    size: int,
    dim_names: Mapping[int, str] | None = None,
) -> Reinterpretation | Rejection:
    """The contiguous N-D view of `size` elements of storage in which `offset` walks
    every loop dim along one buffer dim with unit step (`unit_step_view`), or, where
    there is none, a diagonal of such a view (`diagonal_view`)."""
    found = unit_step_view(offset, extents, size, dim_names)
    if isinstance(found, Rejection):
        return diagonal_view(offset, extents, size) or found
    return found


def diagonal_view(
    offset: LinearExpr, extents: Mapping[int, int], size: int
) -> Reinterpretation | None:
    """`offset` as a diagonal walk of rows of `w` elements: its innermost loop dim p
    steps `w + 1` elements, one row and one element along it (`x.diagonal(k)` of an
    (h, w) matrix, batched or not), and every other walk steps whole rows. The view is
    `unit_step_view`'s of the offset with p stepping `w` (p walks the rows, the lane
    dim of `w` elements is indexed by the constant c), in which p indexes the lane dim
    too: `(..., d_p + r, d_p + c)`, each index a unit step. None unless p's walk stays
    inside the row (c + extent <= w)."""
    walks = {p: s for p, s in offset.dims.items() if extents[p] > 1}
    if not walks or offset.symbols:
        return None
    p = min(walks, key=lambda q: walks[q])
    w = walks[p] - 1
    if w < 2 or any(s % w for q, s in walks.items() if q != p):
        return None
    rows = LinearExpr({**offset.dims, p: w}, {}, offset.constant)
    found = unit_step_view(rows, extents, size)
    if isinstance(found, Rejection) or found.shape[-1] != w:
        return None
    *lead, lane = found.indices
    if lane.dim is not None or lane.offset + extents[p] > w:
        return None
    if not any(i.dim == p for i in lead):
        return None
    return Reinterpretation(found.shape, (*lead, StridedIndex(p, 1, lane.offset)))


def unit_step_view(
    offset: LinearExpr,
    extents: Mapping[int, int],
    size: int,
    dim_names: Mapping[int, str] | None = None,
) -> Reinterpretation | Rejection:
    """The contiguous N-D view of `size` elements of storage in which `offset` walks
    every loop dim along one buffer dim with unit step.

    `offset` is linear in dims (`offset.dims[p]` is the stride of dim p, `extents[p]` its
    extent) with no symbols. `dim_names` names dims in messages (default `d<p>`).

    The shape is built from the innermost stride outwards. With the walked dims sorted
    by decreasing stride s_1 > s_2 > ... > s_r (extents n_j):

    * a step `s_r > 1` on the innermost dim adds a trailing buffer dim of size s_r,
      indexed by a constant (`x[::2]` on 8 elements: shape (4, 2), index (d0, 0));
    * dim j (j > 1) walks a buffer dim of size n_j followed by a split of size
      s_{j-1} / (n_j * s_j) when that is an integer above 1 (a step or a partial walk
      of the next dim out: `x[::2, :]` of f32[64, 256] is (32, 2, 256) at (d0, 0, d1)),
      and otherwise a buffer dim of the natural size s_{j-1} / s_j (`x[:, 5:]` of
      f32[16, 32] is (16, 32) at (d0, d1 + 5));
    * the outermost dim gets size `size / s_1`: the whole storage is covered.

    The constant offset is written in mixed radix over the shape; each walked index
    (offset digit + extent - 1) must stay inside its dim. Dims with stride 0 (broadcast)
    or extent 1 walk nothing and are left out.

    Refused, with the reason: a negative stride (a flipped view); two dims with the
    same stride, or a dim whose span runs past the next stride out (an overlapping
    view); a stride that does not divide the next stride out or the storage size
    (`extent 100 is not divisible by step 3`); an offset that makes a walk wrap.
    """

    def name(p: int) -> str:
        return dim_names.get(p, f"d{p}") if dim_names else f"d{p}"

    if offset.symbols:
        return Rejection("the map uses a data-dependent index", "data-dependent index")
    walks: list[tuple[int, int, int]] = []  # (stride, extent, dim), outermost first
    for p, s in offset.dims.items():
        n = extents[p]
        if n == 1:
            continue  # d_p is always 0
        if s < 0:
            return Rejection(
                f"{name(p)} walks with negative stride {s} (a flipped view)",
                "negative stride",
            )
        walks.append((s, n, p))
    walks.sort(key=lambda w: (-w[0], w[2]))
    for (s1, _, p1), (s2, _, p2) in itertools.pairwise(walks):
        if s1 == s2:
            return Rejection(
                f"{name(p1)} and {name(p2)} share stride {s1} (an overlapping view)",
                "overlapping strides",
            )
    if offset.constant < 0:
        return Rejection(f"negative offset {offset.constant}", "negative offset")

    # Built innermost first: (size, walking dim or None, offset digit).
    dims: list[tuple[int, int | None, int]] = []
    built = 1  # product of the sizes built so far: the stride of the next buffer dim
    rem = offset.constant  # what is left of the constant offset, in units of `built`

    def add(n: int, dim: int | None) -> int:
        nonlocal built, rem
        digit = rem % n
        dims.append((n, dim, digit))
        built *= n
        rem //= n
        return digit

    if walks and walks[-1][0] > 1:
        add(walks[-1][0], None)
    for j in range(len(walks) - 1, -1, -1):
        s, n, p = walks[j]
        outer = walks[j - 1][0] if j > 0 else size
        if outer % s:
            return Rejection(
                f"extent {outer} is not divisible by step {s}",
                "extent not divisible by step",
            )
        natural = outer // s
        if natural < n:
            return Rejection(
                f"{name(p)} spans {n * s} elements but the next stride is {outer} "
                "(an overlapping view)",
                "overlapping strides",
            )
        split = outer // (n * s) if j > 0 and outer % (n * s) == 0 else 1
        if split > 1 and rem % n == 0:
            # d_p walks a dim of exactly its extent from 0; the rest of the next
            # stride out becomes a dim of its own, indexed by a constant.
            add(n, p)
            add(split, None)
            continue
        digit = add(natural, p)
        if digit + n > natural:
            return Rejection(
                f"{name(p)} starts at {digit} and walks {n} elements of a dim of "
                f"{natural}: the access wraps around",
                "offset wraps around",
            )
    if not walks:
        add(size, None)
    if rem != 0:  # the outermost digit did not absorb the offset: it leaves the storage
        return Rejection(
            f"offset {offset.constant} is outside the {size} elements of storage",
            "offset outside the storage",
        )
    shape = tuple(n for n, _, _ in reversed(dims))
    # The indices are the offset's decomposition on the shape, the one reading of an
    # offset on a shape that the tiler also uses on host storage: by construction
    # every walked dim's stride is its loop dim's stride (step 1) and the digits
    # are the ones above.
    indices = decompose_on_shape(offset, extents, shape)
    assert indices is not None and all(i.step == 1 for i in indices)
    return Reinterpretation(shape, tuple(indices))


def decompose_on_shape(
    offset: LinearExpr, extents: Mapping[int, int], shape: Sequence[int]
) -> list[StridedIndex] | None:
    """The flat, row-major `offset` (linear in dims, no symbols) as one index per dim of
    `shape`, each walked by at most one loop dim with a positive step: the access as a
    strided view of storage that already has this shape (so no reshape is needed).

    None when a loop dim's stride is not a multiple of a dim's stride below the next dim
    out, when two loop dims walk one dim, or when a walk leaves its dim.
    """
    if offset.symbols or offset.constant < 0:
        return None
    strides = row_major_strides(shape)
    walks: dict[int, tuple[int, int]] = {}  # buffer dim -> (loop dim, step)
    for p, c in offset.dims.items():
        if extents[p] == 1:
            continue
        if c <= 0:
            return None
        b = next((k for k, s in enumerate(strides) if s <= c), None)
        if b is None or c % strides[b] or b in walks:
            return None
        walks[b] = (p, c // strides[b])
    digits, rest = [], offset.constant
    for s in strides:
        digits.append(rest // s)
        rest %= s
    if digits[0] >= shape[0] and len(shape) > 0:
        return None
    out: list[StridedIndex] = []
    for b, (n, d) in enumerate(zip(shape, digits)):
        if b in walks:
            p, step = walks[b]
            if d + step * (extents[p] - 1) >= n:
                return None
            out.append(StridedIndex(p, step, d))
        else:
            if d >= n:
                return None
            out.append(StridedIndex(None, 1, d))
    return out


def flat_offset(results: Sequence[AffineExpr], shape: Sequence[int]) -> LinearExpr | None:
    """The row-major element offset that an access's index results select in a buffer
    of `shape`, in the map's own dim and symbol positions (None if not linear)."""
    total = LinearExpr()
    for e, stride in zip(results, row_major_strides(shape), strict=True):
        term = linearize(e)
        if term is None:
            return None
        total = total + term.scaled(stride)
    return total


@dataclass(frozen=True)
class Rotation:
    """`(d + shift) mod extent` where dim d ranges over the whole [0, extent): the
    dim read rotated by `shift` (0 < shift < extent), `torch.roll(x, -shift)`."""

    dim: int
    """The map dim's position."""
    shift: int
    extent: int


def rotation(expr: AffineExpr, extents: Sequence[int | None]) -> Rotation | None:
    """`expr` as a `Rotation` when it is `(d + c) mod n` with d of extent n (`extents`:
    each map dim's, None where unknown) and c not a multiple of n; else None."""
    if not (
        isinstance(expr, AffineBinaryOpExpr)
        and expr.kind == AffineBinaryOpKind.Mod
        and isinstance(expr.rhs, AffineConstantExpr)
    ):
        return None
    lin = linearize(expr.lhs)
    n = expr.rhs.value
    if lin is None or lin.symbols or len(lin.dims) != 1:
        return None
    ((p, c),) = lin.dims.items()
    if c != 1 or p >= len(extents) or extents[p] != n or lin.constant % n == 0:
        return None
    return Rotation(p, lin.constant % n, n)


def without_rotations(
    expr: AffineExpr,
    extents: Sequence[int | None],
    as_expr: Callable[[Rotation], AffineExpr] = lambda r: AffineExpr.dimension(r.dim),
) -> tuple[AffineExpr, list[Rotation]]:
    """`expr` with each rotation `(d + c) mod n` in it replaced by `as_expr` of it
    (default `d`), and the rotations replaced."""
    found: list[Rotation] = []

    def walk(e: AffineExpr) -> AffineExpr:
        if (r := rotation(e, extents)) is not None:
            found.append(r)
            return as_expr(r)
        if isinstance(e, AffineBinaryOpExpr):
            lhs, rhs = walk(e.lhs), walk(e.rhs)
            if lhs is e.lhs and rhs is e.rhs:
                return e
            return AffineBinaryOpExpr(e.kind, lhs, rhs)
        return e

    return walk(expr), found


def rotated(r: Rotation) -> AffineExpr:
    """The index `(d + shift) mod extent` of rotation `r`."""
    return (AffineExpr.dimension(r.dim) + r.shift) % r.extent
