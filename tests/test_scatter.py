"""Scatters end to end: index_put (accumulating or not, with index_copy, index_add and
KV-cache writes), scatter, scatter_add and slice_scatter through `pallas_ir.compile`
against eager PyTorch, with repeated and negative indices; the backward graphs that
produce them (embedding, gather, cross-entropy, indexing) through AOTAutograd; the
accumulating store (`ta.store ... accumulate <kind>`) in the ta reference, the xla
reference and the emitted jnp against torch; and every emitted module AOT-compiles
for v5e."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from functorch.compile import aot_function, make_boxed_func
from torch._decomp import core_aten_decompositions

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.reference import pallas as pallas_reference
from pallas_ir.reference import run_forward
from pallas_ir.registry import default_pipeline
from pallas_ir.tpu_check import aot_compile_many, exec_source

aten = torch.ops.aten


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(shape, generator=_gen(sum(shape) + len(shape)))


def _randint(low: int, high: int, *shape: int) -> torch.Tensor:
    return torch.randint(low, high, shape, generator=_gen(sum(shape) + high))


def _rows(n: int, k: int, seed: int = 0) -> torch.Tensor:
    """k distinct indices in [0, n), the second half negative (wrapped by torch)."""
    picked = torch.randperm(n, generator=_gen(seed))[:k]
    return torch.where(torch.arange(k) >= k // 2, picked - n, picked)


def _kv_write(cache, k, pos):
    out = cache.clone()
    out[:, :, pos] = k
    return out


def _kv_write_static(cache, k):
    out = cache.clone()
    out[:, :, 3] = k
    return out


def _kv_write_slice(cache, k):
    out = cache.clone()
    out[:, :, 2:4] = k
    return out


def _mask_fill(x, mask):
    out = x.clone()
    out[mask] = 0.5
    return out


def _mask_rows(x, mask, v):
    out = x.clone()
    out[:, mask] = v
    return out


PROGRAMS = {
    # index_put, accumulating: repeated (and negative) rows add up.
    "embedding_dense_backward": (
        lambda g, i: aten.embedding_dense_backward(g, i, 100, -1, False),
        lambda: [_randn(64, 128), _randint(0, 20, 64)],
    ),
    "index_put_accumulate_2d": (
        lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
        lambda: [_randn(50, 128), _randint(-50, 50, 40), _randn(40, 128)],
    ),
    "index_put_accumulate_two_broadcast_indices": (
        lambda x, i, j, v: torch.index_put(x, (i, j), v, accumulate=True),
        lambda: [
            _randn(20, 128),
            _randint(-20, 20, 5, 1),
            _randint(0, 128, 1, 7),
            _randn(7),
        ],
    ),
    "index_put_accumulate_2d_index": (
        lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
        lambda: [_randn(50, 128), _randint(-50, 50, 4, 8), _randn(4, 8, 128)],
    ),
    "index_put_non_adjacent_3d": (
        lambda x, i, j, v: aten.index_put(x, [i, None, j], v, True),
        lambda: [
            _randn(20, 8, 128),
            _randint(0, 20, 12),
            _randint(-128, 128, 12),
            _randn(12, 8),
        ],
    ),
    "index_put_few_repeated_rows": (  # element-wise: row 3 three times, once as -47
        lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
        lambda: [_randn(50, 128), torch.tensor([3, 3, -47]), _randn(3, 128)],
    ),
    "index_add_3d": (
        lambda x, i, v: x.index_add(1, i, v),
        lambda: [_randn(8, 64, 128), _randint(0, 64, 20), _randn(8, 20, 128)],
    ),
    "index_put_accumulate_int32": (
        lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
        lambda: [
            _randint(-9, 9, 50, 128).int(),
            _randint(0, 50, 40),
            _randint(-9, 9, 40, 128).int(),
        ],
    ),
    "index_put_accumulate_fused": (  # into a transposed base, then a reduction
        lambda x, i, v: torch.index_put(x.t() * 2, (i,), v.exp(), accumulate=True).sum(1),
        lambda: [_randn(128, 64), _randint(0, 64, 30), _randn(30, 128)],
    ),
    # index_put, writing: distinct rows (torch leaves repeated ones undefined).
    "index_put_rows": (
        lambda x, i, v: torch.index_put(x, (i,), v),
        lambda: [_randn(50, 128), _rows(50, 20), _randn(20, 128)],
    ),
    "index_put_few_rows": (
        lambda x, i, v: torch.index_put(x, (i,), v),
        lambda: [_randn(50, 128), torch.tensor([3, -1, 7]), _randn(3, 128)],
    ),
    "index_copy_3d": (
        lambda x, i, v: x.index_copy(1, i, v),
        lambda: [_randn(8, 64, 128), _rows(64, 20, 1) % 64, _randn(8, 20, 128)],
    ),
    "kv_cache_write_at_positions": (
        _kv_write,
        lambda: [_randn(2, 4, 64, 128), _randn(2, 4, 2, 128), torch.tensor([5, -9])],
    ),
    "kv_cache_write_at_many_positions": (
        _kv_write,
        lambda: [_randn(2, 4, 64, 128), _randn(2, 4, 16, 128), _rows(64, 16, 2)],
    ),
    "kv_cache_write_ragged": (  # 12 rows: a step of 8, then a step of 4
        _kv_write,
        lambda: [_randn(2, 4, 64, 128), _randn(2, 4, 12, 128), _rows(64, 12, 3)],
    ),
    "index_copy_repeated_rows": (  # the later write to a row wins, as in eager
        lambda x, i, v: x.index_copy(0, i, v),
        lambda: [
            _randn(16, 256),
            torch.tensor([3, 7, 3, 1, 7, 3, 0, 2, 5, 9, 3, 7]),
            _randn(12, 256),
        ],
    ),
    "index_add_repeated_rows": (  # repeated rows add up, across steps of 8 rows
        lambda x, i, v: x.index_add(0, i, v),
        lambda: [_randn(16, 256), _randint(0, 4, 20), _randn(20, 256)],
    ),
    "kv_cache_write_at_static_position": (
        _kv_write_static,
        lambda: [_randn(2, 4, 64, 128), _randn(2, 4, 128)],
    ),
    "kv_cache_write_at_static_slice": (
        _kv_write_slice,
        lambda: [_randn(2, 4, 64, 128), _randn(2, 4, 2, 128)],
    ),
    "boolean_mask_fill": (_mask_fill, lambda: [_randn(16, 128), _randn(16, 128) > 0]),
    "boolean_mask_rows": (
        _mask_rows,
        lambda: [_randn(8, 16, 128), _randn(16) > 0, _randn(8, 1, 128)],
    ),
    # scatter, scatter_add
    "scatter_value_width_one": (  # nll_loss's backward
        lambda x, i: x.scatter(1, i, -1.0),
        lambda: [torch.zeros(64, 128), _randint(0, 128, 64, 1)],
    ),
    "scatter_value_wide": (
        lambda x, i: x.scatter(1, i, 2.5),
        lambda: [
            _randn(16, 128),
            torch.stack([_rows(128, 20, s) % 128 for s in range(16)]),
        ],
    ),
    "scatter_src_wide": (
        lambda x, i, s: x.scatter(1, i, s),
        lambda: [
            _randn(16, 128),
            torch.stack([_rows(128, 32, s) % 128 for s in range(16)]),
            _randn(16, 40),
        ],
    ),
    "scatter_add_gather_backward": (
        lambda x, i, s: x.scatter_add(1, i, s),
        lambda: [_randn(16, 128), _randint(0, 128, 16, 32), _randn(16, 32)],
    ),
    "scatter_add_narrow_3d_short_index": (  # element-wise, the index shorter than x
        lambda x, i, s: x.scatter_add(0, i, s),
        lambda: [_randn(10, 4, 128), _randint(0, 10, 3, 2, 64), _randn(3, 4, 128)],
    ),
    "scatter_add_wide_3d_short_index": (
        lambda x, i, s: x.scatter_add(0, i, s),
        lambda: [_randn(40, 4, 128), _randint(0, 40, 30, 2, 64), _randn(32, 4, 128)],
    ),
    "scatter_0d": (
        lambda x, i, v: torch.scatter(x, 0, i, v),
        lambda: [_randn(), torch.tensor(0), _randn()],
    ),
    # slice_scatter
    "slice_scatter_step": (
        lambda x, s: torch.slice_scatter(x, s, 1, 2, 8, 2),
        lambda: [_randn(16, 10), _randn(16, 3)],
    ),
}


@pytest.fixture(scope="module")
def compiled() -> dict[str, pallas_ir.compiler.CompiledFunction]:
    import pallas_ir.compiler

    return {name: pallas_ir.compile(fn, make()) for name, (fn, make) in PROGRAMS.items()}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    fn, make = PROGRAMS[name]
    inputs = make()
    got, want = compiled[name](*inputs), fn(*inputs)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_aot_compiles_for_v5e(compiled) -> None:
    items = [(k.source, arg_specs(k.module)) for k in compiled.values()]
    results = aot_compile_many(items, chip="v5e")
    assert all(r.ok for r in results), {
        n: r.message for n, r in zip(compiled, results) if not r.ok
    }


def _xla_functions(k) -> list[str]:
    return [o.sym_name.data for o in k.module.walk() if o.name == "xla.func"]


@pytest.mark.parametrize(
    "name",
    [
        "kv_cache_write_at_positions",
        "kv_cache_write_at_static_position",
        "kv_cache_write_at_static_slice",
        "scatter_value_width_one",
        "index_put_few_repeated_rows",
    ],
)
def test_a_write_of_few_points_fuses_into_a_pallas_kernel(name: str) -> None:
    """A write at a static place or at a few data-dependent places is element-wise: one
    Pallas kernel computes the result, no XLA scatter (the index checks off: with
    them, each index tensor adds two small reduction kernels)."""
    fn, make = PROGRAMS[name]
    k = pallas_ir.compile(fn, make(), runtime_checks=False)
    assert not _xla_functions(k)
    assert k.source.count("pl.pallas_call(") == 1


ROW_SCATTERS = [
    "embedding_dense_backward",
    "index_put_accumulate_2d",
    "index_put_rows",
    "index_copy_3d",
    "index_add_3d",
    "kv_cache_write_at_many_positions",
    "kv_cache_write_ragged",
    "index_copy_repeated_rows",
    "index_add_repeated_rows",
]


@pytest.mark.parametrize("name", ROW_SCATTERS)
def test_a_write_of_whole_rows_is_a_pallas_row_scatter(name: str, compiled) -> None:
    """A data-dependent write (or sum) of whole rows of 32-bit data is the KV-cache
    update idiom: indices scalar-prefetched, the written buffer left in HBM and aliased
    to the kernel's output, one row DMA a row; none of it on XLA."""
    k = compiled[name]
    assert "tl.scatter" in k.ir["tile"]
    assert not _xla_functions(k)
    assert "input_output_aliases" in k.source
    assert "make_async_copy" in k.source
    # One kernel writes the whole result: the copy of the base (a compiled function
    # does not write its input) or the zeros, which the rows are then written into and
    # which is returned as it is, not copied again.
    fn, make = PROGRAMS[name]
    result = fn(*make())
    size = result.numel() * result.element_size()
    writes = [
        c.kernel
        for c in k.cost_report().calls
        if not any(o.role == "prefetch" for o in c.operands)  # not the scatter
        and any(o.role == "out" and o.bytes >= size for o in c.operands)
    ]
    assert len(writes) == 1, writes


