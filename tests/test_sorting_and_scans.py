"""Sorting, selection and scans as library functions on XLA (`pallas_ir.library.sorting`,
`pallas_ir.library.scans`), and as Pallas kernels along short dims (a float cumsum's
masked sums, topk's ranks): each against eager PyTorch on the CPU (ints and indices
exactly, float sums within tolerance), with NaN, ±inf, ±0.0, ties, 0-d tensors and
negative dims; a few against the ta reference; all AOT-compiled for v5e. Ops whose
result's shape depends on the data are an UnsupportedError that says so."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support.programs import (
    aot_failures,
    compile_programs,
    flat,
    library_call_reference,
)

import pallas_ir

NAN, INF = float("nan"), float("inf")


def _specials(rows: int = 3) -> torch.Tensor:
    """Rows of ties, NaN, ±inf and ±0.0, in several orders."""
    row = [0.0, -0.0, NAN, 1.0, -INF, INF, 1.0, -2.0, NAN, 0.0, -0.0, 3.0]
    out = [row, row[::-1], [-v for v in row], sorted(row, key=str)][:rows]
    return torch.tensor(out)


def _ties(*shape: int, high: int = 4, dtype=torch.int64) -> torch.Tensor:
    return torch.randint(0, high, shape, dtype=dtype)


def _ties_float(*shape: int) -> torch.Tensor:
    """Few distinct values (ties), with -0.0 among the zeros and some NaN."""
    x = torch.randint(-2, 3, shape).float()
    x[torch.rand(shape) < 0.2] = -0.0
    x[torch.rand(shape) < 0.05] = NAN
    return x


def _nan_rows(n: int) -> torch.Tensor:
    x = torch.randn(3, n)
    x[0, 1] = NAN
    x[1, :] = NAN  # a row of NaN only
    return x


def _sorted_rows(*shape: int) -> torch.Tensor:
    return torch.sort(torch.randn(shape), dim=-1).values


PROGRAMS = {
    # scans
    # scans are library calls (lax.cumsum: a masked-sum Pallas kernel was slower)
    "cumsum_float": (
        lambda x, y, s: (torch.cumsum(x, 1), torch.cumsum(y, -3), torch.cumsum(s, -1)),
        lambda: [torch.randn(6, 40), torch.randn(5, 3, 4), _specials()],
    ),
    "cumsum_float_long": (
        lambda x, s: (torch.cumsum(x, -1), torch.cumsum(s.repeat(1, 50), 1)),
        lambda: [torch.randn(3, 513), _specials()],
    ),
    "cumsum_ints": (
        lambda a, b, f: (
            torch.cumsum(a, 0),  # int32 -> int64
            torch.cumsum(f > 0, 1),  # bool -> int64
            torch.cumsum(b, -1, dtype=torch.int32),
        ),
        lambda: [
            torch.randint(-1000, 1000, (30, 4), dtype=torch.int32),
            _ties(3, 7, high=9),
            torch.randn(4, 9),
        ],
    ),
    "cumsum_dtype_float": (
        lambda b: torch.cumsum(b, 1, dtype=torch.float32),
        lambda: [_ties(3, 7, high=9)],
    ),
    "cumsum_bfloat16_0d_fused": (
        lambda b, z, x: (
            torch.cumsum(b, 1),
            torch.cumsum(z, 0),
            (torch.cumsum(x.t() * 2, 1) + 1).sum(0),
        ),
        lambda: [torch.randn(4, 8).bfloat16(), torch.tensor(2.5), torch.randn(8, 5)],
    ),
    "cumprod": (
        lambda s, r, i: (
            torch.cumprod(s, 0),
            torch.cumprod(r, -1),
            torch.cumprod(i, 1),
            torch.cumprod(r > 0.6, 0),
        ),
        lambda: [_specials(4), torch.rand(3, 10) + 0.5, _ties(4, 6, high=5) - 2],
    ),
    "cummax_cummin_float": (
        lambda s, b, z: (
            *torch.cummax(s, 1),
            *torch.cummin(s, -1),
            *torch.cummin(b, 1),
            *torch.cummax(z, -1),
        ),
        lambda: [_specials(), _ties_float(3, 9).bfloat16(), torch.tensor(1.5)],
    ),
    "cummax_cummin_ints": (
        lambda a, b, f: (
            *torch.cummax(a, 0),
            *torch.cummin(b, -2),
            *torch.cummax(f > 0, 0),
        ),
        lambda: [_ties(12, 5), _ties(9, 4, dtype=torch.int32), torch.randn(6, 3)],
    ),
    "logcumsumexp": (
        lambda s, x, b: (
            torch.logcumsumexp(s, 1),
            torch.logcumsumexp(x * 10, -2),
            torch.logcumsumexp(b, 0),
        ),
        lambda: [_specials(), torch.randn(7, 3), torch.randn(6, 2).bfloat16()],
    ),
    # sorting and selection
    "argsort_msort": (
        lambda s, i: (torch.argsort(s, dim=-1, stable=True), torch.msort(i)),
        lambda: [_specials(), _ties(7, 3)],
    ),
    "kthvalue_ties": (
        lambda f, i: (
            *torch.kthvalue(f, 5, 1),
            *torch.kthvalue(i, 150, -1, keepdim=True),
        ),
        lambda: [_ties_float(20, 40), _ties(6, 301, high=7)],
    ),
    "kthvalue_specials": (
        lambda s, b, z: (
            *torch.kthvalue(s, 1, 0),
            *torch.kthvalue(b, 3, 1),
            *torch.kthvalue(z, 1),
        ),
        lambda: [_specials(4), _ties_float(4, 9).bfloat16(), torch.tensor(-1.0)],
    ),
    "median": (
        lambda a, n, m, i, z: (
            torch.median(a),
            torch.median(n),
            *torch.median(m, 1),
            *torch.median(i, -2, keepdim=True),
            *torch.median(z, 0),
        ),
        lambda: [
            _ties(5, 6),
            _nan_rows(5),
            _nan_rows(8),
            _ties(9, 4, dtype=torch.int32),
            torch.tensor(3.0),
        ],
    ),
    "nanmedian": (
        lambda n, f, a, b, c, d: (
            torch.nanmedian(n),
            *torch.nanmedian(f, -1),
            # rows of NaN only, of several lengths
            *[r for t in (a, b, c, d) for r in torch.nanmedian(t, 1)],
        ),
        lambda: [
            _nan_rows(6),
            _ties_float(6, 9),
            *[torch.full((2, n), NAN) for n in (4, 7, 40, 129)],
        ],
    ),
    # rows of at most 16: no partition, only the final insertion sort
    "mode_short_rows": (
        lambda i, f, b, z: (
            *torch.mode(i, 1),
            *torch.mode(f > 0, 0),
            *torch.mode(b, 1),
            *torch.mode(z),
        ),
        lambda: [
            _ties(30, 12),
            torch.randn(15, 2),
            _ties(3, 14).bfloat16(),
            torch.tensor(7),
        ],
    ),
    # longer rows: libstdc++'s partitions decide which of the equal values is last
    "mode_long_rows": (
        lambda i, z: (*torch.mode(i, -2, keepdim=True), *torch.mode(z, 1)),
        lambda: [
            _ties(200, 4, high=6, dtype=torch.int32),
            torch.tensor([[0.0, -0.0] * 10 + [1.0] * 3, [-0.0, 0.0] * 10 + [2.0] * 3]),
        ],
    ),
    "searchsorted": (
        lambda rows, v, ties, t, seq, w: (
            torch.searchsorted(rows, v),
            torch.searchsorted(ties, t, right=True),
            torch.searchsorted(ties, t),
            torch.searchsorted(seq, w, side="right", out_int32=True),
        ),
        lambda: [
            _sorted_rows(3, 10),
            torch.randn(3, 6),
            torch.tensor([1, 2, 2, 2, 5, 7]),
            _ties(3, 4, high=8),
            _sorted_rows(17),
            torch.randn(2, 3, 4),
        ],
    ),
    "searchsorted_nan_mixed_scalar": (
        lambda n, v, i, f, s: (
            torch.searchsorted(n, v),  # NaN in both: eager's binary search
            torch.searchsorted(i, f),  # int boundaries, float values
            torch.searchsorted(s, 0.25),
            torch.searchsorted(s, 1, right=True),
        ),
        lambda: [
            torch.tensor([1.0, 2.0, NAN, NAN]),
            torch.tensor([0.0, 1.5, NAN, INF]),
            torch.tensor([1, 3, 5]),
            torch.tensor([2.5, 3.0, 5.5]),
            torch.tensor([-1.0, 0.25, 1.0, 1.0]),
        ],
    ),
    "searchsorted_sorter": (
        lambda s, v: torch.searchsorted(s, v, sorter=torch.argsort(s, stable=True)),
        lambda: [_ties(2, 9), _ties(2, 5)],
    ),
    "bucketize": (
        lambda b, v, i: (
            torch.bucketize(v, b),
            torch.bucketize(v, b, right=True),
            torch.bucketize(2, i, out_int32=True),
        ),
        lambda: [
            torch.arange(-2.0, 3.0),
            torch.randint(-3, 4, (4, 5)).float(),
            torch.tensor([0, 2, 2, 4]),
        ],
    ),
    "histc": (
        lambda d, r, one, e, b: (
            torch.histc(d, 7),  # over the data's range
            torch.histc(r, bins=6, min=-1, max=1),  # NaN and outside not counted
            torch.histc(one, 4),  # one value: widened by 1 each way
            torch.histc(e, 10, 0, 1),  # elements on the edges
            torch.histc(b, 5, -2, 2),
        ),
        lambda: [
            torch.randn(200),
            torch.cat([torch.randn(100), _specials().flatten()]),
            torch.full((3, 3), 2.0),
            torch.linspace(0, 1, 101),
            torch.randn(60).bfloat16(),
        ],
    ),
    "aminmax": (
        lambda x: (*torch.aminmax(x, dim=-1), *torch.aminmax(x)),
        lambda: [torch.randn(5, 7)],
    ),
}

TOPK = {
    # each topk's (values, indices) with the source it selects from, the dim and
    # whether it takes the largest
    "topk_short": (
        lambda s, x, i, z: (
            (torch.topk(s, 5), s, -1, True),
            (torch.topk(s, 12, largest=False), s, -1, False),
            (torch.topk(x * 2 + 1, 3, dim=0, largest=False), x * 2 + 1, 0, False),
            (torch.topk(i, 4), i, -1, True),  # int64 ties
            (torch.topk(i, 2, dim=0, largest=False), i, 0, False),
            (torch.topk(z, 1), z, 0, True),  # 0-d
            (torch.topk(s, 0), s, -1, True),  # nothing to select: no kernel
        ),
        lambda: [_specials(), torch.randn(10, 7), _ties(5, 9), torch.tensor(1.5)],
    ),
    "topk_fused_bfloat16": (
        # MoE routing: the 2 largest of a softmax over 64 experts, a bfloat16 one
        lambda g, b: (
            (torch.topk(torch.softmax(g, -1), 2), torch.softmax(g, -1), -1, True),
            (torch.topk(b, 8, dim=1), b, 1, True),
        ),
        lambda: [torch.randn(48, 64), _ties_float(6, 40, 3).bfloat16()],
    ),
    "topk_long": (
        lambda x: ((torch.topk(x, 3), x, -1, True),),
        lambda: [_ties_float(4, 513)],
    ),
}


def _topk_results(fn):
    """The values and indices of each topk `fn` returns (what a compiled one gives)."""
    return lambda *a: tuple(r[0] for r in fn(*a))


@pytest.fixture(scope="module")
def compiled():
    topk = {n: (_topk_results(fn), make) for n, (fn, make) in TOPK.items()}
    return compile_programs(PROGRAMS | topk)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got, want = flat(k(*inputs)), flat(fn(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.dtype.is_floating_point and "cum" not in name:
            # selections return elements: the same ones, the sign of zero too
            assert torch.equal(torch.signbit(g), torch.signbit(w)), (g, w)
        torch.testing.assert_close(g, w, equal_nan=True)  # ints and indices exactly


@pytest.mark.parametrize(
    "name",
    [
        "cumsum_ints",
        "cummax_cummin_ints",
        "kthvalue_ties",
        "median",
        "searchsorted_sorter",
    ],
)
def test_ta_reference_matches_eager(name: str, compiled) -> None:
    """The ta module's meaning (the reference interpreter runs the library calls on
    numpy arrays) is eager's."""
    k, fn, inputs = compiled[name]
    got = library_call_reference(k, inputs)
    for g, w in zip(got, flat(fn(*inputs))):
        np.testing.assert_array_equal(g, w.numpy().astype(g.dtype))


