"""TPU legality checks for generated Pallas modules, runnable on a CPU-only machine.

Two tiers (see the project notes on Pallas TPU facts, sections 1 and 3):

* :func:`lower_for_tpu` -- in-process ``jit(...).trace(...).lower(lowering_platforms=("tpu",))``.
  Runs the Pallas -> Mosaic lowering rules and the MLIR verifiers (~10 ms per small kernel).
  Needs only jax/jaxlib.
* :func:`aot_compile_for_tpu` / :func:`aot_compile_many` -- deviceless ahead-of-time compile
  through libtpu (full Mosaic + XLA:TPU pipeline, ~65 ms per small kernel after a ~1 s
  process start). Always runs in a child process, because libtpu aborts the whole process
  (SIGABRT) on some bad kernels.

The checked object is the *text* of a self-contained Python module that defines
``forward(*arrays, interpret=False)``.

This module imports only the standard library and numpy at import time; jax is imported
lazily inside the functions that need it.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import json
import linecache
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pallas_ir.tpu_rules import ALL_CHIPS, Chip

__all__ = [
    "SUPPORTED_CHIPS",
    "ArraySpec",
    "TpuCheckError",
    "TpuCheckResult",
    "aot_compile_for_tpu",
    "aot_compile_many",
    "libtpu_available",
    "lower_for_tpu",
    "register_cpu_as_tpu",
    "require_tpu_compile",
    "require_tpu_lowering",
]


# --------------------------------------------------------------------------------------
# Public data types
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArraySpec:
    """Shape and dtype of one argument of ``forward``.

    ``dtype`` is a numpy dtype name ("float32", "int32", "bfloat16", ...).
    """

    shape: tuple[int, ...]
    dtype: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", str(self.dtype))


@dataclass(frozen=True)
class TpuCheckResult:
    """Outcome of one check.

    ok: the check passed.
    stage: "lower" (failed or stopped at the Pallas->Mosaic lowering) or "compile"
        (reached / failed in the libtpu AOT compile).
    message: the abridged error text, or "" when ok.
    elapsed_s: wall time of this item's check (excluded from equality).
    """

    ok: bool
    stage: str
    message: str
    elapsed_s: float = field(default=0.0, compare=False)


class TpuCheckError(Exception):
    """Raised by the ``require_*`` helpers, or when libtpu is not installed."""


SUPPORTED_CHIPS: tuple[str, ...] = tuple(ALL_CHIPS)

_LIBTPU_PIN = "libtpu==0.0.42.1"


def _chip_entry(chip: str) -> Chip:
    try:
        return ALL_CHIPS[chip]
    except KeyError:
        raise ValueError(
            f"unknown TPU chip {chip!r}; expected one of {SUPPORTED_CHIPS}"
        ) from None


# --------------------------------------------------------------------------------------
# Error-message abridging
# --------------------------------------------------------------------------------------

_NOISE_LINE = re.compile(
    r"^\s*("
    r"=== Source Location Trace: ===.*"
    r"|[\w./-]+\.(cc|h|cpp|py):\d+\s*"  # bare C++ source locations of absl Status traces
    r"|-{10,}\s*"
    r"|={10,}\s*"
    r"|\[type\.googleapis\.com/.*"
    r"|For simplicity, JAX has removed its internal frames.*"
    r"|The stack trace below excludes JAX-internal frames.*"
    r"|The preceding is the original exception.*"
    r"|The preceding stack trace is the source of the JAX operation.*"
    r"|Set JAX_TRACEBACK_FILTERING=off.*"
    r"|WARNING: Logging before InitGoogle\(\).*"
    r")$"
)
_MAX_LINE = 500
_MAX_LINES = 14


def _abridge(text: str, max_lines: int = _MAX_LINES) -> str:
    """Keeps the informative lines of a (possibly huge) compiler error message."""
    lines = []
    prev = None
    for raw in text.replace("\r", "").splitlines():
        line = raw.rstrip()
        if not line.strip() or _NOISE_LINE.match(line):
            continue
        if len(line) > _MAX_LINE:  # HLO instruction dumps, MLIR attributes
            line = line[: _MAX_LINE - 3] + "..."
        if line == prev:
            continue
        lines.append(line)
        prev = line
    if len(lines) > max_lines:
        head = lines[: max_lines - 3]
        tail = lines[-2:]
        lines = (
            head + [f"... ({len(lines) - len(head) - len(tail)} lines omitted)"] + tail
        )
    return "\n".join(lines)


def _format_exception(exc: BaseException) -> str:
    name = type(exc).__name__
    msg = str(exc)
    # Pallas lowering errors are often chained (`raise LoweringException(...) from e`);
    # the root cause usually holds the informative text.
    cause = exc.__cause__
    seen = {id(exc)}
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        cmsg = str(cause)
        first = cmsg.strip().splitlines()[0][:120] if cmsg.strip() else ""
        if type(cause).__name__ == "JaxStackTraceBeforeTransformation":
            pass  # carries the user-level traceback of the same error; no new text
        elif first and first not in msg:
            msg = f"{msg}\n[caused by {type(cause).__name__}] {cmsg}"
        cause = cause.__cause__
    return _abridge(f"{name}: {msg}")


# --------------------------------------------------------------------------------------
# Source execution (shared by the in-process and the child paths)
# --------------------------------------------------------------------------------------

_EXEC_COUNTER = 0


def exec_source(source: str) -> dict[str, Any]:
    """Executes module text into a fresh module namespace and returns its dict.

    The text is registered with linecache so tracebacks and jax source-info show the
    generated lines. The module is only visible in sys.modules while it executes
    (dataclasses and similar need that).
    """
    global _EXEC_COUNTER
    _EXEC_COUNTER += 1
    name = f"_pallas_ir_generated_{os.getpid()}_{_EXEC_COUNTER}"
    filename = f"<pallas_ir generated module {_EXEC_COUNTER}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    mod = types.ModuleType(name)
    mod.__file__ = filename
    sys.modules[name] = mod
    try:
        exec(code, mod.__dict__)  # noqa: S102 - running the emitted module is the point
    finally:
        sys.modules.pop(name, None)
    ns = mod.__dict__
    if not callable(ns.get("forward")):
        raise TypeError("the generated module does not define a callable `forward`")
    return ns


def _structs(specs: Sequence[ArraySpec], sharding: Any = None) -> list[Any]:
    import jax
    import jax.numpy as jnp

    return [
        jax.ShapeDtypeStruct(tuple(s.shape), jnp.dtype(s.dtype), sharding=sharding)
        for s in specs
    ]


def _as_spec(s: Any) -> ArraySpec:
    if isinstance(s, ArraySpec):
        return s
    if isinstance(s, dict):
        return ArraySpec(tuple(s["shape"]), str(s["dtype"]))
    if hasattr(s, "shape") and hasattr(s, "dtype"):  # arrays, ShapeDtypeStruct
        return ArraySpec(tuple(s.shape), getattr(s.dtype, "name", str(s.dtype)))
    shape, dtype = s
    return ArraySpec(tuple(shape), str(dtype))


# --------------------------------------------------------------------------------------
# Tier 1: in-process lowering
# --------------------------------------------------------------------------------------

_registered_chip: str | None = None


def register_cpu_as_tpu(chip: str = "v5e") -> None:
    """Makes ``pltpu.get_tpu_info()`` answer for ``chip`` while the default device is CPU.

    Without it, some lowering paths (rank-1 blocks, emit_pipeline, integer div/rem, jnp
    gathers) fail on CPU with "Unsupported TPU device kind: cpu". Uses the private
    ``jax._src.pallas.mosaic.tpu_info.registry`` (pinned jax 0.10.2). Idempotent;
    re-registering a different chip replaces the previous one.
    """
    global _registered_chip
    _chip_entry(chip)
    if _registered_chip == chip:
        return
    from jax._src.pallas.mosaic import tpu_info
    from jax.experimental.pallas import tpu as pltpu

    version = getattr(pltpu.ChipVersion, ALL_CHIPS[chip].chip_version)
    info_fn = lambda: pltpu.get_tpu_info_for_chip(version, 1)
    # The CPU device kind is "cpu"; registering the literal avoids jax.devices(), which
    # would initialise every backend (and probe for a TPU when libtpu is installed).
    tpu_info.registry["cpu"] = info_fn
    if hasattr(tpu_info.get_tpu_info, "cache_clear"):
        tpu_info.get_tpu_info.cache_clear()
    _registered_chip = chip


def lower_for_tpu(
    source: str,
    specs: Sequence[ArraySpec],
    chip: str = "v5e",
    x64: bool | None = None,
) -> TpuCheckResult:
    """Tier 1: executes ``source`` and lowers ``jit(forward)`` for the TPU platform.

    ``x64=None`` keeps the caller's ``jax_enable_x64`` setting; True/False override it
    for this call only (thread-local context). Never raises for a bad kernel.
    """
    _chip_entry(
        chip
    )  # an unknown chip is a caller error (ValueError), not a check result
    t0 = time.perf_counter()
    try:
        register_cpu_as_tpu(chip)
        import jax

        ctx = jax.enable_x64(bool(x64)) if x64 is not None else contextlib.nullcontext()
        with ctx:
            ns = exec_source(source)
            args = _structs([_as_spec(s) for s in specs])
            donated = ns.get("DONATE_ARGNUMS", ())
            lowered = (
                jax.jit(ns["forward"], donate_argnums=donated)
                .trace(*args)
                .lower(lowering_platforms=("tpu",))
            )
            text = lowered.as_text()
        if "pl.pallas_call(" in source and "tpu_custom_call" not in text:
            return TpuCheckResult(
                False,
                "lower",
                "lowered module contains no tpu_custom_call (forward did not call a Pallas TPU kernel)",
                time.perf_counter() - t0,
            )
        return TpuCheckResult(True, "lower", "", time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 -- every failure is a check result
        return TpuCheckResult(
            False, "lower", _format_exception(e), time.perf_counter() - t0
        )


# --------------------------------------------------------------------------------------
# Tier 2: deviceless AOT compile in a child process
# --------------------------------------------------------------------------------------


def libtpu_available() -> bool:
    """True when libtpu is importable by this interpreter (and so by the child)."""
    try:
        return importlib.util.find_spec("libtpu") is not None
    except (ImportError, ValueError):
        return False


def _require_libtpu() -> None:
    if not libtpu_available():
        raise TpuCheckError(
            "the deviceless TPU AOT compile needs libtpu, which is not installed in "
            f"{sys.executable}: run `pip install {_LIBTPU_PIN}` (the exact pin of "
            "jax[tpu]==0.10.2; the project's `test` extra installs it)"
        )


def _child_env(chip: str) -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"  # never try to open a real TPU
    env["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"  # a parent holding libtpu must not block us
    env["TPU_SKIP_MDS_QUERY"] = "1"  # no GCE metadata-server lookups (saves ~0.3 s)
    # Without these two, libtpu prints "could not determine TPU accelerator type" and an
    # INVALID_ARGUMENT "unexpected worker hostname" status at load. Neither changes the
    # target chip, which comes from the topology name.
    env["TPU_ACCELERATOR_TYPE"] = ALL_CHIPS[chip].accelerator_type
    env["TPU_WORKER_HOSTNAMES"] = "localhost"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.pop("JAX_ENABLE_X64", None)  # the child sets x64 explicitly
    return env


# The child imports this very file by path, so it needs neither the package on sys.path
# nor an __init__.py.
_RUNNER = (
    "import importlib.util as u, sys\n"
    "s = u.spec_from_file_location('_pallas_ir_tpu_check_child', {path!r})\n"
    "m = u.module_from_spec(s); sys.modules[s.name] = m; s.loader.exec_module(m)\n"
    "sys.exit(m._child_main())\n"
)

_DIED_PREFIX = "TPU compiler process died with signal"


_CRASH_NOISE = re.compile(
    r"RAW: |^\s*@\s+0x|^PC: @|symbolize|^\*\*\* Check failure stack trace|^\s*$"
)


def _stderr_tail(stderr: str, n: int = 8) -> str:
    """The informative end of a crashed child's stderr (glog fatal lines first)."""
    lines = [
        ln
        for ln in _abridge(stderr, max_lines=10_000).splitlines()
        if not _CRASH_NOISE.search(ln)
    ]
    fatal = [ln for ln in lines if re.match(r"^F\d{4} ", ln) or "Check failed" in ln]
    tail = lines[-n:]
    return "\n".join([ln for ln in fatal[-3:] if ln not in tail] + tail)


