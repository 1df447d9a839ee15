"""The lit + filecheck suite (tests/filecheck) from pytest: one pytest test per file.
conftest.py starts lit in the background once the tests are collected; these run last."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BACKGROUND_LIT

ROOT = Path(__file__).parent / "filecheck"
TESTS = sorted(
    p.relative_to(ROOT).as_posix()
    for p in ROOT.rglob("*.mlir")
    if "Inputs" not in p.parts
)


@pytest.fixture(scope="session")
def lit_results(request: pytest.FixtureRequest) -> dict[str, str]:
    """lit's result for each file, from the run conftest started after collection."""
    return request.config.stash[BACKGROUND_LIT].results()


def test_every_file_was_run(lit_results: dict[str, str]) -> None:
    assert sorted(lit_results) == TESTS


@pytest.mark.parametrize("test", TESTS)
def test_lit(test: str, lit_results: dict[str, str]) -> None:
    assert test in lit_results, f"lit did not report {test}"
    output = lit_results[test]
    assert output == "", output
