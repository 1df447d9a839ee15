"""Sorting and selection (`sort`, `topk`, `kthvalue`, `median`, `nanmedian`, `mode`,
`searchsorted`, `bucketize`, `histc`, `histogram`, `histogramdd`): library functions on XLA
(`pallas_ir.library.sorting`): `topk` as Pallas comparison kernels was 5 to 30 times
slower than XLA's on a v5e (docs/torch.md). Ops whose result's shape depends on the data
(`nonzero`, `unique`) are refused (`masked_select` too, but by a constant mask:
`index_writes`)."""

from __future__ import annotations

import math

import torch

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.frontend.kernel_builder import (
    Value,
    const,
    ints,
    remap,
    scalar_element,
    storage_value,
    unreduced,
)
from pallas_ir.frontend.lowerings.library import contiguous, library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def as_rank1(a: Value) -> Value:
    """A 0-d value as a 1-element vector (a dim to sort along, as eager treats it)."""
    return remap(a, (1,), lambda idx: []) if not a.shape else a


@lowers(aten.sort.default, aten.sort.stable, runs_on=RunsOn.XLA)
def sort(c: Lowering, args) -> list[Value]:
    a = args[0]
    if c.target == aten.sort.stable:
        stable = bool(c.kwargs.get("stable") or False)
        dim = c.kwargs.get("dim", -1)
        descending = bool(c.kwargs.get("descending", False))
    else:
        dim = args[1] if len(args) > 1 else c.kwargs.get("dim", -1)
        descending = bool(args[2] if len(args) > 2 else c.kwargs.get("descending", False))
        stable = False
    x = as_rank1(a)
    dim = dim % len(x.shape)
    values, indices = library_call(
        c,
        LibraryFn.SORT,
        [x],
        [(x.shape, a.element), (x.shape, "i32")],
        dim=dim,
        descending=descending,
        stable=stable,
    )
    return [in_rank(values, a.shape), in_rank(indices, a.shape)]


@lowers(aten.topk.default, runs_on=RunsOn.XLA)
def topk(c: Lowering, args) -> list[Value]:
    a, k = args[0], int(args[1])
    dim = args[2] if len(args) > 2 else c.kwargs.get("dim", -1)
    largest = bool(args[3] if len(args) > 3 else c.kwargs.get("largest", True))
    x = as_rank1(a)
    dim = dim % len(x.shape)
    shape = list(x.shape)
    shape[dim] = k
    values, indices = library_call(
        c,
        LibraryFn.TOPK,
        [x],
        [(shape, a.element), (shape, "i32")],
        k=k,
        dim=dim,
        largest=largest,
        sorted=True,
    )
    return [in_rank(values, a.shape), in_rank(indices, a.shape)]


def in_rank(v: Value, shape) -> Value:
    """`v` (a 1-element vector for a 0-d operand) in the operand's rank."""
    return v if shape else remap(v, (), lambda idx: [const(0)])


def _kept(c: Lowering, v: Value, dim: int, keepdim: bool, rank: int) -> Value:
    """`v` (a result along `dim` kept, of size 1) in the op's result shape."""
    if keepdim and rank:
        return v
    return remap(v, c.shapes[0], lambda idx: unreduced(idx, [dim], len(v.shape)))


def _along(c: Lowering, fn: LibraryFn, a: Value, dim, keepdim, **params) -> list[Value]:
    """The values and indices of `fn`, a selection along `dim` that keeps it."""
    x = as_rank1(a)
    dim = dim % len(x.shape)
    shape = [1 if d == dim else n for d, n in enumerate(x.shape)]
    values, indices = library_call(
        c, fn, [x], [(shape, a.element), (shape, "i32")], dim=dim, **params
    )
    rank = len(a.shape)
    return [_kept(c, values, dim, keepdim, rank), _kept(c, indices, dim, keepdim, rank)]


def _arg(c: Lowering, args, i: int, name: str, default):
    """Argument `i` of the op, given by position or by `name`, or `default`."""
    return args[i] if len(args) > i else c.kwargs.get(name, default)


