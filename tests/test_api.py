"""The Python API: build pallas IR from Python, print/parse it, verify, emit and run it."""

from __future__ import annotations

import io

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineMap
from xdsl.printer import Printer

import pallas_ir
from pallas_ir.dialects import pallas
from pallas_ir.reference.pallas import run_forward
from pallas_ir.tpu_check import exec_source
from pallas_ir.tpu_rules import block_shape_error

BINARY = {
    "add": (arith.AddfOp, np.add),
    "sub": (arith.SubfOp, np.subtract),
    "mul": (arith.MulfOp, np.multiply),
    "max": (arith.MaximumfOp, np.maximum),
}


def elementwise_module(
    shape: tuple[int, int], block: tuple[int, int], op: str, transpose_out: bool
) -> ModuleOp:
    """`out = op(x, y)` (transposed when asked) as a pallas module built from Python."""
    (m, n), (bm, bn) = shape, block
    grid = (-(-m // bm), -(-n // bn))
    in_t = TensorType(f32, [m, n])
    out_t = TensorType(f32, [n, m] if transpose_out else [m, n])
    ident = AffineMap.identity(2)
    spec = pallas.BlockSpecAttr([bm, bn], ident)
    out_spec = (
        pallas.BlockSpecAttr([bn, bm], AffineMap.transpose_map())
        if transpose_out
        else spec
    )
    ref = pallas.RefType([bm, bn], f32)
    out_ref = pallas.RefType([bn, bm], f32) if transpose_out else ref
    body = Block(arg_types=[ref, ref, out_ref])
    x_ref, y_ref, o_ref = body.args
    tile = TensorType(f32, [bm, bn])
    a = pallas.LoadOp(x_ref, tile)
    b = pallas.LoadOp(y_ref, tile)
    c = BINARY[op][0](a.result, b.result)
    ops = [a, b, c]
    value = c.result
    if transpose_out:
        t = pallas.TransposeOp(value, [1, 0])
        ops.append(t)
        value = t.result
    ops.append(pallas.StoreOp(value, o_ref))
    body.add_ops(ops)
    fbody = Block(arg_types=[in_t, in_t])
    call = pallas.CallOp(
        "ew", fbody.args, [out_t], grid, [spec, spec], [out_spec],
        ["parallel", "parallel"], body=Region(body),
    )  # fmt: skip
    fbody.add_ops([call, func.ReturnOp(call.outs[0])])
    fn = func.FuncOp("forward", ((in_t, in_t), (out_t,)), Region(fbody))
    return ModuleOp([fn])


def legal_tilings(draw_transpose: bool):
    @st.composite
    def strat(draw):
        m = draw(st.sampled_from([8, 16, 24, 40, 64]))
        n = draw(st.sampled_from([128, 256, 384, 100]))
        bm = draw(st.sampled_from([d for d in (8, 16, 32, m) if d <= m]))
        bn = draw(st.sampled_from([d for d in (128, 256, n) if d <= n]))
        if draw_transpose:
            # Both sides obey the (8, 128) rule: a transposed tile needs bm, bn that
            # are lane- and sublane-legal at once (or whole dims).
            bm, bn = m, n
        return (m, n), (bm, bn), draw(st.sampled_from(sorted(BINARY))), draw_transpose

    return strat()


def print_both(module: ModuleOp) -> tuple[str, str]:
    custom, generic = io.StringIO(), io.StringIO()
    Printer(stream=custom).print_op(module)
    Printer(stream=generic, print_generic_format=True).print_op(module)
    return custom.getvalue(), generic.getvalue()


@given(st.one_of(legal_tilings(False), legal_tilings(True)))
def test_built_modules_roundtrip_and_run(case) -> None:
    shape, block, op, transpose = case
    module = elementwise_module(shape, block, op, transpose)
    pallas_ir.verify(module)
    custom, generic = print_both(module)
    # Both syntaxes parse back to the same module.
    assert str(pallas_ir.parse(custom)) == custom
    assert str(pallas_ir.parse(generic)) == custom
    # The emitted kernel computes what the op means, including padded edge blocks.
    rng = np.random.default_rng(0)
    x, y = (rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(2))
    want = BINARY[op][1](x, y)
    if transpose:
        want = want.T
    forward = exec_source(pallas_ir.emit_python(module))["forward"]
    got = np.asarray(forward(jnp.asarray(x), jnp.asarray(y), interpret=True))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    (ref,) = run_forward(module, x, y)
    np.testing.assert_allclose(ref, want, rtol=1e-6)


@given(
    st.sampled_from([8, 16, 64]),
    st.sampled_from([128, 256]),
    st.integers(1, 64),
    st.integers(1, 256),
)
def test_verifier_enforces_the_tpu_block_rule(m: int, n: int, bm: int, bn: int) -> None:
    """A block verifies exactly when the TPU rule allows it (last two dims divisible by
    (8, 128) or equal to the array dims)."""
    bm, bn = min(bm, m), min(bn, n)
    legal = (bm % 8 == 0 or bm == m) and (bn % 128 == 0 or bn == n)
    assert (block_shape_error([bm, bn], [m, n], 32) is None) == legal
    module = elementwise_module((m, n), (bm, bn), "add", False)
    if legal:
        pallas_ir.verify(module)
    else:
        with pytest.raises(pallas_ir.IRError) as info:
            pallas_ir.verify(module)
        assert "must be a multiple of" in str(info.value)


def test_errors_carry_locations() -> None:
    text = (
        EXAMPLE := """\
func.func @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %o = pallas.call @k(%x) grid [16, 2]
      in [#pallas.block_spec<[4, 128], (d0, d1) -> (d0, d1)>]
      out [#pallas.block_spec<[4, 128], (d0, d1) -> (d0, d1)>]
      semantics [parallel, parallel]
      : (tensor<64x256xf32>) -> tensor<64x256xf32>
      kernel(%x_ref: !pallas.ref<4x128xf32, vmem>, %o_ref: !pallas.ref<4x128xf32, vmem>) {
  }
  func.return %o : tensor<64x256xf32>
}
"""
    )
    module = pallas_ir.parse(text, "k.mlir")
    with pytest.raises(pallas_ir.IRError) as info:
        pallas_ir.verify(module)
    (d,) = info.value.diagnostics
    assert (d.location.file, d.location.line, d.location.column) == ("k.mlir", 2, 3)
    assert "in_specs[0]: block dim 0 (4)" in d.message
    with pytest.raises(pallas_ir.IRError) as info:
        pallas_ir.parse(EXAMPLE.replace("grid [16, 2]", "grid [16, 2"), "k.mlir")
    assert info.value.diagnostics[0].location.line == 3


def test_run_passes_keeps_meaning() -> None:
    """cse merges a recomputed sum; the kernel still computes x + y."""
    path = pallas_ir.__file__.rsplit("/", 2)[0] + "/examples/pallas/add.mlir"
    with open(path) as f:
        text = f.read()
    text = text.replace(
        "pallas.store %c,",
        "%c2 = arith.addf %a, %b : tensor<128x512xf32>\n    pallas.store %c2,",
    )
    module = pallas_ir.parse(text)
    before = len(list(module.walk()))
    pallas_ir.run_passes(module, "cse")
    assert len(list(module.walk())) == before - 1
    x = np.arange(512 * 1024, dtype=np.float32).reshape(512, 1024)
    (out,) = run_forward(module, x, x * 3)
    np.testing.assert_array_equal(out, 4 * x)


def test_ir_stages_read_in_any_order_are_the_pipeline_stages() -> None:
    """`CompiledFunction.ir` runs the pipeline again from the ta module up to the stage
    read and keeps the module there: stages read in pipeline order, out of it or
    again are the same text, the last one is the compiled module, and the ta stage parses."""
    import torch

    def fn(x):
        return torch.softmax(x * 2, -1) + x.sum(0)

    x = torch.randn(64, 256)
    forwards, backwards = (pallas_ir.compile(fn, [x]) for _ in range(2))
    names = list(forwards.ir)
    assert names[0] == "ta" and names[-1] == "pallas-legalize-mosaic"
    ahead = {n: forwards.ir[n] for n in names}
    for name in (names[-1], "tile", "ta", "fuse-epilogues", "tl-to-pallas", "tile"):
        assert backwards.ir[name] == ahead[name], name
    assert ahead[names[-1]] == str(forwards.module)
    assert ahead["tile"] != ahead["tile-policy"] != ahead["ta"]
    assert str(pallas_ir.parse(ahead["ta"])) == ahead["ta"]
