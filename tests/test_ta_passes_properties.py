"""Properties of stride-to-reshape, canonicalize-permutation and their index analysis.

The filecheck tests pin hand-derived outputs for chosen cases; these check, on views
drawn at random and built with torch itself, that

* `simplify` and `find_reinterpretation` are exact (same value at every loop point);
* every strided, sliced, permuted or broadcast view of a contiguous tensor whose steps
  divide their dims is rewritten to projected-permutation accesses, by stride-to-reshape
  from its flat map and by canonicalize-permutation from the flattened (floordiv/mod)
  map a frontend emits for `view.reshape(-1)`;
* the rewritten kernel, run by the reference interpreter, gives torch's values;
* a second run of either pass changes nothing.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st
from xdsl.ir.affine import AffineExpr

import pallas_ir
from pallas_ir.affine_analysis import (
    LinearExpr,
    Reinterpretation,
    find_reinterpretation,
    linearize,
    simplify,
)
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.passes.access_rewrites import is_canonical_access
from pallas_ir.reference.ta import run_kernel

# ---------------------------------------------------------------------------------------
# The analysis on its own


@st.composite
def quasi_affine(draw, depth: int = 3) -> AffineExpr:
    if depth == 0 or draw(st.booleans()):
        return draw(
            st.sampled_from([AffineExpr.dimension(p) for p in range(3)])
            | st.integers(-4, 20).map(AffineExpr.constant)
        )
    lhs = draw(quasi_affine(depth - 1))
    match draw(st.sampled_from(["+", "*", "floordiv", "mod", "ceildiv"])):
        case "+":
            return lhs + draw(quasi_affine(depth - 1))
        case "*":
            return lhs * draw(st.integers(-3, 9))
        case "floordiv":
            return lhs // draw(st.integers(1, 16))
        case "mod":
            return lhs % draw(st.integers(1, 16))
        case _:
            return lhs.ceil_div(draw(st.integers(1, 16)))


@given(quasi_affine(), st.lists(st.integers(1, 8), min_size=3, max_size=3))
def test_simplify_keeps_the_value(expr: AffineExpr, extents: list[int]) -> None:
    simple = simplify(expr, [(0, n - 1) for n in extents])
    for point in itertools.product(*map(range, extents)):
        assert simple.eval(list(point), []) == expr.eval(list(point), [])


def test_simplify_undoes_a_split() -> None:
    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    bounds = [(0, 63), (0, 127)]
    assert simplify((d0 * 128 + d1) // 128, bounds) == d0
    assert simplify((d0 * 128 + d1) % 128, bounds) == d1
    assert simplify(((d0 * 128 + d1) // 4) % 32, bounds) == d1 // 4
    assert linearize(d0 * 256 + d1 * 2 + 1) == LinearExpr({0: 256, 1: 2}, {}, 1)
    assert linearize(d0 // 2) is None


def test_simplify_puts_a_split_dim_back_together() -> None:
    """`c*(E floordiv c) + E mod c` is E for any integer E, whatever its range: what a
    loop collapsed into one dim leaves in the maps of its accesses."""
    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    assert simplify(((d0 // 16) * 16 + d0 % 16) * 64 + d1, [None, None]) == d0 * 64 + d1
    shifted = ((d0 + 3) // 16) * 32 + ((d0 + 3) % 16) * 2 + 1
    assert simplify(shifted, [None, None]) == d0 * 2 + 7
    # coefficients that do not match (32 against 3*16) stay as they are
    uneven = (d0 // 16) * 32 + (d0 % 16) * 3
    assert simplify(uneven, [None, None]) == uneven


def _check_exact(
    found: Reinterpretation, offset: LinearExpr, extents: dict[int, int], size: int
) -> None:
    assert math.prod(found.shape) == size
    strides = [math.prod(found.shape[k + 1 :]) for k in range(len(found.shape))]
    dims = sorted(extents)
    for point in itertools.product(*(range(extents[p]) for p in dims)):
        at = dict(zip(dims, point, strict=True))
        index = [
            (at[i.dim] if i.dim is not None else 0) + i.offset for i in found.indices
        ]
        assert all(0 <= i < n for i, n in zip(index, found.shape, strict=True))
        flat = sum(i * s for i, s in zip(index, strides, strict=True))
        assert flat == offset.constant + sum(c * at[p] for p, c in offset.dims.items())


@given(
    st.lists(st.tuples(st.integers(-2, 40), st.integers(1, 6)), min_size=1, max_size=3),
    st.integers(0, 30),
    st.integers(1, 400),
)
def test_reinterpretations_are_exact(
    walks: list[tuple[int, int]], constant: int, size: int
) -> None:
    offset = LinearExpr({p: s for p, (s, _) in enumerate(walks)}, {}, constant)
    extents = {p: n for p, (_, n) in enumerate(walks)}
    found = find_reinterpretation(offset, extents, size)
    if isinstance(found, Reinterpretation):
        _check_exact(found, offset, extents, size)


# ---------------------------------------------------------------------------------------
# Views of contiguous tensors, built by torch


@st.composite
def views(draw) -> torch.Tensor:
    """A view of `arange(N).reshape(base)`: per dim a step k dividing the dim, a start
    and a count that fit; then a permutation, and maybe a broadcast dim."""
    rank = draw(st.integers(1, 4))
    base: list[int] = []
    index: list[slice] = []
    for _ in range(rank):
        k, m = draw(st.integers(1, 3)), draw(st.integers(1, 4))
        base.append(k * m)
        phase, first = draw(st.integers(0, k - 1)), draw(st.integers(0, m - 1))
        count = draw(st.integers(1, m - first))
        start = phase + first * k
        index.append(slice(start, start + (count - 1) * k + 1, k))
    x = torch.arange(math.prod(base), dtype=torch.float32).reshape(base)[tuple(index)]
    x = x.permute(draw(st.permutations(range(rank))))
    if draw(st.booleans()):
        where = draw(st.integers(0, rank))
        shape = list(x.shape)
        shape.insert(where, 2)
        x = x.unsqueeze(where).expand(shape)
    return x


def _kernel(view: torch.Tensor, collapsed: bool) -> str:
    """What a frontend emits for `out = view.reshape(-1)`: an N-D loop and the flat
    strided map, or (collapsed) one loop dim over all elements and floordiv/mod."""
    storage = view.untyped_storage().nbytes() // view.element_size()
    numel = view.numel()
    shape, strides = list(view.shape), list(view.stride())
    if collapsed:
        terms = []
        for j, (n, s) in enumerate(zip(shape, strides, strict=True)):
            if n == 1 or s == 0:
                continue
            inner = math.prod(shape[j + 1 :])
            q = f"(d0 floordiv {inner})" if inner > 1 else "d0"
            terms.append(f"({q} mod {n}) * {s}" if j > 0 else f"{q} * {s}")
        loop, dims, vars_ = [numel], "(d0)", "(%i0)"
        out_map = "d0"
    else:
        terms = [f"d{j} * {s}" for j, s in enumerate(strides)]
        loop = shape
        dims = "(" + ", ".join(f"d{j}" for j in range(len(shape))) + ")"
        vars_ = "(" + ", ".join(f"%i{j}" for j in range(len(shape))) + ")"
        out_map = " + ".join(
            f"d{j} * {math.prod(shape[j + 1 :])}" for j in range(len(shape))
        )
    expr = " + ".join([*terms, str(view.storage_offset())])
    return f"""