@lowers(aten.kthvalue.default, runs_on=RunsOn.XLA)
def kthvalue(c: Lowering, args) -> list[Value]:
    a, k = args[0], int(args[1])
    dim, keepdim = _arg(c, args, 2, "dim", -1), bool(_arg(c, args, 3, "keepdim", False))
    n = a.shape[dim % len(a.shape)] if a.shape else 1
    if not 1 <= k <= n:  # eager raises too
        raise c.unsupported(f"k = {k} is outside [1, {n}]")
    return _along(c, LibraryFn.KTHVALUE, a, dim, keepdim, k=k)


@lowers(aten.mode.default, runs_on=RunsOn.XLA)
def mode(c: Lowering, args) -> list[Value]:
    dim, keepdim = _arg(c, args, 1, "dim", -1), bool(_arg(c, args, 2, "keepdim", False))
    return _along(c, LibraryFn.MODE, args[0], dim, keepdim)


def nth_of_equals(n: int) -> int:
    """Which of `n` equal elements libstdc++'s `std::nth_element(first, first, last)`
    puts first (eager's CPU `nanmedian` of a row of NaN only: it compares them all
    equal). Its introselect moves a median of three (with all equal, the middle) to
    the front, partitions (every comparison false: the ends swap inward) and goes on
    in the left part, to 3 elements; insertion sort then moves none."""
    order = list(range(n))
    first, last = 0, n
    depth = 2 * (n.bit_length() - 1) if n else 0
    while last - first > 3 and depth > 0:  # at depth 0, heap selection moves none
        depth -= 1
        middle = first + (last - first) // 2
        order[first], order[middle] = order[middle], order[first]
        lo, hi = first + 1, last
        while True:
            hi -= 1
            if not lo < hi:
                break
            order[lo], order[hi] = order[hi], order[lo]
            lo += 1
        last = lo
    return order[0] if n else 0


@lowers(aten.median.dim, aten.nanmedian.dim, runs_on=RunsOn.XLA)
def median_dim(c: Lowering, args) -> list[Value]:
    a = args[0]
    dim, keepdim = _arg(c, args, 1, "dim", -1), bool(_arg(c, args, 2, "keepdim", False))
    n = a.shape[dim % len(a.shape)] if a.shape else 1
    ignore_nan = c.target == aten.nanmedian.dim
    params = {"all_nan_index": nth_of_equals(n)} if ignore_nan else {}
    return _along(c, LibraryFn.MEDIAN, a, dim, keepdim, ignore_nan=ignore_nan, **params)


@lowers(aten.median.default, aten.nanmedian.default, runs_on=RunsOn.XLA)
def median(c: Lowering, args) -> Value:
    a = args[0]
    n = math.prod(a.shape)
    flat = storage_value(contiguous(c, a), (n,), row_major_strides((n,)))
    values, _ = library_call(
        c,
        LibraryFn.MEDIAN,
        [flat],
        [((1,), a.element), ((1,), "i32")],
        dim=0,
        ignore_nan=c.target == aten.nanmedian.default,
    )
    return in_rank(values, ())


def _side(c: Lowering) -> bool:
    """Whether a search goes after equal values (`right=True` or `side="right"`)."""
    side = c.kwargs.get("side")
    return side == "right" if side is not None else bool(c.kwargs.get("right", False))


def _scalar(c: Lowering, v) -> Value:
    """A Python number as a 1-element value (searched for like a tensor's)."""
    element = scalar_element(v)
    if element == "i32" and not -(2**31) <= v < 2**31:
        raise c.unsupported(f"the int {v} is outside int32, which kernels compute in")
    return Value((1,), lambda k, idx: k.constant(v, element), element)


def _searchsorted(c: Lowering, boundaries: Value, values: Value, right: bool) -> Value:
    sorter = c.kwargs.get("sorter")
    operands = [boundaries, values] + ([sorter] if sorter is not None else [])
    (result,) = library_call(
        c, LibraryFn.SEARCHSORTED, operands, [(values.shape, "i32")], right=right
    )
    return result


