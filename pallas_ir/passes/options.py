"""Pass options, checked when a pass is built: a value of the wrong type or out of range
is an error naming the pass and the option, before anything runs.

xDSL checks an option's Python type only, and takes `true` for an int (a bool is one in
Python): `tile{vmem-budget=true}` would run with a budget of 1 byte, and
`tile{vmem-budget=-1}` with a negative one, and both would quietly send every kernel to
XLA. Each pass lists its options' rules in `option_rules`; `pallas-opt` reports a
broken one as `bad pass options in '...': PASS: invalid value V for option 'NAME'
(expected ...)`.
"""

from __future__ import annotations

import dataclasses
from abc import ABC
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, ClassVar, Self, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec

from pallas_ir.tpu_rules import CHIPS

Rule = Callable[[Any, Any], "str | None"]
"""(the pass, the option's value) -> what the option expects, when the value is not it."""


def one_of(values: Collection[str]) -> Rule:
    def rule(_: Any, value: Any) -> str | None:
        return None if value in values else "one of " + ", ".join(values)

    return rule


CHIP: Rule = one_of(CHIPS)


def positive_bytes(_: Any, value: int) -> str | None:
    return None if value > 0 else "a positive number of bytes"


def vmem_budget_bytes(options: Any, value: int) -> str | None:
    """A VMEM budget of the tiler: 0 for the chip's default, at most its VMEM."""
    chip = CHIPS.get(getattr(options, "chip", ""))
    top = chip.vmem_bytes if chip else max(c.vmem_bytes for c in CHIPS.values())
    if 0 <= value <= top:
        return None
    where = f"a {chip.name}" if chip else "any chip"
    return f"0 for the chip's default, or bytes up to {top}, the VMEM of {where}"


_TYPE_NAMES = {int: "an integer", str: "a string", bool: "true or false"}


def _has_type(value: Any, t: Any) -> bool:
    if t is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, t)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, tuple | list):
        return ",".join(_shown(v) for v in value)
    return str(value)


def option_name(field: str) -> str:
    return field.replace("_", "-")


@dataclass(frozen=True)
class CheckedOptionsPass(ModulePass, ABC):
    """A pass whose options are checked against their types and `option_rules` when it
    is built, from a pipeline spec or in Python."""

    option_rules: ClassVar[dict[str, Rule]] = {}
    """Field name -> its rule, beyond the field's type."""

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            expected = hints[f.name]
            if not _has_type(value, expected):
                raise self.invalid(
                    f.name, value, _TYPE_NAMES.get(expected, str(expected))
                )
        for f in dataclasses.fields(self):
            rule = self.option_rules.get(f.name)
            value = getattr(self, f.name)
            if rule is not None and (expected := rule(self, value)) is not None:
                raise self.invalid(f.name, value, expected)

    @classmethod
    def invalid(cls, field: str, value: Any, expected: str) -> ValueError:
        return ValueError(
            f"{cls.name}: invalid value {_shown(value)} for option "
            f"'{option_name(field)}' (expected {expected})"
        )

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        """As xDSL builds it, with errors that name the pass and the option."""
        hints = get_type_hints(cls)
        fields = [f.name for f in dataclasses.fields(cls) if f.init]
        for name, values in spec.normalize_parameter_names().parameters.items():
            if name not in fields:
                known = ", ".join(option_name(f) for f in fields) or "none"
                raise ValueError(
                    f"{cls.name}: unknown option '{option_name(name)}' (options: {known})"
                )
            expected = _TYPE_NAMES.get(hints[name], str(hints[name]))
            if not values:
                raise ValueError(
                    f"{cls.name}: option '{option_name(name)}' needs a value "
                    f"(expected {expected})"
                )
            if len(values) != 1 or not _has_type(values[0], hints[name]):
                shown = values[0] if len(values) == 1 else tuple(values)
                raise cls.invalid(name, shown, expected)
        return super().from_spec(spec)
