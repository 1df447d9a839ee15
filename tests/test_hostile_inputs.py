"""Unusual but legal inputs through `pallas_ir.compile` and `torch.compile`: the same
answer as eager, or the same exception, or a clear error; never a silent wrong result."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.tpu_check import aot_compile_many


def _table() -> torch.Tensor:
    return torch.randn(16, 8, generator=torch.Generator().manual_seed(0))


TABLE = _table()
SQUARE = TABLE.t().repeat(2, 1)  # 16 x 16

INDEXING = {
    "embedding": lambda i: F.embedding(i, TABLE),
    "index_select": lambda i: TABLE.index_select(0, i),
    "w[i]": lambda i: TABLE[i],
    "gather": lambda i: SQUARE.gather(1, i.view(-1, 1).expand(-1, 3)),
    "index_put": lambda i: TABLE.index_put((i,), torch.ones(i.shape[0], 8)),
    "index_add": lambda i: TABLE.index_add(0, i, torch.ones(i.shape[0], 8)),
    "scatter_add": lambda i: SQUARE.scatter_add(
        1, i.view(-1, 1).expand(-1, 3), torch.ones(i.shape[0], 3)
    ),
}


@pytest.mark.parametrize("bad", [100, 5000, -101, 2**31 - 1, 16, -17])
@pytest.mark.parametrize("name", list(INDEXING))
def test_an_index_out_of_range_raises_index_error(name: str, bad: int) -> None:
    """Compiled on good indices, called with one bad one: eager raises, and so does
    the compiled call (IndexError naming the op and the value), where before it read
    a clamped or another row's element."""
    fn = INDEXING[name]
    good = torch.tensor([3, 0, 15, 7] * 4)
    compiled = pallas_ir.compile(fn, [good])
    torch.testing.assert_close(compiled(good), fn(good))
    _both_raise_index_error(fn, compiled, good, bad)


def _both_raise_index_error(fn, compiled, good: torch.Tensor, bad: int) -> None:
    """`good` with one element `bad`: eager raises, and the compiled call raises
    IndexError naming the op and the value."""
    indices = good.clone()
    indices[5] = bad
    with pytest.raises((IndexError, RuntimeError)):
        fn(indices)
    with pytest.raises(
        IndexError, match=rf"aten\.\w+\.\w+: index {bad} is out of bounds"
    ):
        compiled(indices)


def test_negative_indices_that_wrap_are_not_errors() -> None:
    fn = INDEXING["w[i]"]
    indices = torch.tensor([-16, -1, 3, 0] * 4)
    compiled = pallas_ir.compile(fn, [indices.abs() % 16])
    torch.testing.assert_close(compiled(indices), fn(indices))


def test_index_checks_can_be_turned_off() -> None:
    """`runtime_checks=False`: no check kernels (the module has fewer outputs)."""
    fn, good = INDEXING["embedding"], torch.tensor([3, 0, 15, 7] * 4)
    checked = pallas_ir.compile(fn, [good])
    unchecked = pallas_ir.compile(fn, [good], runtime_checks=False)
    torch.testing.assert_close(unchecked(good), fn(good))
    assert unchecked.source.count("pallas_call") < checked.source.count("pallas_call")


def test_torch_compile_raises_index_error_too() -> None:
    torch._dynamo.reset()
    fn = torch.compile(INDEXING["embedding"], backend="pallas_ir")
    fn(torch.tensor([1, 2]))
    with pytest.raises(IndexError, match="index 100 is out of bounds"):
        fn(torch.tensor([1, 100]))


@pytest.mark.parametrize("name", list(INDEXING))
def test_an_int64_index_outside_int32_raises_index_error(name: str) -> None:
    """An int64 index outside int32 is out of bounds of every dim: the call raises
    eager's IndexError naming the op and the value, not the int64 range error of the
    input (in range once narrowed to 32 bits: 2**32 + 1 would read row 1)."""
    fn = INDEXING[name]
    good = torch.tensor([3, 0, 15, 7] * 4)
    compiled = pallas_ir.compile(fn, [good])
    for bad in (2**32 + 1, -(2**32), 2**40, -(2**31) - 1):
        _both_raise_index_error(fn, compiled, good, bad)


