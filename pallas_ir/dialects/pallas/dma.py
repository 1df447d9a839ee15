"""The `pallas` dialect's row copies: DMAs started and waited on in a kernel, into VMEM
(`pallas.dma_start`/`pallas.dma_wait`: reads) and from VMEM into an array left in HBM
(`pallas.dma_write_start`/`pallas.dma_write_wait`: writes), and the row copy within
VMEM that needs no DMA (`pallas.copy_row`: a lookup in a VMEM-resident table)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    i32,
    i64,
)
from xdsl.ir import (
    BlockArgument,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import (
    HasAncestor,
)
from xdsl.utils.exceptions import VerifyException

from pallas_ir.dialects.pallas.attributes import MemorySpace, RefType
from pallas_ir.dialects.pallas.call import CallOp
from pallas_ir.dialects.pallas.ops import LoopOp


def verify_row_copy(
    src: SSAValue,
    dst: SSAValue,
    sem: SSAValue | None,
    indexed: SSAValue,
    n_lead: int,
    local_row: int,
    rows: int = 1,
    local_at: SSAValue | None = None,
) -> None:
    """What every row DMA obeys, whichever way it copies: one side (`indexed`: `src`
    of a read, `dst` of a write) is addressed at `n_lead` dynamic leading indices and a
    dynamic row, the other (the VMEM buffer) at the static row `local_row` (with
    `rows = P`, slab `local_row` of a `(R, P, ...)` buffer); the rows fit each other
    (same trailing dims and element type); a DMA signals a semaphore (`sem`; None for
    a copy within VMEM, which needs none)."""
    local = dst if indexed is src else src
    it, lt = indexed.type, local.type
    assert isinstance(it, RefType) and isinstance(lt, RefType)
    if sem is not None:
        st = sem.type
        assert isinstance(st, RefType)
        if st.space != MemorySpace.SEMAPHORE or st.get_shape() or st.element_type != i32:
            raise VerifyException("a row DMA signals a rank-0 i32 `semaphore` ref")
    if len(it.get_shape()) <= n_lead or not lt.get_shape():
        raise VerifyException(
            f"a row DMA copies rows: {it} needs a dim after its {n_lead} leading "
            f"indices, and the VMEM buffer {lt} a rank >= 1"
        )
    trailing = list(lt.get_shape()[1:])
    if rows > 1:
        if trailing[:1] != [rows]:
            raise VerifyException(
                f"a copy of {rows} rows lands in a slab of a (R, {rows}, ...) "
                f"destination, not {lt}"
            )
        trailing = trailing[1:]
    if (
        list(it.get_shape()[n_lead + 1 :]) != trailing
        or it.element_type != lt.element_type
    ):
        raise VerifyException(
            f"rows of {src.type} do not fit rows of {dst.type}: same trailing dims "
            "and type needed"
        )
    last = local_row
    if local_at is not None:
        # The dynamic part is a loop's index, so the rows it reaches are known.
        loop = local_at.owner.parent_op() if isinstance(local_at, BlockArgument) else None
        if not isinstance(loop, LoopOp):
            raise VerifyException("a dynamic VMEM row is the index of a pallas.loop")
        last = local_row + loop.bounds[1] - 1
    if not 0 <= local_row <= last < lt.get_shape()[0]:
        raise VerifyException(f"row {last} is outside {lt}")


LocalRow = tuple[int, SSAValue]
"""A row of a VMEM buffer at a dynamic index: `(static, index)` is row `static + index`
(the index of a `pallas.loop`). A plain int is a static row."""


def local_row_parts(row: int | LocalRow) -> tuple[int, list[SSAValue]]:
    """The static part of a VMEM buffer's row and its dynamic index, if any, as the
    row ops take them (a property and an optional operand)."""
    if isinstance(row, int):
        return row, []
    static, at = row
    return static, [at]


class DmaOpBase(IRDLOperation):
    """Shared by `pallas.dma_start` and `pallas.dma_wait`: one row of `src` (in HBM,
    memory space `any`, or a VMEM-resident block: a local copy) at a dynamic row index,
    to row `dst_row` of `dst` (VMEM; `[3 + %r]` adds a dynamic index, a `pallas.loop`'s),
    signalling `sem`:
    `pltpu.make_async_copy(src.at[pl.ds(row, 1)], dst.at[pl.ds(r, 1)], sem)`. With
    leading indices (`%src at [%b, %c] [%row]`), the row is one of `src[b, c]`:
    `src.at[b, c, pl.ds(row, 1)]`. With `{rows = P}`, P consecutive rows from `row`
    land in slab `dst_row` of a `(R, P, ...)` destination:
    `make_async_copy(src.at[pl.ds(row, P)], dst.at[r], sem)` (the packed rows of 8- or
    16-bit data, which one-row slices cannot address, move a 32-bit sublane at a time).
    """

    src = operand_def(RefType)
    src_lead = var_operand_def(i32)
    src_row = operand_def(i32)
    dst = operand_def(RefType)
    dst_at = opt_operand_def(i32)
    sem = operand_def(RefType)
    dst_row = prop_def(IntegerAttr[I64])
    rows = opt_attr_def(IntegerAttr[I64])

    traits = traits_def(HasAncestor(CallOp))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$src (`at` ` ` `[` $src_lead^ `]`)? `[` $src_row `]` `,` "
        "$dst `[` $dst_row (`+` $dst_at^)? `]` `,` $sem "
        "attr-dict `:` type($src) `,` type($dst) `,` type($sem)"
    )

    def __init__(
        self,
        src: SSAValue,
        src_row: SSAValue,
        dst: SSAValue,
        dst_row: int | LocalRow,
        sem: SSAValue,
        src_lead: Sequence[SSAValue] = (),
        rows: int = 1,
    ):
        static, at = local_row_parts(dst_row)
        super().__init__(
            operands=[src, src_lead, src_row, dst, at, sem],
            properties={"dst_row": IntegerAttr(static, i64)},
            attributes={"rows": IntegerAttr(rows, i64)} if rows > 1 else {},
        )

    @property
    def row_count(self) -> int:
        """Rows one copy moves (1, or P for a slab of packed rows)."""
        return 1 if self.rows is None else self.rows.value.data

    def verify_(self) -> None:
        src, dst = self.src.type, self.dst.type
        assert isinstance(src, RefType) and isinstance(dst, RefType)
        if src.space not in (MemorySpace.ANY, MemorySpace.VMEM) or (
            dst.space != MemorySpace.VMEM
        ):
            raise VerifyException(
                "a row DMA copies from an `any` or `vmem` ref into a `vmem` ref"
            )
        verify_row_copy(
            self.src,
            self.dst,
            self.sem,
            self.src,
            len(self.src_lead),
            self.dst_row.value.data,
            self.row_count,
            self.dst_at,
        )


@irdl_op_definition
class DmaStartOp(DmaOpBase):
    """Start a row copy (from HBM, or from a VMEM-resident block; see `DmaOpBase`).

    ```mlir
    pallas.dma_start %table_ref[%row], %rows_ref[3], %sem
        : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    ```
    """

    name = "pallas.dma_start"


@irdl_op_definition
class DmaWaitOp(DmaOpBase):
    """Wait for a row copy started with the same operands.

    ```mlir
    pallas.dma_wait %table_ref[%row], %rows_ref[3], %sem
        : !pallas.ref<1000x256xf32, any>, !pallas.ref<8x256xf32, vmem>, !pallas.ref<i32, semaphore>
    ```
    """

    name = "pallas.dma_wait"


class DmaWriteOpBase(IRDLOperation):
    """Shared by `pallas.dma_write_start` and `pallas.dma_write_wait`: row `src_row` (a
    static int, plus a dynamic index with `[0 + %r]`) of `src` (VMEM) to the row at a
    dynamic index of `dst`, an array left in
    HBM (memory space `any`), signalling `sem`:
    `pltpu.make_async_copy(src.at[pl.ds(r, 1)], dst.at[pl.ds(row, 1)], sem)`. With
    leading indices (`%dst at [%b, %h] [%row]`), the row is one of `dst[b, h]`:
    `dst.at[b, h, pl.ds(row, 1)]`. The mirror of a read (`DmaOpBase`), with the same
    rules on the rows and the semaphore (`verify_row_copy`).
    """

    src = operand_def(RefType)
    src_at = opt_operand_def(i32)
    dst = operand_def(RefType)
    dst_lead = var_operand_def(i32)
    dst_row = operand_def(i32)
    sem = operand_def(RefType)
    src_row = prop_def(IntegerAttr[I64])

    traits = traits_def(HasAncestor(CallOp))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$src `[` $src_row (`+` $src_at^)? `]` `,` "
        "$dst (`at` ` ` `[` $dst_lead^ `]`)? `[` $dst_row `]` "
        "`,` $sem attr-dict `:` type($src) `,` type($dst) `,` type($sem)"
    )

    def __init__(
        self,
        src: SSAValue,
        src_row: int | LocalRow,
        dst: SSAValue,
        dst_row: SSAValue,
        sem: SSAValue,
        dst_lead: Sequence[SSAValue] = (),
    ):
        static, at = local_row_parts(src_row)
        super().__init__(
            operands=[src, at, dst, dst_lead, dst_row, sem],
            properties={"src_row": IntegerAttr(static, i64)},
        )

    def verify_(self) -> None:
        src, dst = self.src.type, self.dst.type
        assert isinstance(src, RefType) and isinstance(dst, RefType)
        if src.space != MemorySpace.VMEM or dst.space != MemorySpace.ANY:
            raise VerifyException(
                "a row DMA write copies from a `vmem` ref into an `any` ref"
            )
        verify_row_copy(
            self.src,
            self.dst,
            self.sem,
            self.dst,
            len(self.dst_lead),
            self.src_row.value.data,
            local_at=self.src_at,
        )


@irdl_op_definition
class DmaWriteStartOp(DmaWriteOpBase):
    """Start a row write from VMEM into an array in HBM (see `DmaWriteOpBase`).

    ```mlir
    pallas.dma_write_start %rows[3], %cache_out at [%b, %h] [%row], %sem
        : !pallas.ref<8x128xf32, vmem>, !pallas.ref<2x4x64x128xf32, any>, !pallas.ref<i32, semaphore>
    ```
    """

    name = "pallas.dma_write_start"


@irdl_op_definition
class DmaWriteWaitOp(DmaWriteOpBase):
    """Wait for a row write started with the same operands; after it, the row is in
    HBM (a later read or write of it sees it).

    ```mlir
    pallas.dma_write_wait %rows[3], %cache_out at [%b, %h] [%row], %sem
        : !pallas.ref<8x128xf32, vmem>, !pallas.ref<2x4x64x128xf32, any>, !pallas.ref<i32, semaphore>
    ```
    """

    name = "pallas.dma_write_wait"


@irdl_op_definition
class RowCopyOp(IRDLOperation):
    """Copy one row of a VMEM-resident block, at a dynamic row index, to row `dst_row`
    (plus a dynamic index with `[0 + %r]`) of a VMEM buffer, through registers: `dst[pl.ds(r, 1)] = src[pl.ds(row, 1)]` (a load
    at a dynamic sublane offset and a store; the G4 idiom's lookups). Both refs are in
    VMEM, so no DMA (and no semaphore) is needed, and nothing moves through HBM. With
    leading indices (`%src at [%b] [%row]`), the row is one of `src[b]`:
    `src[b, pl.ds(row, 1)]`. The rows obey what row DMAs obey (`verify_row_copy`), for
    32-bit data (a packed row of 8- or 16-bit data is no whole sublane).

    ```mlir
    pallas.copy_row %table_ref[%row], %rows[3]
        : !pallas.ref<64x32xf32, vmem>, !pallas.ref<16x32xf32, vmem>
    ```
    """

    name = "pallas.copy_row"

    src = operand_def(RefType)
    src_lead = var_operand_def(i32)
    src_row = operand_def(i32)
    dst = operand_def(RefType)
    dst_at = opt_operand_def(i32)
    dst_row = prop_def(IntegerAttr[I64])

    traits = traits_def(HasAncestor(CallOp))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$src (`at` ` ` `[` $src_lead^ `]`)? `[` $src_row `]` `,` "
        "$dst `[` $dst_row (`+` $dst_at^)? `]` attr-dict `:` type($src) `,` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue,
        src_row: SSAValue,
        dst: SSAValue,
        dst_row: int | LocalRow,
        src_lead: Sequence[SSAValue] = (),
    ):
        static, at = local_row_parts(dst_row)
        super().__init__(
            operands=[src, src_lead, src_row, dst, at],
            properties={"dst_row": IntegerAttr(static, i64)},
        )

    def verify_(self) -> None:
        src, dst = self.src.type, self.dst.type
        assert isinstance(src, RefType) and isinstance(dst, RefType)
        if src.space != MemorySpace.VMEM or dst.space != MemorySpace.VMEM:
            raise VerifyException("pallas.copy_row copies between `vmem` refs")
        if src.element_type.bitwidth != 32:  # type: ignore[attr-defined]
            raise VerifyException(
                f"pallas.copy_row copies rows of 32-bit data, not {src.element_type}"
            )
        verify_row_copy(
            self.src,
            self.dst,
            None,
            self.src,
            len(self.src_lead),
            self.dst_row.value.data,
            local_at=self.dst_at,
        )