ta.kernel @k(%x: memref<{storage}xf32> {{role = "in"}}, %out: memref<{numel}xf32> {{role = "out"}}) {{
  ta.loop [{", ".join(map(str, loop))}] {vars_} {{
    %v = ta.load %x[affine_map<{dims} -> ({expr})>]{vars_} : memref<{storage}xf32>
    ta.store %v, %out[affine_map<{dims} -> ({out_map})>]{vars_} : memref<{numel}xf32>
  }}
}}
"""


def _run(module, view: torch.Tensor) -> np.ndarray:
    kernel = next(op for op in module.walk() if isinstance(op, ta.KernelOp))
    storage = view.untyped_storage().nbytes() // view.element_size()
    x = np.arange(storage, dtype=np.float32)
    out = np.full(view.numel(), -1.0, dtype=np.float32)
    run_kernel(kernel, [x, out])
    return out


def _accesses(module) -> list[ta.LoadOp | ta.StoreOp]:
    return [op for op in module.walk() if isinstance(op, ta.LoadOp | ta.StoreOp)]


def _check_pass(view: torch.Tensor, collapsed: bool, pass_name: str) -> None:
    text = _kernel(view, collapsed)
    module = pallas_ir.run_passes(pallas_ir.parse(text), pass_name)
    for op in _accesses(module):
        shape = op.buffer.type.get_shape()
        assert is_canonical_access(op.map.data, op.dims, shape), f"{op}\nfrom\n{text}"
    expected = view.contiguous().reshape(-1).numpy()
    np.testing.assert_array_equal(_run(module, view), expected)
    once = str(module)
    assert str(pallas_ir.run_passes(module, pass_name)) == once


@given(views())
def test_stride_to_reshape_makes_views_nd(view: torch.Tensor) -> None:
    _check_pass(view, collapsed=False, pass_name="stride-to-reshape")


@given(views())
def test_canonicalize_permutation_on_flat_views(view: torch.Tensor) -> None:
    _check_pass(view, collapsed=False, pass_name="canonicalize-permutation")


@given(views())
def test_canonicalize_permutation_splits_flattened_views(view: torch.Tensor) -> None:
    _check_pass(view, collapsed=True, pass_name="canonicalize-permutation")
