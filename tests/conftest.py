import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

import pytest
from hypothesis import HealthCheck, settings

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
    collected `test_filecheck.py`: lit's tests are subprocesses, so they run on the
    cores the rest of the suite leaves idle, and `test_filecheck.py` runs last, reading
    lit's report."""

    ROOT = Path(__file__).parent / "filecheck"

    def __init__(self, jobs: int) -> None:
        self.report = Path(tempfile.mkdtemp(prefix="lit-")) / "results.xml"
        lit = Path(sys.executable).parent / "lit"
        cmd = [str(lit)] if lit.exists() else [sys.executable, "-m", "lit.main"]
        self.process = subprocess.Popen(
            [
                *cmd,
                "-q",
                f"-j{jobs}",
                f"--xunit-xml-output={self.report}",
                str(self.ROOT),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def results(self) -> dict[str, str]:
        """Each test file (relative to tests/filecheck) mapped to its failure output,
        empty when it passed; waits for lit."""
        output, _ = self.process.communicate()
        if not self.report.exists():
            raise RuntimeError(f"lit did not run:\n{output}")
        results: dict[str, str] = {}
        for case in ET.parse(self.report).getroot().iter("testcase"):
            name = case.get("name", "")
            classname = case.get("classname", "")
            # classname is "<suite>.<dir.parts>", name is the file name
            parts = classname.split(".", 1)[1].split(".") if "." in classname else []
            path = "/".join([*parts, name]) if parts and parts != [""] else name
            failure = case.find("failure")
            results[path] = "" if failure is None else (failure.text or "failed")
        return results


BACKGROUND_LIT = pytest.StashKey[BackgroundLit]()


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    lit_items = [item for item in items if item.path.name == "test_filecheck.py"]
    if not lit_items:
        return
    items[:] = [item for item in items if item not in lit_items] + lit_items
    # One core is left to pytest's own tests while lit runs.
    config.stash[BACKGROUND_LIT] = BackgroundLit(jobs=max(1, (os.cpu_count() or 2) - 1))


def pytest_unconfigure(config: pytest.Config) -> None:
    lit = config.stash.get(BACKGROUND_LIT, None)
    if lit is not None and lit.process.poll() is None:  # the session stopped early
        lit.process.kill()
        lit.process.communicate()
