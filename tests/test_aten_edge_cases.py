"""Edge cases of ATen ops through `pallas_ir.compile`, each against eager PyTorch:
zero-size tensors, 0-d tensors reduced or indexed along dim 0 or -1, `as_strided`
from a storage offset, negative dims, non-bool data where torch takes truth values,
and ops whose decompositions build scalar tensors (xlogy, xlog1py, kl_div)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.tpu_check import aot_compile_many


def _data(shape, dtype=torch.float32, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(-5, 6, shape, generator=g, dtype=dtype)
    return torch.randn(shape, generator=g).to(dtype)


def _results(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _same_as_eager(fn, *inputs: torch.Tensor) -> pallas_ir.compiler.CompiledFunction:
    """`fn` compiled on `inputs` gives eager's results: shapes, dtypes and values (NaN
    where eager has NaN), and eager's strides for a result with no elements."""
    want = _results(fn(*[t.clone() for t in inputs]))
    compiled = pallas_ir.compile(fn, [t.clone() for t in inputs])
    got = _results(compiled(*[t.clone() for t in inputs]))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        torch.testing.assert_close(g, w, equal_nan=True, rtol=1e-5, atol=1e-6)
        if w.numel() == 0:
            assert g.stride() == w.stride()
    return compiled


F32, I32, I64, BOOL = torch.float32, torch.int32, torch.int64, torch.bool

ZERO_SIZE = {
    "element-wise": (
        lambda a, b, c, d: (-a, b + 1, c * 2, torch.logical_not(d), (d.int() + 1).t()),
        [_data((0,)), _data((3, 0)), _data((0,), I64), _data((2, 0), BOOL)],
    ),
    "matrix products": (
        lambda a, b, c, d, e: (a @ b, c @ d, torch.bmm(e, e.transpose(1, 2))),
        [_data((0, 5)), _data((5, 3)), _data((4, 0)), _data((0, 3)), _data((0, 2, 3))],
    ),
    "cat": (
        lambda a, b, c: (torch.cat([a, b]) * 2, torch.cat([c, c], 1)),
        [_data((0, 3)), _data((2, 3)), _data((2, 0))],
    ),
    "reductions along an empty dim": (
        lambda x, i: (
            *(x.sum(1), x.prod(1), x.mean(1), x.sum(), x.mean(), x.var(), x.std(1)),
            *(i.sum(1), i.prod(1), i.sum(0), torch.var_mean(x, correction=0)[0]),
        ),
        [_data((3, 0)), _data((3, 0), I32)],
    ),
    "any and all of no elements": (
        lambda x, y: (x.any(1), x.all(1), x.any(), y.all(), y.any(0)),
        [_data((3, 0), BOOL), _data((0, 2))],
    ),
    "reductions to empty results": (
        lambda x: (x.sum(1), x.amax(1), x.argmax(1), x.softmax(1)),
        [_data((0, 4))],
    ),
    "empty and non-empty results": (
        lambda x, y, z: (x + 1, y * z.sum(1) + 1, x.sum(0), z.sum(0)),
        [_data((0, 3)), _data((3,)), _data((3, 0))],
    ),
    "new tensors and arange": (
        lambda x: (
            *(x.new_zeros((2, 0)), x.new_ones((2, 0)), x.new_full((2, 0), 3.0)),
            torch.arange(0, dtype=torch.float32) + 1,
        ),
        [_data((5, 5))],
    ),
    "gathers by no indices": (
        lambda w, i: (F.embedding(i, w), w.index_select(1, i), w[i] + 1),
        [_data((4, 4)), torch.zeros(0, dtype=I64)],
    ),
    "an empty input written in place": (
        lambda x, y: (x.add_(1), y * 2, torch.where(x > 0, x, 0.0)),
        [_data((0, 3)), _data((2,))],
    ),
}


@pytest.mark.parametrize("name", list(ZERO_SIZE))
def test_zero_size_tensors(name: str) -> None:
    """No kernel for an empty result (the host makes an empty tensor of eager's
    shape, dtype and strides); a reduction over an empty dim is its identity (a sum 0,
    a product 1, `any` false, `all` true; a mean or a variance NaN)."""
    fn, inputs = ZERO_SIZE[name]
    _same_as_eager(fn, *inputs)


