"""The one registry of pallas-ir's dialects, passes and targets.

Factories import lazily so that `pallas-opt --help` and `xdsl-opt` stay fast. Both
`pallas-opt` and the `xdsl.universe` entry point (plain `xdsl-opt`) read from here.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.utils.target import Target


def _tensor_access() -> Dialect:
    from pallas_ir.dialects.tensor_access import TensorAccess

    return TensorAccess


def _tiled_loop() -> Dialect:
    from pallas_ir.dialects.tiled_loop import TiledLoop

    return TiledLoop


def _pallas() -> Dialect:
    from pallas_ir.dialects.pallas import Pallas

    return Pallas


def _xla() -> Dialect:
    from pallas_ir.dialects.xla import Xla

    return Xla


def _special() -> Dialect:
    from pallas_ir.dialects.special import Special

    return Special


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    return {
        "ta": _tensor_access,
        "tl": _tiled_loop,
        "pallas": _pallas,
        "xla": _xla,
        "special": _special,
    }


def _share_identical_kernels() -> type[ModulePass]:
    from pallas_ir.passes.share_identical_kernels import ShareIdenticalKernelsPass

    return ShareIdenticalKernelsPass


def _raise_attention() -> type[ModulePass]:
    from pallas_ir.passes.raise_attention import RaiseAttentionPass

    return RaiseAttentionPass


def _fold_iota_indices() -> type[ModulePass]:
    from pallas_ir.passes.fold_iota_indices import FoldIotaIndicesPass

    return FoldIotaIndicesPass


def _fuse_siblings() -> type[ModulePass]:
    from pallas_ir.passes.fuse_siblings import FuseSiblingsPass

    return FuseSiblingsPass


def _indirect_load_to_one_hot_sum() -> type[ModulePass]:
    from pallas_ir.passes.indirect_load_to_one_hot_sum import IndirectLoadToOneHotSumPass

    return IndirectLoadToOneHotSumPass


def _fuse_epilogues() -> type[ModulePass]:
    from pallas_ir.passes.fuse_epilogues import FuseEpiloguesPass

    return FuseEpiloguesPass


def _split_kernel_loops() -> type[ModulePass]:
    from pallas_ir.passes.split_kernel_loops import SplitKernelLoopsPass

    return SplitKernelLoopsPass


def _stride_to_reshape() -> type[ModulePass]:
    from pallas_ir.passes.stride_to_reshape import StrideToReshapePass

    return StrideToReshapePass


def _canonicalize_permutation() -> type[ModulePass]:
    from pallas_ir.passes.canonicalize_permutation import CanonicalizePermutationPass

    return CanonicalizePermutationPass


def _indirect_load_to_scalar_prefetch() -> type[ModulePass]:
    from pallas_ir.passes.indirect_load_to_scalar_prefetch import (
        IndirectLoadToScalarPrefetchPass,
    )

    return IndirectLoadToScalarPrefetchPass


def _indirect_store_to_row_dma() -> type[ModulePass]:
    from pallas_ir.passes.indirect_store_to_row_dma import IndirectStoreToRowDmaPass

    return IndirectStoreToRowDmaPass


def _tile() -> type[ModulePass]:
    from pallas_ir.lowering.tile import TilePass

    return TilePass


def _tile_policy() -> type[ModulePass]:
    from pallas_ir.lowering.tile import TilePolicyPass

    return TilePolicyPass


def _xla_outline() -> type[ModulePass]:
    from pallas_ir.lowering.tile.xla_outline import XlaOutlinePass

    return XlaOutlinePass


def _tl_to_pallas() -> type[ModulePass]:
    from pallas_ir.lowering.tl_to_pallas import TlToPallasPass

    return TlToPallasPass


def _legalize_mosaic() -> type[ModulePass]:
    from pallas_ir.lowering.legalize_mosaic import LegalizeMosaicPass

    return LegalizeMosaicPass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """pallas-ir's own passes: ta → ta rewrites (`passes/`) and level-to-level
    conversions (`lowering/`), in pipeline order."""
    return {
        "fold-iota-indices": _fold_iota_indices,
        "split-kernel-loops": _split_kernel_loops,
        "indirect-load-to-one-hot-sum": _indirect_load_to_one_hot_sum,
        "fuse-epilogues": _fuse_epilogues,
        "fuse-siblings": _fuse_siblings,
        "stride-to-reshape": _stride_to_reshape,
        "canonicalize-permutation": _canonicalize_permutation,
        "indirect-load-to-scalar-prefetch": _indirect_load_to_scalar_prefetch,
        "indirect-store-to-row-dma": _indirect_store_to_row_dma,
        "raise-attention": _raise_attention,
        "share-identical-kernels": _share_identical_kernels,
        "tile-policy": _tile_policy,
        "xla-outline": _xla_outline,
        "tile": _tile,
        "tl-to-pallas": _tl_to_pallas,
        "pallas-legalize-mosaic": _legalize_mosaic,
    }


TA_PASSES = (
    "fold-iota-indices,split-kernel-loops,indirect-load-to-one-hot-sum,fuse-epilogues,"
    "fuse-siblings,stride-to-reshape,"
    "canonicalize-permutation,indirect-load-to-scalar-prefetch,indirect-store-to-row-dma,"
    "raise-attention,fuse-epilogues{attention-raised=true},share-identical-kernels"
)
"""The ta → ta rewrites, in pipeline order."""


def lowering_pipeline(chip: str = "v5e") -> str:
    """From rewritten ta to printable pallas: the tile policy, XLA outlining, tiling,
    conversion to pallas and Mosaic legalization."""
    return (
        f"tile-policy{{chip={chip}}},xla-outline{{chip={chip}}},"
        f"tile{{chip={chip}}},tl-to-pallas{{chip={chip}}},pallas-legalize-mosaic"
    )


def default_pipeline(chip: str = "v5e") -> str:
    """The whole lowering, from ta to pallas."""
    return f"{TA_PASSES},{lowering_pipeline(chip)}"


def _python_target() -> type[Target]:
    from pallas_ir.lowering.emit_python import PythonTarget

    return PythonTarget


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    return {"python": _python_target}
