"""The `pallas` dialect's DMA ops: row copies started and waited on in a kernel."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    i32,
    i64,
)
from xdsl.ir import (
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
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


class DmaOpBase(IRDLOperation):
    """Shared by `pallas.dma_start` and `pallas.dma_wait`: one row of `src` (in HBM,
    memory space `any`, or a VMEM-resident block: a local copy) at a dynamic row index,
    to row `dst_row` of `dst` (VMEM), signalling `sem`:
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
    sem = operand_def(RefType)
    dst_row = prop_def(IntegerAttr[I64])
    rows = opt_attr_def(IntegerAttr[I64])

    traits = traits_def(HasAncestor(CallOp))
    assembly_format = (
        "$src (`at` ` ` `[` $src_lead^ `]`)? `[` $src_row `]` `,` $dst `[` $dst_row `]` `,` $sem "
        "attr-dict `:` type($src) `,` type($dst) `,` type($sem)"
    )

    def __init__(
        self,
        src: SSAValue,
        src_row: SSAValue,
        dst: SSAValue,
        dst_row: int,
        sem: SSAValue,
        src_lead: Sequence[SSAValue] = (),
        rows: int = 1,
    ):
        super().__init__(
            operands=[src, src_lead, src_row, dst, sem],
            properties={"dst_row": IntegerAttr(dst_row, i64)},
            attributes={"rows": IntegerAttr(rows, i64)} if rows > 1 else {},
        )

    @property
    def row_count(self) -> int:
        """Rows one copy moves (1, or P for a slab of packed rows)."""
        return 1 if self.rows is None else self.rows.value.data

    def verify_(self) -> None:
        src, dst, sem = self.src.type, self.dst.type, self.sem.type
        assert isinstance(src, RefType) and isinstance(dst, RefType)
        assert isinstance(sem, RefType)
        if src.space not in (MemorySpace.ANY, MemorySpace.VMEM) or (
            dst.space != MemorySpace.VMEM
        ):
            raise VerifyException(
                "a row DMA copies from an `any` or `vmem` ref into a `vmem` ref"
            )
        if (
            sem.space != MemorySpace.SEMAPHORE
            or sem.get_shape()
            or sem.element_type != i32
        ):
            raise VerifyException("a row DMA signals a rank-0 i32 `semaphore` ref")
        lead = len(self.src_lead)
        if len(src.get_shape()) <= lead or not dst.get_shape():
            raise VerifyException(
                f"a row DMA copies rows: {src} needs a dim after its {lead} leading "
                "indices, and the destination rank >= 1"
            )
        trailing = list(dst.get_shape()[1:])
        if self.row_count > 1:
            if trailing[:1] != [self.row_count]:
                raise VerifyException(
                    f"a copy of {self.row_count} rows lands in a slab of a "
                    f"(R, {self.row_count}, ...) destination, not {dst}"
                )
            trailing = trailing[1:]
        if (
            list(src.get_shape()[lead + 1 :]) != trailing
            or src.element_type != dst.element_type
        ):
            raise VerifyException(
                f"rows of {src} do not fit rows of {dst}: same trailing dims and type needed"
            )
        if not 0 <= self.dst_row.value.data < dst.get_shape()[0]:
            raise VerifyException(f"row {self.dst_row.value.data} is outside {dst}")


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