def test_an_empty_result_is_no_kernel_and_a_new_tensor_each_call() -> None:
    x = _data((0, 3))
    compiled = _same_as_eager(lambda x: x * 2, x)
    assert not compiled.computes  # nothing to run
    assert compiled(x) is not compiled(x)


def test_an_amax_along_an_empty_dim_raises_as_eager() -> None:
    x = _data((3, 0))
    with pytest.raises(IndexError):
        x.amax(1)
    with pytest.raises(pallas_ir.UnsupportedError, match="IndexError: amax"):
        pallas_ir.compile(lambda x: x.amax(1), [x])


def _0d_any_dtype(x):
    return (
        *(x.sum(0), x.sum(-1, keepdim=True), x.any(0), x.all(-1), torch.flip(x, [0])),
        *(torch.gather(x, 0, torch.tensor(0)), x.index_select(-1, torch.tensor([0]))),
    )


def _0d_numbers(x):
    return (
        *(x.amax(0), x.amin(-1), x.prod(0), *torch.max(x, 0)),
        *(x.argmax(), x.argmin(-1), x.argmax(0, keepdim=True)),
    )


def _0d_floats(x):
    return (
        *(x.mean(0), x.var(0), x.std(-1)),
        *(torch.logsumexp(x, 0), torch.softmax(x, 0), torch.log_softmax(x, -1)),
    )


ZERO_DIM = {
    F32: lambda x: (*_0d_any_dtype(x), *_0d_numbers(x), *_0d_floats(x)),
    I32: lambda x: (*_0d_any_dtype(x), *_0d_numbers(x)),
    BOOL: _0d_any_dtype,
}


@pytest.mark.parametrize("dtype", list(ZERO_DIM), ids=str)
def test_0d_tensors_along_dim_0_and_minus_1(dtype) -> None:
    """A 0-d tensor takes dim 0 and -1 as torch does (nothing to reduce: its one
    element, at index 0; before, `ZeroDivisionError` in the frontend)."""
    x = torch.tensor(-8, dtype=dtype) if dtype != BOOL else torch.tensor(True)
    _same_as_eager(ZERO_DIM[dtype], x)


def test_argmax_of_a_0d_tensor_is_0() -> None:
    """It returned the value (-8, 3) where eager returns index 0."""
    _same_as_eager(
        lambda x, y: (x.argmax(), x.argmin(), y.argmax(), y.argmin()),
        torch.tensor(-8.0),
        torch.tensor(3),
    )


BASE = torch.arange(40.0)

AS_STRIDED = {
    "a slice of the input, the storage's offset": (
        lambda x: x[2:].as_strided((3, 3), (1, 2), 1) * 2,
        BASE[:12],
    ),
    "a slice of the input, its own offset": (
        lambda x: x[2:].as_strided((3, 3), (1, 2)) * 2,
        BASE[:12],
    ),
    "a 2-d slice": (
        lambda x: x.view(3, 4)[1:, 1:].as_strided((3, 3), (1, 2), 3) * 2,
        BASE[:12],
    ),
    "a transposed slice": (
        lambda x: x.view(3, 4).t()[1:].as_strided((3, 3), (1, 2)) * 2,
        BASE[:12],
    ),
    "an input at an offset": (lambda x: x.as_strided((3, 3), (1, 2), 4) * 2, BASE[2:20]),
    "an input at an offset, its own offset": (
        lambda x: x[1:].as_strided((3, 3), (1, 2)) + 1,
        BASE[2:20],
    ),
    "a transposed input": (
        lambda x: x.as_strided((2, 5), (5, 1), 2) * 1,
        BASE[:12].view(3, 4).t(),
    ),
    "a slice of a computed value": (
        lambda x: (x + 1)[3:].as_strided((3, 3), (1, 2), 4) * 2,
        BASE[:18],
    ),
    "a computed value laid out transposed": (
        lambda x: (x.view(3, 4).t() + 1).as_strided((3, 3), (1, 2)) * 2,
        BASE[:12],
    ),
    "one result of unbind": (
        lambda x: x.view(3, 4).unbind(0)[1].as_strided((2,), (2,)) * 2,
        BASE[:12],
    ),
}