@pytest.mark.parametrize(
    "fn",
    [lambda i: TABLE[i] + i.view(-1, 1), lambda i: TABLE[i[:4]]],
    ids=["index_and_arithmetic", "index_of_a_slice"],
)
def test_an_int64_input_outside_int32_not_only_an_index_is_unsupported(fn) -> None:
    """Where a value of the input is not only an index (arithmetic reads it, or no op
    reads it), an out-of-int32 value stays the input's UnsupportedError: never an
    IndexError eager would not raise."""
    good = torch.tensor([3, 0, 15, 7] * 4)
    compiled = pallas_ir.compile(fn, [good])
    indices = good.clone()
    indices[5] = 2**32 + 1
    with pytest.raises(pallas_ir.UnsupportedError, match="input 0: holds the int64"):
        compiled(indices)


@pytest.mark.parametrize("value", [2**40, -(2**31) - 1, 2**31])
def test_an_int64_input_outside_int32_is_an_error(value: int) -> None:
    """Kernels compute int64 data in int32: a value they would wrap is an error
    (before: 2**40 became 0); the int32 extremes themselves are fine."""
    x = torch.tensor([1, 2, 3, 4] * 32)
    compiled = pallas_ir.compile(lambda a: a.clamp(-5, 5), [x])
    edges = torch.tensor([-(2**31), 2**31 - 1] * 64)
    torch.testing.assert_close(compiled(edges), edges.clamp(-5, 5))
    x[7] = value
    with pytest.raises(
        pallas_ir.UnsupportedError, match=f"input 0: holds the int64 value {value}"
    ):
        compiled(x)


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.arange(4).view(4, 1).expand(4, 8),
        lambda: (torch.arange(4).view(4, 1) > 1).expand(4, 8),
        lambda: torch.arange(64).view(8, 8)[:, ::2],
        lambda: torch.arange(64).view(8, 8).t(),
        lambda: (torch.arange(64).view(8, 8) % 3 == 0)[1:, 2:5],
    ],
    ids=[
        "expanded_int64",
        "expanded_bool",
        "sliced_int64",
        "transposed_int64",
        "sliced_bool",
    ],
)
@pytest.mark.parametrize("api", ["pallas_ir.compile", "torch.compile"])
def test_strided_int64_and_bool_inputs(make, api: str) -> None:
    x = make()

    def fn(a):
        return a + 1 if a.dtype != torch.bool else ~a

    torch._dynamo.reset()
    run = (
        pallas_ir.compile(fn, [x])
        if api == "pallas_ir.compile"
        else torch.compile(fn, backend="pallas_ir")
    )
    torch.testing.assert_close(run(x), fn(x))


def test_a_gather_by_a_sliced_index_tensor() -> None:
    """`w[idx[:, :4]]` (a sliced int64 input) crashed with setStorage out of bounds."""
    idx = torch.randint(0, 16, (4, 8), generator=torch.Generator().manual_seed(1))
    compiled = pallas_ir.compile(lambda i: TABLE[i], [idx[:, :4]])
    torch.testing.assert_close(compiled(idx[:, :4]), TABLE[idx[:, :4]])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), r"call: compiled for 1 inputs, called with 0"),
        ((torch.ones(4), torch.ones(4)), r"call: compiled for 1 inputs, called with 2"),
        ((np.ones(4, np.float32),), r"input 0: expected a tensor, got ndarray"),
        ((1.5,), r"input 0: expected a tensor, got float"),
        (
            (torch.ones(4).to_sparse(),),
            r"input 0: expected a dense CPU tensor, got torch.sparse_coo",
        ),
    ],
)
def test_a_bad_call_is_a_clear_error(args, says: str) -> None:
    compiled = pallas_ir.compile(lambda a: a * 2, [torch.ones(4)])
    with pytest.raises(pallas_ir.UnsupportedError, match=says):
        compiled(*args)


