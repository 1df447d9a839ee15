"""Attention as one flash-attention kernel: raise-attention recognises the chains users
write, the tiler makes them an online softmax over key blocks. Checked against eager
PyTorch and the ta reference; the TPU compile is in test_matmul_fusion."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from support.programs import aot_failures

import pallas_ir


def _plain(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v


def _causal(q, k, v):
    t = q.shape[-2]
    mask = torch.ones(t, t, dtype=torch.bool).triu(1)
    scores = (q @ k.transpose(-2, -1) * 0.125).masked_fill(mask, float("-inf"))
    return torch.softmax(scores, -1) @ v


def _padded(q, k, v, keep):
    # a padding mask over keys, per batch row: whole key blocks of a row are masked
    scores = (q @ k.transpose(-2, -1) / 8).masked_fill(
        ~keep[:, None, None, :], -torch.inf
    )
    return torch.softmax(scores, dim=-1) @ v


def _sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def _sdpa_causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def _sdpa_gqa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def _repeat_kv(q, k, v):
    # grouped-query heads as users write them before enable_gqa
    k, v = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v


def _sdpa_padded(q, k, v, keep):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])


def _other_scores(q, k, v):
    # the statistics are of k @ q^T, the weights of q @ k^T: not a softmax
    s, t = q @ k.transpose(-2, -1), k @ q.transpose(-2, -1)
    return torch.exp(s - torch.amax(t, -1, True)) / torch.sum(torch.exp(t), -1, True) @ v


def _biased(q, k, v, bias):
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125 + bias, -1) @ v


def _kernels(k: pallas_ir.CompiledFunction) -> int:  # type: ignore[name-defined]
    return k.source.count("pl.pallas_call(")


FORMS = {
    "plain": (_plain, (2, 4, 256, 64), 4),
    "causal": (_causal, (1, 2, 384, 32), 2),
    "3d": (_plain, (3, 128, 64), 3),
    "sdpa": (_sdpa, (2, 2, 256, 64), 2),
    "sdpa_causal": (_sdpa_causal, (1, 4, 256, 64), 4),
    "sdpa_gqa": (_sdpa_gqa, (2, 4, 256, 64), 2),
    "repeat_interleave": (_repeat_kv, (2, 4, 256, 64), 2),
}
"""Each form: the function, q's shape, and the heads of k and v."""


def _inputs(shape, kv_heads) -> list[torch.Tensor]:
    kv = (*shape[:-3], kv_heads, *shape[-2:]) if len(shape) == 4 else shape
    return [torch.randn(*shape), torch.randn(*kv), torch.randn(*kv)]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_attention_is_one_kernel_and_matches_eager(form: str) -> None:
    torch.manual_seed(0)
    fn, shape, kv_heads = FORMS[form]
    qkv = _inputs(shape, kv_heads)
    k = pallas_ir.compile(fn, qkv)
    assert "ta.attention" in k.ir["raise-attention"]
    assert _kernels(k) == 1
    torch.testing.assert_close(k(*qkv), fn(*qkv), rtol=1e-5, atol=1e-5)


def test_a_padding_mask_that_hides_whole_key_blocks() -> None:
    """Rows whose first key blocks are all masked: the online softmax's running max is
    -inf there, and must not turn the later blocks into NaN."""
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 2, 256, 64) for _ in range(3))
    keep = torch.ones(2, 256, dtype=torch.bool)
    keep[0, :200] = False  # batch 0 sees only its last 56 keys
    c = pallas_ir.compile(_padded, [q, k, v, keep])
    got = c(q, k, v, keep)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, _padded(q, k, v, keep), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", [_plain, _causal], ids=["plain", "causal"])
