"""ruff lint and format checks over the whole repository, as part of the one test command
(the version is pinned in the `test` extra, so CI's verdict cannot change under it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    exe = Path(sys.executable).parent / "ruff"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ruff"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_is_clean(command: list[str]) -> None:
    proc = subprocess.run(
        [*_ruff(), *command, "--no-cache", str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