def _decode_step(k_cache, v_cache, k, v, pos, q):
    """One decode step: the new key and value written into the caches in place, then
    attention of the new query over them."""
    k_cache.index_copy_(2, pos, k)
    v_cache[:, :, pos] = v
    return torch.nn.functional.scaled_dot_product_attention(q, k_cache, v_cache)


def _decode_inputs(position: int) -> list[torch.Tensor]:
    return [
        _randn(2, 4, 256, 128),
        _randn(2, 4, 256, 128) * 2,
        _randn(2, 4, 1, 128) + position,
        _randn(2, 4, 1, 128) - position,
        torch.tensor([position]),
        _randn(2, 4, 1, 128) / 3,
    ]


def test_a_kv_cache_write_is_made_in_place() -> None:
    """An input the function updates at a few rows, and that nothing else reads, is
    written in place: a row scatter into the input's own array, which the host donates,
    however few the rows (a decode step's one position). No kernel copies a cache, the
    attention that reads them is one kernel, and a bad index raises before either
    cache changes."""
    k = pallas_ir.compile(_decode_step, _decode_inputs(5))
    assert k.donated == (0, 1)
    assert "DONATE_ARGNUMS = (0, 1)" in k.source
    for position in (5, 255, 0):
        ours, eager = _decode_inputs(position), _decode_inputs(position)
        got, want = k(*ours), _decode_step(*eager)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        assert torch.equal(ours[0], eager[0]) and torch.equal(ours[1], eager[1])
    report = k.cost_report()
    cache = 2 * 4 * 256 * 128 * 4
    assert not report.xla_calls
    # one range check of pos (the second write's would fail only where the first's
    # does), a row scatter into each cache, the attention
    assert len(report.calls) == 4
    (attention,) = [c for c in report.calls if "attention" in c.kernel]
    assert sum(o.bytes for o in attention.operands) < 2.1 * cache  # both caches once
    # every other kernel moves rows, or less: none copies a cache
    assert all(
        sum(o.bytes for o in c.operands) < cache / 64
        for c in report.calls
        if c is not attention
    )
    for position in (256, 2**33):  # past the end; outside int32
        bad = _decode_inputs(7)
        bad[4] = torch.tensor([position])
        before = [t.clone() for t in bad[:2]]
        with pytest.raises(IndexError, match=f"index {position} is out of bounds"):
            k(*bad)
        assert torch.equal(bad[0], before[0]) and torch.equal(bad[1], before[1])
    (aot,) = aot_compile_many([(k.source, arg_specs(k.module))], chip="v5e")
    assert aot.ok, aot.message


