"""How a ta pass says what it did with each access it considered.

Every access a pass looks at gets exactly one remark, `PASS: applied to %x: ...` or
`PASS: not applied to %x: REASON`, and counts in `--pass-statistics` (accesses seen,
rewritten, and rejected by reason). Remarks are located at the access.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import BlockArgument, Operation, SSAValue

from pallas_ir.diagnostics import count, emit_remark


def value_name(value: SSAValue) -> str:
    """`%x` for a value with a name hint; `%argN` / `%N` otherwise."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, BlockArgument):
        return f"%arg{value.index}"
    return "%<unnamed>"


@dataclass(frozen=True)
class AccessReport:
    pass_name: str

    def seen(self) -> None:
        count(self.pass_name, "accesses seen")

    def applied(self, op: Operation, buffer: SSAValue, detail: str = "") -> None:
        count(self.pass_name, "rewritten")
        suffix = f": {detail}" if detail else ""
        emit_remark(op, f"{self.pass_name}: applied to {value_name(buffer)}{suffix}")

    def rejected(
        self, op: Operation, buffer: SSAValue, reason: str, key: str | None = None
    ) -> None:
        """`reason` is the specific sentence; `key` (default: `reason`) the statistics
        bucket, so that `extent 100 is not divisible by step 3` can count under
        `extent not divisible by step`."""
        count(self.pass_name, f"rejected: {key or reason}")
        emit_remark(
            op, f"{self.pass_name}: not applied to {value_name(buffer)}: {reason}"
        )