def test_bf16_attention_is_one_kernel(fn) -> None:
    """bf16 q, k, v: the chain's scores and softmax are f32 and its weights rounded to
    bf16 for the product with v; the flash kernel rounds its unnormalised weights
    instead, within bf16's precision: closer to the f32 result than eager bf16 is."""
    torch.manual_seed(5)
    qkv = [torch.randn(2, 2, 256, 64).to(torch.bfloat16) for _ in range(3)]
    k = pallas_ir.compile(fn, qkv)
    assert "ta.attention" in k.ir["raise-attention"] and _kernels(k) == 1
    got, want = k(*qkv).float(), fn(*qkv).float()
    exact = fn(*(t.float() for t in qkv))
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)
    assert (got - exact).abs().max() <= (want - exact).abs().max()


@pytest.mark.parametrize("fn", [_plain, _causal], ids=["plain", "causal"])
def test_a_sequence_no_block_divides_has_a_masked_last_block(fn) -> None:
    """600 queries and keys in blocks of 512: the last key block's columns past 600
    score -inf and its rows of v are 0. The tl reference reads a block's padding as
    NaN, so a leak shows there even where interpret mode pads with zeros."""
    from pallas_ir.reference.ta import run_forward

    torch.manual_seed(6)
    qkv = _inputs((1, 2, 600, 32), 2)
    k = pallas_ir.compile(fn, qkv)
    assert "ta.attention" in k.ir["raise-attention"] and _kernels(k) == 1
    assert "tl.iota" in k.ir["tile"]
    want = fn(*qkv)
    torch.testing.assert_close(k(*qkv), want, rtol=1e-5, atol=1e-5)
    if fn is _plain:  # (the causal form takes the frontend's iota input too)
        tiled = pallas_ir.parse(k.ir["tile"])
        (got,) = run_forward(tiled, *(t.numpy() for t in qkv))
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(4, 1, 1), (2, 4, 1, 1)], ids=["head", "batch_head"])
def test_a_bias_per_head_is_one_kernel(shape) -> None:
    """A bias with one value per head (ALiBi-like slopes, a learned per-head offset)
    is read through a view whose minor dims are units: a block of one of H values is
    not legal, a block of unit dims is."""
    torch.manual_seed(7)
    inputs = [*_inputs((2, 4, 256, 64), 4), torch.randn(*shape)]
    k = pallas_ir.compile(_biased, inputs)
    assert "ta.attention" in k.ir["raise-attention"] and _kernels(k) == 1
    torch.testing.assert_close(k(*inputs), _biased(*inputs), rtol=1e-5, atol=1e-5)


def _tril(diagonal: int):
    def masked(q, k, v):
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(diagonal)
        s = (q @ k.transpose(-2, -1) * 0.125).masked_fill(~keep, float("-inf"))
        return torch.softmax(s, -1) @ v

    return masked


@pytest.mark.parametrize(
    ("diagonal", "queries", "keys"),
    [
        (0, 256, 256),
        (-1, 256, 256),
        (2, 256, 256),
        (256, 128, 384),
        (0, 1024, 1024),
        (512, 600, 1112),
    ],
    ids=["causal", "strict", "diagonal2", "after_cached", "long", "long_after_cached"],
)
def test_a_triangular_mask_is_the_ops_causal_bound(diagonal, queries, keys) -> None:
    """A `tril(diagonal)` mask of loop indices becomes `causal <diagonal>` (keys
    j > i + diagonal hidden) and leaves the score region; `after_cached` is a
    prefill of 128 queries after 256 cached keys. With `strict`, query 0 sees no key:
    NaN, as in eager. In blocks of 512 (`long`, and `long_after_cached` with ragged
    last blocks), the key blocks a query block cannot see are skipped (`tl.when`)."""
    torch.manual_seed(8)
    fn = _tril(diagonal)
    q = torch.randn(1, 2, queries, 32)
    k, v = torch.randn(1, 2, keys, 32), torch.randn(1, 2, keys, 32)
    c = pallas_ir.compile(fn, [q, k, v])
    ir = c.ir["raise-attention"]
    assert f"causal {diagonal} :" in ir and "arith.select" not in ir
    assert _kernels(c) == 1
    assert ("tl.when" in c.ir["tile"]) == (keys > 512)
    torch.testing.assert_close(
        c(q, k, v), fn(q, k, v), rtol=1e-5, atol=1e-5, equal_nan=True
    )


