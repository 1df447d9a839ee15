"""Every ta input of the pass tests, through the whole pipeline: each lowers to Pallas
kernels (plus XLA gathers, scatters or kernels where no Pallas idiom covers an access)
that compute what the ta reference says and compile for TPU. Nothing crashes, nothing
is refused, nothing is mis-tiled."""

from __future__ import annotations

import re
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType

import pallas_ir
from pallas_ir.check import arg_specs, hold_storage_on_host
from pallas_ir.dialects.common import find_forward
from pallas_ir.reference.verify import forward_inputs
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import WRITABLE_ROLES, ArgRole
from pallas_ir.reference import run_forward
from pallas_ir.registry import default_pipeline
from pallas_ir.tpu_check import aot_compile_many, exec_source

ROOT = Path(__file__).parent / "filecheck" / "passes"


def _with_forward(text: str) -> str | None:
    """The chunk plus a @forward that launches its single kernel: readable buffers in,
    written buffers out (outputs start as allocations)."""
    try:
        module = pallas_ir.parse(text)
        pallas_ir.verify(module)
    except pallas_ir.IRError:
        return None
    kernels = [op for op in module.ops if isinstance(op, ta.KernelOp)]
    if len(kernels) != 1 or any(not isinstance(op, ta.KernelOp) for op in module.ops):
        return None
    (kernel,) = kernels
    params, allocs, launch, results = [], [], [], []
    for arg in kernel.body.block.args:
        t = arg.type
        assert isinstance(t, MemRefType)
        name = f"%a{arg.index}"
        if kernel.role_of(arg) == ArgRole.OUT:
            allocs.append(f"  {name} = ta.alloc : {t}")
        else:
            params.append(f"{name}: {t}")
        launch.append((name, t))
        if kernel.role_of(arg) in WRITABLE_ROLES:
            results.append((name, t))
    args = ", ".join(n for n, _ in launch)
    types = ", ".join(str(t) for _, t in launch)
    out_types = ", ".join(str(t) for _, t in results)
    return (
        text
        + f"\nfunc.func @forward({', '.join(params)}) -> ({out_types}) {{\n"
        + "\n".join(allocs)
        + f"\n  ta.launch @{kernel.sym_name.data}({args}) : {types}\n"
        + f"  func.return {', '.join(n for n, _ in results)} : {out_types}\n}}\n"
    )


def _cases() -> list[tuple[str, str]]:
    cases = []
    for path in sorted(ROOT.rglob("*.mlir")):
        chunks = re.split(r"^// -----\s*$", path.read_text(), flags=re.M)
        for k, chunk in enumerate(chunks):
            if (text := _with_forward(chunk)) is not None:
                cases.append((f"{path.relative_to(ROOT)}#{k}", text))
    return cases


CASES = _cases()


TA_PASSES, LOWERING = default_pipeline().split(",tile")
LOWERING = "tile" + LOWERING


def _lower(text: str):
    """The default pipeline, with the host holding each buffer in the N-D shape its
    kernel views it as (as the frontend does) once the ta passes have made the views."""
    module = pallas_ir.parse(text)
    pallas_ir.run_passes(module, TA_PASSES)
    hold_storage_on_host(module)
    pallas_ir.run_passes(module, LOWERING)
    return module


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    """Each case's lowered module, or the PassError that refused it."""
    result: dict[str, object] = {}
    for name, text in CASES:
        try:
            result[name] = _lower(text)
        except PassError as e:
            result[name] = e
    return result


def test_every_pass_input_lowers(outcomes) -> None:
    refused = {n: o.message for n, o in outcomes.items() if isinstance(o, PassError)}
    assert not refused, refused
    assert len(CASES) >= 86  # every single-kernel chunk of the pass tests


def test_xla_covers_only_what_pallas_cannot(outcomes) -> None:
    """The accesses the ta passes leave alone (27 inputs) are the ones that go to XLA;
    a rewritten input never does. Each XLA kernel does one gather or scatter, or is a
    kernel with 64-bit data."""
    on_xla = {
        n: [k for k in o.ops if isinstance(k, ta.KernelOp)]  # type: ignore[union-attr]
        for n, o in outcomes.items()
        if not isinstance(o, PassError)
    }
    with_xla = sorted(n for n, ks in on_xla.items() if ks)
    assert len(with_xla) == 27, with_xla
    for n in with_xla:
        assert "not-applied" in n or n in {
            "indirect-load-to-scalar-prefetch/gathers.mlir#11",  # an embedding bag
            "stride-to-reshape/remarks.mlir#2",  # the remark test's refused access
            "stride-to-reshape/strides.mlir#9",  # a strided store: an XLA scatter
        }, n


@pytest.mark.parametrize("name,text", CASES, ids=[n for n, _ in CASES])
def test_lowers_correctly(name: str, text: str, outcomes) -> None:
    outcome = outcomes[name]
    assert not isinstance(outcome, PassError), outcome
    source = pallas_ir.parse(text)
    # Inputs the source program accepts (index buffers inside the tables they index),
    # in the shapes the lowered @forward takes (the host's N-D storage, same order).
    inputs = forward_inputs(source, find_forward(source), seed=11)  # type: ignore[arg-type]
    shapes = [a.type.get_shape() for a in find_forward(outcome).body.block.args]  # type: ignore[union-attr, attr-defined]
    inputs = [a.reshape(shape) for a, shape in zip(inputs, shapes, strict=True)]
    want = run_forward(source, *inputs)
    forward = exec_source(pallas_ir.emit_python(outcome))["forward"]  # type: ignore[arg-type]
    got = forward(*map(jnp.asarray, inputs), interpret=True)
    got = got if isinstance(got, tuple | list) else (got,)
    for w, g in zip(want, got, strict=True):
        g = np.asarray(g).reshape(w.shape)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-4)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_lowered_pass_inputs_compile_for_tpu(chip: str, outcomes) -> None:
    names = [n for n, o in outcomes.items() if not isinstance(o, PassError)]
    items = [
        (pallas_ir.emit_python(outcomes[n]), arg_specs(outcomes[n]))  # type: ignore[arg-type]
        for n in names
    ]
    results = aot_compile_many(items, chip=chip)
    bad = {n: r.message for n, r in zip(names, results) if not r.ok}
    assert not bad, bad
