"""The deviceless TPU compile harness (`pallas_ir.tpu_check.aot_compile_many`): a
module that fails is reported and the rest still compile, in a child started for the
call and in the reused children the test suite runs in."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from support.programs import arg_specs

import pallas_ir
from pallas_ir import tpu_check
from pallas_ir.tpu_check import aot_compile_many, reused_compiler_processes

RAISES = "def forward(x, interpret=False):\n    raise ValueError('not a kernel')\n"
ABORTS = (
    "import os, signal\n\n"
    "def forward(x, interpret=False):\n"
    "    os.kill(os.getpid(), signal.SIGABRT)  # as libtpu does on a CHECK failure\n"
)


@pytest.fixture(scope="module")
def doubled():
    compiled = pallas_ir.compile(lambda a: a * 2, [torch.ones(8, 128)])
    return compiled.source, arg_specs(compiled.module)


def test_a_failing_module_is_reported_and_the_rest_compile(doubled) -> None:
    """In a reused child: a module that raises, then one that kills the child (its
    batch goes on in a new one, which later calls reuse)."""
    source, specs = doubled
    items = [(source, specs), (RAISES, specs), (ABORTS, specs), (source, specs)]
    with reused_compiler_processes():
        results = aot_compile_many(items, chip="v5e")
        after = aot_compile_many([(source, specs)], chip="v5e")
    assert [r.ok for r in results] == [True, False, False, True]
    assert "ValueError: not a kernel" in results[1].message
    assert results[2].message.startswith("TPU compiler process died with signal SIGABRT")
    assert after[0].ok and after[0].stage == "compile"


def test_outside_reuse_each_call_has_its_own_child(doubled) -> None:
    source, specs = doubled
    with _outside_reuse():
        results = aot_compile_many([(RAISES, specs), (source, specs)], chip="v5e")
        assert tpu_check._REUSED is None
    assert [r.ok for r in results] == [False, True]


def test_reused_children_serve_each_chip_and_exit_with_the_context(doubled) -> None:
    item = [doubled]
    with _outside_reuse(), reused_compiler_processes():
        with ThreadPoolExecutor(2) as pool:
            runs = list(
                pool.map(lambda chip: aot_compile_many(item, chip), ["v5e", "v6e"])
            )
        children = dict(tpu_check._REUSED or {})
        assert set(children) == {("v5e", False), ("v6e", False)}
    assert all(r[0].ok for r in runs)
    assert all(child.proc.poll() is not None for child in children.values())


class _outside_reuse:
    """The harness as a caller outside the suite's reuse context sees it."""

    def __enter__(self):
        self.saved, tpu_check._REUSED = tpu_check._REUSED, None

    def __exit__(self, *exc):
        tpu_check._REUSED = self.saved
