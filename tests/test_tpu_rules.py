"""The VMEM footprint rule (`tpu_rules.vmem_block_bytes`, `vmem_limit`) against counts
worked out by hand from the TPU's VMEM tiling, and against the TPU compiler."""

from __future__ import annotations

import re

import pytest

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.tpu_check import aot_compile_many
from pallas_ir.tpu_rules import (
    CHIPS,
    constrained_dims,
    strided_lanes_readable,
    vmem_block_bytes,
    vmem_limit,
)

MIB = 1 << 20


@pytest.mark.parametrize(
    ("shape", "bits", "expected"),
    [
        # f32 (8, 128): exactly one (8 sublanes, 128 lanes) tile: 8 * 128 * 4 B = 4096.
        ((8, 128), 32, 4096),
        # f32 (3, 100): rows 3 -> 8, lanes 100 -> 128: 8 * 128 * 4 = 4096 (not 1200).
        ((3, 100), 32, 4096),
        # bf16 (5, 128): a sublane packs 2 rows, so a tile is 16 rows: rows 5 -> 16,
        # 16 * 128 * 2 B = 4096 (not 1280).
        ((5, 128), 16, 4096),
        # int8 (1, 1): a sublane packs 4 rows, a tile is 32 rows: 32 * 128 * 1 B = 4096.
        ((1, 1), 8, 4096),
        # f32 (2, 10, 200): the leading dim is not padded; rows 10 -> 16 (two tiles),
        # lanes 200 -> 256: 2 * 16 * 256 * 4 = 32768 (not 16000).
        ((2, 10, 200), 32, 32768),
        # bf16 (4, 17, 130): rows 17 -> 32, lanes 130 -> 256: 4 * 32 * 256 * 2 = 65536.
        ((4, 17, 130), 16, 65536),
        # f32 rank 1 (100,): lanes 100 -> 128: 128 * 4 = 512.
        ((100,), 32, 512),
        # bf16 (128, 8192, 2): lanes 2 -> 128, 64x the 4 MiB of data: 256 MiB (what the
        # TPU compiler asks for such a block, measured).
        ((128, 8192, 2), 16, 256 * MIB),
    ],
)
def test_vmem_block_bytes_pads_to_whole_tiles(
    shape: tuple[int, ...], bits: int, expected: int
) -> None:
    assert vmem_block_bytes(shape, bits) == expected


def test_vmem_limit_only_over_the_default_and_at_most_physical() -> None:
    v5e, v6e = CHIPS["v5e"], CHIPS["v6e"]
    # Within the default scoped VMEM (16 MiB on v5e, 32 MiB on v6e): no limit.
    assert vmem_limit(16 * MIB, v5e) is None
    assert vmem_limit(32 * MIB, v6e) is None
    # Over it: twice the footprint, capped at the 128 MiB of physical VMEM.
    assert vmem_limit(16 * MIB + 1, v5e) == 32 * MIB + 2
    assert vmem_limit(40 * MIB, v6e) == 80 * MIB
    assert vmem_limit(100 * MIB, v5e) == 128 * MIB


COPY = """
tl.kernel @copy(%x: memref<256x512x2xf32> {role = "in"}, %out: memref<256x512x2xf32> {role = "out"}) {
  tl.grid [2] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 128, 0, 0)>](%i) : memref<256x512x2xf32> -> tensor<128x512x2xf32>
    tl.store %v, %out[affine_map<(d0) -> (d0 * 128, 0, 0)>](%i) : tensor<128x512x2xf32>, memref<256x512x2xf32>
  }
}
func.func @forward(%x: memref<256x512x2xf32>) -> memref<256x512x2xf32> {
  %out = ta.alloc : memref<256x512x2xf32>
  ta.launch @copy(%x, %out) : memref<256x512x2xf32>, memref<256x512x2xf32>
  func.return %out : memref<256x512x2xf32>
}
"""


def test_padded_footprint_is_what_the_tpu_compiler_needs() -> None:
    """(128, 512, 2) f32 blocks hold 512 KiB of data, 2 MiB double-buffered in and out:
    well within v5e's 16 MiB of scoped VMEM if unpadded. Padded to 128 lanes they take
    32 MiB each, 128 MiB in all: the TPU compiler refuses the kernel at the default limit
    and compiles it with the limit tl-to-pallas sets from the padded count."""
    module = pallas_ir.parse(COPY)
    pallas_ir.run_passes(module, "tl-to-pallas,pallas-legalize-mosaic")
    (call,) = pallas_ir.cost_report(module).calls
    assert call.vmem_bytes == 2 * 2 * 128 * 512 * 128 * 4
    source = pallas_ir.emit_python(module)
    assert "vmem_limit_bytes=134217728" in source
    unlimited = re.sub(r", vmem_limit_bytes=\d+", "", source)
    specs = arg_specs(module)
    limited, default = aot_compile_many([(source, specs), (unlimited, specs)], chip="v5e")
    assert limited.ok, limited.message
    assert not default.ok and "E1001" in default.message


def test_block_rule_constrains_the_two_minor_dims() -> None:
    # Lane dim first, then sublane dim; a rank-1 block has only its lane dim.
    assert constrained_dims(1) == [0]
    assert constrained_dims(2) == [1, 0]
    assert constrained_dims(4) == [3, 2]


def test_strided_lanes_read_whole_groups() -> None:
    # Every 2nd lane of 256 from lane 0 or 1: 128 groups of 2 lanes span the block.
    assert strided_lanes_readable(0, 128, 2, 256)
    assert strided_lanes_readable(1, 128, 2, 256)
    # From lane 2 the last lane kept (256) is past the block: not one column of groups.
    assert not strided_lanes_readable(2, 128, 2, 256)
    # 64 lanes every 2nd: 128 of the 256 lanes; the read would not span the block.
    assert not strided_lanes_readable(0, 64, 2, 256)
