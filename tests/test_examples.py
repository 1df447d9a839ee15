"""The bundled pallas examples: right numbers in interpret mode, legal for TPU.

Each example is checked three ways: against a numpy expression of what it computes
(written here, independently of the compiler), against the pallas reference
interpreter, and by the TPU toolchain (Mosaic lowering, then a deviceless AOT compile
through libtpu for v5e and v6e).
"""

from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs, check_interpret, example_inputs
from pallas_ir.tpu_check import aot_compile_many, exec_source, lower_for_tpu

EXAMPLES = Path(__file__).parent.parent / "examples" / "pallas"

MEANING = {
    "add": lambda x, y: x + y,
    "transpose": lambda x: x.T,
    "embedding": lambda idx, table: table[idx],
    "embedding_dma": lambda idx, table: table[idx],
    "embedding_loop": lambda idx, table: table[idx],
    "index_add_rows": lambda pos, x, table: index_add(table, pos, x),
    "leading_slice": lambda x: x[:, 1:4] * 2,
}


def index_add(table: np.ndarray, pos: np.ndarray, x: np.ndarray) -> np.ndarray:
    """`table.index_add(0, pos, x)`: repeated positions sum."""
    out = table.copy()
    np.add.at(out, pos, x)
    return out


def load(name: str):
    path = EXAMPLES / f"{name}.mlir"
    module = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.verify(module)
    return module


@pytest.mark.parametrize("name", sorted(MEANING))
def test_interpret_matches_numpy(name: str) -> None:
    module = load(name)
    forward = exec_source(pallas_ir.emit_python(module))["forward"]
    inputs = example_inputs(module, seed=1)
    got = np.asarray(forward(*map(jnp.asarray, inputs), interpret=True))
    np.testing.assert_array_equal(got, MEANING[name](*inputs))


@pytest.mark.parametrize("name", sorted(MEANING))
def test_interpret_matches_reference(name: str) -> None:
    check = check_interpret(load(name), seed=2)
    assert all(e == 0.0 for e in check.max_abs_error)


def test_embedding_inputs_cover_the_table() -> None:
    """The gather must really gather: indices spread over the table, duplicates allowed."""
    idx, table = example_inputs(load("embedding"), seed=0)
    assert idx.dtype == np.int32 and idx.min() >= 0 and idx.max() < table.shape[0]
    assert len(set(idx.tolist())) > 32


@pytest.mark.parametrize("name", sorted(MEANING))
def test_lowers_for_tpu(name: str) -> None:
    module = load(name)
    result = lower_for_tpu(pallas_ir.emit_python(module), arg_specs(module))
    assert result.ok, result.message


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_aot_compiles_for_tpu(chip: str) -> None:
    items = []
    for name in sorted(MEANING):
        module = load(name)
        items.append((pallas_ir.emit_python(module), arg_specs(module)))
    results = aot_compile_many(items, chip=chip)
    failures = {n: r.message for n, r in zip(sorted(MEANING), results) if not r.ok}
    assert not failures, failures


def test_tpu_compiler_rejects_an_illegal_block() -> None:
    """The AOT check is a real oracle: a (4, 128) f32 block is refused."""
    source = pallas_ir.emit_python(load("add")).replace("(128, 512)", "(4, 512)")
    source = source.replace("grid=(4, 2)", "grid=(128, 2)")
    from pallas_ir.tpu_check import ArraySpec

    (result,) = aot_compile_many([(source, [ArraySpec((512, 1024), "float32")] * 2)])
    assert not result.ok
    assert "divisible by 8 and 128" in result.message
