"""Integer casts, comparisons and selects through `tile` (→ tl.convert/compare/select)
and `tl-to-pallas`: each kernel computes its numpy meaning (written here) in the ta
reference, the pallas reference and interpret mode, and compiles for TPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.reference import run_forward
from pallas_ir.reference.pallas import run_forward as run_pallas_forward
from pallas_ir.tpu_check import aot_compile_many, exec_source

R, C = 32, 256
PIPELINE = (
    "stride-to-reshape,canonicalize-permutation,xla-outline,tile,tl-to-pallas,"
    "pallas-legalize-mosaic"
)
NP: dict[str, Any] = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "f32": np.float32,
    "bf16": ml_dtypes.bfloat16,
}


def _u(x: np.ndarray) -> np.ndarray:
    return x.astype(np.dtype(f"uint{x.dtype.itemsize * 8}"))


def _cmp(v: str, pred: str, c: str, t: str) -> str:
    op = "cmpf" if t.startswith(("f", "bf")) else "cmpi"
    return f"%z = arith.constant {c} : {t}\n    %c = arith.{op} {pred}, {v}, %z : {t}"


# name: (input type, output type, body defining %r from %v, numpy meaning)
CASES: dict[str, tuple[str, str, str, Callable[[np.ndarray], np.ndarray]]] = {
    "extsi_i8_i32": ("i8", "i32", "%r = arith.extsi %v : i8 to i32",
                     lambda x: x.astype(np.int32)),
    "extui_i8_i32": ("i8", "i32", "%r = arith.extui %v : i8 to i32",
                     lambda x: _u(x).astype(np.int32)),
    "extui_i16_i32": ("i16", "i32", "%r = arith.extui %v : i16 to i32",
                      lambda x: _u(x).astype(np.int32)),
    "trunci_i32_i8": ("i32", "i8", "%r = arith.trunci %v : i32 to i8",
                      lambda x: x.astype(np.int8)),
    "trunci_i32_i16": ("i32", "i16", "%r = arith.trunci %v : i32 to i16",
                       lambda x: x.astype(np.int16)),
    "sitofp_i32_f32": ("i32", "f32", "%r = arith.sitofp %v : i32 to f32",
                       lambda x: x.astype(np.float32)),
    "sitofp_i8_f32": ("i8", "f32", "%r = arith.sitofp %v : i8 to f32",
                      lambda x: x.astype(np.float32)),
    "uitofp_i8_f32": ("i8", "f32", "%r = arith.uitofp %v : i8 to f32",
                      lambda x: _u(x).astype(np.float32)),
    "uitofp_i32_f32": ("i32", "f32", "%r = arith.uitofp %v : i32 to f32",
                       lambda x: _u(x).astype(np.float32)),
    "fptosi_f32_i32": ("f32", "i32", "%r = arith.fptosi %v : f32 to i32",
                       lambda x: np.trunc(x).astype(np.int32)),
    "fptosi_f32_i8": ("f32", "i8", "%r = arith.fptosi %v : f32 to i8",
                      lambda x: np.trunc(x).astype(np.int8)),
    "fptoui_f32_i8": ("f32", "i8", "%a = math.absf %v : f32\n    %r = arith.fptoui %a : f32 to i8",
                      lambda x: np.trunc(np.abs(x)).astype(np.uint8).view(np.int8)),
    "fptoui_f32_i32": ("f32", "i32", "%a = math.absf %v : f32\n    %r = arith.fptoui %a : f32 to i32",
                       lambda x: np.trunc(np.abs(x)).astype(np.int32)),
    "fptosi_bf16_i32": ("bf16", "i32", "%r = arith.fptosi %v : bf16 to i32",
                        lambda x: np.trunc(x.astype(np.float32)).astype(np.int32)),
    "sitofp_i32_bf16": ("i32", "bf16", "%r = arith.sitofp %v : i32 to bf16",
                        lambda x: x.astype(ml_dtypes.bfloat16)),
    # i1 is signed in arith: extsi/sitofp of true give -1.
    "extsi_i1_i32": ("f32", "i32", _cmp("%v", "olt", "0.0", "f32") + "\n    %r = arith.extsi %c : i1 to i32",
                     lambda x: -(x < 0).astype(np.int32)),
    "sitofp_i1_f32": ("f32", "f32", _cmp("%v", "olt", "0.0", "f32") + "\n    %r = arith.sitofp %c : i1 to f32",
                      lambda x: -(x < 0).astype(np.float32)),
    "uitofp_i1_f32": ("f32", "f32", _cmp("%v", "olt", "0.0", "f32") + "\n    %r = arith.uitofp %c : i1 to f32",
                      lambda x: (x < 0).astype(np.float32)),
    # A cast to i1 keeps the low bit (after truncation toward zero).
    "trunci_i32_i1": ("i32", "i32", "%c = arith.trunci %v : i32 to i1\n    %r = arith.extui %c : i1 to i32",
                      lambda x: x & 1),
    "fptosi_f32_i1": ("f32", "i32", "%c = arith.fptosi %v : f32 to i1\n    %r = arith.extui %c : i1 to i32",
                      lambda x: np.trunc(x).astype(np.int32) & 1),
    "cmpi_ult": ("i32", "i32", _cmp("%v", "ult", "3", "i32") + "\n    %r = arith.extui %c : i1 to i32",
                 lambda x: (_u(x) < 3).astype(np.int32)),
    "cmpi_sge": ("i32", "i32", _cmp("%v", "sge", "-2", "i32") + "\n    %r = arith.extui %c : i1 to i32",
                 lambda x: (x >= -2).astype(np.int32)),
    "cmpf_ult_select": ("f32", "f32", _cmp("%v", "ult", "0.5", "f32") + "\n    %r = arith.select %c, %v, %z : f32",
                        lambda x: np.where(x < 0.5, x, np.float32(0.5))),
    "cmpf_one": ("f32", "i32", _cmp("%v", "one", "0.5", "f32") + "\n    %r = arith.extui %c : i1 to i32",
                 lambda x: (x != 0.5).astype(np.int32)),
    "select_i32": ("i32", "i32", _cmp("%v", "sgt", "0", "i32") + "\n    %n = arith.subi %z, %v : i32\n    %r = arith.select %c, %v, %n : i32",
                   np.abs),
    # Mosaic compares only 32-bit integers: pallas-legalize-mosaic widens 8- and 16-bit tiles by
    # sign extension, which keeps the unsigned order too.
    "select_i8": ("i8", "i8", _cmp("%v", "sgt", "0", "i8") + "\n    %r = arith.select %c, %v, %z : i8",
                  lambda x: np.maximum(x, 0)),
    "cmpi_ult_i8": ("i8", "i32", _cmp("%v", "ult", "-3", "i8") + "\n    %r = arith.extui %c : i1 to i32",
                    lambda x: (_u(x) < np.uint8(253)).astype(np.int32)),
    "cmpi_uge_i16": ("i16", "i32", _cmp("%v", "uge", "300", "i16") + "\n    %r = arith.extui %c : i1 to i32",
                     lambda x: (_u(x) >= 300).astype(np.int32)),
    "cmpi_slt_i16": ("i16", "i16", _cmp("%v", "slt", "-5", "i16") + "\n    %r = arith.select %c, %v, %z : i16",
                     lambda x: np.where(x < -5, x, np.int16(-5))),
    "cmpi_eq_i8": ("i8", "i32", _cmp("%v", "eq", "-128", "i8") + "\n    %r = arith.extui %c : i1 to i32",
                   lambda x: (x == -128).astype(np.int32)),
}  # fmt: skip


def module_text(name: str, ti: str, to: str, body: str) -> str:
    a, o = f"memref<{R}x{C}x{ti}>", f"memref<{R}x{C}x{to}>"
    return f"""
