"""Random torch-style views, written as the frontend writes them (flat maps over
storage), through the ta passes: the passes keep the meaning and are idempotent.

The generator itself is checked first: its kernels, run by the reference interpreter,
agree with numpy's `as_strided` on the same storage.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.printer import Printer

import pallas_ir
from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.reference import run_kernel


@st.composite
def views(draw):
    """(storage size, view shape, view strides, storage offset) of a chain of views
    (slices with steps, permutes, selects, unsqueezes and diagonals)."""
    rank = draw(st.integers(1, 4))
    base = [draw(st.sampled_from([2, 3, 4, 6, 8, 12, 16])) for _ in range(rank)]
    shape, strides, offset = list(base), row_major_strides(base), 0
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(["slice", "permute", "select", "unsqueeze", "diagonal"])
        )
        if kind == "slice":
            d = draw(st.integers(0, len(shape) - 1))
            start = draw(st.integers(0, shape[d] - 1))
            step = draw(st.sampled_from([1, 2, 3]))
            offset += start * strides[d]
            shape[d] = -(-(shape[d] - start) // step)
            strides[d] *= step
        elif kind == "permute":
            perm = draw(st.permutations(range(len(shape))))
            shape, strides = [shape[p] for p in perm], [strides[p] for p in perm]
        elif kind == "select" and len(shape) > 1:
            d = draw(st.integers(0, len(shape) - 1))
            offset += draw(st.integers(0, shape[d] - 1)) * strides[d]
            del shape[d], strides[d]
        elif kind == "diagonal" and len(shape) > 1:
            # torch.diagonal(v, k, d1, d2): the two dims become one, last, walking
            # both at once (a stride of s1 + s2), k above (or below) the main one.
            d1, d2 = draw(st.permutations(range(len(shape))))[:2]
            k = draw(st.integers(-(shape[d1] - 1), shape[d2] - 1))
            offset += k * strides[d2] if k >= 0 else -k * strides[d1]
            n = min(shape[d1] - max(-k, 0), shape[d2] - max(k, 0))
            step = strides[d1] + strides[d2]
            for d in sorted((d1, d2), reverse=True):
                del shape[d], strides[d]
            shape.append(n)
            strides.append(step)
        elif kind == "unsqueeze" and len(shape) < 4:
            d = draw(st.integers(0, len(shape)))
            shape.insert(d, 1)
            strides.insert(d, 0)
    return math.prod(base), shape, strides, offset


def kernel_text(size: int, shape: list[int], strides: list[int], offset: int) -> str:
    """`out = view * 2`, the view read through one flat map over the storage."""
    dims = ", ".join(f"d{k}" for k in range(len(shape)))
    ivs = ", ".join(f"%i{k}" for k in range(len(shape)))
    flat_in = " + ".join([f"d{k} * {s}" for k, s in enumerate(strides)] + [str(offset)])
    flat_out = " + ".join(f"d{k} * {s}" for k, s in enumerate(row_major_strides(shape)))
    n_out = math.prod(shape)
    return f"""
ta.kernel @view(%x: memref<{size}xf32> {{role = "in"}}, %out: memref<{n_out}xf32> {{role = "out"}}) {{
  ta.loop [{", ".join(map(str, shape))}] ({ivs}) {{
    %v = ta.load %x[affine_map<({dims}) -> ({flat_in})>]({ivs}) : memref<{size}xf32>
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c : f32
    ta.store %m, %out[affine_map<({dims}) -> ({flat_out})>]({ivs}) : memref<{n_out}xf32>
  }}
}}
"""


def run(module, x: np.ndarray, n_out: int) -> np.ndarray:
    (k,) = [op for op in module.ops if isinstance(op, ta.KernelOp)]
    out = np.zeros(n_out, np.float32)
    run_kernel(k, [x.copy(), out])
    return out


def printed(module) -> str:
    s = io.StringIO()
    Printer(stream=s).print_op(module)
    return s.getvalue()


@given(views())
def test_generator_matches_numpy(view) -> None:
    size, shape, strides, offset = view
    x = np.arange(size, dtype=np.float32)
    module = pallas_ir.parse(kernel_text(*view))
    pallas_ir.verify(module)
    want = np.lib.stride_tricks.as_strided(
        x[offset:], shape=shape, strides=[s * 4 for s in strides]
    )
    np.testing.assert_array_equal(run(module, x, math.prod(shape)), (want * 2).ravel())


@pytest.mark.parametrize(
    "pipeline",
    [
        "stride-to-reshape",
        "canonicalize-permutation",
        "stride-to-reshape,canonicalize-permutation",
    ],
)
@given(view=views())
def test_passes_keep_meaning_and_are_idempotent(pipeline: str, view) -> None:
    size, shape, _, _ = view
    x = np.random.default_rng(0).uniform(-2, 2, size).astype(np.float32)
    module = pallas_ir.parse(kernel_text(*view))
    before = run(module, x, math.prod(shape))
    pallas_ir.run_passes(module, pipeline)
    np.testing.assert_array_equal(run(module, x, math.prod(shape)), before)
    once = printed(module)
    pallas_ir.run_passes(module, pipeline)
    assert printed(module) == once