def test_a_mask_below_the_diagonal_is_not_a_causal_bound() -> None:
    """`triu` hides keys before the query: no `causal`, the mask stays in the region."""
    torch.manual_seed(9)
    qkv = _inputs((1, 2, 256, 32), 2)

    def anti_causal(q, k, v):
        keep = torch.ones(256, 256, dtype=torch.bool).triu()
        s = (q @ k.transpose(-2, -1) * 0.125).masked_fill(~keep, float("-inf"))
        return torch.softmax(s, -1) @ v

    c = pallas_ir.compile(anti_causal, qkv)
    ir = c.ir["raise-attention"]
    assert "ta.attention" in ir and "causal" not in ir
    torch.testing.assert_close(c(*qkv), anti_causal(*qkv), rtol=1e-5, atol=1e-5)


def _cut_bias(q, k, v, table):
    t = q.shape[-2]
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125 + table[:t, :t], -1) @ v


@pytest.mark.parametrize(("queries", "raised"), [(100, False), (256, True), (600, True)])
def test_a_bias_cut_from_a_larger_table_is_raised_where_its_blocks_are_legal(
    queries, raised
) -> None:
    """`table[:T, :T]` of a (1024, 1024) table: at T = 100 the only query block, the
    whole 100 rows, is neither the table's whole dim nor 8-aligned, so the chain is
    left as it was (before, the tiler made an illegal block spec); at 256 and 600 the
    blocks (256; 512 with a ragged tail) are legal."""
    torch.manual_seed(10)
    inputs = [*_inputs((1, 2, queries, 32), 2), torch.randn(1024, 1024)]
    c = pallas_ir.compile(_cut_bias, inputs)
    assert ("ta.attention" in c.ir["raise-attention"]) == raised
    torch.testing.assert_close(c(*inputs), _cut_bias(*inputs), rtol=1e-5, atol=1e-5)


def test_sdpa_zeroes_a_fully_masked_row() -> None:
    """`F.scaled_dot_product_attention` gives 0 (torch's `_safe_softmax`) where
    plain softmax gives NaN: `ta.attention ... zero_masked_rows`."""
    torch.manual_seed(4)
    q, k, v = (torch.randn(2, 2, 128, 64) for _ in range(3))
    keep = torch.ones(2, 128, dtype=torch.bool)
    keep[1, :] = False
    keep[0, :100] = False
    c = pallas_ir.compile(_sdpa_padded, [q, k, v, keep])
    assert "zero_masked_rows" in c.ir["raise-attention"]
    want = _sdpa_padded(q, k, v, keep)
    assert (want[1] == 0).all()
    torch.testing.assert_close(c(q, k, v, keep), want, rtol=1e-5, atol=1e-5)


def _heads(x, heads: int):
    """(B, T, H * D), as a projection writes it, as (B, H, T, D)."""
    b, t, _ = x.shape
    return x.view(b, t, heads, -1).transpose(1, 2)


