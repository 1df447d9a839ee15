"""What `ta.library_call` and `xla.library_call` share: the function, the operands'
shapes and the keyword parameters (see `pallas_ir.library`).

```mlir
ta.library_call #ta<library_fn sort> (%x) -> (%values, %indices)
    shapes [array<i64: 4, 16>, array<i64: 4, 16>, array<i64: 4, 16>]
    params {descending = false, dim = 1 : i64, stable = false}
    : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)
```

Buffers are flat; `shapes` gives the shape of each operand, then of each output, as
the function takes and gives them. `params` holds ints (`i64`), bools (`i1`,
`true`/`false`), floats (`f64`), strings, and arrays of ints or floats.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from pallas_ir.library import LibraryFn

Param = int | float | bool | str | Sequence[int] | Sequence[float] | None


def params_attr(params: Mapping[str, Param]) -> DictionaryAttr:
    """The `params` attribute of keyword parameters (a None one is left out: the
    function's default)."""
    entries: dict[str, Attribute] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            entries[key] = BoolAttr.from_bool(value)
        elif isinstance(value, int):
            entries[key] = IntegerAttr(value, i64)
        elif isinstance(value, float):
            entries[key] = FloatAttr(value, f64)
        elif isinstance(value, str):
            entries[key] = StringAttr(value)
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            entries[key] = DenseArrayBase.from_list(i64, list(value))
        else:
            entries[key] = DenseArrayBase.from_list(f64, [float(v) for v in value])
    return DictionaryAttr(entries)


def params_of(attr: DictionaryAttr) -> dict[str, Param]:
    """The keyword parameters `params_attr` made `attr` of."""
    params: dict[str, Param] = {}
    for key, value in attr.data.items():
        if isinstance(value, IntegerAttr):
            t = value.type
            is_bool = isinstance(t, IntegerType) and t.width.data == 1
            params[key] = bool(value.value.data) if is_bool else value.value.data
        elif isinstance(value, FloatAttr):
            params[key] = value.value.data
        elif isinstance(value, StringAttr):
            params[key] = value.data
        elif isinstance(value, DenseArrayBase):
            params[key] = list(value.get_values())
        else:
            raise VerifyException(f"library_call: no parameter of the form {value}")
    return params


def shapes_attr(shapes: Sequence[Sequence[int]]) -> ArrayAttr[DenseArrayBase]:
    return ArrayAttr([DenseArrayBase.from_list(i64, list(s)) for s in shapes])


class LibraryCallOpBase(IRDLOperation):
    """A call of a library function on whole arrays (see the module docstring)."""

    @property
    def function(self) -> LibraryFn:
        return self.fn.data  # type: ignore[attr-defined]

    @property
    def call_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(s.get_values()) for s in self.shapes.data]  # type: ignore[attr-defined]

    @property
    def arguments(self) -> dict[str, Param]:
        return params_of(self.params)  # type: ignore[attr-defined]

    def typed_values(self) -> list[SSAValue]:
        """The operands, then the outputs, in the order of `shapes`."""
        return [*self.inputs, *self.outputs]  # type: ignore[attr-defined]

    def verify_(self) -> None:
        values = self.typed_values()
        shapes = self.call_shapes
        if len(shapes) != len(values):
            raise VerifyException(
                f"{self.name}: {len(shapes)} shapes for {len(values)} operands and outputs"
            )
        for value, shape in zip(values, shapes):
            count = value.type.element_count()  # type: ignore[attr-defined]
            if count not in (math.prod(shape), max(math.prod(shape), 1)):
                raise VerifyException(
                    f"{self.name}: shape {list(shape)} does not fit {value.type}"
                )
        params_of(self.params)  # type: ignore[attr-defined]