def test_a_kv_cache_write_under_torch_compile_matches_eager() -> None:
    """Under `torch.compile`, AOTAutograd keeps the inference graph's writes to its
    inputs (`keep_inference_input_mutations`), so the same in-place write runs in the
    kernels; the caches change as eager's do, step after step."""
    import warnings

    torch._dynamo.reset()
    step = torch.compile(_decode_step, backend="pallas_ir")
    ours, eager = _decode_inputs(3)[:2], _decode_inputs(3)[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no op runs in eager torch
        for position in (3, 4):
            rest = _decode_inputs(position)[2:]
            got = step(*ours, *rest)
            want = _decode_step(*eager, *rest)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
            assert torch.equal(ours[0], eager[0]) and torch.equal(ours[1], eager[1])


def test_a_write_whose_values_are_its_base_is_not_in_place() -> None:
    """An input that is both the base and the values of its write (`c[i] = c`) is read
    by the write twice: it goes to a copy, as any input read besides its write."""

    def permute_rows(c, i):
        c.copy_(c.index_put((i,), c))
        return c.sum(1)

    inputs = lambda: [_randn(64, 128), torch.randperm(64, generator=_gen(1))]
    k = pallas_ir.compile(permute_rows, inputs())
    assert k.donated == ()
    ours, eager = inputs(), inputs()
    torch.testing.assert_close(k(*ours), permute_rows(*eager), rtol=1e-5, atol=1e-4)
    assert torch.equal(ours[0], eager[0])


def test_an_input_write_in_a_split_graph_is_made_once() -> None:
    """A torch.compile graph with an op that runs eagerly is split, after a trace of
    the graph that runs it: on copies of the inputs, so the write into the input (kept
    in the inference graph) is made once a call, as eager makes it."""

    def step(x, idx, src, h):
        x.index_add_(0, idx, src)
        up = F.interpolate(h[None, None], (3, 32), mode="bicubic", antialias=True)
        return up.sum() + x.sum()

    torch._dynamo.reset()
    compiled = torch.compile(step, backend="pallas_ir")
    ours, eager = torch.zeros(16, 128), torch.zeros(16, 128)
    idx, src, h = torch.tensor([1, 1, 5]), torch.ones(3, 128), _randn(4, 32)
    with torch.no_grad():
        with pytest.warns(UserWarning, match="_upsample_bicubic2d_aa"):
            got = compiled(ours, idx, src, h)
        for call in range(2):
            if call:
                got = compiled(ours, idx, src, h)
            torch.testing.assert_close(got, step(eager, idx, src, h))
            assert torch.equal(ours, eager)


def test_an_input_written_in_place_that_another_input_views_is_refused() -> None:
    """Two inputs that view one storage, one of them written: eager's read of the other
    sees the write, the program would not, so the call raises UnsupportedError naming
    both. Views of disjoint parts of one storage (two caches cut from one buffer) are
    fine."""

    def step(a, b, i, v):
        a.index_copy_(0, i, v)
        return b.sum(1)

    buffer, i, v = torch.zeros(2, 64, 128), torch.tensor([3]), torch.ones(1, 128)
    k = pallas_ir.compile(step, [buffer[0], buffer[1], i, v])
    torch.testing.assert_close(k(buffer[0], buffer[1], i, v), torch.zeros(64))
    assert torch.equal(buffer[0, 3], torch.ones(128))
    shared = torch.zeros(64, 128)
    with pytest.raises(
        pallas_ir.UnsupportedError, match="input 0: shares memory with input 1"
    ):
        k(shared, shared, i, v)
    assert not shared.any()


def test_an_input_also_read_before_its_write_is_copied() -> None:
    """Where the function reads the input before it writes it, the write goes to a
    copy of the input (as before), which is then copied back: nothing is donated."""

    def step(cache, new, pos):
        total = cache.sum()
        cache.index_copy_(0, pos, new)
        return total

    inputs = lambda: [_randn(64, 128), _randn(16, 128), _rows(64, 16) % 64]
    k = pallas_ir.compile(step, inputs())
    assert k.donated == ()
    ours, eager = inputs(), inputs()
    torch.testing.assert_close(k(*ours), step(*eager), rtol=1e-5, atol=1e-4)
    assert torch.equal(ours[0], eager[0])


@pytest.mark.parametrize(
    ("name", "update"),
    [
        ("scatter_add_gather_backward", ".add("),
        ("scatter_src_wide", ".set("),
        ("index_put_non_adjacent_3d", ".add("),
    ],
)
def test_a_data_dependent_write_of_elements_is_an_xla_scatter_in_the_program(
    name: str, update: str, compiled
) -> None:
    """A larger data-dependent write of single elements (an index per element, or on
    the lane dim) runs as an XLA scatter (-add) inside the jitted program, after a
    Pallas kernel copies the base."""
    k = compiled[name]
    (function,) = _xla_functions(k)
    lines = k.source.splitlines()
    start = lines.index(next(x for x in lines if x.startswith(f"def {function}_xla(")))
    body = lines[start : lines.index("", start)]
    assert sum(".at[" in x for x in body) == 1
    assert any(".at[" in x and update in x for x in body)
    assert k.source.count("pl.pallas_call(") >= 1


def test_the_cost_of_a_scatter_add_counts_each_point(compiled) -> None:
    """An XLA scatter-add of 16 x 32 points into f32[16, 128] (gather's backward): it
    reads the source and the indices (one each a point), and reads and writes one
    element a point (an element may repeat: the model counts points, not distinct
    elements)."""
    (scatter,) = compiled["scatter_add_gather_backward"].cost_report().xla_calls
    points = 16 * 32 * 4
    assert scatter.kind == "kernel"
    assert scatter.read == points + points + points
    assert scatter.written == points


def test_a_repeated_index_writes_one_of_its_values() -> None:
    """torch leaves which value a repeated index keeps undefined: every written element
    holds one of the values written there, every other keeps the base."""
    x, src = _randn(8, 64), _randn(8, 24)
    index = _randint(0, 16, 8, 24)  # many repeats, columns 16.. never written
    k = pallas_ir.compile(lambda x, i, s: x.scatter(1, i, s), [x, index, src])
    got = k(x, index, src)
    for row in range(8):
        for col in range(64):
            written = src[row][index[row] == col]
            if len(written):
                assert got[row, col] in written
            else:
                assert got[row, col] == x[row, col]


def _backward_graph_matches_eager(fn, inputs) -> pallas_ir.compiler.CompiledFunction:
    """Train one step of `fn` (its output summed) through AOTAutograd with the backward
    graph compiled by pallas_ir; the gradients must match eager's."""
    compiled = {}

    def backward_compiler(gm, _):
        def run(args):
            if "k" not in compiled:
                # The graph returns None for the integer inputs' gradients.
                compiled["keep"] = [o is not None for o in gm(*args)]
                compiled["k"] = pallas_ir.compile(
                    lambda *a: tuple(o for o in gm(*a) if o is not None), list(args)
                )
            got = compiled["k"](*args)
            got = iter(got if isinstance(got, tuple) else (got,))
            return [next(got) if keep else None for keep in compiled["keep"]]

        run._boxed_call = True  # type: ignore[attr-defined]
        return run

    f = aot_function(
        fn,
        fw_compiler=lambda gm, _: make_boxed_func(gm.forward),
        bw_compiler=backward_compiler,
        decompositions=core_aten_decompositions(),
    )
    ours = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
    eager = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
    f(*ours).sum().backward()
    fn(*eager).sum().backward()
    for a, b in zip(ours, eager):
        if b.grad is not None:
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-5)
    return compiled["k"]


