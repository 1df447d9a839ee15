"""Random ops: a library call draws uniform or normal numbers (or integers, a
permutation, multinomial samples) from the call's seed (`pallas_ir.library.random`),
and the distribution's transform of them is element-wise, fused into the Pallas
kernels that use it (`bernoulli`: `u < p`, `normal`: `mean + std * n`, ...). The
numbers are not eager's: the seed comes from torch's default generator at each call,
so `torch.manual_seed` repeats a compiled program's draws, not eager's."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from xdsl.ir import SSAValue

from pallas_ir.frontend.kernel_builder import (
    Kernel,
    Value,
    broadcast_index,
    storage_value,
)
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def _seed(c: Lowering) -> tuple[Value, int]:
    seed, op = c.prog.random_op()
    return storage_value(seed, (2,), (1,)), op


def _draw(c: Lowering, fn: LibraryFn, shape=None) -> Value:
    """`fn` (uniform or normal) drawn in the op's shape (f32)."""
    shape = tuple(c.shape if shape is None else shape)
    seed, op = _seed(c)
    (drawn,) = library_call(c, fn, [seed], [(shape, "f32")], op=op, shape=list(shape))
    return drawn


def _transformed(
    c: Lowering, drawn: Value, operands, fn: Callable, gives: str = "f32"
) -> Value:
    """`fn(k, draw, *operands)` at each element (operands: Values broadcast to the
    op's shape, or Python numbers; in f32, or in f64 for a float64 result, whose
    draws are float32 ones widened), a `gives` value cast to the op's element type."""
    shape, element = c.shape, c.element
    work = "f64" if element == "f64" else "f32"
    gives = work if gives == "f32" else gives

    def emit(k: Kernel, idx) -> SSAValue:
        values = [
            o.emit(k, broadcast_index(o, shape, idx))
            if isinstance(o, Value)
            else k.constant(float(o))
            for o in operands
        ]
        values = [
            k.cast(v, o.element, work) if isinstance(o, Value) else v
            for v, o in zip(values, operands)
        ]
        v = fn(k, k.cast(drawn.emit(k, idx), "f32", work), *values)
        return k.cast(v, gives, element) if gives != element else v

    return Value(shape, emit, element)


def _affine(k: Kernel, x: SSAValue, shift: SSAValue, scale: SSAValue) -> SSAValue:
    return k.op("arith.addf", shift, k.op("arith.mulf", scale, x))


@lowers(aten.rand.default, aten.rand_like.default, runs_on=RunsOn.BOTH)
def rand(c: Lowering, args) -> Value:
    return _transformed(c, _draw(c, LibraryFn.UNIFORM), [], lambda k, u: u)


@lowers(aten.randn.default, aten.randn_like.default, runs_on=RunsOn.BOTH)
def randn(c: Lowering, args) -> Value:
    return _transformed(c, _draw(c, LibraryFn.NORMAL), [], lambda k, n: n)


@lowers(aten.uniform.default, runs_on=RunsOn.BOTH)
def uniform(c: Lowering, args) -> Value:
    low = args[1] if len(args) > 1 else c.kwargs.get("from", 0.0)
    high = args[2] if len(args) > 2 else c.kwargs.get("to", 1.0)
    width = float(high) - float(low)
    return _transformed(
        c,
        _draw(c, LibraryFn.UNIFORM),
        [low, width],
        lambda k, u, lo, w: _affine(k, u, lo, w),
    )


@lowers(
    aten.normal.Tensor_float,
    aten.normal.float_Tensor,
    aten.normal.Tensor_Tensor,
    aten.normal.float_float,
    aten.normal_functional.default,
    runs_on=RunsOn.BOTH,
)
def normal(c: Lowering, args) -> Value:
    if c.target == aten.normal_functional.default:
        mean = args[1] if len(args) > 1 else c.kwargs.get("mean", 0.0)
        std = args[2] if len(args) > 2 else c.kwargs.get("std", 1.0)
    else:
        mean = args[0]
        std = args[1] if len(args) > 1 else c.kwargs.get("std", 1.0)
    return _transformed(
        c, _draw(c, LibraryFn.NORMAL), [mean, std], lambda k, n, m, s: _affine(k, n, m, s)
    )


@lowers(aten.bernoulli.p, aten.bernoulli.default, runs_on=RunsOn.BOTH)
def bernoulli(c: Lowering, args) -> Value:
    p = args[0] if c.target == aten.bernoulli.default else args[1]
    return _transformed(
        c, _draw(c, LibraryFn.UNIFORM), [p], lambda k, u, q: k.cmp("olt", u, q), "i1"
    )