@pytest.mark.parametrize("name", sorted(TOPK))
def test_topk_matches_eager_in_the_stable_order(name: str, compiled) -> None:
    """topk gives eager's values; its indices are those of eager's stable sort, which
    picks the same values (eager's own topk leaves the order of ties open: it puts one
    NaN or -0.0 before another at random), and select the values."""
    k, _, inputs = compiled[name]
    fn, _ = TOPK[name]
    for (values, indices), ((want, _), source, dim, largest) in zip(
        k(*inputs), fn(*inputs), strict=True
    ):
        torch.testing.assert_close(values, want, equal_nan=True)
        n = values.shape[dim] if values.dim() else 1
        stable = torch.sort(source, dim=dim, descending=largest, stable=True).indices
        assert torch.equal(indices, stable.narrow(dim, 0, n) if source.dim() else stable)
        picked = torch.gather(source, dim, indices) if source.dim() else source
        # (exactly but for the softmax, which we compute in another order)
        torch.testing.assert_close(picked, values, equal_nan=True)
        assert torch.equal(picked.signbit(), values.signbit())


def test_an_outer_product_body_is_tiled_small_enough_to_compile() -> None:
    """An L1 distance's kernel body holds |x_i - y_j| for every pair of rows and each
    of their 512 columns: a value larger than any block. The tiler keeps it to
    BODY_VALUE_ELEMENTS (Mosaic unrolls a body into vreg ops, and compile time grows
    with it); the result is still eager's and the kernel compiles for v5e."""
    from xdsl.dialects.builtin import TensorType

    from pallas_ir.dialects import pallas as pallas_dialect
    from pallas_ir.tpu_rules import BODY_VALUE_ELEMENTS

    x, y = torch.randn(64, 512), torch.randn(96, 512)

    def l1_distance(x, y):
        return (x[:, None, :] - y[None, :, :]).abs().sum(-1)

    k = pallas_ir.compile(l1_distance, [x, y])
    module = pallas_ir.parse(k.ir["pallas-legalize-mosaic"])
    calls = [op for op in module.walk() if isinstance(op, pallas_dialect.CallOp)]
    sizes = [
        r.type.element_count()
        for call in calls
        for op in call.body.walk()
        for r in op.results
        if isinstance(r.type, TensorType)
    ]
    assert calls and max(sizes) <= BODY_VALUE_ELEMENTS < 64 * 96 * 512
    torch.testing.assert_close(k(x, y), l1_distance(x, y), rtol=1e-5, atol=1e-4)
    assert not aot_failures({"l1_distance": k})