@lowers(aten.searchsorted.Tensor, aten.searchsorted.Scalar, runs_on=RunsOn.XLA)
def searchsorted(c: Lowering, args) -> Value:
    boundaries, values = args[0], args[1]
    if not isinstance(values, Value):
        return in_rank(_searchsorted(c, boundaries, _scalar(c, values), _side(c)), ())
    return _searchsorted(c, boundaries, values, _side(c))


@lowers(aten.bucketize.Tensor, aten.bucketize.Scalar, runs_on=RunsOn.XLA)
def bucketize(c: Lowering, args) -> Value:
    values, boundaries = args[0], args[1]
    right = bool(c.kwargs.get("right", False))
    if not isinstance(values, Value):
        return in_rank(_searchsorted(c, boundaries, _scalar(c, values), right), ())
    return _searchsorted(c, boundaries, values, right)


@lowers(aten.histc.default, runs_on=RunsOn.XLA)
def histc(c: Lowering, args) -> Value:
    a = args[0]
    bins = int(_arg(c, args, 1, "bins", 100))
    low = float(_arg(c, args, 2, "min", 0))
    high = float(_arg(c, args, 3, "max", 0))
    if not (math.isfinite(low) and math.isfinite(high)):
        raise c.unsupported(f"the range [{low}, {high}] is not finite")
    if low > high:
        raise c.unsupported(f"max ({high}) must be larger than min ({low})")
    n = math.prod(a.shape)
    flat = storage_value(contiguous(c, a), (n,), row_major_strides((n,)))
    bfloat16 = c.node.meta["val"].dtype == torch.bfloat16
    if a.element == "f64":
        raise c.unsupported("not in float64: the library function bins in float32")
    params = {"bins": bins, "low": low, "high": high, "bfloat16": bfloat16}
    if low != high or not c.prog.checking:
        (counts,) = library_call(c, LibraryFn.HISTC, [flat], [((bins,), "f32")], **params)
        return counts
    counts, unbounded, lowest = library_call(
        c,
        LibraryFn.HISTC,
        [flat],
        [((bins,), "f32"), ((), "i1"), ((), "f32")],
        checked=True,
        **params,
    )
    _check_finite_range(c, unbounded, lowest)
    return counts