@pytest.mark.parametrize("name", list(AS_STRIDED))
def test_as_strided_reads_the_storage_from_its_offset(name: str) -> None:
    """`as_strided`'s storage offset is the storage's (by default its operand's own),
    not the operand's: the values were all wrong for an operand with an offset."""
    fn, x = AS_STRIDED[name]
    want = fn(x)
    compiled = pallas_ir.compile(fn, [x])
    torch.testing.assert_close(compiled(x), want)


def test_as_strided_with_an_offset_is_specialised_on_the_input_offset() -> None:
    """An explicit offset reads from the caller's storage start: a call with the input
    at another offset raises (it would read other elements); the default offset is
    the input's own, read at any offset."""
    explicit = AS_STRIDED["an input at an offset"][0]
    compiled = pallas_ir.compile(explicit, [BASE[2:20]])
    with pytest.raises(
        pallas_ir.UnsupportedError, match="storage offset 2, called with 3"
    ):
        compiled(BASE[3:21])
    own = AS_STRIDED["an input at an offset, its own offset"][0]
    compiled = pallas_ir.compile(own, [BASE[2:20]])
    torch.testing.assert_close(compiled(BASE[5:23]), own(BASE[5:23]))


def test_a_compiled_graph_compiles_again_for_another_offset() -> None:
    """AOTAutograd's graphs (`CompiledGraph`): a call with the input at another
    storage offset compiles the graph again, for that offset."""
    explicit = AS_STRIDED["an input at an offset"][0]
    graph = pallas_ir.compiler.CompiledGraph(make_fx(explicit)(BASE[2:20]))
    for start in (2, 3, 2):
        x = BASE[start : start + 18]
        torch.testing.assert_close(graph([x])[0], explicit(x))
    assert len(graph.compiled) == 2


def test_as_strided_outside_the_storage_is_unsupported() -> None:
    with pytest.raises(pallas_ir.UnsupportedError, match="reads outside the storage"):
        pallas_ir.compile(lambda x: x.as_strided((3,), (1,), 1) * 2, [BASE[2:20]])


NEGATIVE_DIMS = {
    "permute": (lambda x: x.permute(-1, 0, -2) + 1, [_data((2, 3, 4))]),
    "inner": (torch.inner, [_data((2, 3)), _data((4, 3), seed=1)]),
    "inner of vectors": (torch.inner, [_data((3,)), _data((3,), seed=1)]),
    "tensordot dims=2": (
        lambda a, b: torch.tensordot(a, b, dims=2),
        [_data((2, 3, 4)), _data((3, 4, 5), seed=1)],
    ),
    "tensordot negative dims": (
        lambda a, b: torch.tensordot(a, b, dims=([-1, 0], [0, -1])),
        [_data((2, 3, 4)), _data((4, 3, 2), seed=1)],
    ),
}


@pytest.mark.parametrize("name", list(NEGATIVE_DIMS))
def test_negative_dims(name: str) -> None:
    fn, inputs = NEGATIVE_DIMS[name]
    _same_as_eager(fn, *inputs)


def _positive(shape, seed: int = 1) -> torch.Tensor:
    x = _data(shape, seed=seed).abs()
    return torch.where(x < 0.3, 0.0, x)  # some y = 0: x log y there


