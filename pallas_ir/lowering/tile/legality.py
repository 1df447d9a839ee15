"""Block legality for the tiler: which tile sizes of a loop dim give blocks the TPU
accepts (the block rule itself is `tpu_rules.block_dim_legal`, shared with the pallas
verifier) and that keep the access's meaning (aligned offsets, no store past its part of
a buffer, strided walks of host storage); and how much VMEM a block takes."""

from __future__ import annotations

from collections.abc import Sequence

from pallas_ir.lowering.tile.access import Access
from pallas_ir.tpu_rules import (
    LANES,
    PIPELINE_BUFFERS,
    block_dim_legal,
    min_sublanes,
    strided_lanes_readable,
    vmem_block_bytes,
)


def block_rows(bits: int) -> int:
    """The rows a tiled second-minor dim takes: the TPU minimum (8, 32 for 8-bit data),
    16 for 16-bit data (a whole packed tile, the tiler's choice)."""
    return max(min_sublanes(bits), 16 if bits == 16 else 0)


def rows_by_dma(bits: int) -> bool:
    """Whether gathered rows of this width come by row DMA. Rows of 16-bit data pack
    two to a 32-bit sublane, which a DMA cannot split: each lookup copies the pair (2x
    the bytes). Of 8-bit data four rows share a sublane: 4x the bytes, more than an XLA
    gather's extra pass (written and read again: 3x), so those go to XLA."""
    return bits >= 16


def legal(access: Access, b: int, tile: int, extent: int) -> bool:
    """Whether walking buffer dim `b` with tiles of `tile` (over `extent` elements) gives
    blocks the TPU accepts and that keep the meaning."""
    n = access.shape[b]
    _, c = access.dims[b]
    rank = len(access.shape)
    step = access.step(b)
    if access.rotation(b):
        return tile >= extent == n  # rolled in the kernel: the whole dim in one block
    if step > 1:
        # A strided walk (a load of host storage): one row per step on a leading dim
        # moves exactly what is used (the index map steps); rows of a rank-2 array are
        # copied one by one by row DMAs (tl-to-pallas), so any start will do; lanes are
        # read whole, `tile * step` of them, and compacted in the kernel.
        if b < rank - 2:
            return tile == 1
        if b == rank - 1:
            if access.sublane_strided:  # whole rows by row DMA, then compacted
                return tile >= extent and extent * step == n and c < step
            t = min(tile, extent)
            lanes = t * step  # the block's lanes, read whole
            return (
                (t % LANES == 0 or tile >= extent)
                and (lanes % LANES == 0 or lanes == n)
                and strided_lanes_readable(c % lanes, t, step, lanes)
                and lanes <= n
            )
        return tile % 8 == 0 or tile >= extent
    if b == rank - 1 and access.sublane_strided:
        return tile >= extent and n == extent  # row DMAs copy whole rows
    if b < rank - 2 and access.sublane_strided:
        return tile == 1  # row DMAs of one leading index per step
    if tile >= extent:
        # One tile at a constant offset (tl-to-pallas widens it to the whole dim if it
        # must); a store must then cover the whole dim, or it would write the rest of
        # the widened block.
        return not access.is_store or (c == 0 and extent == n)
    if c % tile:
        return False  # offsets `g * tile + c` would not be block-aligned
    if access.is_store and extent % tile and c + extent != n:
        return False  # the last tile would write past the loop's part of the buffer
    return block_dim_legal(tile, n, b, rank, access.bits, block_rows(access.bits))


def candidates(extent: int) -> list[int]:
    sizes = {extent}
    k = 1
    while k < extent:
        sizes.add(k)
        k *= 2
    sizes.update(range(LANES, extent, LANES))
    return sorted(sizes)


def block_vmem_bytes(a: Access, tiles: Sequence[int], extents: Sequence[int]) -> int:
    """VMEM an access's block takes, double-buffered (`tpu_rules.vmem_block_bytes`): its
    tile, widened to the whole dim where the tile is the whole extent or a constant index
    on one of the last two dims."""
    sizes = []
    for b, (l, _) in enumerate(a.dims):
        if l is None:
            sizes.append(1 if b < len(a.shape) - 2 else a.shape[b])
        else:
            sizes.append(a.shape[b] if tiles[l] >= extents[l] else tiles[l] * a.step(b))
    return PIPELINE_BUFFERS * vmem_block_bytes(sizes, a.bits)
