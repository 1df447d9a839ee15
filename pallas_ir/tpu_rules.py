"""TPU facts that every level checks against (tested in `shared/notes/pallas-tpu-facts.md`).

One place for the numbers: block-shape legality, chip memory sizes. The `pallas` dialect
verifier rejects blocks that Mosaic would reject; the tiler picks blocks that pass.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

LANES = 128
"""Minor (lane) dim of a TPU vreg tile."""

SUBLANES = 8
"""Second-minor (sublane) dim of a TPU vreg tile, in 32-bit rows (a sublane packs
`rows_per_sublane` rows of narrower data)."""

PIPELINE_BUFFERS = 2
"""VMEM buffers a pipelined block takes: the grid's blocks are double-buffered (the next
step's block is fetched while this step computes)."""

MAX_ELEMENT_BITS = 32
"""TPU kernels have no 64-bit types (Mosaic rejects i64/f64 blocks)."""

SMEM_BYTES = 1 << 20
"""Scalar memory on v5e and v6e: scalar-prefetch operands must fit in it."""

INDEX_CHUNK = 1024
"""Lookups per SMEM chunk of a gather's index buffer streamed from HBM (G3c): a rank-1
block must be a power of two of at least 128 32-bit elements or a multiple of 1024;
1024 int32 (4 KiB, 8 KiB double-buffered) keeps the chunk DMAs few."""


@dataclass(frozen=True)
class Chip:
    name: str
    device_kind: str
    topology: str
    default_scoped_vmem_bytes: int
    vmem_bytes: int
    chip_version: str = ""
    """The `pltpu.ChipVersion` member (`tpu_check` answers `get_tpu_info` with it)."""
    accelerator_type: str = ""
    """`TPU_ACCELERATOR_TYPE` of a one-chip slice (`tpu_check`'s deviceless compile)."""
    chips_per_host_bounds: tuple[int, int, int] = (1, 1, 1)
    hbm_bytes_per_second: float = 0.0
    """HBM bandwidth (the tiler's roofline; 0 on the chips it does not plan for)."""
    mxu_bf16_flops: float = 0.0
    """Peak MXU rate on bf16 operands, in FLOP/s (the tiler's roofline)."""

    def mxu_flops(self, bits: int, is_float: bool) -> float:
        """Peak MXU rate on operands of `bits`: 8-bit integers run at twice the bf16
        rate, 32-bit floats at `F32_MXU_PASSES` passes of it (the f32 product a
        `precision <highest>` dot asks for)."""
        if bits <= 8 and not is_float:
            return 2 * self.mxu_bf16_flops
        if bits >= 32 and is_float:
            return self.mxu_bf16_flops / F32_MXU_PASSES
        return self.mxu_bf16_flops


F32_MXU_PASSES = 6
"""bf16 MXU passes of an f32 product at `precision=HIGHEST` (three bf16 parts of each
factor, six cross products kept)."""

GRID_STEP_SECONDS = 0.35e-6
"""The fixed cost of one grid step of a `pallas_call` (the Pallas TPU pipelining docs'
figure), which makes many small blocks slower than a few large ones."""

# A split contraction adds its (m, n) partial product into the accumulator every
# step; k parts of at least this keep that next to the MXU's work on the part (the
# tile policy's splits; fuse-epilogues keeps a reduction shorter than two parts whole).
MIN_K_PART = 512

CHIPS: dict[str, Chip] = {
    "v5e": Chip(
        "v5e",
        "TPU v5 lite",
        "v5e:1x1",
        16 << 20,
        128 << 20,
        "TPU_V5E",
        "v5litepod-1",
        hbm_bytes_per_second=819e9,
        mxu_bf16_flops=197e12,
    ),
    "v6e": Chip(
        "v6e",
        "TPU v6 lite",
        "v6e:1x1",
        32 << 20,
        128 << 20,
        "TPU_V6E",
        "v6e-1",
        hbm_bytes_per_second=1640e9,
        mxu_bf16_flops=918e12,
    ),
}
"""The chips the compiler targets (bandwidth and MXU rate: the published per-chip
figures)."""

CHECK_ONLY_CHIPS: dict[str, Chip] = {
    "v4": Chip("v4", "TPU v4", "v4:1x1x1", 16 << 20, 16 << 20, "TPU_V4", "v4-8"),
    "v5p": Chip("v5p", "TPU v5", "v5p:1x1x1", 16 << 20, 64 << 20, "TPU_V5P", "v5p-8"),
    "v7x": Chip("v7x", "TPU7x", "tpu7x:1x1x1", 32 << 20, 64 << 20, "TPU_7X", "tpu7x-2"),
}
"""Chips `tpu_check` also compiles emitted kernels for (the facts' sweep: default scoped
VMEM 16 MiB on v4/v5p, 32 MiB on 7x; physical 16, 64 and 64 MiB)."""