@pytest.mark.parametrize(
    ("fn", "make"),
    [
        (
            lambda w, i: torch.nn.functional.embedding(i, w) * 2,
            lambda: [_randn(100, 128), _randint(0, 20, 64)],
        ),
        (
            lambda x, i: torch.gather(x, 1, i) ** 2,
            lambda: [_randn(16, 128), _randint(0, 128, 16, 32)],
        ),
        (
            lambda x, t: torch.nn.functional.cross_entropy(x, t),
            lambda: [_randn(64, 128), _randint(0, 128, 64)],
        ),
        (lambda x, i: x[:, i] * 3, lambda: [_randn(16, 128), _randint(-128, 128, 40)]),
    ],
    ids=["embedding", "gather", "cross_entropy", "index"],
)
def test_backward_graphs_compile_and_match_eager(fn, make) -> None:
    k = _backward_graph_matches_eager(fn, make())
    (aot,) = aot_compile_many([(k.source, arg_specs(k.module))], chip="v5e")
    assert aot.ok, aot.message


def test_a_value_per_masked_element_is_an_unsupported_error() -> None:
    def f(x, mask, v):
        out = x.clone()
        out[mask] = v
        return out

    mask = torch.tensor([True, False, True, False])
    with pytest.raises(pallas_ir.UnsupportedError, match=r"index_put.*boolean mask"):
        pallas_ir.compile(f, [_randn(4, 128), mask, _randn(2, 128)])


