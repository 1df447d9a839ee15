"""pallas-opt on bad input: a located error and exit code 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pallas_ir.tools.pallas_opt import main

EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "pallas").glob("*.mlir"))
TEXTS = [p.read_text() for p in EXAMPLES]


def run(tmp_path: Path, text: str, *args: str) -> int:
    path = tmp_path / "in.mlir"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    return main([str(path), *args])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_verify_and_emit(path: Path, capsys) -> None:
    assert main([str(path)]) == 0
    assert main([str(path), "-t", "python"]) == 0
    assert "def forward(" in capsys.readouterr().out


def test_empty_input_is_an_empty_module(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, "// nothing here\n") == 0
    assert capsys.readouterr().out.strip() == "builtin.module {\n}"


@given(
    st.sampled_from(range(len(TEXTS))),
    st.integers(0, 10_000),
    st.integers(1, 40),
    st.sampled_from(["", "%", "]", "[", "<", ">", "{", "}", "0", "-1", "x", "@k", ","]),
)
def test_mutated_input_gives_a_located_error_not_a_traceback(
    tmp_path_factory, which: int, at: int, length: int, insert: str
) -> None:
    """Cut a span out of an example (and maybe put a stray token there): whatever the
    result, pallas-opt answers with exit 0 (still valid) or a located `error:`, exit 1."""
    import contextlib
    import io

    text = TEXTS[which]
    at %= len(text)
    mutated = text[:at] + insert + text[at + length :]
    tmp = tmp_path_factory.mktemp("fuzz")
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = run(tmp, mutated, "-t", "python")
    stderr = err.getvalue()
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    if code == 0:
        assert "def forward(" in out.getvalue()
    else:
        assert code == 1 and "in.mlir:" in stderr and "error:" in stderr, stderr