@lowers(aten.exponential.default, runs_on=RunsOn.BOTH)
def exponential(c: Lowering, args) -> Value:
    rate = args[1] if len(args) > 1 else c.kwargs.get("lambd", 1.0)

    def fn(k, u, r):  # -log(1 - u) / rate
        tail = k.op("math.log1p", k.op("arith.negf", u))
        return k.op("arith.divf", k.op("arith.negf", tail), r)

    return _transformed(c, _draw(c, LibraryFn.UNIFORM), [rate], fn)


@lowers(aten.geometric.default, runs_on=RunsOn.BOTH)
def geometric(c: Lowering, args) -> Value:
    p = float(args[1])

    def fn(k, u, log_q):  # ceil(log(1 - u) / log(1 - p)), at least 1
        trials = k.op(
            "math.ceil",
            k.op("arith.divf", k.op("math.log1p", k.op("arith.negf", u)), log_q),
        )
        return k.op("arith.maximumf", trials, k.constant(1.0))

    return _transformed(c, _draw(c, LibraryFn.UNIFORM), [math.log1p(-p)], fn)


@lowers(aten.log_normal.default, runs_on=RunsOn.BOTH)
def log_normal(c: Lowering, args) -> Value:
    mean = args[1] if len(args) > 1 else c.kwargs.get("mean", 1.0)
    std = args[2] if len(args) > 2 else c.kwargs.get("std", 2.0)
    return _transformed(
        c,
        _draw(c, LibraryFn.NORMAL),
        [mean, std],
        lambda k, n, m, s: k.op("math.exp", _affine(k, n, m, s)),
    )


@lowers(aten.cauchy.default, runs_on=RunsOn.BOTH)
def cauchy(c: Lowering, args) -> Value:
    median = args[1] if len(args) > 1 else c.kwargs.get("median", 0.0)
    sigma = args[2] if len(args) > 2 else c.kwargs.get("sigma", 1.0)

    def fn(k, u, m, s):  # median + sigma * tan(pi * (u - 1/2))
        angle = k.op(
            "arith.mulf", k.constant(math.pi), k.op("arith.subf", u, k.constant(0.5))
        )
        return _affine(k, k.op("math.tan", angle), m, s)

    return _transformed(c, _draw(c, LibraryFn.UNIFORM), [median, sigma], fn)


def _integers(c: Lowering, fn: LibraryFn, results_shape, **params) -> Value:
    seed, op = _seed(c)
    (drawn,) = library_call(c, fn, [seed], [(results_shape, "i32")], op=op, **params)
    return drawn


@lowers(
    aten.randint.low,
    aten.randint.default,
    aten.randint_like.default,
    aten.randint_like.low_dtype,
    runs_on=RunsOn.XLA,
)
def randint(c: Lowering, args) -> Value:
    bounds = {
        aten.randint.low: lambda: (args[0], args[1]),
        aten.randint.default: lambda: (0, args[0]),
        aten.randint_like.default: lambda: (0, args[1]),
        aten.randint_like.low_dtype: lambda: (args[1], args[2]),
    }
    low, high = (int(b) for b in bounds[c.target]())
    if not -(2**31) <= low < high <= 2**31:
        raise c.unsupported(f"bounds [{low}, {high}) leave int32, which kernels use")
    drawn = _integers(
        c, LibraryFn.RANDINT, c.shape, shape=list(c.shape), low=low, high=high
    )
    if c.element == "i32":
        return drawn
    element = c.element
    return Value(
        c.shape, lambda k, idx: k.cast(drawn.emit(k, idx), "i32", element), element
    )


@lowers(aten.randperm.default, runs_on=RunsOn.XLA)
def randperm(c: Lowering, args) -> Value:
    n = int(args[0])
    return _integers(c, LibraryFn.RANDPERM, (n,), n=n)


@lowers(aten.multinomial.default, runs_on=RunsOn.XLA)
def multinomial(c: Lowering, args) -> Value:
    weights, samples = args[0], int(args[1])
    replacement = bool(args[2] if len(args) > 2 else c.kwargs.get("replacement", False))
    seed, op = _seed(c)
    (drawn,) = library_call(
        c,
        LibraryFn.MULTINOMIAL,
        [seed, weights],
        [(c.shape, "i32")],
        op=op,
        samples=samples,
        replacement=replacement,
    )
    return drawn