@pytest.mark.parametrize(
    ("inputs", "says"),
    [
        (
            [np.ones(4, np.float32)],
            r"input 0: inputs are float32, .* tensors, got ndarray",
        ),
        ([2.0], r"input 0: inputs are float32, .* tensors, got float"),
        (
            [torch.ones(4).to_sparse()],
            r"input 0: inputs are dense CPU tensors, got a torch.sparse_coo",
        ),
        ([torch.ones(4), torch.ones(4)], r"trace: .*expected 1 arguments but got 2"),
    ],
)
def test_bad_example_inputs_are_a_clear_error(inputs, says: str) -> None:
    with pytest.raises(pallas_ir.UnsupportedError, match=says):
        pallas_ir.compile(lambda a: a * 2, inputs)


def test_a_failed_compile_leaves_the_inputs_untouched() -> None:
    """The trace runs on copies: a compile that fails has not written to the
    user's tensor (before: `x.add_(1)` left it at +2)."""
    x = torch.zeros(8, 128)

    def fn(a):
        a.add_(1)
        return torch.linalg.ldl_factor(a @ a.T)[0]  # refused: the compile fails

    with pytest.raises(pallas_ir.UnsupportedError, match="ldl_factor"):
        pallas_ir.compile(fn, [x])
    assert x.eq(0).all()


def test_a_one_element_tuple_stays_a_tuple() -> None:
    x = torch.ones(8, 128)
    for fn in (lambda a: (a + 1,), lambda a: [a + 1]):
        got = pallas_ir.compile(fn, [x])(x)
        assert isinstance(got, tuple) and len(got) == 1
        torch.testing.assert_close(got[0], x + 1)
    assert isinstance(pallas_ir.compile(lambda a: a + 1, [x])(x), torch.Tensor)


def test_the_frontend_cli_says_when_the_file_is_missing(tmp_path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pallas_ir.frontend",
            f"{tmp_path}/missing.py:fn",
            "--shapes",
            "f32[4]",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert (
        run.stderr.strip()
        == f"error: cannot read {tmp_path}/missing.py: No such file or directory"
    )


def test_no_warning_escapes_for_supported_programs() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = pallas_ir.compile(lambda a: a * 2, [torch.ones(4)])
    torch.testing.assert_close(compiled(torch.ones(4)), torch.full((4,), 2.0))


def _int64(*values: int) -> torch.Tensor:
    return torch.tensor(list(values) * 32)


WRAPS = {
    "x * 4": (lambda a: a * 4, _int64(1, 2, 2**31 - 1, 4), "aten.mul.Tensor"),
    "x + 1": (lambda a: a + 1, _int64(1, 2, 2**31 - 1, 4), "aten.add.Tensor"),
    "x - 2": (lambda a: a - 2, _int64(1, 2, -(2**31) + 1, 4), "aten.sub.Tensor"),
    "x * y": (lambda a: a * (a + 3), _int64(1, 2, 50000, 4), "aten.mul.Tensor"),
    "-x": (lambda a: -a, _int64(1, 2, -(2**31), 4), "aten.neg.default"),
    "float to int64": (
        lambda a: (a.float() * 1e5).to(torch.int64),
        _int64(1, 2, 30000, 4),
        "aten._to_copy.default",
    ),
}


@pytest.mark.parametrize("name", list(WRAPS))
def test_int64_arithmetic_that_would_wrap_is_an_error(name: str) -> None:
    """int64 data is int32 in kernels: a result outside int32 is an error at the
    call (before: a silent wrap), and in-range data computes as eager does."""
    fn, wrapping, op = WRAPS[name]
    small = _int64(1, 2, 3, 4)
    compiled = pallas_ir.compile(fn, [small])
    torch.testing.assert_close(compiled(small), fn(small))
    with pytest.raises(pallas_ir.UnsupportedError, match=rf"{re.escape(op)}: .*int32"):
        compiled(wrapping)


def test_int64_arithmetic_the_graph_bounds_is_not_checked() -> None:
    """A causal mask's `arange(t) - arange(t)[:, None]` is int64 but lies in
    [-(t - 1), t - 1]: no overflow check kernels (two 2048 x 2048 reductions each, one
    alone over v6e's scoped VMEM); an arange reaching past int32 is still checked."""

    def masked(s):
        t = s.shape[-1]
        return s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), -1.0)

    x = torch.randn(2, 64, 64)
    compiled = pallas_ir.compile(masked, [x])
    torch.testing.assert_close(compiled(x), masked(x))
    assert compiled.source.count("pl.pallas_call(") == 1

    def wide(i):
        return (torch.arange(2**31 - 4, 2**31 + 4) + i).sum()

    one = torch.tensor(1)
    with pytest.raises(pallas_ir.UnsupportedError, match=r"aten\.add\.Tensor: .*int32"):
        pallas_ir.compile(wide, [one])(one)


