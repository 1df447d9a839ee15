import os
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
# Every test compiles from scratch: a hit in the on-disk cache would skip the pipeline
# under test, and the suite would fill the user's cache (the cache's tests name a folder).
os.environ["PALLAS_IR_CACHE"] = "0"

import pytest
from hypothesis import HealthCheck, settings


def _quick_cpu_compiles() -> None:
    """XLA:CPU's compiles of the interpreted kernels are much of the suite's time and
    its programs are small: compile them with LLVM's optimisations off (measured: 11%
    less time on test_frontend and test_grad_properties). XLA reads the flags once, when
    the backend starts; the environment is restored after it, so child processes (the
    TPU compiles, the examples) keep their defaults."""
    import jax

    before = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = (
        f"{before or ''} --xla_backend_optimization_level=0 "
        "--xla_llvm_disable_expensive_passes=true"
    ).strip()
    try:
        jax.devices()
    finally:
        if before is None:
            del os.environ["XLA_FLAGS"]
        else:
            os.environ["XLA_FLAGS"] = before


_quick_cpu_compiles()


@pytest.fixture(scope="session", autouse=True)
def _reused_tpu_compilers():
    """The TPU compiles reuse one child process a chip (and x64 setting) for the whole
    run, rather than paying a child's start (~2 s) in each of ~60 batches."""
    from pallas_ir.tpu_check import reused_compiler_processes

    with reused_compiler_processes():
        yield


# CI: bounded and derandomized. Long runs live in benchmarks/.
settings.register_profile(
    "ci",
    max_examples=12,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class BackgroundLit:
    """The lit + filecheck suite (tests/filecheck), started as soon as pytest has
    collected `test_filecheck.py`: lit's tests are subprocesses, so they run beside
    pytest's own tests, and `test_filecheck.py` runs last, reading lit's report.

    Under pytest-xdist (`-n 2`, the default) every worker collects the suite: the
    first worker starts lit in `directory` (named by the run's id, so the workers
    agree on it) and any worker may run `test_filecheck.py`; it waits for the `done`
    file a thread of the first one writes when lit exits."""

    ROOT = Path(__file__).parent / "filecheck"

    def __init__(self, directory: Path, jobs: int | None) -> None:
        """Start lit with `jobs` in `directory`; None: read the run another started."""
        self.directory = directory
        self.process: subprocess.Popen | None = None
        if jobs is None:
            return
        directory.mkdir(parents=True, exist_ok=True)
        lit = Path(sys.executable).parent / "lit"
        cmd = [str(lit)] if lit.exists() else [sys.executable, "-m", "lit.main"]
        self.process = subprocess.Popen(
            [
                *cmd,
                "-q",
                f"-j{jobs}",
                f"--xunit-xml-output={directory / 'results.xml'}",
                str(self.ROOT),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.waiter.start()

    def _wait(self) -> None:
        assert self.process is not None
        output, _ = self.process.communicate()
        (self.directory / "output.txt").write_text(output)
        (self.directory / "done").touch()

    def finish(self, interrupted: bool) -> None:
        """At the end of this process's session: kill lit if the run was
        interrupted, else let it finish (another worker may be reading its report)."""
        if self.process is None:
            return
        if interrupted and self.process.poll() is None:
            self.process.kill()
        self.waiter.join()

    def results(self) -> dict[str, str]:
        """Each test file (relative to tests/filecheck) mapped to its failure output,
        empty when it passed; waits for lit."""
        waited = 0
        while not (self.directory / "done").exists():
            if waited > 3600:
                raise RuntimeError(f"lit did not finish in an hour ({self.directory})")
            time.sleep(1)
            waited += 1
        report = self.directory / "results.xml"
        if not report.exists():
            raise RuntimeError(
                f"lit did not run:\n{(self.directory / 'output.txt').read_text()}"
            )
        results: dict[str, str] = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            name = case.get("name", "")
            classname = case.get("classname", "")
            # classname is "<suite>.<dir.parts>", name is the file name
            parts = classname.split(".", 1)[1].split(".") if "." in classname else []
            path = "/".join([*parts, name]) if parts and parts != [""] else name
            failure = case.find("failure")
            results[path] = "" if failure is None else (failure.text or "failed")
        return results


BACKGROUND_LIT = pytest.StashKey[BackgroundLit]()


SLOW_FIRST = (
    "test_training.py",
    "test_grad_properties.py",
    "test_examples.py",
    "test_convolution.py",
    "test_frontend.py",
    "test_opinfo.py",
    "test_elementwise_ops.py",
    "test_linalg_fft.py",
    "test_random_ops.py",
    "test_sorting_and_scans.py",
    "test_hostile_inputs.py",
    "test_frontend_fuzz.py",
)
"""The files that take longest (the per-file times pytest prints at the end), run
first so that two workers finish together; the others follow in name order and the
lit files last."""


def _order(item) -> tuple[int, str]:
    name = item.path.name
    if name == "test_filecheck.py":
        return (len(SLOW_FIRST) + 1, name)
    return (SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST), name)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    items.sort(key=_order)  # stable: a file's tests keep their order
    lit_items = [item for item in items if item.path.name == "test_filecheck.py"]
    if not lit_items:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:  # one process: lit on the cores it leaves
        directory = Path(tempfile.mkdtemp(prefix="lit-"))
        config.stash[BACKGROUND_LIT] = BackgroundLit(
            directory, jobs=max(1, (os.cpu_count() or 2) - 1)
        )
        return
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "run")
    directory = Path(tempfile.gettempdir()) / f"pallas-ir-lit-{run}"
    config.stash[BACKGROUND_LIT] = BackgroundLit(
        directory, jobs=1 if worker == "gw0" else None
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    lit = session.config.stash.get(BACKGROUND_LIT, None)
    if lit is not None:
        lit.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)


FILE_SECONDS: dict[str, float] = {}
"""Seconds (setup, call and teardown) per test file, of the reports this process
sees: under xdist the controller gets every worker's."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::")[0]
    FILE_SECONDS[path] = FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """Seconds per test file (setup, call and teardown), the slowest 15: what keeps
    `SLOW_FIRST` and the suite's time budget honest."""
    if len(FILE_SECONDS) < 2:
        return
    terminalreporter.section("seconds per test file")
    for path, total in sorted(FILE_SECONDS.items(), key=lambda kv: -kv[1])[:15]:
        terminalreporter.write_line(f"{total:8.1f}  {path}")