ta.kernel @{name}(%x: {a} {{role = "in"}}, %out: {o} {{role = "out"}}) {{
  ta.loop [{R}, {C}] (%i, %j) {{
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : {a}
    {body}
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : {o}
  }}
}}
func.func @forward(%x: {a}) -> {o} {{
  %out = ta.alloc : {o}
  ta.launch @{name}(%x, %out) : {a}, {o}
  func.return %out : {o}
}}"""


def lower(name: str):
    text = module_text(name, *CASES[name][:3])
    source = pallas_ir.parse(text)
    pallas_ir.verify(source)
    lowered = pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, PIPELINE)
    return source, lowered


def inputs(name: str) -> np.ndarray:
    t = CASES[name][0]
    rng = np.random.default_rng(7)
    if t.startswith("i"):
        info = np.iinfo(NP[t])
        lo, hi = max(int(info.min), -70000), min(int(info.max), 70000)
        return rng.integers(lo, hi + 1, (R, C)).astype(NP[t])
    return rng.uniform(-40, 40, (R, C)).astype(NP[t])  # fractions of both signs


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_casts_compute_their_meaning(name: str) -> None:
    source, lowered = lower(name)
    x = inputs(name)
    want = np.asarray(CASES[name][3](x)).astype(NP[CASES[name][1]])
    (ta_out,) = run_forward(source, x)
    (pallas_out,) = run_pallas_forward(lowered, x)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = np.asarray(forward(jnp.asarray(x), interpret=True))
    for what, value in (("ta", ta_out), ("pallas", pallas_out), ("interpret", got)):
        np.testing.assert_array_equal(
            np.asarray(value).astype(np.float64), want.astype(np.float64), err_msg=what
        )


def test_lowered_casts_compile_for_tpu() -> None:
    names = sorted(CASES)
    items = []
    for name in names:
        _, lowered = lower(name)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    for chip in ("v5e", "v6e"):
        results = aot_compile_many(items, chip=chip)
        bad = {n: r.message for n, r in zip(names, results) if not r.ok}
        assert not bad, (chip, bad)


FLOAT_PREDICATES: dict[str, Callable[[Any, Any], Any]] = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less,
    "ole": np.less_equal, "one": np.not_equal, "ord": lambda a, b: True,
    "ueq": np.equal, "ugt": np.greater, "uge": np.greater_equal, "ult": np.less,
    "ule": np.less_equal, "une": np.not_equal, "uno": lambda a, b: False,
}  # fmt: skip
"""The comparison where neither side is NaN; where one is, `o*` give false, `u*` true."""


@pytest.mark.parametrize("pred", sorted(FLOAT_PREDICATES))
def test_float_predicates_treat_nan_as_arith_does(pred: str) -> None:
    body = f"""%h = arith.constant 0.5 : f32
    %c = arith.cmpf {pred}, %v, %h : f32
    %r = arith.extui %c : i1 to i32"""
    text = module_text(f"cmp_{pred}", "f32", "i32", body)
    source = pallas_ir.parse(text)
    lowered = pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, PIPELINE)
    x = np.tile(np.array([0.0, 0.5, 1.0, np.nan], np.float32), (R, C // 4))
    nan = np.isnan(x)
    want = np.where(nan, pred.startswith("u"), FLOAT_PREDICATES[pred](x, 0.5))
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = np.asarray(forward(jnp.asarray(x), interpret=True))
    for what, value in (
        ("ta", run_forward(source, x)[0]),
        ("pallas", run_pallas_forward(lowered, x)[0]),
        ("interpret", got),
    ):
        np.testing.assert_array_equal(value, want.astype(np.int32), err_msg=what)