def _rows(c: Lowering, a: Value, d: int) -> Value:
    """`a` as (M, d) rows, read from contiguous storage (a flat buffer reshaped)."""
    n = math.prod(a.shape)
    shape = (n // d if d else 0, d)
    return storage_value(contiguous(c, a), shape, row_major_strides(shape))


def _flat(c: Lowering, a: Value) -> Value:
    n = math.prod(a.shape)
    return storage_value(contiguous(c, a), (n,), row_major_strides((n,)))


def _bin_edges(
    c: Lowering, rows: Value, bins: list[int], bounds: list[float] | None
) -> list[Value]:
    """The bin edges of a histogram of `rows` with `bins` bins a dim (eager's
    linspace over `bounds`, or over the data's range, which must be finite)."""
    if any(b <= 0 for b in bins):  # eager raises too
        raise c.unsupported(f"bins must be > 0, but got {bins}")
    if bounds is not None:
        bounds = [float(b) for b in bounds]
        if len(bounds) != 2 * len(bins):
            raise c.unsupported(f"range should have {2 * len(bins)} elements")
        for lo, hi in zip(bounds[::2], bounds[1::2]):
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise c.unsupported(f"the range [{lo}, {hi}] is not finite")
            if lo > hi:
                raise c.unsupported(f"min should not exceed max ({lo} > {hi})")
    shapes: list[tuple[list[int], str]] = [([b + 1], "f32") for b in bins]
    checked = bounds is None and rows.shape[0] > 0 and c.prog.checking
    if not checked:
        return library_call(
            c, LibraryFn.HISTOGRAM_BIN_EDGES, [rows], shapes, bins=bins, bounds=bounds
        )
    *edges, unbounded, lowest = library_call(
        c,
        LibraryFn.HISTOGRAM_BIN_EDGES,
        [rows],
        [*shapes, ((), "i1"), ((), "f32")],
        bins=bins,
        bounds=None,
        checked=True,
    )
    _check_finite_range(c, unbounded, lowest)
    return edges


def _histogramdd(
    c: Lowering,
    rows: Value,
    edges: list[Value],
    weight: Value | None,
    local_search: bool,
) -> Value:
    """The histogram of `rows` (M, D) over `edges` (one a dim), as eager bins it."""
    density = bool(c.kwargs.get("density", False))
    shape = [e.shape[0] - 1 for e in edges]
    operands = [rows, *edges] + ([_flat(c, weight)] if weight is not None else [])
    (hist,) = library_call(
        c,
        LibraryFn.HISTOGRAMDD,
        operands,
        [(shape, "f32")],
        weighted=weight is not None,
        density=density,
        local_search=local_search,
    )
    return hist


@lowers(aten.histogram.bin_ct, aten.histogram.bins_tensor, runs_on=RunsOn.XLA)
def histogram(c: Lowering, args) -> list[Value]:
    a = args[0]
    rows = _rows(c, a, 1)
    weight = c.kwargs.get("weight")
    if c.target == aten.histogram.bins_tensor:
        edges = args[1]
        return [_histogramdd(c, rows, [edges], weight, local_search=False), edges]
    bins = int(_arg(c, args, 1, "bins", 100))
    (edges,) = _bin_edges(c, rows, [bins], c.kwargs.get("range"))
    return [_histogramdd(c, rows, [edges], weight, local_search=True), edges]


def _dd_rows(c: Lowering, a: Value) -> Value:
    if len(a.shape) < 2:  # eager raises too
        raise c.unsupported("the input should have at least 2 dimensions")
    return _rows(c, a, a.shape[-1])


@lowers(aten._histogramdd_bin_edges.default, runs_on=RunsOn.XLA)
def histogramdd_bin_edges(c: Lowering, args) -> list[Value]:
    rows = _dd_rows(c, args[0])
    return _bin_edges(c, rows, ints(args[1]), c.kwargs.get("range"))


@lowers(aten._histogramdd_from_bin_cts.default, runs_on=RunsOn.XLA)
def histogramdd_from_bin_cts(c: Lowering, args) -> Value:
    rows = _dd_rows(c, args[0])
    edges = _bin_edges(c, rows, ints(args[1]), c.kwargs.get("range"))
    return _histogramdd(c, rows, edges, c.kwargs.get("weight"), local_search=True)


@lowers(aten._histogramdd_from_bin_tensors.default, runs_on=RunsOn.XLA)
def histogramdd_from_bin_tensors(c: Lowering, args) -> Value:
    rows = _dd_rows(c, args[0])
    edges = list(args[1])
    return _histogramdd(c, rows, edges, c.kwargs.get("weight"), local_search=False)


@lowers(
    aten._unique2.default,
    aten._unique.default,
    aten.unique_dim.default,
    aten.unique_consecutive.default,
    aten.unique_dim_consecutive.default,
    aten.nonzero.default,
    aten.nonzero_numpy.default,
    aten.argwhere.default,
    runs_on=RunsOn.REFUSED,
)
def data_dependent_shape(c: Lowering, args) -> Value:
    raise c.unsupported(
        "data-dependent output shape: its size depends on the values of its input, "
        "and a compiled program has fixed shapes (torch.compile runs it in eager)"
    )


def _check_finite_range(c: Lowering, unbounded: Value, lowest: Value) -> None:
    """The call raises eager's RuntimeError where the data a histogram bins has no
    finite range (`unbounded`, with the data's `lowest` value)."""
    c.prog.check(
        unbounded,
        lowest,
        RuntimeError,
        str(c.target),
        "the range of the data (its min {value} to its max) is not finite",
        c.where,
    )