# ---------------------------------------------------------------------------------------
# The accumulating store, level by level

ACCUMULATE = """
// acc[idx[i], :] = acc[idx[i], :] <KIND> src[i, :] for acc: f32[10, 128], idx: i32[16]
ta.kernel @combine(%idx: memref<16xi32> {role = "in"}, %src: memref<16x128xf32> {role = "in"}, %acc: memref<10x128xf32> {role = "inout"}) {
  ta.loop [16, 128] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<16xi32>
    %row = arith.index_cast %r : i32 to index
    %v = ta.load %src[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<16x128xf32>
    ta.store %v, %acc[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%row] accumulate <KIND> : memref<10x128xf32>
  }
}
func.func @forward(%idx: memref<16xi32>, %src: memref<16x128xf32>, %acc: memref<10x128xf32>) -> memref<10x128xf32> {
  ta.launch @combine(%idx, %src, %acc) : memref<16xi32>, memref<16x128xf32>, memref<10x128xf32>
  func.return %acc : memref<10x128xf32>
}
"""

_TORCH_REDUCE = {"prod": "prod", "max": "amax", "min": "amin"}


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
def test_an_accumulating_store_combines_every_point(kind: str) -> None:
    """Rows 0..4 of 10 picked 16 times: each combines all its points (torch's
    index_add / index_reduce with the old value included), in the ta reference, in the
    pallas reference after the pipeline, and in the emitted module (a Pallas row
    scatter for <sum>, XLA's `.at[]` for the others)."""
    idx = torch.tensor(
        [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 0, 0, 4, 2, 1], dtype=torch.int32
    )
    src, acc = _randn(16, 128), _randn(10, 128)
    if kind == "sum":
        want = acc.index_add(0, idx, src)
    else:
        want = acc.index_reduce(0, idx, src, _TORCH_REDUCE[kind], include_self=True)
    arrays = [idx.numpy(), src.numpy(), acc.numpy()]
    module = pallas_ir.parse(ACCUMULATE.replace("KIND", kind))
    pallas_ir.verify(module)
    (ta_result,) = run_forward(module, *arrays)
    pallas_ir.run_passes(module, default_pipeline())
    (lowered_result,) = pallas_reference.run_forward(module, *arrays)
    forward = exec_source(pallas_ir.emit_python(module))["forward"]
    (jnp_result,) = [forward(*arrays, interpret=True)]
    for got in (ta_result, lowered_result, np.asarray(jnp_result)):
        torch.testing.assert_close(torch.from_numpy(np.array(got)), want)
