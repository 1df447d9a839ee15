"""The `pallas` dialect: one op or attribute per Pallas concept, printed mechanically.

A host function (`func.func @forward`) takes and returns `tensor` values (jax arrays)
and runs `pallas.call` ops. A `pallas.call` is one `pl.pallas_call`: its grid, one
`#pallas.block_spec` per input and output, the scalar-prefetch count, dimension
semantics, scratch shapes, input/output aliases, a cost estimate and a VMEM limit,
with a kernel region whose arguments are refs (`!pallas.ref<8x128xf32, vmem>`).
In the kernel, `pallas.load`/`pallas.store` move tiles between refs and values through
static indexers, `pallas.program_id` reads the grid position, and compute is jnp-level:
`arith`/`math` on tensors plus `pallas.transpose`, `pallas.broadcast`, `pallas.reduce`.

The verifier of `pallas.call` enforces the TPU block rules (`pallas_ir.tpu_rules`), so
IR that verifies lowers for TPU as far as block shapes go.

The package's modules: `attributes` (memory spaces, refs, block specs, cost estimates,
static slices), `call` (`pallas.call`, `pallas.xla_call`), `ops` (loads, stores and
compute in a kernel) and `dma` (row copies: DMAs read and written, and copies within VMEM). Every public name is
re-exported here.
"""

from xdsl.ir import Dialect

from pallas_ir.dialects.enums import (
    PallasComparePredicateAttr,
    PallasDotPrecisionAttr,
    PallasReductionKindAttr,
)
from pallas_ir.dialects.pallas.attributes import (
    DONATED_ARGUMENT,
    SQUEEZED,
    BlockIndexing,
    BlockIndexingAttr,
    BlockSpecAttr,
    CostEstimateAttr,
    DimensionSemantics,
    DimensionSemanticsAttr,
    Indexer,
    MemorySpace,
    MemorySpaceAttr,
    RefType,
    SliceAttr,
)
from pallas_ir.dialects.pallas.call import CallOp, XlaCallOp
from pallas_ir.dialects.pallas.dma import (
    DmaOpBase,
    DmaStartOp,
    DmaWaitOp,
    DmaWriteOpBase,
    DmaWriteStartOp,
    DmaWriteWaitOp,
    RowCopyOp,
)
from pallas_ir.dialects.pallas.ops import (
    BroadcastOp,
    CompareOp,
    ConvertOp,
    DotOp,
    IotaOp,
    LoadOp,
    LoopOp,
    ProgramIdOp,
    ReadOp,
    ReduceOp,
    ReshapeOp,
    RollOp,
    SelectOp,
    SliceOp,
    StoreOp,
    TransposeOp,
    WhenOp,
    indexed_shape,
    python_index,
)

__all__ = [
    "DONATED_ARGUMENT",
    "SQUEEZED",
    "BlockIndexing",
    "BlockIndexingAttr",
    "BlockSpecAttr",
    "BroadcastOp",
    "CallOp",
    "CompareOp",
    "ConvertOp",
    "CostEstimateAttr",
    "DimensionSemantics",
    "DimensionSemanticsAttr",
    "DmaOpBase",
    "DmaStartOp",
    "DmaWaitOp",
    "DmaWriteOpBase",
    "DmaWriteStartOp",
    "DmaWriteWaitOp",
    "DotOp",
    "Indexer",
    "IotaOp",
    "LoadOp",
    "LoopOp",
    "MemorySpace",
    "MemorySpaceAttr",
    "Pallas",
    "ProgramIdOp",
    "ReadOp",
    "ReduceOp",
    "RefType",
    "ReshapeOp",
    "RollOp",
    "RowCopyOp",
    "SelectOp",
    "SliceAttr",
    "SliceOp",
    "StoreOp",
    "TransposeOp",
    "WhenOp",
    "XlaCallOp",
    "indexed_shape",
    "python_index",
]

Pallas = Dialect(
    "pallas",
    [
        IotaOp,
        DmaStartOp,
        DmaWaitOp,
        DmaWriteStartOp,
        DmaWriteWaitOp,
        RowCopyOp,
        ReadOp,
        WhenOp,
        LoopOp,
        DotOp,
        CallOp,
        ReshapeOp,
        LoadOp,
        StoreOp,
        ProgramIdOp,
        TransposeOp,
        RollOp,
        BroadcastOp,
        ReduceOp,
        ConvertOp,
        CompareOp,
        SelectOp,
        SliceOp,
        XlaCallOp,
    ],
    [
        RefType,
        BlockSpecAttr,
        CostEstimateAttr,
        DimensionSemanticsAttr,
        MemorySpaceAttr,
        BlockIndexingAttr,
        SliceAttr,
        PallasReductionKindAttr,
        PallasComparePredicateAttr,
        PallasDotPrecisionAttr,
    ],
)
