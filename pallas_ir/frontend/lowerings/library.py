"""Ops that run as a library function on XLA (`pallas_ir.library`): what no Pallas
idiom covers yet becomes one `ta.library_call` kernel inside the same program, never
eager torch. `library_call` is what their lowerings share."""

from __future__ import annotations

from collections.abc import Sequence

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.dialects.library_call import Param
from pallas_ir.frontend.kernel_builder import Buffer, Value, storage_value
from pallas_ir.frontend.lowerings.registry import Lowering
from pallas_ir.library import NOT_IN_FLOAT64, LibraryFn


def contiguous(c: Lowering, value: Value) -> Buffer:
    """A buffer holding `value` contiguous: its own where it is stored so, else one a
    kernel writes it to."""
    if value.stored is not None:
        return value.stored
    buf = Buffer.holding(c.prog.fresh("t"), value.shape, value.element)
    c.buffers.append(buf)
    c.prog.kernel(value, buf)
    return buf


def library_call(
    c: Lowering,
    fn: LibraryFn,
    operands: Sequence[Value],
    results: Sequence[tuple[Sequence[int], str]],
    **params: Param,
) -> list[Value]:
    """The results (shape and kernel element type of each) of library function `fn`
    on `operands`, called with keyword `params`: one XLA kernel, whose operands are
    stored contiguous first where they are not."""
    if fn in NOT_IN_FLOAT64 and any(
        e == "f64" for e in [*(v.element for v in operands), *(e for _, e in results)]
    ):
        raise c.unsupported(f"not in float64: {NOT_IN_FLOAT64[fn]}")
    inputs = [(contiguous(c, v), v.shape) for v in operands]
    outputs = []
    for shape, element in results:
        buf = Buffer.holding(c.prog.fresh("t"), shape, element)
        c.buffers.append(buf)
        outputs.append((buf, tuple(shape)))
    c.prog.library_call(fn, inputs, outputs, params)
    return [storage_value(buf, shape, row_major_strides(shape)) for buf, shape in outputs]