SCALAR_TENSORS = {
    "xlogy": (torch.xlogy, [_data((3, 4)), _positive((3, 4))]),
    "xlogy at x = 0, y = nan": (
        torch.xlogy,
        [torch.tensor([0.0, 0.0, 1.0, 2.0]), torch.tensor([0.0, float("nan"), 0.0, 3.0])],
    ),
    "xlogy broadcast, 0-d": (torch.xlogy, [_data((5, 1)), _positive(())]),
    "xlogy of a Python scalar": (lambda y: torch.xlogy(2.0, y), [_positive((4,))]),
    "xlogy by a Python scalar": (lambda x: torch.xlogy(x, 3.0), [_data((4,))]),
    "xlogy of ints": (torch.xlogy, [_data((4,), I32), _data((4,), I32, 1).abs()]),
    "xlogy of empties": (torch.xlogy, [_data((0, 1, 3)), _positive((0, 10, 3))]),
    "xlog1py": (torch.special.xlog1py, [_data((3, 4)), _positive((3, 4))]),
    "xlog1py by a Python scalar": (
        lambda x: torch.special.xlog1py(x, 0.5),
        [_data((2, 3))],
    ),
    "kl_div": (
        lambda x, y: [
            F.kl_div(x, y, reduction=r) for r in ("none", "sum", "mean", "batchmean")
        ],
        [_data((4, 5)), _positive((4, 5))],
    ),
    "kl_div log_target": (
        lambda x, y: [
            F.kl_div(x, y, reduction=r, log_target=True)
            for r in ("none", "sum", "mean", "batchmean")
        ],
        [_data((4, 5)), _data((4, 5), seed=1)],
    ),
    "kl_div of 0-d": (
        lambda x, y: F.kl_div(x, y, reduction="sum"),
        [_data(()), _positive(())],
    ),
}


@pytest.mark.parametrize("name", list(SCALAR_TENSORS))
def test_ops_that_build_scalar_tensors(name: str) -> None:
    fn, inputs = SCALAR_TENSORS[name]
    _same_as_eager(fn, *inputs)


@pytest.mark.parametrize("dtype", [F32, I32, BOOL], ids=str)
def test_truth_of_any_dtype(dtype) -> None:
    """logical_not, any and all of non-bool data: non-zero is true (they built an
    ill-typed module: `arith.xori` of a float)."""
    x = _data((3, 4), dtype) if dtype != F32 else _data((3, 4)).round()  # some zeros
    scalar = x[1, 1].clone()

    def truths(x, scalar):
        return (
            *(torch.logical_not(x), x.any(), x.all(), x.any(-1), x.all(0, keepdim=True)),
            *(x.all(dim=(0, 1)), torch.logical_not(scalar), scalar.all(0)),
        )

    _same_as_eager(truths, x, scalar)


@pytest.mark.parametrize("dtype", [F32, I32, BOOL], ids=str)
def test_new_tensors(dtype) -> None:
    """new_zeros, new_ones, new_full and new_empty of a 2-d, a 0-d and an empty shape
    (the last was "reshape from 0 to 1 elements")."""

    def new(x):
        made = []
        for shape in [(2, 3), (), (2, 0)]:
            empty = x.new_empty(shape)
            made += [x.new_zeros(shape), x.new_ones(shape)]
            made += [x.new_full(shape, 1 if dtype == BOOL else 7)]
            made += [empty.zero_() if empty.numel() else empty]
        return made

    _same_as_eager(new, _data((4,), dtype))


def test_edge_case_kernels_aot_compile_for_v5e() -> None:
    """The identity of a reduction over an empty dim (a kernel that stores a
    constant), a program with an empty input beside a computed result, and 0-d
    reductions lower and compile for a v5e."""
    modules = [
        pallas_ir.compile(lambda x: (x.sum(1), x.prod(1)), [_data((8, 0))]),
        pallas_ir.compile(
            lambda x, y: (x + 1, y.sum(0)), [_data((0, 3)), _data((8, 128))]
        ),
        pallas_ir.compile(lambda x: (x.argmax(0), x.logsumexp(0)), [_data(())]),
    ]
    results = aot_compile_many(
        [(m.source, arg_specs(m.module)) for m in modules], chip="v5e"
    )
    assert all(r.ok for r in results), [r.message for r in results if not r.ok]


@pytest.mark.parametrize(
    "fn",
    [
        torch.isnan,
        torch.isinf,
        lambda x: torch.nansum(x, 1),
        lambda x: torch.heaviside(x, torch.tensor([2], dtype=torch.int32)),
    ],
    ids=["isnan", "isinf", "nansum", "heaviside"],
)
def test_float_classes_of_integers_are_false(fn) -> None:
    """An integer is never NaN nor infinite (the OpInfo sweep found isnan and isinf
    of int32 emitting a float comparison)."""
    x = torch.randint(-5, 5, (4, 8), dtype=torch.int32)
    got, want = pallas_ir.compile(fn, [x])(x), fn(x)
    assert got.dtype == want.dtype and torch.equal(got, want)
