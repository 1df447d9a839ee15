"""`pallas-opt`: the pass driver, in the manner of `mlir-opt`.

Built on xDSL's `xDSLOptMain` (its dialect, pass and target registration and its
`-p`/`-t` handling) with the parts a compiler researcher expects from `mlir-opt`:
per-pass flags, `--list-passes`, IR dumps and timings on stderr, `--verify-diagnostics`
that matches `// expected-error {{...}}` comments, and `file:line:col: error:` messages
with exit code 1 instead of tracebacks.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline, get_pass_option_infos
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpecParseError, parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from pallas_ir import __version__
from pallas_ir.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    LocatedParser,
    Location,
    PassError,
    Severity,
    collect_diagnostics,
    location_of,
    verify_module,
)
from pallas_ir.dialects.arith_ext import ARITH_EXTRA_OPS
from pallas_ir.registry import get_all_dialects, get_all_passes, get_all_targets

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)


class UsageError(Exception):
    """A bad command line: reported as `pallas-opt: error: ...`, exit 1."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _PassFlag(argparse.Action):
    """`--NAME` or `--NAME=OPTIONS` appends `NAME{OPTIONS}` to the flag pipeline."""

    def __init__(self, *args: Any, pass_name: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.pass_name = pass_name

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        spec = self.pass_name if not values else f"{self.pass_name}{{{values}}}"
        namespace.flag_passes = [*getattr(namespace, "flag_passes", []), spec]


@dataclass
class PassTimer:
    rows: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])

    def add(self, name: str, seconds: float) -> None:
        self.rows.append((name, seconds))

    def report(self) -> str:
        totals: dict[str, float] = {}
        for name, s in self.rows:
            totals[name] = totals.get(name, 0.0) + s
        total = sum(totals.values()) or 1e-12
        bar = "===" + "-" * 73 + "==="
        lines = [
            bar,
            "Pass execution timing report".center(79),
            bar,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for name, s in totals.items():
            lines.append(f"  {s:8.4f} ({100 * s / total:5.1f}%)  {name}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# --verify-diagnostics: MLIR's expected-* comments

_EXPECTED = re.compile(
    r"expected-(error|warning|remark|note)(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}"
)


@dataclass(frozen=True)
class Expected:
    severity: Severity
    line: int
    text: str
    written_at: int


def expected_diagnostics(chunk: str, line_offset: int) -> list[Expected]:
    lines = chunk.split("\n")
    designator_only = [
        bool(_EXPECTED.search(ln)) and ln.strip().startswith("//") for ln in lines
    ]
    found: list[Expected] = []
    for i, ln in enumerate(lines):
        for m in _EXPECTED.finditer(ln):
            severity, where, text = Severity(m.group(1)), m.group(2), m.group(3)
            target = i
            if where == "above":
                target = i - 1
                while target >= 0 and designator_only[target]:
                    target -= 1
            elif where == "below":
                target = i + 1
                while target < len(lines) and designator_only[target]:
                    target += 1
            elif where:
                target = i + int(where)
            found.append(
                Expected(severity, target + 1 + line_offset, text, i + 1 + line_offset)
            )
    return found


def match_diagnostics(
    expected: list[Expected], produced: list[Diagnostic], file: str
) -> list[str]:
    """Mismatches between expected and produced diagnostics, as error lines."""
    unmatched = list(produced)
    problems: list[str] = []
    for e in expected:
        for d in unmatched:
            if (
                d.severity == e.severity
                and d.location is not None
                and d.location.line == e.line
                and e.text in d.message
            ):
                unmatched.remove(d)
                break
        else:
            problems.append(
                f'{file}:{e.written_at}: error: expected {e.severity} "{e.text}" '
                f"on line {e.line} was not produced"
            )
    for d in unmatched:
        problems.append(
            f"{d.location or file}: error: unexpected {d.severity}: {d.message}"
        )
    return problems


# ---------------------------------------------------------------------------------------


class PallasOptMain(xDSLOptMain):
    version_format = f"pallas-opt {__version__} (xdsl {{xdsl_version}})"

    def __init__(self, args: Sequence[str] | None = None):
        # Mirrors xDSLOptMain.__init__, with an argument parser that reports errors our way
        # and a pipeline built only once the command line is known to be valid.
        self.available_frontends = {}
        self.available_passes = {}
        self.available_targets = {}
        from xdsl.context import Context

        self.ctx = Context()
        self.register_all_dialects()
        self.register_all_frontends()
        self.register_all_passes()
        self.register_all_targets()
        parser = _ArgumentParser(
            prog="pallas-opt",
            description="pallas-ir's modular optimizer driver: ta → tl → pallas → Python.",
        )
        self.register_all_arguments(parser)
        self.args = parser.parse_args(args=args)
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        try:
            target = parse_spec(self.args.target)
        except ArgSpecParseError as e:
            raise UsageError(f"bad target '{self.args.target}': {e}") from None
        if self.args.remarks_filter is not None:
            try:
                self.remarks_filter = re.compile(self.args.remarks_filter)
            except re.error as e:
                raise UsageError(
                    f"--remarks-filter: bad regular expression "
                    f"'{self.args.remarks_filter}': {e}"
                ) from None
        else:
            self.remarks_filter = None
        if target.name not in self.available_targets:
            raise UsageError(
                f"unknown target '{target.name}' (choose from "
                + ", ".join(self.available_targets)
                + ")"
            )
        self.setup_pipeline()

    # -- registration -----------------------------------------------------------

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        known = set(self.ctx.registered_dialect_names)
        for name, factory in get_all_dialects().items():
            if name not in known:  # not installed as a universe (running from source)
                self.ctx.register_dialect(name, factory)
        for op in ARITH_EXTRA_OPS:  # next to xDSL's arith, which lacks them
            self.ctx.load_op(op)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.available_passes.setdefault(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, factory in get_all_targets().items():
            self.available_targets.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.set_defaults(flag_passes=[])
        arg_parser.add_argument(
            "--list-passes",
            action="store_true",
            help="list pallas-ir's passes with their options, then xDSL's pass names",
        )
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass",
        )
        arg_parser.add_argument(
            "--print-ir-after",
            action="append",
            default=[],
            metavar="PASS",
            help="print the IR to stderr after each run of PASS (repeatable)",
        )
        arg_parser.add_argument(
            "--remarks",
            action="store_true",
            help="print the passes' remarks (what they rewrote, and why not) to stderr",
        )
        arg_parser.add_argument(
            "--verify-semantics",
            action="store_true",
            help="run every ta kernel on random inputs with the reference interpreter "
            "before and after each pass; a difference is an error naming the pass",
        )
        arg_parser.add_argument(
            "--cost-report",
            action="store_true",
            help="print the modelled HBM traffic, minimum and VMEM/SMEM of every "
            "pallas.call to stderr (after the pipeline)",
        )
        arg_parser.add_argument(
            "--pass-statistics",
            action="store_true",
            help="print per-pass counts (accesses seen, rewritten, rejected by reason)",
        )
        arg_parser.add_argument(
            "--remarks-filter",
            metavar="PASS",
            default=None,
            help="keep only remarks of passes whose name matches this regex",
        )
        own = set(get_all_passes())
        taken = set(arg_parser._option_string_actions)  # pyright: ignore[reportPrivateUsage]
        for name in self.available_passes:
            if f"--{name}" in taken:
                continue
            arg_parser.add_argument(
                f"--{name}",
                nargs="?",
                const="",
                default=argparse.SUPPRESS,
                action=_PassFlag,
                pass_name=name,
                metavar="OPTIONS",
                help=f"run the {name} pass (options as in -p)"
                if name in own
                else argparse.SUPPRESS,
            )

    def setup_pipeline(self) -> None:
        spec = ",".join(
            [*self.args.flag_passes, *([self.args.passes] if self.args.passes else [])]
        )
        try:
            self.pipeline = PassPipeline.parse_spec(self.available_passes, spec)
        except ArgSpecParseError as e:
            raise UsageError(f"bad pass pipeline '{spec}': {e}") from None
        except ValueError as e:
            msg = str(e)
            if msg.startswith("Unrecognized passes"):
                names = re.findall(r"'([^']*)'", msg)
                raise UsageError(
                    "unknown pass "
                    + ", ".join(f"'{n}'" for n in names)
                    + " (see --list-passes)"
                ) from None
            raise UsageError(f"bad pass options in '{spec}': {msg}") from None
        for name in self.args.print_ir_after:
            if name not in self.available_passes:
                raise UsageError(f"--print-ir-after: unknown pass '{name}'")

    # -- listing ----------------------------------------------------------------

    def list_passes(self, out: IO[str]) -> None:
        own = get_all_passes()
        out.write("pallas-ir passes:\n")
        if not own:
            out.write("  (none registered yet)\n")
        for name, factory in own.items():
            cls = factory()
            summary = (cls.__doc__ or "").strip().splitlines()
            out.write(f"  {name}: {summary[0] if summary else ''}\n")
            for info in get_pass_option_infos(cls):
                default = "" if info.default_value is None else f" = {info.default_value}"
                out.write(
                    f"      {info.name.replace('_', '-')}: "
                    f"{info.expected_type.strip(chr(39))}{default}\n"
                )
        xdsl_names = sorted(n for n in self.available_passes if n not in own)
        out.write("\nxDSL passes (see xdsl-opt for their options):\n")
        line = " "
        for n in xdsl_names:
            if len(line) + len(n) > 86:
                out.write(line.rstrip(",") + "\n")
                line = " "
            line += f" {n},"
        out.write(line.rstrip(",") + "\n")

    # -- running ----------------------------------------------------------------

    def read_input(self) -> tuple[str, str]:
        name = self.args.input_file or "<stdin>"
        try:
            if self.args.input_file is None:
                data = sys.stdin.buffer.read()
            else:
                with open(self.args.input_file, "rb") as f:
                    data = f.read()
        except OSError as e:
            raise UsageError(f"cannot read {name}: {e.strerror}") from None
        # MLIR is UTF-8 text: a binary file (a .pyc, random bytes) is said to be one
        # rather than parsed as a stream of bad characters.
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UsageError(
                f"cannot read {name}: a binary file, not UTF-8 text (byte "
                f"0x{data[e.start]:02x} at offset {e.start})"
            ) from None
        if "\0" in text:
            raise UsageError(
                f"cannot read {name}: a binary file, not text (a NUL byte at offset "
                f"{data.index(0)})"
            )
        return text, name

    def chunks(self, text: str) -> list[tuple[str, int]]:
        if not self.args.split_input_file:
            return [(text, 0)]
        out: list[tuple[str, int]] = []
        start, line = 0, 0
        for m in SPLIT_MARKER.finditer(text):
            out.append((text[start : m.start()], line))
            line += text.count("\n", start, m.end())
            start = m.end()
        out.append((text[start:], line))
        return out

    def dump(self, after: str, module: ModuleOp) -> None:
        sys.stderr.write(f"// -----// IR Dump After {after} //----- //\n")
        Printer(stream=sys.stderr).print_op(module)
        sys.stderr.write("\n\n")

    def process_chunk(
        self,
        chunk: str,
        offset: int,
        name: str,
        engine: DiagnosticEngine,
        timer: PassTimer,
    ) -> str | None:
        """Parse, verify, run the pipeline and emit one chunk; None if it failed."""
        t0 = time.perf_counter()
        try:
            if _only_comments(chunk):  # an empty file is an empty module, as in MLIR
                module = ModuleOp([])
            else:
                module = LocatedParser(self.ctx, chunk, name, offset).parse_module(
                    not self.args.no_implicit_module
                )
        except ParseError as e:
            loc = e.span.get_location()
            engine.diagnostics.append(
                Diagnostic(
                    Severity.ERROR, e.msg, Location(name, loc.line + offset, loc.col)
                )
            )
            return None
        timer.add("(parse)", time.perf_counter() - t0)
        if not self.verified(module, engine, timer, "input"):
            return None
        runs = None
        if self.args.verify_semantics:
            from pallas_ir.reference.verify import snapshot, snapshot_forward

            runs, problems = snapshot(module)
            whole, more = snapshot_forward(module)
            engine.diagnostics.extend(problems + more)
            if problems or more:
                return None
        for p in self.pipeline.passes:
            t0 = time.perf_counter()
            try:
                p.apply(self.ctx, module)
            except PassError as e:
                engine.diagnostics.append(
                    Diagnostic(Severity.ERROR, e.message, location_of(e.op))
                )
                return None
            except DiagnosticException as e:
                engine.diagnostics.append(
                    Diagnostic(Severity.ERROR, f"{p.name}: {_first_line(e)}", None)
                )
                return None
            timer.add(p.name, time.perf_counter() - t0)
            if self.args.print_ir_after_all or p.name in self.args.print_ir_after:
                self.dump(p.name, module)
            if not self.verified(module, engine, timer, f"pass '{p.name}'"):
                return None
            if runs is not None:
                from pallas_ir.reference.verify import compare, compare_forward

                t0 = time.perf_counter()
                problems = compare(module, runs, p.name)
                if whole is not None:
                    problems += compare_forward(module, whole, p.name)
                timer.add("(verify-semantics)", time.perf_counter() - t0)
                engine.diagnostics.extend(problems)
                if problems:
                    return None
        if self.args.cost_report:
            from pallas_ir.analysis.cost_model import cost_report

            print(cost_report(module).format(), file=sys.stderr)
        t0 = time.perf_counter()
        try:
            text = self.output_resulting_program(module)
        except DiagnosticException as e:
            op = getattr(e, "op", None)
            engine.diagnostics.append(
                Diagnostic(Severity.ERROR, _first_line(e), location_of(op))
            )
            return None
        timer.add(f"(emit {self.args.target})", time.perf_counter() - t0)
        return text

    def verified(
        self, module: ModuleOp, engine: DiagnosticEngine, timer: PassTimer, after: str
    ) -> bool:
        if self.args.disable_verify:
            return True
        t0 = time.perf_counter()
        errors = verify_module(module)
        timer.add("(verify)", time.perf_counter() - t0)
        if errors and after != "input":
            errors = [
                Diagnostic(d.severity, f"{d.message} (after {after})", d.location)
                for d in errors
            ]
        engine.diagnostics.extend(errors)
        return not errors

    def write_output(self, text: str) -> None:
        if self.args.output_file is None:
            sys.stdout.write(text)
            return
        try:
            with open(self.args.output_file, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise UsageError(
                f"cannot write {self.args.output_file}: {e.strerror}"
            ) from None

    def run(self) -> int:  # type: ignore[override]
        if self.args.list_passes:
            self.list_passes(sys.stdout)
            return 0
        text, name = self.read_input()
        lines = text.split("\n")
        outputs: list[str] = []
        failed = False
        timer = PassTimer()
        statistics: dict[str, Counter[str]] = {}
        for chunk, offset in self.chunks(text):
            engine = DiagnosticEngine(
                remarks_filter=self.remarks_filter, collect_remarks=self.args.remarks
            )
            with collect_diagnostics(engine):
                out = self.process_chunk(chunk, offset, name, engine, timer)
            if self.args.verify_diagnostics:
                problems = match_diagnostics(
                    expected_diagnostics(chunk, offset), engine.diagnostics, name
                )
                for p in problems:
                    print(p, file=sys.stderr)
                failed |= bool(problems)
            else:
                for d in engine.diagnostics:
                    src = (
                        lines[d.location.line - 1]
                        if d.location
                        and d.location.file == name
                        and 0 < d.location.line <= len(lines)
                        else None
                    )
                    print(
                        Diagnostic(d.severity, d.message, d.location, src),
                        file=sys.stderr,
                    )
                failed |= any(d.severity == Severity.ERROR for d in engine.diagnostics)
            for name_, counts in engine.statistics.items():
                statistics.setdefault(name_, Counter()).update(counts)
            outputs.append(out or "")
        self.write_output("// -----\n".join(outputs))
        if self.args.time_passes:
            print(timer.report(), file=sys.stderr)
        if self.args.pass_statistics:
            print(statistics_report(statistics), file=sys.stderr)
        return 1 if failed else 0


def statistics_report(statistics: dict[str, Counter[str]]) -> str:
    bar = "===" + "-" * 73 + "==="
    lines = [bar, "Pass statistics report".center(79), bar]
    if not statistics:
        lines.append("  (no pass reported statistics)")
    for name, counts in statistics.items():
        lines.append(name)
        for key in sorted(counts, key=lambda k: (k.startswith("rejected"), k)):
            lines.append(f"  {counts[key]:6d} {key}")
    return "\n".join(lines)


def _only_comments(text: str) -> bool:
    return all(not ln.strip() or ln.lstrip().startswith("//") for ln in text.split("\n"))


def _first_line(e: BaseException) -> str:
    text = str(e.args[0]) if e.args else str(e)
    return text.strip().splitlines()[0] if text.strip() else type(e).__name__


RECURSION_LIMIT = 20_000
"""Python frames pallas-opt may nest: the parser, verifier, passes and printer recurse
a few frames per level of nested regions, so this allows well over a thousand levels."""

STACK_BYTES = 512 << 20
"""The stack of the thread pallas-opt runs in: room for RECURSION_LIMIT frames, where
the 8 MiB of a main thread would overflow (a crash, not a RecursionError)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run pallas-opt on a thread with a deep stack (see RECURSION_LIMIT)."""
    outcome: list[int | BaseException] = []

    def work() -> None:
        try:
            outcome.append(_main(argv))
        except BaseException as e:  # noqa: BLE001 - SystemExit (--help): the caller's
            outcome.append(e)

    old_stack = threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=work, name="pallas-opt", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_stack)
    try:
        worker.join()
    except KeyboardInterrupt:
        return 130
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _main(argv: Sequence[str] | None) -> int:
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    try:
        return PallasOptMain(args=argv).run()
    except UsageError as e:
        print(f"pallas-opt: error: {e}", file=sys.stderr)
        return 1
    except RecursionError:
        print(
            "pallas-opt: error: nesting too deep: the input nests regions or "
            "attributes deeper than pallas-opt can follow",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `pallas-opt ... | head`: the reader is gone, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - a bug in pallas-ir, not in the input
        if os.environ.get("PALLAS_IR_DEBUG"):
            traceback.print_exc()
        print(
            f"pallas-opt: error: internal error: {type(e).__name__}: {e}\n"
            "(this is a bug in pallas-ir; set PALLAS_IR_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1
    finally:
        sys.setrecursionlimit(old_limit)


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
