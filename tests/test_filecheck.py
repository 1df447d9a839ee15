"""Run the lit + filecheck suite (tests/filecheck) from pytest: one pytest test per file."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).parent / "filecheck"
TESTS = sorted(
    p.relative_to(ROOT).as_posix()
    for p in ROOT.rglob("*.mlir")
    if "Inputs" not in p.parts
)


@pytest.fixture(scope="session")
def lit_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Run lit once over the whole folder; map each test file to its failure output
    (empty when it passed)."""
    report = tmp_path_factory.mktemp("lit") / "results.xml"
    lit = Path(sys.executable).parent / "lit"
    cmd = [str(lit)] if lit.exists() else [sys.executable, "-m", "lit.main"]
    proc = subprocess.run(
        [
            *cmd,
            "-q",
            f"-j{os.cpu_count() or 2}",
            f"--xunit-xml-output={report}",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if not report.exists():
        pytest.fail(f"lit did not run:\n{proc.stdout}\n{proc.stderr}")
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


def test_every_file_was_run(lit_results: dict[str, str]) -> None:
    assert sorted(lit_results) == TESTS


@pytest.mark.parametrize("test", TESTS)
def test_lit(test: str, lit_results: dict[str, str]) -> None:
    assert test in lit_results, f"lit did not report {test}"
    output = lit_results[test]
    assert output == "", output