class _CompilerChild:
    """One child process running the TPU compiler: requests go in as JSON lines on its
    stdin, one result line per item comes back, then a ``done`` line. A child serves
    one (chip, x64) pair, for one request or, inside :func:`reused_compiler_processes`,
    for many (its start, importing jax and loading libtpu, is ~2 s)."""

    def __init__(self, chip: str) -> None:
        cmd = [sys.executable, "-c", _RUNNER.format(path=os.path.abspath(__file__))]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_child_env(chip),
            text=True,
            errors="replace",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        # the end of stderr, for the message of a crash (a reused child runs for long)
        self.stderr: collections.deque[str] = collections.deque(maxlen=400)
        self.readers = [
            threading.Thread(target=self._pump_out, daemon=True),
            threading.Thread(target=self._pump_err, daemon=True),
        ]
        for t in self.readers:
            t.start()

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, payload: str, last: bool) -> None:
        """Write one request; `last` closes stdin, so the child exits after it."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(payload + "\n")
            self.proc.stdin.flush()
            if last:
                self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the child died before reading its input; reported by the caller

    def close(self) -> None:
        """Let the child finish and exit (killed if it does not within 10 s)."""
        with contextlib.suppress(BrokenPipeError, OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for t in self.readers:
            t.join(timeout=5)


_REUSED: dict[tuple[str, bool], _CompilerChild] | None = None
"""The children kept for reuse, by (chip, x64), inside `reused_compiler_processes`;
None outside it."""
_REUSED_LOCKS: dict[tuple[str, bool], threading.Lock] = {}
_REUSED_GUARD = threading.Lock()


@contextlib.contextmanager
def reused_compiler_processes() -> Iterator[None]:
    """Inside this context, :func:`aot_compile_many` sends its batches to one child a
    (chip, x64) pair that stays alive between calls, instead of starting one a call. A
    child that crashes or hangs is replaced by a new one. The children exit at the end
    of the context. (The test suite runs in one: it compiles in ~60 batches.)"""
    global _REUSED
    with _REUSED_GUARD:
        outer = _REUSED is not None
        if not outer:
            _REUSED = {}
    try:
        yield
    finally:
        if not outer:
            with _REUSED_GUARD:
                children, _REUSED = _REUSED or {}, None
            for child in children.values():
                child.close()


def _run_child(
    items: list[tuple[str, list[ArraySpec]]], chip: str, timeout: float, x64: bool
) -> tuple[dict[int, TpuCheckResult], str | None, str, bool]:
    """Runs ``items`` in a child (a reused one inside `reused_compiler_processes`).

    ``timeout`` bounds the child's start-up plus its first item, and then each further
    item (the deadline is pushed back whenever a result arrives), so a long batch is never
    killed for being long -- only for being stuck.

    Returns (results by index, failure message or None, fatal setup message or "",
    timed_out). A failure message means the child died or hung before reporting every
    item; the first unreported item is the one it was working on.
    """
    payload = json.dumps(
        {
            "chip": chip,
            "x64": bool(x64),
            "items": [
                {"source": src, "specs": [[list(s.shape), s.dtype] for s in specs]}
                for src, specs in items
            ],
        }
    )
    key = (chip, bool(x64))
    with _REUSED_GUARD:
        reused = _REUSED is not None
        lock = _REUSED_LOCKS.setdefault(key, threading.Lock()) if reused else None
    if lock is None:
        return _request(_CompilerChild(chip), payload, len(items), timeout, keep=False)
    with lock:  # one request at a time per child
        with _REUSED_GUARD:
            child = (_REUSED or {}).get(key)
        if child is None or child.proc.poll() is not None:
            child = _CompilerChild(chip)
        outcome = _request(child, payload, len(items), timeout, keep=True)
        with _REUSED_GUARD:
            if _REUSED is not None:  # a child that failed is not kept
                if outcome[1] is None and child.proc.poll() is None:
                    _REUSED[key] = child
                else:
                    _REUSED.pop(key, None)
        return outcome


def _request(
    child: _CompilerChild, payload: str, count: int, timeout: float, keep: bool
) -> tuple[dict[int, TpuCheckResult], str | None, str, bool]:
    """One request to `child` (see `_run_child`); the child is left running after it
    only with `keep` and a complete answer."""
    child.stderr.clear()
    child.send(payload, last=not keep)
    results: dict[int, TpuCheckResult] = {}
    fatal = ""
    timed_out = done = False
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = child.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            timed_out = True
            child.proc.kill()
            break
        if line is None:
            break
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if "fatal" in rec:
            fatal = str(rec["fatal"])
        elif "done" in rec:
            done = True
            break
        elif "i" in rec:
            results[int(rec["i"])] = TpuCheckResult(
                bool(rec["ok"]),
                str(rec["stage"]),
                str(rec["message"]),
                float(rec.get("elapsed_s", 0.0)),
            )
            deadline = time.monotonic() + timeout
    if not (keep and done and len(results) >= count):
        child.close()
    if len(results) >= count:
        return results, None, fatal, False
    if timed_out:
        failure = f"TPU compiler process timed out after {timeout:g} s on this item"
    elif child.proc.returncode is not None and child.proc.returncode < 0:
        try:
            sig = signal.Signals(-child.proc.returncode).name
        except ValueError:
            sig = str(-child.proc.returncode)
        failure = f"{_DIED_PREFIX} {sig}"
    else:
        failure = (
            "TPU compiler process exited with status "
            f"{child.proc.returncode} before reporting"
        )
    tail = _stderr_tail("".join(child.stderr))
    if tail:
        failure += "\n--- stderr tail ---\n" + tail
    return results, failure, fatal, timed_out


def aot_compile_many(
    items: Sequence[tuple[str, Sequence[ArraySpec]]],
    chip: str = "v5e",
    timeout: float = 600,
    x64: bool = False,
) -> list[TpuCheckResult]:
    """Deviceless libtpu AOT compile of many modules in ONE child process.

    Returns one result per item, in order; each item is guarded by try/except inside
    the child. ``timeout`` (seconds) bounds the child's start-up plus its first item and
    then each further item, so it is a hang guard, not a budget for the whole batch.

    If the child dies (e.g. SIGABRT from a libtpu CHECK), the item it was compiling is
    re-run alone in a fresh process -- it is reported as died ("TPU compiler process
    died with signal SIGABRT" + the stderr tail) only if it kills that one too -- and
    the items after it are re-run as a new batch (recursively). If the child hangs, the
    item in progress is reported as timed out and the rest are re-run as a new batch.

    ``x64`` sets ``jax_enable_x64`` in the child (default False, whatever the caller's
    setting). Raises TpuCheckError if libtpu is not installed.
    """
    _chip_entry(chip)
    _require_libtpu()
    norm = [(src, [_as_spec(s) for s in specs]) for src, specs in items]
    out: list[TpuCheckResult | None] = [None] * len(norm)
    _compile_into(norm, list(range(len(norm))), out, chip, timeout, x64)
    return [r for r in out]  # type: ignore[misc]


def _compile_into(
    norm: list[tuple[str, list[ArraySpec]]],
    idxs: list[int],
    out: list[TpuCheckResult | None],
    chip: str,
    timeout: float,
    x64: bool,
    alone: bool = False,
) -> None:
    if not idxs:
        return
    t0 = time.perf_counter()
    got, failure, fatal, timed_out = _run_child(
        [norm[i] for i in idxs], chip, timeout, x64
    )
    for k, r in got.items():
        out[idxs[k]] = r
    missing = [k for k in range(len(idxs)) if k not in got]
    if not missing:
        return
    if fatal:  # setup failed (topology, import): same answer for every item
        for k in missing:
            out[idxs[k]] = TpuCheckResult(False, "compile", fatal, 0.0)
        return
    first = missing[0]
    if alone or len(idxs) == 1 or timed_out:
        # A hang is charged to the item in progress without a second wait; a crash is
        # charged only once it reproduces in a process of its own.
        out[idxs[first]] = TpuCheckResult(
            False,
            "compile",
            failure or "TPU compiler process produced no result",
            time.perf_counter() - t0 if alone or len(idxs) == 1 else timeout,
        )
    else:
        _compile_into(norm, [idxs[first]], out, chip, timeout, x64, alone=True)
    _compile_into(norm, [idxs[k] for k in missing[1:]], out, chip, timeout, x64)


def aot_compile_for_tpu(
    source: str,
    specs: Sequence[ArraySpec],
    chip: str = "v5e",
    timeout: float = 300,
    x64: bool = False,
) -> TpuCheckResult:
    """Deviceless libtpu AOT compile of one module, in a child process."""
    return aot_compile_many([(source, specs)], chip=chip, timeout=timeout, x64=x64)[0]


def require_tpu_lowering(
    source: str, specs: Sequence[ArraySpec], chip: str = "v5e", x64: bool | None = None
) -> TpuCheckResult:
    r = lower_for_tpu(source, specs, chip=chip, x64=x64)
    if not r.ok:
        raise TpuCheckError(f"TPU {r.stage} check failed ({chip}):\n{r.message}")
    return r


def require_tpu_compile(
    source: str,
    specs: Sequence[ArraySpec],
    chip: str = "v5e",
    timeout: float = 300,
    x64: bool = False,
) -> TpuCheckResult:
    r = aot_compile_for_tpu(source, specs, chip=chip, timeout=timeout, x64=x64)
    if not r.ok:
        raise TpuCheckError(f"TPU {r.stage} check failed ({chip}):\n{r.message}")
    return r


# --------------------------------------------------------------------------------------
# Child process side
# --------------------------------------------------------------------------------------


def _child_main() -> int:
    # Keep a private handle on the real stdout for the result protocol and send fd 1
    # (prints from generated code, C++ logging) to stderr.
    try:  # a libtpu abort must not leave core files behind
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    report = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(rec: dict[str, Any]) -> None:
        report.write(json.dumps(rec) + "\n")
        report.flush()

    # One request a line: the first sets the chip and x64 for the child's life.
    first = sys.stdin.readline()
    if not first.strip():
        return 0
    req = json.loads(first)
    chip = req["chip"]
    try:
        import jax

        jax.config.update("jax_enable_x64", bool(req["x64"]))
        from jax.experimental import topologies
        from jax.sharding import NamedSharding, PartitionSpec

        entry = _chip_entry(chip)
        name, bounds = entry.topology, entry.chips_per_host_bounds
        topo = topologies.get_topology_desc(
            platform="tpu",
            topology_name=name,
            chip_config_name="default",
            chips_per_host_bounds=bounds,
            num_slices=1,
        )
        mesh = jax.sharding.Mesh(np.array(topo.devices[:1]), ("x",))
        sharding = NamedSharding(mesh, PartitionSpec())
        register_cpu_as_tpu(chip)
    except BaseException as e:  # noqa: BLE001
        emit({"fatal": "TPU AOT setup failed: " + _format_exception(e)})
        return 3

    while True:
        for i, item in enumerate(req["items"]):
            t0 = time.perf_counter()
            stage = "lower"
            try:
                specs = [ArraySpec(tuple(sh), dt) for sh, dt in item["specs"]]
                # float64 arguments are float64 only with x64 on (else JAX narrows them)
                wide = any(s.dtype == "float64" for s in specs)
                x64 = jax.enable_x64(True) if wide else contextlib.nullcontext()
                with x64, jax.set_mesh(mesh):
                    ns = exec_source(item["source"])
                    args = _structs(specs, sharding)
                    # as the compiled object runs it: the inputs its kernels
                    # overwrite donated
                    donated = ns.get("DONATE_ARGNUMS", ())
                    lowered = jax.jit(ns["forward"], donate_argnums=donated).lower(*args)
                    # A module whose kernels all run on XLA has no Pallas call to find.
                    pallas = "pl.pallas_call(" in item["source"]
                    if pallas and "tpu_custom_call" not in lowered.as_text():
                        raise RuntimeError(
                            "lowered module contains no tpu_custom_call "
                            "(forward did not call a Pallas TPU kernel)"
                        )
                    stage = "compile"
                    lowered.compile()
                rec = {"i": i, "ok": True, "stage": "compile", "message": ""}
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise
                rec = {
                    "i": i,
                    "ok": False,
                    "stage": stage,
                    "message": _format_exception(e),
                }
            rec["elapsed_s"] = time.perf_counter() - t0
            emit(rec)
        jax.clear_caches()  # a reused child compiles hundreds of modules
        emit({"done": True})
        line = sys.stdin.readline()
        if not line.strip():
            return 0
        req = json.loads(line)
