"""Ops that run as library functions on XLA (`pallas_ir.library`), inside the same
jitted program as the Pallas kernels: each against eager PyTorch, the ta reference on
the same module, and the TPU compiler (deviceless AOT for v5e)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support.programs import (
    aot_failures,
    assert_like_eager,
    compile_programs,
    flat,
    library_call_reference,
)

NAN, INF = float("nan"), float("inf")


def _ties_and_specials() -> torch.Tensor:
    """Rows with repeated values, NaN, ±inf and ±0.0: the order torch defines."""
    row = [0.0, -0.0, NAN, 1.0, -INF, INF, 1.0, -2.0, NAN, 0.0, -0.0, 3.0]
    return torch.tensor([row, row[::-1], [v * -1 for v in row]])


PROGRAMS = {
    "sort_rows": (lambda x: torch.sort(x, dim=1), lambda: [torch.randn(8, 32)]),
    "sort_descending_dim0": (
        lambda x: torch.sort(x, dim=0, descending=True),
        lambda: [torch.randn(16, 8)],
    ),
    "sort_stable_ties": (
        lambda x: torch.sort(x, stable=True, descending=True),
        lambda: [_ties_and_specials()],
    ),
    "sort_ints": (
        lambda x: torch.sort(x, dim=-1),
        lambda: [torch.randint(-(2**31), 2**31 - 1, (4, 64), dtype=torch.int32)],
    ),
    "argsort_ints_descending": (
        lambda x: torch.argsort(x, dim=0, descending=True, stable=True),
        lambda: [torch.randint(-3, 3, (12, 5))],
    ),
    "sort_0d": (lambda x: torch.sort(x), lambda: [torch.tensor(2.5)]),
    "sort_bfloat16": (
        lambda x: torch.sort(x, dim=1),
        lambda: [torch.randn(4, 16).bfloat16()],
    ),
    # topk: lax.sort's first k (test_sorting_and_scans checks ties, NaN and -0.0)
    "topk_last_dim": (lambda x: torch.topk(x, 5), lambda: [torch.randn(6, 600)]),
    "topk_smallest_dim0": (
        lambda x: torch.topk(x * 2 + 1, 3, dim=0, largest=False),
        lambda: [torch.randn(520, 7)],
    ),
    "sort_then_fused": (
        lambda x: torch.sort(x.t() * 3, dim=1).values.sum(1) + 1,
        lambda: [torch.randn(32, 8)],
    ),
}


@pytest.fixture(scope="module")
def compiled():
    return compile_programs(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    assert_like_eager(k(*inputs), fn(*inputs))


@pytest.mark.parametrize("name", ["sort_rows", "sort_stable_ties", "topk_last_dim"])
def test_ta_reference_matches_eager(name: str, compiled) -> None:
    """The ta module's meaning (the reference interpreter runs the library call on
    numpy arrays) is eager's."""
    k, fn, inputs = compiled[name]
    got = library_call_reference(k, inputs)
    for g, w in zip(got, flat(fn(*inputs))):
        np.testing.assert_array_equal(g, w.numpy().astype(g.dtype))


def test_library_calls_aot_compile_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)


def test_every_library_function_copies_into_one_module() -> None:
    """An emitted module defines each library function and helper once, by name: two
    families' helpers of one name would clash (`functions.source` refuses them)."""
    from pallas_ir.library import LibraryFn, functions

    text = functions.source(list(LibraryFn))
    namespace: dict = {}
    exec(  # noqa: S102 - the library source, as an emitted module runs it
        "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n" + "\n".join(text),
        namespace,
    )
    for fn in LibraryFn:
        assert callable(namespace[functions.name(fn)])