def _rows(length: int, *sums: int) -> torch.Tensor:
    """Rows of `length` int32 values summing to `sums`: a third random, the rest as
    large as it takes (int32's extremes), so partial sums leave int32 either way."""
    g = torch.Generator().manual_seed(length)
    rows = torch.zeros(len(sums), length, dtype=torch.int64)
    rows[:, : length // 3] = torch.randint(
        -(2**30), 2**30, (len(sums), length // 3), generator=g
    )
    for row, total in zip(rows, sums, strict=True):
        rest = total - int(row.sum())
        for j in range(length // 3, length):
            row[j] = max(-(2**31), min(2**31 - 1, rest))
            rest -= int(row[j])
        assert int(row.sum()) == total
    return rows


@pytest.mark.parametrize("length", [6, 40000])  # one wide field; three narrower ones
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_an_int64_sum_outside_int32_is_an_error(length: int, dtype) -> None:
    """An int64 sum (of int32 data too) is computed in int32: exactly the sums outside
    int32 raise (before: they wrapped), sums at its edges do not, however large the
    partial sums."""
    fn = lambda a: a.sum(1)
    edges = _rows(length, 2**31 - 1, -(2**31), 0, -1).to(dtype)
    compiled = pallas_ir.compile(fn, [edges])
    torch.testing.assert_close(compiled(edges), fn(edges))
    for total in (2**31, -(2**31) - 1, 2**32 + 5, -(2**32)):
        with pytest.raises(
            pallas_ir.UnsupportedError,
            match=r"aten\.sum\.dim_IntList: an int64 result leaves the int32 range",
        ):
            compiled(_rows(length, 7, total, 0, -1).to(dtype))


def test_an_int64_product_outside_int32_is_an_error() -> None:
    """Exactly the products outside int32 raise, those within 2**16 of its edges
    too; a zero factor makes any product fine."""
    fn = lambda a: a.prod(1, keepdim=True)
    inside = [
        [2**15, 2**16, -1],
        [46340, 46340, 1],
        [-46340, 46340, 1],
        [3, 715827882, 1],
        [0, 2**30, 2**30],
        [-1, -1, 1],
    ]
    outside = [[2**15, 2**16, 1], [46341, 46341, 1], [-46341, 46341, 1], [2**20] * 3]
    compiled = pallas_ir.compile(fn, [torch.tensor(inside)])
    torch.testing.assert_close(compiled(torch.tensor(inside)), fn(torch.tensor(inside)))
    for row in outside:
        with pytest.raises(
            pallas_ir.UnsupportedError,
            match=r"aten\.prod\.dim_int: an int64 result leaves the int32 range",
        ):
            compiled(torch.tensor([*inside[:-1], row]))


def test_comparisons_with_constants_beyond_int32() -> None:
    """`x > 2**31` on int64 data (inside int32: checked at the boundary) has the
    same answer for every element; before, the constant wrapped."""
    x = _int64(-(2**31), -1, 0, 2**31 - 1)
    for fn in (
        lambda a: a > 2**31,
        lambda a: a <= 2**40,
        lambda a: a == -(2**35),
        lambda a: a != 2**33,
        lambda a: a.float() < 2**40,
    ):
        torch.testing.assert_close(pallas_ir.compile(fn, [x])(x), fn(x))
    with pytest.raises(pallas_ir.UnsupportedError, match="int64 constant 1099511627776"):
        pallas_ir.compile(lambda a: a + 2**40, [x])


@pytest.mark.parametrize(
    "fn",
    [lambda a, b: a // b, lambda a, b: a % b, lambda a, b: torch.fmod(a, b)],
    ids=["floor_divide", "remainder", "fmod"],
)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_division_by_zero_raises(fn, dtype) -> None:
    a = torch.arange(-64, 64, dtype=dtype)
    b = torch.tensor([3, -2, 5, 7] * 32, dtype=dtype)
    compiled = pallas_ir.compile(fn, [a, b])
    torch.testing.assert_close(compiled(a, b), fn(a, b))
    b[9] = 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, b)
    with pytest.raises(
        ZeroDivisionError, match=r"aten\.\w+\.\w+: integer division by zero"
    ):
        compiled(a, b)


def test_check_kernels_aot_compile_for_v5e() -> None:
    """The check kernels (index bounds, int64 overflow of arithmetic, sums and
    products, float-to-int64 range, divisor) lower and compile for a v5e like every other kernel."""
    modules = [
        pallas_ir.compile(INDEXING["embedding"], [torch.tensor([3, 0, 15, 7] * 4)]),
        pallas_ir.compile(WRAPS["x * y"][0], [_int64(1, 2, 3, 4)]),
        pallas_ir.compile(WRAPS["float to int64"][0], [_int64(1, 2, 3, 4)]),
        pallas_ir.compile(lambda a, b: a // b, [_int64(1, 2, 3, 4), _int64(1, 2, 3, 4)]),
        pallas_ir.compile(lambda a: a.sum(1), [_rows(40000, 0, 1)]),
        pallas_ir.compile(lambda a: a.prod(), [_int64(1, 2, 3, 4)]),
    ]
    results = aot_compile_many(
        [(m.source, arg_specs(m.module)) for m in modules], chip="v5e"
    )
    assert all(r.ok for r in results), [r.message for r in results if not r.ok]


def test_a_divisor_check_over_a_broadcast_divisor_compiles_for_v5e() -> None:
    """A (128, 1, 1) divisor of a permuted (128, 8, 1) dividend: the check kernel's max
    of the divisor's zero flags over (128, 8) reduces the flags at their own
    (1, 128, 1) shape; broadcast along the lanes first, Mosaic refused it ('Not
    implemented: Lane broadcast'; found by the differential fuzzer)."""
    x = torch.arange(-512, 512, dtype=torch.int64).reshape(1, 8, 128) * 3
    d = torch.arange(1, 129, dtype=torch.int64).reshape(128, 1, 1) % 5 + 1

    def program(a, b):
        return torch.div(a.permute(2, 1, 0), b, rounding_mode="trunc") + 1

    compiled = pallas_ir.compile(program, [x, d])
    torch.testing.assert_close(compiled(x, d), program(x, d))
    (result,) = aot_compile_many(
        [(compiled.source, arg_specs(compiled.module))], chip="v5e"
    )
    assert result.ok, result.message


def test_a_divided_transposed_block_stays_in_scoped_vmem_on_v5e_and_v6e() -> None:
    """An int32 (16, 128, 128) block transposed in the kernel to put its 16-wide dim on
    the lanes, floor-divided and summed: the transposed value is 8x its block in VMEM
    tiles and the division keeps several of it live, over the scoped VMEM of both
    chips (`tpu_rules.vmem_relayout_bytes`): smaller tiles or XLA, and it compiles."""
    x = torch.randint(-1000, 1000, (16, 128, 128), dtype=torch.int32).permute(2, 1, 0)
    d = torch.randint(1, 50, (128, 1, 1), dtype=torch.int32)

    def program(a, b):
        return (a // b).sum(2, keepdim=True)

    items = {}
    for chip in ("v5e", "v6e"):
        compiled = pallas_ir.compile(program, [x, d], chip=chip)
        torch.testing.assert_close(compiled(x, d), program(x, d))
        items[chip] = [(compiled.source, arg_specs(compiled.module))]
    with ThreadPoolExecutor(2) as pool:  # a compiler child process each, at once
        runs = pool.map(lambda chip: aot_compile_many(items[chip], chip), items)
        results = [r for rs in runs for r in rs]
    assert all(r.ok for r in results), [r.message for r in results if not r.ok]


def test_an_unknown_chip_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="chip must be one of v5e, v6e, got 'v9'"):
        pallas_ir.compile(lambda a: a * 2, [torch.ones(4)], chip="v9")


@pytest.mark.parametrize(
    "make",
    [lambda: torch.arange(6)[2::3][:1], lambda: torch.tensor(5).expand(1)],
    ids=["strided_one_element", "expanded_one_element"],
)
def test_a_one_element_int64_view(make) -> None:
    """A one-element int64 view keeps a stride other than 1 (it is contiguous to
    torch): its int32 words are still read right."""
    x = make()
    compiled = pallas_ir.compile(lambda a: a + 1, [x])
    torch.testing.assert_close(compiled(x), x + 1)


def test_an_input_written_and_returned_comes_back_as_itself() -> None:
    x = torch.zeros(8, 128)
    compiled = pallas_ir.compile(lambda a: (a.add_(0.5), a * 2), [x.clone()])
    written, doubled = compiled(x)
    assert written is x or written.data_ptr() == x.data_ptr()
    torch.testing.assert_close(x, torch.full((8, 128), 0.5))
    torch.testing.assert_close(doubled, torch.ones(8, 128))


def test_a_failed_index_check_writes_nothing_and_returns_no_view() -> None:
    """A call whose index check fails raises before the copy-back, so the input
    whose view the function returns is untouched; a good call returns the view."""

    def fn(cache, k, pos):
        cache[:, pos] = k
        return cache.t()

    k, pos = torch.ones(8, 1), torch.tensor([3])
    compiled = pallas_ir.compile(fn, [torch.zeros(8, 16), k, pos])
    cache = torch.zeros(8, 16)
    with pytest.raises(IndexError):
        fn(torch.zeros(8, 16), k, torch.tensor([99]))
    with pytest.raises(IndexError, match="index 99 is out of bounds"):
        compiled(cache, k, torch.tensor([99]))
    assert cache.eq(0).all()
    got, want = compiled(cache, k, pos), fn(torch.zeros(8, 16), k, pos)
    torch.testing.assert_close(got, want)
    assert got._base is cache and got.stride() == want.stride()


@pytest.mark.xfail(
    strict=True,
    reason="upstream: XLA:CPU in jaxlib 0.10.2 sums maximum(x, b) as if a NaN in x "
    "were b (plain `jax.jit(lambda x, b: jnp.maximum(x, b).sum(1))` does too), so the "
    "CPU interpret path loses the NaN eager keeps",
)
def test_a_nan_survives_a_maximum_then_a_sum_on_cpu() -> None:
    x = torch.full((32, 128), 5.0)
    x[:, 0] = float("nan")
    b = torch.tensor([0.5])

    def fn(x, b):
        return torch.maximum(x, b).sum(1)

    got = pallas_ir.compile(fn, [x, b])(x, b)
    torch.testing.assert_close(got, fn(x, b), equal_nan=True)
