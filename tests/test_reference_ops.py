"""Each arith/math op of the ta reference interpreter against torch on the same data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pallas_ir
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.reference import run_kernel

N = 64


def run_unary(body: str, in_t: str, out_t: str, x: np.ndarray) -> np.ndarray:
    text = f"""
ta.kernel @k(%x: memref<{N}x{in_t}> {{role = "in"}}, %o: memref<{N}x{out_t}> {{role = "out"}}) {{
  ta.loop [{N}] (%i) {{
    %a = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<{N}x{in_t}>
    {body}
    ta.store %r, %o[affine_map<(d0) -> (d0)>](%i) : memref<{N}x{out_t}>
  }}
}}"""
    (k,) = [op for op in pallas_ir.parse(text).ops if isinstance(op, ta.KernelOp)]
    out = np.zeros(N, dtype=_np(out_t))
    run_kernel(k, [x, out])
    return out


def run_binary(body: str, t: str, out_t: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    text = f"""
ta.kernel @k(%x: memref<{N}x{t}> {{role = "in"}}, %y: memref<{N}x{t}> {{role = "in"}}, %o: memref<{N}x{out_t}> {{role = "out"}}) {{
  ta.loop [{N}] (%i) {{
    %a = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<{N}x{t}>
    %b = ta.load %y[affine_map<(d0) -> (d0)>](%i) : memref<{N}x{t}>
    {body}
    ta.store %r, %o[affine_map<(d0) -> (d0)>](%i) : memref<{N}x{out_t}>
  }}
}}"""
    (k,) = [op for op in pallas_ir.parse(text).ops if isinstance(op, ta.KernelOp)]
    out = np.zeros(N, dtype=_np(out_t))
    run_kernel(k, [x, y, out])
    return out


def _np(t: str) -> type:
    return {"f32": np.float32, "i32": np.int32, "i1": np.bool_, "i8": np.int8}[t]


rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, N).astype(np.float32)
POS = rng.uniform(0.1, 2, N).astype(np.float32)
I = rng.integers(-50, 50, N).astype(np.int32)
J = rng.choice([-7, -3, -1, 1, 2, 5], N).astype(np.int32)

UNARY = [
    ("math.exp %a : f32", X, torch.exp),
    ("math.log %a : f32", POS, torch.log),
    ("math.tanh %a : f32", X, torch.tanh),
    ("math.rsqrt %a : f32", POS, torch.rsqrt),
    ("math.sqrt %a : f32", POS, torch.sqrt),
    ("math.erf %a : f32", X, torch.erf),
    ("math.sin %a : f32", X, torch.sin),
    ("math.cos %a : f32", X, torch.cos),
    ("math.absf %a : f32", X, torch.abs),
    ("math.floor %a : f32", X, torch.floor),
    ("math.ceil %a : f32", X, torch.ceil),
    ("math.log1p %a : f32", POS, torch.log1p),
    ("math.expm1 %a : f32", X, torch.expm1),
    ("arith.negf %a : f32", X, torch.neg),
]


@pytest.mark.parametrize("op,x,ref", UNARY, ids=[u[0].split()[0] for u in UNARY])
def test_float_unary(op: str, x: np.ndarray, ref) -> None:
    got = run_unary(f"%r = {op}", "f32", "f32", x)
    np.testing.assert_allclose(
        got, ref(torch.from_numpy(x)).numpy(), rtol=2e-6, atol=1e-7
    )


BINARY_INT = [
    ("arith.divsi", lambda a, b: torch.div(a, b, rounding_mode="trunc")),
    ("arith.remsi", torch.fmod),
    ("arith.floordivsi", lambda a, b: torch.div(a, b, rounding_mode="floor")),
    ("arith.maxsi", torch.maximum),
    ("arith.minsi", torch.minimum),
    ("arith.muli", torch.mul),
    ("arith.subi", torch.sub),
]


@pytest.mark.parametrize("op,ref", BINARY_INT, ids=[b[0] for b in BINARY_INT])
def test_int_binary(op: str, ref) -> None:
    got = run_binary(f"%r = {op} %a, %b : i32", "i32", "i32", I, J)
    np.testing.assert_array_equal(
        got, ref(torch.from_numpy(I), torch.from_numpy(J)).numpy()
    )


def test_float_binary_and_nan_rules() -> None:
    x, y = X.copy(), np.roll(X, 1)
    x[3] = np.nan
    got = run_binary("%r = arith.maximumf %a, %b : f32", "f32", "f32", x, y)
    np.testing.assert_array_equal(
        got, torch.maximum(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    )
    got = run_binary("%r = arith.maxnumf %a, %b : f32", "f32", "f32", x, y)
    np.testing.assert_array_equal(
        got, torch.fmax(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    )
    got = run_binary("%r = arith.divf %a, %b : f32", "f32", "f32", X, POS)
    np.testing.assert_allclose(
        got, (torch.from_numpy(X) / torch.from_numpy(POS)).numpy(), rtol=1e-7
    )
    got = run_binary("%r = math.powf %a, %b : f32", "f32", "f32", POS, X)
    np.testing.assert_allclose(
        got, torch.pow(torch.from_numpy(POS), torch.from_numpy(X)).numpy(), rtol=2e-6
    )


def test_compare_select_and_casts() -> None:
    got = run_binary(
        "%c = arith.cmpf olt, %a, %b : f32\n    %r = arith.select %c, %a, %b : f32",
        "f32", "f32", X, np.roll(X, 1),
    )  # fmt: skip
    np.testing.assert_array_equal(got, np.minimum(X, np.roll(X, 1)))
    got = run_unary("%r = arith.fptosi %a : f32 to i32", "f32", "i32", X * 10)
    np.testing.assert_array_equal(got, torch.from_numpy(X * 10).to(torch.int32).numpy())
    got = run_unary("%r = arith.sitofp %a : i32 to f32", "i32", "f32", I)
    np.testing.assert_array_equal(got, I.astype(np.float32))
    big = (I * 7).astype(np.int32)
    got = run_unary("%r = arith.trunci %a : i32 to i8", "i32", "i8", big)
    np.testing.assert_array_equal(got, torch.from_numpy(big).to(torch.int8).numpy())
    got = run_unary("%r = arith.cmpi sgt, %a, %a : i32", "i32", "i1", I)
    assert not got.any()