ALL_CHIPS: dict[str, Chip] = CHIPS | CHECK_ONLY_CHIPS


def min_sublanes(bitwidth: int) -> int:
    """Rows a block's second-minor dim must be a multiple of (unless it is the whole dim).

    libtpu rejects 8-bit blocks of fewer than 32 rows (E2002); 16- and 32-bit types
    compile with 8 (16-bit prefers 16, a tiler's choice, not a legality rule).
    """
    return 32 if bitwidth <= 8 else 8


def rows_per_sublane(bitwidth: int) -> int:
    """Rows of a narrow type that pack into one 32-bit sublane (2 for 16-bit, 4 for 8-bit
    data): a DMA or a dynamic one-row access cannot take fewer."""
    return max(1, 32 // max(bitwidth, 1))


def vmem_block_bytes(shape: Sequence[int], bitwidth: int) -> int:
    """THE VMEM footprint of one buffer holding a block of `shape` (the tiler's budget, the
    cost model's VMEM count and so `vmem_limit_bytes` all use it). VMEM holds the last two
    dims in tiles of (`SUBLANES` sublanes of packed rows, `LANES`): the last dim pads to
    whole 128 lanes and the one before to whole tiles of rows (8 of 32-bit data, 16 of
    16-bit, 32 of 8-bit); a rank-1 block pads to 128 lanes. A (128, 8192, 2) bf16 block
    takes 64x its 4 MiB (measured: the TPU compiler asks for 256 MiB). Mosaic may give a
    block of fewer rows a shorter tile, so for those this is an upper bound."""
    sizes = list(shape)
    if sizes:
        sizes[-1] = -(-sizes[-1] // LANES) * LANES
    if len(sizes) >= 2:
        rows = SUBLANES * rows_per_sublane(bitwidth)
        sizes[-2] = -(-sizes[-2] // rows) * rows
    return math.prod(sizes) * bitwidth // 8


BODY_VALUE_ELEMENTS = 1 << 21
"""The most elements a tiled kernel body's largest value should have. Mosaic unrolls
each vector op into vreg ops, so a grid step's code, and the time to compile it, grows
with its values, and a body whose values are larger than its blocks (an outer product:
a masked cumsum's (rows, n, n), topk's ranks) can take minutes. Measured (deviceless v5e
compile, a masked cumsum along 512): bodies of 8, 32, 128 and 256 x 512 x 512 elements
compile in 2.1, 3.5, 10.7 and 21.0 s; topk's ranks at 512 x 512 x 512 time out after
600 s. The tiler shrinks blocks until the body fits this (block-sized bodies, at most
2 * 1 MiB, always do)."""

RELAYOUT_LIVE_VALUES = 1
"""Whole copies VMEM holds of a body value that a relayout made larger than its block
(see `vmem_relayout_bytes`)."""
RELAYOUT_DIVISION_LIVE_VALUES = 6
"""The same when the body also divides such a value by integers (`vmem_relayout_bytes`)."""


def vmem_relayout_bytes(held: Iterable[tuple[Sequence[int], int]], divides: bool) -> int:
    """The VMEM a kernel body takes beside its blocks (`vmem_block_bytes` each), which
    the tiler's budget and the cost model's VMEM count both add. `held` are the (shape,
    bits) of the body's values that a relayout makes larger, padded to VMEM tiles, than
    the block they come from (a transpose putting a short dim on the lanes), and the
    same-shaped element-wise values computed from them; `divides`: an integer division
    or remainder computes one. Such a value does not fit the vregs and Mosaic keeps it
    whole in VMEM: the largest of them counts `RELAYOUT_LIVE_VALUES` times, or
    `RELAYOUT_DIVISION_LIVE_VALUES` times when divided (the division's emulation keeps
    several temporaries of it). Measured (deviceless compile, the scoped VMEM Mosaic
    asks for, grid (1,)): a (16, 128, 128) int32 block transposed to (128, 128, 16) (8 MiB
    in VMEM tiles), floor-divided by a broadcast (128, 1, 1) and summed over its last
    dim: 16.46 MiB on v5e, 49.03 MiB on v6e; without the division 9.47 / 8.92 MiB; with
    the (128, 128, 16) block loaded as is (no relayout, the block already 8 MiB) 15.41 /
    15.57 MiB; a (256, 512) int32 floor-divide or add or an f32 softmax 1.3-1.5 MiB, no
    more than their blocks. So element-wise, reduction and matmul bodies count 0."""
    largest = max((vmem_block_bytes(s, bits) for s, bits in held), default=0)
    live = RELAYOUT_DIVISION_LIVE_VALUES if divides else RELAYOUT_LIVE_VALUES
    return live * largest


F32_PRODUCT_LHS_COPIES = 4
"""VMEM copies of the left operand (at its f32 size) that an f32 `precision=HIGHEST`
dot keeps while it splits the operands into bfloat16 parts (`dot_vmem_bytes`)."""


def dot_vmem_bytes(m: int, n: int, k: int, bits: int, f32_product: bool) -> int:
    """VMEM a body's (m, k) x (k, n) dot takes beside the blocks: its (m, n) f32 result,
    and its left operand once (or `F32_PRODUCT_LHS_COPIES` times at 32 bits for an f32
    product). An upper bound fitted to the scoped VMEM the TPU compiler asks for on v5e
    (deviceless compile, `o[...] = dot(x[...], w[...])` and the split form
    `o[...] += dot(...)`, f32 out; MiB beside the double-buffered blocks): f32 at
    HIGHEST, (m, n, k) = (256, 256, 256) 1.10, (512, 512, 512) 4.75, (512, 512, 2048)
    16.75, (1024, 1024, 256) 7.50, (1024, 1024, 512) 11.52, (512, 1024, 1024) 9.75;
    bf16, the same shapes, 0.05, 1.05, 2.72, 3.82, 4.30, 2.62."""
    lhs_bytes = m * k * (F32_PRODUCT_LHS_COPIES * 4 if f32_product else bits // 8)
    return vmem_block_bytes([m, n], 32) + lhs_bytes


FLASH_ATTENTION_BLOCKS = (512, 256, 128)
"""The query and key block sizes of a flash-attention kernel, largest first. An extent
below the smallest is one whole block."""

FLASH_DECODE_KEY_BLOCKS = (8192, 4096, 2048, 1024, *FLASH_ATTENTION_BLOCKS)
"""The key block sizes when the queries are fewer than a sublane tile (a decode step's
one): a step is then a matrix-vector product whose scores are (bq, bk), so wide blocks
still fit VMEM (`flash_attention_step_bytes` decides), and fewer grid steps
(`GRID_STEP_SECONDS` each) dominate. Measured on a v5e (f32, 8 heads of D = 64 over 8192
keys, `benchmarks/on_tpu.py --timings decode`): blocks of 512 (128 steps) took 138.5 us,
blocks of 4096 (16 steps) 87.5, XLA 86.5."""


def flash_attention_step_bytes(bq: int, bk: int, d: int, e: int, bits: int) -> int:
    """VMEM of one flash-attention grid step on `bits`-bit data with (bq, bk) query and
    key blocks, q and k rows of d and v rows of e: the double-buffered q, k, v and out
    blocks, the running max, sum and product (f32), the scores and their exponentials,
    and both dots."""
    blocks = sum(
        vmem_block_bytes(shape, bits) for shape in ([bq, d], [bk, d], [bk, e], [bq, e])
    )
    scratch = 2 * vmem_block_bytes([bq, 1], 32) + vmem_block_bytes([bq, e], 32)
    values = 3 * vmem_block_bytes([bq, bk], 32)
    f32 = bits == 32
    dots = dot_vmem_bytes(bq, bk, d, bits, f32) + dot_vmem_bytes(bq, e, bk, 32, f32)
    return PIPELINE_BUFFERS * blocks + scratch + values + dots


def flash_attention_block_choices(
    extent: int, blocks: Sequence[int] = FLASH_ATTENTION_BLOCKS
) -> list[int]:
    """Query or key block sizes for an extent, in the order tried: the `blocks`
    (`FLASH_ATTENTION_BLOCKS`, or `FLASH_DECODE_KEY_BLOCKS`) that divide it, then the
    whole extent when it is no larger than the largest, then the ones that leave a
    ragged last block (masked)."""
    dividing = [b for b in blocks if b <= extent and extent % b == 0]
    whole = [extent] if extent <= blocks[0] else []
    ragged = [b for b in blocks if b < extent and extent % b]
    return list(dict.fromkeys([*dividing, *whole, *ragged]))


def vmem_limit(footprint: int, chip: Chip) -> int | None:
    """The `vmem_limit_bytes` a call needs on `chip` when its buffers (`vmem_block_bytes`
    each, pipelined blocks `PIPELINE_BUFFERS` times) take `footprint` bytes: None within
    the default scoped VMEM, else twice the footprint (headroom for the compiler's own
    scratch), at most the chip's physical VMEM (a footprint over that does not fit)."""
    if footprint <= chip.default_scoped_vmem_bytes:
        return None
    return min(chip.vmem_bytes, 2 * footprint)


def constrained_dims(rank: int) -> list[int]:
    """The dims of a rank-`rank` block the block rule (`block_dim_legal`) constrains, minor
    first: the lane dim and the sublane dim (the one dim of a rank-1 block). Leading dims
    take any size."""
    return [k for k in (rank - 1, rank - 2) if k >= 0]


def strided_lanes_readable(start: int, count: int, stride: int, lanes: int) -> bool:
    """Whether a kernel can read `count` lanes from `start` every `stride` lanes of a
    `lanes`-wide block: no TPU load or DMA strides lanes, so it reads the whole
    `count * stride` lanes, as (count, stride) groups, and keeps one column; the read
    must span the block's lanes and start in the first group."""
    return count * stride == lanes and 0 <= start < stride


def block_dim_legal(
    size: int, whole: int, dim: int, rank: int, bitwidth: int, rows: int = 0
) -> bool:
    """THE block rule, per dim: whether a block of `size` elements along dim `dim` of a
    rank-`rank` array whose dim is `whole` long can be DMA'd on TPU. The whole dim
    always can; otherwise a rank-1 block must be a multiple of 1024 or a power of two of
    at least 128 * 32 / bitwidth, a lane (last) dim a multiple of 128, and a sublane
    (second-minor) dim a multiple of `rows` (default `min_sublanes(bitwidth)`; a tiler
    may ask for more, never less). Leading dims take any size."""
    if size == whole or dim not in constrained_dims(rank):
        return True
    if rank == 1:
        least = LANES * 32 // max(bitwidth, 1)
        return size % 1024 == 0 or (size >= least and size & (size - 1) == 0)
    if dim == rank - 1:
        return size % LANES == 0
    return size % max(rows, min_sublanes(bitwidth)) == 0


def block_shape_error(
    block: Sequence[int | None], array: Sequence[int], bitwidth: int
) -> str | None:
    """Why a block shape cannot be DMA'd on TPU, or None if it can.

    `None` in `block` is a squeezed dim (size 1 in the array's window).
    """
    if len(block) != len(array):
        return f"block rank {len(block)} differs from the array rank {len(array)}"
    sizes = [1 if b is None else b for b in block]
    for k, (b, n) in enumerate(zip(sizes, array)):
        if b <= 0:
            return f"block dim {k} is {b}; block dims must be positive"
        if b > n:
            return f"block dim {k} is {b} but the array dim is only {n}"
    if len(array) == 1:
        (b,), (n,) = sizes, array
        tile = LANES * 32 // max(bitwidth, 1)
        if block_dim_legal(b, n, 0, 1, bitwidth):
            return None
        return (
            f"a rank-1 block must equal the array dim ({n}), be a multiple of 1024, "
            f"or be a power of 2 of at least {tile}; got {b}"
        )
    rank = len(array)
    for k in reversed(constrained_dims(rank)):
        multiple = LANES if k == rank - 1 else min_sublanes(bitwidth)
        b, n = sizes[k], array[k]
        if not block_dim_legal(b, n, k, rank, bitwidth):
            what = "squeezed" if block[k] is None else str(b)
            return (
                f"block dim {k} ({what}) of a {bitwidth}-bit array must be a multiple "
                f"of {multiple} or equal the array dim {n}"
            )
    return None


def reshape_is_free(src: Sequence[int], dst: Sequence[int], bitwidth: int) -> bool:
    """Whether XLA on TPU reshapes `src` to `dst` without moving data (a bitcast).

    Arrays are laid out in (rows, 128) tiles of their last two dims (rows: 8 for 32-bit
    data, 16 for 16-bit, 32 for 8-bit), in row-major order of the leading dims. Keeping
    the last dim and regrouping the rows is a bitcast when both second-minor dims are
    whole tiles: every row keeps its tile. Measured with deviceless v5e compiles:
    (8, 1000, 128) -> (8000, 128) is a `bitcast`; (100, 50, 256) -> (5000, 256) and
    (1000, 256) -> (1000, 1, 256) are copies.
    """
    if tuple(src[-2:]) == tuple(dst[-2:]):
        return True
    if len(src) < 2 or len(dst) < 2 or src[-1] != dst[-1]:
        return False
    rows = {8: 32, 16: 16}.get(bitwidth, 8)
    return (
        math.prod(src[:-1]) == math.prod(dst[:-1])
        and src[-2] % rows == 0
        and dst[-2] % rows == 0
    )