def _rotated(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


def _llama(q, k, v, cos, sin):
    # rotary embeddings on q and k, read from the projections' (B, T, H, D) layout;
    # grouped-query heads (8 of q, 2 of k and v); causal
    q, k, v = _heads(q, 8), _heads(k, 2), _heads(v, 2)
    q, k = _rotated(q, cos, sin), _rotated(k, cos, sin)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def _gpt(q, k, v):
    # nanoGPT's heads of (B, T, C) projections (no bias), with its tril mask
    q, k, v = (_heads(x, 4) for x in (q, k, v))
    t = q.shape[-2]
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    s = (q @ k.transpose(-2, -1) / 8).masked_fill(~causal, float("-inf"))
    return s.softmax(-1) @ v


def _qkv_bias(x, b):
    # q, k and v the heads of one qkv projection, its bias added as they are read
    q, k, v = (x + b).view(2, 256, 3, 4, 64).permute(2, 0, 3, 1, 4)
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v


def _llama_inputs(t: int) -> list[torch.Tensor]:
    angles = torch.outer(torch.arange(t).float(), 0.5 ** torch.arange(16.0))
    angles = torch.cat((angles, angles), -1)
    return [
        torch.randn(2, t, 8 * 32),
        torch.randn(2, t, 2 * 32),
        torch.randn(2, t, 2 * 32),
        angles.cos(),
        angles.sin(),
    ]


COMPUTED_FACTORS = {
    "rotary_gqa": (_llama, lambda: _llama_inputs(256), 2),
    "heads_layout": (_gpt, lambda: [torch.randn(2, 256, 256) for _ in range(3)], 1),
    "qkv_bias": (_qkv_bias, lambda: [torch.randn(512, 768), torch.randn(768)], 1),
}
"""Each form: the function, its inputs, and the kernels computing its factors ahead
(llama's: q, and k with v: the rotary's rotate-half reads the head dim whole, rotated,
so k and v have one loop shape)."""


@pytest.mark.parametrize("form", sorted(COMPUTED_FACTORS))
def test_factors_read_other_than_as_views_are_computed_ahead(form: str) -> None:
    """q, k or v computed (a rotary embedding, a bias) or read in the projections'
    (B, T, H, D) layout: raise-attention computes them into (B, H, T, D) buffers of
    their own, one kernel per loop shape, and the scores never reach HBM. The ta
    reference runs the chain and the raised module to the same result."""
    from pallas_ir.dialects.common import find_forward
    from pallas_ir.reference.inputs import forward_inputs
    from pallas_ir.reference.ta import run_forward

    torch.manual_seed(9)
    fn, make_inputs, ahead = COMPUTED_FACTORS[form]
    inputs = make_inputs()
    k = pallas_ir.compile(fn, inputs)
    raised = k.ir["raise-attention"]
    assert raised.count("ta.attention") == 1
    assert _kernels(k) == 1 + ahead
    torch.testing.assert_close(k(*inputs), fn(*inputs), rtol=1e-5, atol=1e-5)
    before, after = pallas_ir.parse(k.ir["ta"]), pallas_ir.parse(raised)
    arrays = forward_inputs(before, find_forward(before), seed=0)
    for a, b in zip(run_forward(before, *arrays), run_forward(after, *arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", [_plain, _sdpa], ids=["plain", "sdpa"])
def test_a_decode_step_is_one_flash_kernel(fn) -> None:
    """One query against 2048 cached keys: the scores omit the unit query dim, which
    the op's views put back (a (B, H, 1, D) block of q); k and v are read once, in
    key blocks of 2048 (`FLASH_DECODE_KEY_BLOCKS`). (The frontend's copy of the
    (B * H, 1, D) result into (B, H, 1, D) is a second, 2 KiB kernel.)"""
    torch.manual_seed(10)
    q = torch.randn(2, 4, 1, 64)
    k, v = torch.randn(2, 4, 2048, 64), torch.randn(2, 4, 2048, 64)
    c = pallas_ir.compile(fn, [q, k, v])
    assert "sizes [1, 2048, 64, 64]" in c.ir["raise-attention"]
    calls = c.cost_report().calls
    assert [call.grid for call in calls if call.kernel.endswith("_attention")] == [
        (8, 1, 1)
    ]
    torch.testing.assert_close(c(q, k, v), fn(q, k, v), rtol=1e-5, atol=1e-5)


def _decode_after_index_copy(cache, new, position, q):
    cache = cache.index_copy(2, position, new)
    return F.scaled_dot_product_attention(q, cache, cache)


def test_a_factor_whose_copy_costs_more_than_the_scores_stays_a_chain() -> None:
    """A decode step reading its cache through `index_copy`: k and v are computed
    (the new row selected in), and writing them ahead and reading them back would
    move 16 MiB to spare 192 KiB of scores, so the chain is left as it was, with a
    remark."""
    from pallas_ir.diagnostics import DiagnosticEngine, collect_diagnostics

    torch.manual_seed(11)
    inputs = [
        torch.randn(2, 4, 2048, 64),
        torch.randn(2, 4, 1, 64),
        torch.tensor([37]),
        torch.randn(2, 4, 1, 64),
    ]
    engine = DiagnosticEngine()
    with collect_diagnostics(engine):
        c = pallas_ir.compile(_decode_after_index_copy, inputs)
    assert "ta.attention" not in c.ir["raise-attention"]
    assert any(
        "computing k, v ahead would move 16777216 bytes" in d.message
        for d in engine.diagnostics
    )
    torch.testing.assert_close(
        c(*inputs), _decode_after_index_copy(*inputs), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_the_flash_kernels_compile_for_tpu(chip: str) -> None:
    """SDPA with a causal mask and grouped-query heads (k and v blocks indexed by the
    head group), bf16 causal attention, a padding mask (its (B, T) rows loaded per
    key block), llama's rotary attention (its factors computed ahead), and a decode
    step (one query against 8192 keys, in key blocks as wide as VMEM takes)."""
    programs = {
        "sdpa_gqa": pallas_ir.compile(
            _sdpa_gqa, _inputs((1, 4, 1024, 128), 2), chip=chip
        ),
        "bf16_causal": pallas_ir.compile(
            _causal,
            [t.to(torch.bfloat16) for t in _inputs((2, 2, 1024, 64), 2)],
            chip=chip,
        ),
        "ragged_per_head_bias": pallas_ir.compile(
            _biased, [*_inputs((1, 2, 1000, 64), 2), torch.randn(2, 1, 1)], chip=chip
        ),
        "padded": pallas_ir.compile(
            _sdpa_padded,
            [*_inputs((2, 2, 512, 64), 2), torch.ones(2, 512, dtype=torch.bool)],
            chip=chip,
        ),
        "rotary_gqa": pallas_ir.compile(_llama, _llama_inputs(1024), chip=chip),
        "decode": pallas_ir.compile(
            _sdpa,
            _inputs((2, 4, 1, 64), 4)[:1] + _inputs((2, 4, 8192, 64), 4)[1:],
            chip=chip,
        ),
    }
    for k in programs.values():
        assert "ta.attention" in k.ir["raise-attention"]
    assert not aot_failures(programs, chip)


def test_a_fully_masked_row_is_nan_as_in_torch() -> None:
    q, k, v = (torch.randn(1, 1, 128, 64) for _ in range(3))
    keep = torch.ones(1, 128, dtype=torch.bool)
    keep[0, :] = False
    c = pallas_ir.compile(_padded, [q, k, v, keep])
    assert (
        torch.isnan(c(q, k, v, keep)).all() and torch.isnan(_padded(q, k, v, keep)).all()
    )


def test_softmax_of_other_scores_is_not_raised() -> None:
    torch.manual_seed(2)
    qkv = [torch.randn(2, 128, 64) * 0.1 for _ in range(3)]
    k = pallas_ir.compile(_other_scores, qkv)
    assert "ta.attention" not in k.ir["raise-attention"]
    torch.testing.assert_close(k(*qkv), _other_scores(*qkv), rtol=1e-4, atol=1e-5)


def test_the_raised_ta_means_the_chain() -> None:
    """The ta reference runs the module after raise-attention (ta.attention) and the
    frontend's module (the chain) to the same result."""
    from pallas_ir.reference.ta import run_forward

    torch.manual_seed(3)
    qkv = [torch.randn(1, 2, 128, 32) for _ in range(3)]
    k = pallas_ir.compile(_causal, qkv)
    arrays = [t.numpy() for t in qkv]
    extra = [np.arange(128, dtype=np.int32)]  # the frontend's iota input
    before = pallas_ir.parse(k.ir["ta"])
    after = pallas_ir.parse(k.ir["raise-attention"])
    (a,) = run_forward(before, *arrays, *extra)
    (b,) = run_forward(after, *arrays, *extra)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
