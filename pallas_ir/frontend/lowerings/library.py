"""Ops that run as a library function on XLA (`pallas_ir.library`): what no Pallas
idiom covers yet becomes one `ta.library_call` kernel inside the same program, never
eager torch. `library_call` is what their lowerings share.

Values with no elements follow the frontend's rule for ordinary ops (no kernel, an
empty result): a call whose results are all empty is no kernel; one whose operands
are all empty has constant results, computed now (the determinant of a 0x0 matrix is
1, the histogram of nothing zeros)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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


def filled(shape: Sequence[int], element: str, fill: float = 0) -> Value:
    """A value of `shape` that is `fill` everywhere (no data: a result with no
    elements, or a constant one)."""
    return Value(tuple(shape), lambda k, idx: k.constant(fill, element), element)


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
    if not any(math.prod(shape) for shape, _ in results):
        return [filled(shape, element) for shape, element in results]
    empty = [math.prod(v.shape) == 0 for v in operands]
    if any(empty):
        if not all(empty):
            raise c.unsupported("operands with no elements beside ones with elements")
        return _of_nothing(c, fn, operands, results, params)
    inputs = [(contiguous(c, v), v.shape) for v in operands]
    outputs = []
    for shape, element in results:
        buf = Buffer.holding(c.prog.fresh("t"), shape, element)
        c.buffers.append(buf)
        outputs.append((buf, tuple(shape)))
    c.prog.library_call(fn, inputs, outputs, params)
    return [storage_value(buf, shape, row_major_strides(shape)) for buf, shape in outputs]


def _of_nothing(
    c: Lowering,
    fn: LibraryFn,
    operands: Sequence[Value],
    results: Sequence[tuple[Sequence[int], str]],
    params: dict[str, Param],
) -> list[Value]:
    """The results of `fn` on operands with no elements: with no data to read they
    are constants, computed now by the function itself."""
    dtypes = {"f32": np.float32, "i32": np.int32, "i1": np.int32}
    arrays = [np.zeros(v.shape, dtypes[v.element]) for v in operands]
    try:
        # jax is imported only here: most programs never need it while tracing
        from pallas_ir.library import functions as library

        computed = library.run(fn, arrays, params)
    except (ValueError, IndexError, TypeError, ZeroDivisionError) as e:
        raise c.unsupported(f"operands with no elements ({e})") from e
    values = []
    for result, (shape, element) in zip(computed, results):
        if result.size and not np.all(result == result.flat[0]):
            raise c.unsupported("results of operands with no elements that vary")
        values.append(filled(shape, element, result.flat[0].item() if result.size else 0))
    return values
