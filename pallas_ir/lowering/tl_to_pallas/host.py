"""The host side of tl-to-pallas: `@forward`'s buffers as SSA tensors."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    MemRefType,
    TensorType,
    i32,
)
from xdsl.ir import Block, Operation, SSAValue

from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.lowering.tl_to_pallas.access import tensor_of


class Host:
    """Buffers of @forward as SSA tensors: each root buffer's current value."""

    def __init__(self, forward: func.FuncOp):
        self.old = forward
        types: list[TensorType] = []
        for a in forward.body.block.args:
            if not isinstance(a.type, MemRefType):
                raise PassError(forward, "tl-to-pallas: @forward takes memref buffers")
            types.append(tensor_of(a.type))
        self.block = Block(arg_types=types)
        self.root: dict[SSAValue, SSAValue] = {}
        self.value: dict[SSAValue, SSAValue | None] = {}
        self.views: dict[tuple[SSAValue, TensorType], SSAValue] = {}
        """Each value reshaped once per shape: kernels that read one view share it
        (a relayout is an HBM copy, and the cost report counts each one)."""
        for old, new in zip(forward.body.block.args, self.block.args):
            new.name_hint = old.name_hint
            self.root[old] = old
            self.value[old] = new

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def read(
        self, buffer: SSAValue, user: Operation, as_stored: bool = False
    ) -> SSAValue:
        """The buffer's current value, reshaped to the buffer's shape (unless
        `as_stored`: then in the shape the host holds it, for an XLA call, which reads
        its buffers flat and needs no relayout)."""
        root = self.root[buffer]
        value = self.value[root]
        if value is None:
            raise PassError(
                user, "tl-to-pallas: a kernel reads a buffer nothing has written"
            )
        want = buffer.type
        assert isinstance(want, MemRefType)
        same = tuple(want.get_shape()) == tuple(value.type.get_shape())  # type: ignore[attr-defined]
        if not same and not as_stored:
            key = (value, tensor_of(want))
            if key not in self.views:
                self.views[key] = self.add(pallas.ReshapeOp(*key)).results[0]
            value = self.views[key]
        return value

    def as_int32(self, value: SSAValue) -> SSAValue:
        """Scalar-prefetch operands are i32 (SMEM holds 32-bit words; TPU kernels have no
        64-bit types): torch's int64 indices are converted on the host. Indices are
        bounded by their tables, far below 2**31."""
        t = value.type
        assert isinstance(t, TensorType)
        if t.element_type == i32:
            return value
        convert = self.add(pallas.ConvertOp(value, TensorType(i32, t.get_shape())))
        convert.results[0].name_hint = value.name_hint
        return convert.results[0]

    def write(self, buffer: SSAValue, value: SSAValue) -> None:
        root = self.root[buffer]
        want = root.type
        assert isinstance(want, MemRefType)
        if tuple(want.get_shape()) != tuple(value.type.get_shape()):  # type: ignore[attr-defined]
            value = self.add(pallas.ReshapeOp(value, tensor_of(want))).results[0]
        value.name_hint = root.name_hint
        self.value[root] = value