def test_int64_scan_outside_int32_raises() -> None:
    """An int64 cumsum or cumprod is computed in int32: a result outside int32 is an
    UnsupportedError when the program runs, never a wrapped value."""
    x = torch.full((2, 3), 2**30, dtype=torch.int32)
    fine = torch.ones(2, 3, dtype=torch.int32)
    for scan, what in [(torch.cumsum, "sum"), (torch.cumprod, "product")]:
        k = pallas_ir.compile(lambda x: scan(x, 1), [x])  # noqa: B023 (compiled here)
        assert torch.equal(k(fine), scan(fine, 1))
        with pytest.raises(pallas_ir.UnsupportedError, match=f"cumulative {what}"):
            k(x)
    # -2**31 * -1 leaves int32 by one
    x = torch.tensor([-(2**31), -1, 1], dtype=torch.int32)
    k = pallas_ir.compile(lambda x: torch.cumprod(x, 0), [x])
    with pytest.raises(pallas_ir.UnsupportedError, match="cumulative product"):
        k(x)


def test_histc_of_data_with_nan_raises_as_eager() -> None:
    """With min == max histc bins over the data's range: NaN there is eager's
    RuntimeError."""
    x = torch.randn(10)
    k = pallas_ir.compile(lambda x: torch.histc(x, 4), [x])
    x[3] = NAN
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(x, 4)
    with pytest.raises(RuntimeError, match="not finite"):
        k(x)


@pytest.mark.parametrize(
    "fn",
    [
        torch.unique,
        lambda x: torch.unique(x, dim=0),
        torch.unique_consecutive,
        torch.nonzero,
        lambda x: torch.nonzero(x, as_tuple=True),
        torch.argwhere,
        lambda x: torch.masked_select(x, x > 0),
    ],
)
def test_data_dependent_shapes_are_refused(fn) -> None:
    with pytest.raises(pallas_ir.UnsupportedError, match="data-dependent output shape"):
        pallas_ir.compile(fn, [torch.randn(4, 5)])


def test_sorting_and_scans_aot_compile_for_v5e(compiled) -> None:
    assert not aot_failures(compiled)
