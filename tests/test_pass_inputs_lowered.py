"""Every ta input of the pass tests, through the whole pipeline: each lowers to Pallas
kernels (plus XLA gathers, scatters or kernels where no Pallas idiom covers an access)
that compute what the ta reference says and compile for TPU. Nothing crashes, nothing
is refused, nothing is mis-tiled."""

from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from support.pass_inputs import lower_on_host_storage, pass_test_programs

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import xla
from pallas_ir.dialects.common import find_forward
from pallas_ir.reference import run_forward
from pallas_ir.reference.verify import forward_inputs
from pallas_ir.tpu_check import aot_compile_many, exec_source

ROOT = Path(__file__).parent / "filecheck" / "passes"


CASES = pass_test_programs(ROOT)


def _lower(text: str):
    return lower_on_host_storage(pallas_ir.parse(text))


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
    """XLA gathers, scatters and whole kernels are for the accesses the ta passes leave
    alone (31 inputs), and for a gather that scalar prefetch could only do by relaying
    out the whole table. For five gathers of whole rows, XLA only computes the row
    indices and the rows come by row DMA: four whose row is computed (`emb[idx + 1]`,
    torch's negative-index wrap, `emb[perm[idx]]`) and one on a middle dim. An
    element-wise kernel whose static access no idiom covers runs whole on XLA (one
    fusion); two gathered dims (`x[i0, i1]`) are row DMAs by two index buffers."""
    kinds = {
        n: {
            k.access.value
            for k in o.ops  # type: ignore[union-attr]
            if isinstance(k, xla.FuncOp)
        }
        for n, o in outcomes.items()
        if not isinstance(o, PassError)
    }
    with_xla = sorted(n for n, ks in kinds.items() if ks)
    index_only = sorted(n for n, ks in kinds.items() if ks == {"index"})
    assert index_only == sorted(
        [
            "indirect-load-to-scalar-prefetch/gathers.mlir#5",  # x[:, idx, :]
            "indirect-load-to-scalar-prefetch/not-applied.mlir#6",  # wrapped negatives
            "indirect-load-to-scalar-prefetch/not-applied.mlir#7",  # emb[perm[idx]]
            "indirect-load-to-scalar-prefetch/not-applied.mlir#9",  # emb[1:][idx], flat
            "indirect-load-to-scalar-prefetch/not-applied.mlir#11",  # emb[idx + 1], N-D
        ]
    ), index_only
    # A gather the pass marked that scalar prefetch could only do by relaying out the
    # whole table: rows at computed indices (x[:, idx, :]).
    instead_of_relayout = {"indirect-load-to-scalar-prefetch/gathers.mlir#5": {"index"}}
    # Two gathered dims of 100 x 50 x 256: one row DMA per lookup at x[i0, i1], all Pallas.
    assert not kinds["indirect-load-to-scalar-prefetch/gathers.mlir#13"]
    assert not kinds["indirect-load-to-scalar-prefetch/two-dims.mlir#0"]
    # Element-wise kernels with a static access no idiom covers (flips, overlapping or
    # wrapping views, steps that do not divide, a diagonal, a lane-strided store): one
    # XLA fusion each, with no Pallas part.
    fused = sorted(n for n, ks in kinds.items() if ks == {"kernel"})
    assert fused == sorted(
        [f"canonicalize-permutation/not-applied.mlir#{k}" for k in (0, 1, 2, 4, 5)]
        # a dim read both rotated and not; a rotation of part of a buffer dim
        + [f"canonicalize-permutation/rotations.mlir#{k}" for k in (2, 4)]
        + [f"stride-to-reshape/not-applied.mlir#{k}" for k in (0, 1, 4, 5, 6, 7)]
        + ["stride-to-reshape/strides.mlir#9"]
        + ["indirect-load-to-scalar-prefetch/not-applied.mlir#8"]  # 64-bit data
        # Scatters indirect-store-to-row-dma leaves (an index per element, part of
        # rows, bf16 rows, an index also read as data, a scatter-max, one index with
        # no loop dim of extent 1 to read it along).
        + [f"indirect-store-to-row-dma/not-applied.mlir#{k}" for k in range(6)]
    ), fused
    for n, expected in instead_of_relayout.items():
        assert kinds[n] == expected, (n, kinds[n])
    refused_by_passes = [n for n in with_xla if n not in instead_of_relayout]
    assert len(refused_by_passes) == 33, refused_by_passes
    for n in refused_by_passes:
        assert "not-applied" in n or n in {
            "stride-to-reshape/remarks.mlir#2",  # the remark test's refused access
            "stride-to-reshape/strides.mlir#9",  # a lane-strided store: one XLA fusion
            "canonicalize-permutation/rotations.mlir#2",  # rotated and not
            "canonicalize-permutation/rotations.mlir#4",  # part of a dim rotated
        }, n
    # Row scatters (a KV-cache write, an index_add, a decode step's write at one
    # position) are all Pallas: rows by DMA.
    assert not kinds["indirect-store-to-row-dma/row-scatters.mlir#0"]
    assert not kinds["indirect-store-to-row-dma/row-scatters.mlir#1"]
    assert not kinds["indirect-store-to-row-dma/row-scatters.mlir#2"]
    # An embedding bag (a gather along a reduction dim) is all Pallas: each step copies
    # a bag's rows by DMA and sums them.
    assert not kinds["indirect-load-to-scalar-prefetch/gathers.mlir#11"]


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
