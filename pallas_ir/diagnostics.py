"""Diagnostics with source locations, shared by every level and by `pallas-opt`.

Ops parsed by `pallas_ir.parse` (and by `pallas-opt`) carry a `FileLineColLoc`, kept
through rewrites that clone ops. Verifier failures, pass errors and remarks become
`Diagnostic`s printed as `file:line:col: error: message`, the form `--verify-diagnostics`
matches against `// expected-error {{...}}` comments.

Passes report with `emit_remark(op, "...")` and fail with `PassError(op, "...")`. Remarks
go to the engine installed by `collect_diagnostics()`; with none installed (the default)
they are dropped, so passes cost nothing extra when nobody listens.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation, TypeAttribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.str_enum import StrEnum

from pallas_ir.symbols import indexed_symbols

_A = TypeVar("_A")


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"
    NOTE = "note"


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    location: Location | None = None
    source_line: str | None = None
    """The text of the line the location points at, shown under the message."""

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.severity}: {self.message}"
        if self.source_line is not None and self.location is not None:
            caret = " " * (self.location.column - 1) + "^"
            text += f"\n{self.source_line}\n{caret}"
        return text


def location_of(op: Operation | None) -> Location | None:
    """The source location of an op, or of its nearest ancestor that has one."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return Location(loc.filename.data, loc.line.data, loc.column.data)
        op = op.parent_op()
    return None


class PassError(DiagnosticException):
    """A pass that cannot go on, with the op it is about (for the location)."""

    def __init__(self, op: Operation | None, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


@dataclass
class DiagnosticEngine:
    diagnostics: list[Diagnostic] = field(default_factory=list[Diagnostic])
    statistics: dict[str, Counter[str]] = field(default_factory=dict[str, Counter[str]])
    """Per pass: how many accesses it saw, rewrote, and rejected for each reason."""
    collect_remarks: bool = True
    remarks_filter: re.Pattern[str] | None = None
    """Keep only remarks whose message starts with a matching pass name."""

    def emit(self, severity: Severity, op: Operation | None, message: str) -> None:
        if severity == Severity.REMARK:
            if not self.collect_remarks:
                return
            if self.remarks_filter is not None and not self.remarks_filter.match(
                message.split(":", 1)[0]
            ):
                return
            diagnostic = Diagnostic(severity, message, location_of(op))
            if diagnostic in self.diagnostics:
                return  # said once (a pass that runs twice refuses a pair twice)
            self.diagnostics.append(diagnostic)
            return
        self.diagnostics.append(Diagnostic(severity, message, location_of(op)))


_ENGINE: contextvars.ContextVar[DiagnosticEngine | None] = contextvars.ContextVar(
    "pallas_ir_diagnostic_engine", default=None
)


@contextlib.contextmanager
def collect_diagnostics(engine: DiagnosticEngine) -> Iterator[DiagnosticEngine]:
    token = _ENGINE.set(engine)
    try:
        yield engine
    finally:
        _ENGINE.reset(token)


def emit_remark(op: Operation | None, message: str) -> None:
    """Say something about an op, e.g. why a rewrite did not apply."""
    if (engine := _ENGINE.get()) is not None:
        engine.emit(Severity.REMARK, op, message)


def count(pass_name: str, key: str, n: int = 1) -> None:
    """Add to a pass statistic (`--pass-statistics`)."""
    if (engine := _ENGINE.get()) is not None:
        engine.statistics.setdefault(pass_name, Counter())[key] += n


def emit_warning(op: Operation | None, message: str) -> None:
    if (engine := _ENGINE.get()) is not None:
        engine.emit(Severity.WARNING, op, message)


# ---------------------------------------------------------------------------------------
# Parsing with locations, verifying with locations


_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


class LocatedParser(Parser):
    """A parser that gives every op the `file:line:col` where its text starts.

    An attribute or type whose verifier fails while it is parsed (e.g. a
    `#pallas.block_spec` whose index map does not fit its block) is a parse error
    at the place it is written, not an internal error.
    """

    def __init__(self, ctx, input: str, name: str = "<input>", line_offset: int = 0):
        super().__init__(ctx, input, name)
        self._file = name
        self._line_offset = line_offset
        # xDSL 0.75's string-literal regex nests quantifiers, `(?:[^"...]+|...)*"`, and
        # backtracks exponentially on an unterminated literal (a 40-character line took
        # minutes). One character per repetition matches the same language in linear time.
        self.lexer._unescaped_characters_regex = _STRING_LITERAL  # pyright: ignore

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except (
            VerifyException
        ) as e:  # e.g. a type constraint checked by an assembly format
            self.raise_error(_first_line(e), start)
        if not isinstance(op.location, FileLineColLoc):
            loc = start.get_location()
            op.location = FileLineColLoc(
                StringAttr(self._file),
                IntAttr(loc.line + self._line_offset),
                IntAttr(loc.col),
            )
        return op

    def parse_optional_attribute(self) -> Attribute | None:
        return self._verifying(super().parse_optional_attribute)

    def parse_optional_type(self) -> TypeAttribute | None:
        return self._verifying(super().parse_optional_type)

    def _verifying(self, parse: Callable[[], _A]) -> _A:
        start = self.pos
        try:
            return parse()
        except VerifyException as e:
            self.raise_error(_first_line(e), start, max(self.pos, start + 1))


def _verify_one(op: Operation) -> str | None:
    try:
        op.verify(verify_nested_ops=False)
    except (VerifyException, DiagnosticException) as e:
        return _first_line(e)
    except Exception as e:  # noqa: BLE001 - a verifier that trips over malformed structure
        return f"could not be verified ({type(e).__name__}: {e})"
    return None


def _first_line(e: Exception) -> str:
    text = str(e.args[0]) if e.args else str(e)
    text = text.removeprefix("Operation does not verify: ")
    return text.strip().splitlines()[0] if text.strip() else type(e).__name__


def verify_module(module: ModuleOp) -> list[Diagnostic]:
    """Verify every op on its own, so each failure is reported at its own location.

    Returns one error per op that fails (an empty list means the module verifies).
    """
    found: list[Diagnostic] = []
    with indexed_symbols(module):  # each launch finds its kernel in a dict
        for op in module.walk():
            if (msg := _verify_one(op)) is not None:
                found.append(
                    Diagnostic(Severity.ERROR, f"'{op.name}' op {msg}", location_of(op))
                )
    return found
