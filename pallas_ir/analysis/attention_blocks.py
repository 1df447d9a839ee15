"""Which query and key blocks a `ta.attention`'s flash-attention kernel can take.

One rule for raise-attention (which leaves a chain as it was when no blocks would do)
and the tiler (which picks among them): a pair (bq, bk) is a candidate when it is one
of `tpu_rules.flash_attention_block_choices` for each extent, every access (q, k, v,
out and the score region's loads, those through the unit-dim views the tiler reads
them by) has a legal block with it, and the scores' lane dim is whole or 128-aligned.
The tiler takes the first candidate, in that order, whose step fits its VMEM budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, BlockArgument
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr

from pallas_ir.dialects import tensor_access as ta
from pallas_ir.tpu_rules import (
    CHIPS,
    FLASH_ATTENTION_BLOCKS,
    FLASH_DECODE_KEY_BLOCKS,
    LANES,
    SUBLANES,
    block_dim_legal,
    flash_attention_block_choices,
    flash_attention_step_bytes,
)


def _bits(t: Attribute) -> int:
    return getattr(t, "bitwidth", 32)


def unit_dims_view(
    shape: Sequence[int], results: Sequence[AffineExpr], tiled: Sequence[bool]
) -> tuple[list[int], list[AffineExpr]] | None:
    """The view (shape and map results) a score load reads its buffer through when it
    takes one element of a minor dim (a batch dim or a constant there, `tiled` false):
    `(..., A, B)` read at a row of A as `(..., A, 1, B)`, `(..., H)` at one element as
    `(..., H, 1, 1)`. A block of one row of A, or one element of H, is not legal (the
    block rule); a block of unit dims is. None when the load needs no view."""
    zero = AffineConstantExpr(0)
    if not shape:
        return None  # a scalar: its block is the whole buffer
    if shape[-1] != 1 and not tiled[-1]:
        return [*shape, 1, 1], [*results, zero, zero]
    if len(shape) >= 2 and shape[-2] != 1 and not tiled[-2]:
        return [*shape[:-1], 1, shape[-1]], [*results[:-1], zero, results[-1]]
    return None


def score_load_tiling(op: ta.AttentionOp, load: ta.LoadOp) -> list[str | None]:
    """For each map result of a score-region load, the domain dim it walks ('i', 'j',
    'b' for a batch dim) or None (a constant)."""
    names = "b" * len(op.batch_extents) + "ij"
    found: list[str | None] = []
    for expr in load.map.data.results:
        arg = load.dims[expr.position] if isinstance(expr, AffineDimExpr) else None
        found.append(names[arg.index] if isinstance(arg, BlockArgument) else None)
    return found


def _accesses(op: ta.AttentionOp) -> list[tuple[list[int], list[str | None], int]]:
    """(block-read shape, the domain dim of each of its dims, bits) of every access."""
    found: list[tuple[list[int], list[str | None], int]] = []
    names = op.dim_names()
    for buffer, map in op.accesses().values():
        t = buffer.type
        assert isinstance(t, MemRefType)
        walked = [
            names[e.position] if isinstance(e, AffineDimExpr) else None
            for e in map.data.results
        ]
        found.append((list(t.get_shape()), walked, _bits(t.element_type)))
    for load in [o for o in op.score.block.ops if isinstance(o, ta.LoadOp)]:
        t = load.buffer.type
        assert isinstance(t, MemRefType)
        walked = score_load_tiling(op, load)
        shape = list(t.get_shape())
        view = unit_dims_view(
            shape, list(load.map.data.results), [w in ("i", "j") for w in walked]
        )
        if view is not None:
            if len(view[0]) == len(shape) + 2:  # two unit dims after the last
                walked = [*walked, None, None]
            else:  # a unit dim before the last
                walked = [*walked[:-1], None, walked[-1]]
            shape = view[0]
        found.append((shape, walked, _bits(t.element_type)))
    return found


def _legal(
    accesses: list[tuple[list[int], list[str | None], int]], dim: str, size: int
) -> bool:
    return all(
        block_dim_legal(size, n, k, len(shape), bits)
        for shape, walked, bits in accesses
        for k, n in enumerate(shape)
        if walked[k] == dim
    )


def block_candidates(op: ta.AttentionOp) -> tuple[list[int], list[int]]:
    """The query and key block sizes, in the order tried, that give every access a
    legal block (key blocks also whole or 128-aligned: the scores' lanes)."""
    tq, tk = op.sizes.get_values()[:2]
    accesses = _accesses(op)
    queries = [b for b in flash_attention_block_choices(tq) if _legal(accesses, "i", b)]
    wide = FLASH_DECODE_KEY_BLOCKS if tq < SUBLANES else FLASH_ATTENTION_BLOCKS
    keys = [
        b
        for b in flash_attention_block_choices(tk, wide)
        if (b == tk or b % LANES == 0) and _legal(accesses, "j", b)
    ]
    return queries, keys


def attention_blocks(op: ta.AttentionOp, budget: int) -> tuple[int, int] | None:
    """(bq, bk): the first candidates, the largest query block first, whose step fits
    `budget`."""
    _, _, d, e = op.sizes.get_values()
    bits = _bits(op.out.type.element_type)  # type: ignore[attr-defined]
    queries, keys = block_candidates(op)
    for bq in queries:
        for bk in keys:
            if flash_attention_step_bytes(bq, bk, d, e, bits) <= budget:
                return bq, bk
    return None


def attention_blocks_error(op: ta.AttentionOp) -> str | None:
    """Why no flash-attention blocks would do on some chip, or None."""
    queries, keys = block_candidates(op)
    if not queries or not keys:
        which = "query" if not queries else "key"
        return f"no {which} block is legal for every access of the attention"
    least = min(c.default_scoped_vmem_bytes for c in CHIPS.values())
    if attention_blocks(op, least) is None:
        d, e = op.sizes.get_values()[2:]
        return (
            f"a flash-attention step of rows of {d} and {e} does not fit the VMEM of "
            "every chip"
        )
    return None
