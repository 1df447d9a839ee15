"""pallas-opt on bad input: a located error and exit code 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pallas_ir
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


# ---------------------------------------------------------------------------------------
# Hostile input: one `pallas-opt: error:` line and exit 1, never an internal error


def errors(capsys) -> list[str]:
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    return err.splitlines()


def test_a_binary_file_is_said_to_be_one(tmp_path: Path, capsys) -> None:
    path = tmp_path / "x.mlir"
    path.write_bytes(bytes([0xF7, 0x3C, 0x80]) + bytes(range(256)))
    assert main([str(path)]) == 1
    assert errors(capsys) == [
        (
            f"pallas-opt: error: cannot read {path}: a binary file, not UTF-8 text "
            "(byte 0xf7 at offset 0)"
        )
    ]


def test_compiled_python_is_a_binary_file(tmp_path: Path, capsys) -> None:
    import py_compile

    source = tmp_path / "m.py"
    source.write_text("x = 1\n")
    pyc = Path(py_compile.compile(str(source), cfile=str(tmp_path / "m.pyc")))
    assert main([str(pyc)]) == 1
    (line,) = errors(capsys)
    assert line.startswith(f"pallas-opt: error: cannot read {pyc}: a binary file, not")


def test_text_with_nul_bytes_is_a_binary_file(tmp_path: Path, capsys) -> None:
    path = tmp_path / "x.mlir"
    path.write_bytes(b"builtin.module {\n}\n" + bytes(4096))
    assert main([str(path)]) == 1
    assert errors(capsys) == [
        (
            f"pallas-opt: error: cannot read {path}: a binary file, not text (a NUL byte "
            "at offset 19)"
        )
    ]


def test_binary_stdin_is_a_binary_file(monkeypatch, capsys) -> None:
    import io
    import sys

    stdin = io.TextIOWrapper(io.BytesIO(bytes([0x80, 0x81])), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main([]) == 1
    assert errors(capsys) == [
        (
            "pallas-opt: error: cannot read <stdin>: a binary file, not UTF-8 text "
            "(byte 0x80 at offset 0)"
        )
    ]


def nested_regions(depth: int) -> str:
    return (
        "func.func @f() {\n"
        + "scf.execute_region {\n" * depth
        + "scf.yield\n}\n" * depth
        + "func.return\n}\n"
    )


def test_regions_nested_150_deep_parse_verify_and_print(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, nested_regions(150), "-p", "cse", "--verify-semantics") == 0
    out = capsys.readouterr().out
    assert out.count("scf.execute_region {") == 150  # (the printer elides scf.yield)


def test_nesting_past_the_recursion_limit_is_an_error(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    import sys

    from pallas_ir.tools import pallas_opt

    monkeypatch.setattr(pallas_opt, "RECURSION_LIMIT", max(sys.getrecursionlimit(), 2000))
    assert run(tmp_path, nested_regions(1000)) == 1
    assert errors(capsys) == [
        (
            "pallas-opt: error: nesting too deep: the input nests regions or attributes "
            "deeper than pallas-opt can follow"
        )
    ]


def test_a_bad_remarks_filter_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, "", "--remarks", "--remarks-filter=(") == 1
    assert errors(capsys) == [
        (
            "pallas-opt: error: --remarks-filter: bad regular expression '(': missing ), "
            "unterminated subpattern at position 0"
        )
    ]


@pytest.mark.parametrize(
    ("where", "why"),
    [("missing/dir/out.mlir", "No such file or directory"), (".", "Is a directory")],
)
def test_an_unwritable_output_is_an_error(
    tmp_path: Path, capsys, where: str, why: str
) -> None:
    out = tmp_path / where
    assert run(tmp_path, "", "-o", str(out)) == 1
    assert errors(capsys) == [f"pallas-opt: error: cannot write {out}: {why}"]


def test_help_still_exits_zero(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    assert "usage: pallas-opt" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------
# Pass options: a wrong type or an out-of-range value is an option error, not a run


def bad_options(spec: str, capsys) -> str:
    assert main(["examples/ta/bias_relu.mlir", "-p", spec]) == 1
    (line,) = errors(capsys)
    prefix = f"pallas-opt: error: bad pass options in '{spec}': "
    assert line.startswith(prefix), line
    return line.removeprefix(prefix)


TILER = "0 for the chip's default, or bytes up to 134217728, the VMEM of a v5e"


@pytest.mark.parametrize("name", ["tile", "tile-policy", "xla-outline"])
@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (
            "vmem-budget=-1",
            f"invalid value -1 for option 'vmem-budget' (expected {TILER})",
        ),
        (
            "vmem-budget=134217729",
            f"invalid value 134217729 for option 'vmem-budget' (expected {TILER})",
        ),
        (
            "vmem-budget=true",
            "invalid value true for option 'vmem-budget' (expected an integer)",
        ),
        (
            "vmem-budget=1.5",
            "invalid value 1.5 for option 'vmem-budget' (expected an integer)",
        ),
        ("vmem-budget", "option 'vmem-budget' needs a value (expected an integer)"),
        ("chip=v9", "invalid value 'v9' for option 'chip' (expected one of v5e, v6e)"),
        ("chip=true", "invalid value true for option 'chip' (expected a string)"),
        ("vmem=1", "unknown option 'vmem' (options: chip, vmem-budget)"),
    ],
)
def test_tiler_options_are_checked(name: str, option: str, expected: str, capsys) -> None:
    assert bad_options(f"{name}{{{option}}}", capsys) == f"{name}: {expected}"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "tl-to-pallas{chip=v4}",
            "invalid value 'v4' for option 'chip' (expected one of v5e, v6e)",
        ),
        (
            "indirect-load-to-scalar-prefetch{smem-budget=0}",
            "invalid value 0 for option 'smem-budget' (expected a positive number of bytes)",
        ),
        (
            "indirect-load-to-scalar-prefetch{vmem-budget=true}",
            "invalid value true for option 'vmem-budget' (expected an integer)",
        ),
        (
            "indirect-load-to-scalar-prefetch{strategy=fast}",
            (
                "invalid value 'fast' for option 'strategy' (expected one of auto, prefetch, "
                "dma, vmem)"
            ),
        ),
        ("split-kernel-loops{chip=v5e}", "unknown option 'chip' (options: none)"),
    ],
)
def test_pass_options_are_checked(spec: str, expected: str, capsys) -> None:
    assert bad_options(spec, capsys) == f"{spec.split('{')[0]}: {expected}"


def test_every_option_of_every_pass_is_checked() -> None:
    """Each registered pass refuses, for each of its options, a value of another type
    and (integers) a negative one; a default-built pass is valid."""
    import dataclasses

    from xdsl.passes import PassPipeline

    from pallas_ir.registry import get_all_passes

    passes = get_all_passes()
    for name, factory in passes.items():
        factory()()  # the defaults are valid
        for f in dataclasses.fields(factory()):
            option = f.name.replace("_", "-")
            values = {
                "int": ["x", "true", "-1"],
                "bool": ["x", "1"],
            }.get(f.type, ["1", "true"])
            for value in values:
                with pytest.raises(ValueError, match=f"invalid value .* '{option}'"):
                    PassPipeline.parse_spec(passes, f"{name}{{{option}={value}}}")
            with pytest.raises(ValueError, match=f"^{name}: invalid value"):
                factory()(**{f.name: -1 if f.type == "int" else "nonsense"})


# ---------------------------------------------------------------------------------------
# --verify-semantics draws inputs the program gives a meaning to, at every level

ROOT = Path(__file__).parent.parent
LOWER = {"tl": "tl-to-pallas,pallas-legalize-mosaic", "pallas": "cse"}


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "examples" / "tl").glob("*.mlir"))
    + sorted((ROOT / "examples" / "pallas").glob("*.mlir")),
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_bundled_examples_verify_their_semantics(path: Path, capsys) -> None:
    assert main([str(path), "--verify-semantics", "-p", LOWER[path.parent.name]]) == 0
    assert errors(capsys) == []


@pytest.mark.parametrize(
    "name",
    ["tl/embedding", "tl/embedding_dma", "pallas/embedding", "pallas/embedding_dma"],
)
def test_random_indices_stay_inside_their_table(name: str) -> None:
    """Block indices, tile starts, gathered rows and row DMAs, at the tl and pallas
    levels: the 64 indices into 1000 rows spread over the table, none outside."""
    from pallas_ir.dialects.common import find_forward
    from pallas_ir.reference.verify import forward_inputs

    path = ROOT / "examples" / f"{name}.mlir"
    module = pallas_ir.parse(path.read_text(), str(path))
    idx, table = forward_inputs(module, find_forward(module), seed=0)
    assert idx.min() >= 0 and idx.max() < table.shape[0] == 1000
    assert len(set(idx.tolist())) > 32


def test_random_divisors_are_nonzero_at_every_level() -> None:
    """A buffer that divides (in a ta, a tl or a pallas kernel, or on the host) has no
    zeros; one that is divided has them."""
    from pallas_ir.dialects.common import find_forward
    from pallas_ir.reference.verify import forward_inputs

    path = ROOT / "tests" / "filecheck" / "pallas-opt" / "verify-semantics-divisors.mlir"
    module = pallas_ir.parse(path.read_text(), str(path))
    stages = [TA_TO_TL, "tl-to-pallas,pallas-legalize-mosaic"]
    for stage in [None, *stages]:
        if stage is not None:
            pallas_ir.run_passes(module, stage)
        a, b = forward_inputs(module, find_forward(module), seed=0)
        assert (a == 0).any() and not (b == 0).any(), stage
        assert a.min() == b.min() == -8 and a.max() == b.max() == 7, stage


TA_TO_TL = (
    "split-kernel-loops,stride-to-reshape,canonicalize-permutation,"
    "indirect-load-to-scalar-prefetch,tile-policy,xla-outline,tile"
)
