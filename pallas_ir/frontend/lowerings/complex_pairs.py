"""Complex tensors as pairs of reals: a complex64 tensor of shape S is a value of
shape (*S, 2), f32, its real part at [..., 0] and its imaginary part at [..., 1] (the
layout of `torch.view_as_real`, which is also how the program takes and gives complex
inputs and outputs). Kernels have no complex types: `view_as_complex` and
`view_as_real` are the same value, a view of a complex tensor is that view of the
pairs with the pair dim kept last, and complex arithmetic (the RoPE pattern's
product) is element-wise on the two parts, fused into the Pallas kernel that reads
it. The FFTs are library functions on XLA (`pallas_ir.library.fft`), which take and
give the pairs.

An op that reads or makes a complex tensor is lowered by its complex lowering
(`lowers_complex`, registered under `OnComplex(op)`), never by its real one on the
pairs, which would compute something else: an op without one is refused."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineConstantExpr

from pallas_ir.frontend.kernel_builder import (
    Index,
    Kernel,
    Value,
    broadcast_index,
    const,
)
from pallas_ir.frontend.lowerings.linalg import call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten

COMPLEX_DTYPES = (torch.complex64,)
"""Complex dtypes the program holds as pairs of f32 (complex128 would need float64)."""


@dataclass(frozen=True)
class OnComplex:
    """ATen op `op` where it reads or makes complex tensors: the key of its complex
    lowering in the registry."""

    op: Any

    def __str__(self) -> str:
        return f"{self.op} on complex tensors"


def lowers_complex(*targets, runs_on: RunsOn = RunsOn.PALLAS):
    """Register the decorated function as the lowering of `targets` on complex
    tensors."""
    return lowers(*(OnComplex(t) for t in targets), runs_on=runs_on)


def is_complex(val: object) -> bool:
    return isinstance(val, torch.Tensor) and val.dtype.is_complex


def pair_shape(val: torch.Tensor) -> tuple[int, ...]:
    """The shape of the value holding `val` (pairs of reals for a complex tensor)."""
    return (*val.shape, 2) if is_complex(val) else tuple(val.shape)


def involves_complex(node: torch.fx.Node) -> bool:
    """Whether graph node `node` reads or makes a complex tensor."""
    vals = node.meta.get("val")
    results = vals if isinstance(vals, list | tuple) else [vals]
    operands = [
        b
        for a in (*node.args, *node.kwargs.values())
        for b in (a if isinstance(a, list | tuple) else [a])
        if isinstance(b, torch.fx.Node)
    ]
    return any(map(is_complex, results)) or any(
        is_complex(b.meta.get("val")) for b in operands
    )


def _is_pair(c: Lowering, i: int) -> bool:
    """Whether the op's argument `i` is a complex tensor (held as pairs)."""
    a = c.node.args[i] if i < len(c.node.args) else None
    return isinstance(a, torch.fx.Node) and is_complex(a.meta.get("val"))


def _rank(c: Lowering, i: int = 0) -> int:
    """The torch rank of the op's tensor argument `i`."""
    return c.node.args[i].meta["val"].dim()  # type: ignore[union-attr]


Parts = tuple[SSAValue, SSAValue]


def parts(k: Kernel, x: Any, pair: bool, shape: Sequence[int], idx: Index) -> Parts:
    """The real and imaginary parts, as f32, of operand `x` (a Value of pairs when
    `pair`, a real Value, or a Python number) at index `idx` of a result of torch
    shape `shape` it broadcasts to."""
    if isinstance(x, Value):
        if pair:
            lead = len(shape) - len(x.shape) + 1
            at = [
                const(0) if n == 1 else idx[lead + d] for d, n in enumerate(x.shape[:-1])
            ]
            return x.emit(k, [*at, const(0)]), x.emit(k, [*at, const(1)])
        re = k.cast(x.emit(k, broadcast_index(x, shape, idx)), x.element, "f32")
        return re, k.constant(0.0)
    z = complex(x)
    return k.constant(z.real), k.constant(z.imag)


def pairs(
    c: Lowering,
    compute: Callable[[Kernel, Index], Parts],
    shape: Sequence[int] | None = None,
) -> Value:
    """The complex result (of pairs `shape`, the op's by default) whose parts at each
    torch index `compute` gives: the part the pair index picks (both built, and one
    selected, where it is not a constant)."""
    shape = c.shape if shape is None else tuple(shape)

    def emit(k: Kernel, idx: Index) -> SSAValue:
        *at, j = idx
        re, im = compute(k, at)
        if isinstance(j, AffineConstantExpr):
            return im if j.value else re
        first = k.cmp("eq", c.prog.position(k, j, 2), k.constant(0, "i32"))
        return k.op("arith.select", first, re, im)

    return Value(shape, emit, "f32")


def _binary(c: Lowering, args, combine: Callable[[Kernel, Parts, Parts], Parts]):
    a, b = args[0], args[1]
    pa, pb = _is_pair(c, 0), _is_pair(c, 1)
    shape = c.shape[:-1]
    return pairs(
        c,
        lambda k, idx: combine(
            k, parts(k, a, pa, shape, idx), parts(k, b, pb, shape, idx)
        ),
    )


def _mul(k: Kernel, x: Parts, y: Parts) -> Parts:
    (a, b), (p, q) = x, y
    re = k.op("arith.subf", k.op("arith.mulf", a, p), k.op("arith.mulf", b, q))
    im = k.op("arith.addf", k.op("arith.mulf", a, q), k.op("arith.mulf", b, p))
    return re, im


@lowers_complex(aten.mul.Tensor)
def mul(c: Lowering, args) -> Value:
    return _binary(c, args, _mul)


@lowers_complex(aten.div.Tensor)
def div(c: Lowering, args) -> Value:
    def divide(k: Kernel, x: Parts, y: Parts) -> Parts:
        (a, b), (p, q) = x, y
        norm = k.op("arith.addf", k.op("arith.mulf", p, p), k.op("arith.mulf", q, q))
        re = k.op("arith.addf", k.op("arith.mulf", a, p), k.op("arith.mulf", b, q))
        im = k.op("arith.subf", k.op("arith.mulf", b, p), k.op("arith.mulf", a, q))
        return k.op("arith.divf", re, norm), k.op("arith.divf", im, norm)

    return _binary(c, args, divide)


@lowers_complex(aten.add.Tensor, aten.sub.Tensor)
def add(c: Lowering, args) -> Value:
    alpha = complex(c.kwargs.get("alpha", 1))
    add = c.target.op is aten.add.Tensor

    def combine(k: Kernel, x: Parts, y: Parts) -> Parts:
        if alpha != 1:
            y = _mul(k, y, (k.constant(alpha.real), k.constant(alpha.imag)))
        op = "arith.addf" if add else "arith.subf"
        return k.op(op, x[0], y[0]), k.op(op, x[1], y[1])

    return _binary(c, args, combine)


def _unary(c: Lowering, args, f: Callable[[Kernel, Parts], Parts]) -> Value:
    x, pair = args[0], _is_pair(c, 0)
    shape = c.shape[:-1]
    return pairs(c, lambda k, idx: f(k, parts(k, x, pair, shape, idx)))


@lowers_complex(aten.neg.default)
def neg(c: Lowering, args) -> Value:
    return _unary(
        c, args, lambda k, p: (k.op("arith.negf", p[0]), k.op("arith.negf", p[1]))
    )


@lowers_complex(
    aten._conj.default, aten.conj_physical.default, aten._conj_physical.default
)
def conj(c: Lowering, args) -> Value:
    return _unary(c, args, lambda k, p: (p[0], k.op("arith.negf", p[1])))


@lowers_complex(aten.exp.default)
def exp(c: Lowering, args) -> Value:
    def f(k: Kernel, p: Parts) -> Parts:
        r = k.op("math.exp", p[0])
        return (
            k.op("arith.mulf", r, k.op("math.cos", p[1])),
            k.op("arith.mulf", r, k.op("math.sin", p[1])),
        )

    return _unary(c, args, f)


@lowers_complex(aten.complex.default, aten.polar.default)
def from_parts(c: Lowering, args) -> Value:
    """`complex(real, imag)`, or `polar(abs, angle)`: from two real tensors."""
    a, b = args[0], args[1]
    shape = c.shape[:-1]
    polar = c.target.op is aten.polar.default

    def compute(k: Kernel, idx: Index) -> Parts:
        x = k.cast(a.emit(k, broadcast_index(a, shape, idx)), a.element, "f32")
        y = k.cast(b.emit(k, broadcast_index(b, shape, idx)), b.element, "f32")
        if polar:
            return (
                k.op("arith.mulf", x, k.op("math.cos", y)),
                k.op("arith.mulf", x, k.op("math.sin", y)),
            )
        return x, y

    return pairs(c, compute)


@lowers_complex(aten.abs.default, aten.angle.default)
def magnitude(c: Lowering, args) -> Value:
    """|z| or arg(z): a real result."""
    x, shape = args[0], c.shape
    angle = c.target.op is aten.angle.default

    def emit(k: Kernel, idx: Index) -> SSAValue:
        re, im = parts(k, x, True, shape, idx)
        if angle:
            return k.op("math.atan2", im, re)
        square = k.op(
            "arith.addf", k.op("arith.mulf", re, re), k.op("arith.mulf", im, im)
        )
        return k.op("math.sqrt", square)

    return Value(shape, emit, "f32")


@lowers_complex(aten._to_copy.default)
def to_copy(c: Lowering, args) -> Value:
    val = c.node.meta["val"]
    if val.dtype not in COMPLEX_DTYPES and val.dtype != torch.float32:
        raise c.unsupported(f"a complex tensor as {val.dtype}")
    x, pair = args[0], _is_pair(c, 0)
    if pair and is_complex(val):
        return x
    if pair:  # complex to real: the real part, as eager gives (with a warning)
        shape = c.shape
        return Value(shape, lambda k, idx: parts(k, x, True, shape, idx)[0], "f32")
    return pairs(c, lambda k, idx: parts(k, x, False, c.shape[:-1], idx))


@lowers_complex(aten.copy.default)
def copy(c: Lowering, args) -> Value:
    """dst's shape and dtype, src's values (the real part of a complex one into a
    real dst)."""
    src, pair = args[1], _is_pair(c, 1)
    if not is_complex(c.node.meta["val"]):
        shape = c.shape
        return Value(shape, lambda k, idx: parts(k, src, True, shape, idx)[0], "f32")
    return pairs(c, lambda k, idx: parts(k, src, pair, c.shape[:-1], idx))


@lowers_complex(aten.where.self)
def where(c: Lowering, args) -> Value:
    cond, a, b = args
    pa, pb = _is_pair(c, 1), _is_pair(c, 2)
    shape = c.shape[:-1]

    def compute(k: Kernel, idx: Index) -> Parts:
        hit = cond.emit(k, broadcast_index(cond, shape, idx))
        x, y = parts(k, a, pa, shape, idx), parts(k, b, pb, shape, idx)
        return (
            k.op("arith.select", hit, x[0], y[0]),
            k.op("arith.select", hit, x[1], y[1]),
        )

    return pairs(c, compute)


@lowers_complex(
    aten.zeros_like.default,
    aten.ones_like.default,
    aten.full_like.default,
    aten.full.default,
    aten.scalar_tensor.default,
)
def constant(c: Lowering, args) -> Value:
    op = c.target.op
    if op in (aten.full_like.default, aten.full.default):
        value = complex(args[1])
    elif op is aten.scalar_tensor.default:
        value = complex(args[0])
    else:
        value = complex(op is aten.ones_like.default)
    return pairs(c, lambda k, idx: (k.constant(value.real), k.constant(value.imag)))


# ---------------------------------------------------------------------------------------
# Views and ops along dims: the real op on the pairs, the pair dim kept last.


@lowers_complex(
    aten.view_as_real.default,
    aten.view_as_complex.default,
    aten.clone.default,
    aten.alias.default,
    aten.resolve_conj.default,
    aten.resolve_neg.default,
    aten.lift_fresh_copy.default,
)
def same(c: Lowering, args) -> Value:
    """The same pairs: these ops change how torch sees them, not the values."""
    return args[0]


@lowers_complex(
    aten.view.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.expand.default,
)
def reshaped(c: Lowering, args) -> Value:
    return c.lower(c.target.op, [args[0], list(c.shape)])


@lowers_complex(aten.permute.default)
def permute(c: Lowering, args) -> Value:
    r = _rank(c)
    return c.lower(c.target.op, [args[0], [d % r for d in args[1]] + [r]])


@lowers_complex(aten.t.default)
def t(c: Lowering, args) -> Value:
    order = [1, 0, 2] if _rank(c) == 2 else list(range(_rank(c) + 1))
    return c.lower(aten.permute.default, [args[0], order])


@lowers_complex(aten.transpose.int)
def transpose(c: Lowering, args) -> Value:
    r = _rank(c)
    return c.lower(c.target.op, [args[0], args[1] % r, args[2] % r])


@lowers_complex(
    aten.slice.Tensor,
    aten.select.int,
    aten.index_select.default,
    aten.squeeze.dim,
    aten.flip.default,
    aten.sum.dim_IntList,
    aten.mean.dim,
)
def along_dims(c: Lowering, args) -> Value:
    """An op whose second argument is a dim (or dims) of its complex operand."""
    r = _rank(c)
    dims = args[1] if len(args) > 1 else c.kwargs.get("dim", 0)
    if dims is None or (isinstance(dims, list | tuple) and not dims):
        dims = list(range(r))  # a full reduction: every dim but the pair's
    if isinstance(dims, list | tuple):
        dims = [d % r for d in dims]
    else:
        dims = dims % r
    return c.lower(c.target.op, [args[0], dims, *args[2:]], c.kwargs)


@lowers_complex(aten.roll.default)
def roll(c: Lowering, args) -> Value:
    """Along its dims (the pair dim kept last); with none, the flattened pairs roll."""
    r = _rank(c)
    dims = list(args[2]) if len(args) > 2 else []
    if dims:
        return c.lower(c.target.op, [args[0], list(args[1]), [d % r for d in dims]])
    n = math.prod(c.shape[:-1])
    flat = c.lower(aten.view.default, [args[0], [n, 2]], shape=(n, 2))
    rolled = c.lower(c.target.op, [flat, list(args[1]), [0]], shape=(n, 2))
    return c.lower(aten.view.default, [rolled, list(c.shape)])


@lowers_complex(aten.slice_scatter.default, aten.select_scatter.default)
def scatter_along(c: Lowering, args) -> Value:
    """A write of src into base along a dim (the third argument); both complex, or a
    real src written as complex values."""
    base, src = args[0], args[1]
    if not _is_pair(c, 1):
        shape = tuple(c.node.args[1].meta["val"].shape)  # type: ignore[union-attr]
        src = pairs(c, lambda k, idx: parts(k, args[1], False, shape, idx), (*shape, 2))
    r = _rank(c)
    dim = args[2] if len(args) > 2 else c.kwargs.get("dim", 0)
    return c.lower(c.target.op, [base, src, dim % r, *args[3:]], c.kwargs)


@lowers_complex(aten.constant_pad_nd.default)
def constant_pad(c: Lowering, args) -> Value:
    """Padding with zeros (or a real value: both parts of a complex one must be)."""
    value = complex(args[2] if len(args) > 2 else c.kwargs.get("value", 0))
    if value.imag:
        raise c.unsupported("a complex padding value")
    return c.lower(c.target.op, [args[0], [0, 0, *args[1]], value.real])


@lowers_complex(aten.sum.default, aten.mean.default)
def full_reduction(c: Lowering, args) -> Value:
    """A sum or mean of every element: over every dim but the pair's."""
    op = aten.sum.dim_IntList if c.target.op is aten.sum.default else aten.mean.dim
    return c.lower(op, [args[0], list(range(_rank(c)))])


@lowers_complex(aten.squeeze.dims, aten.squeeze.default)
def squeeze(c: Lowering, args) -> Value:
    shape = c.node.args[0].meta["val"].shape  # type: ignore[union-attr]
    r = len(shape)
    dims = args[1] if len(args) > 1 else range(r)
    dims = [d % r for d in dims if shape[d % r] == 1]
    return c.lower(aten.squeeze.dims, [args[0], dims])


@lowers_complex(aten.unsqueeze.default)
def unsqueeze(c: Lowering, args) -> Value:
    return c.lower(c.target.op, [args[0], args[1] % (_rank(c) + 1)])


@lowers_complex(aten.cat.default)
def cat(c: Lowering, args) -> Value:
    tensors = c.node.args[0]
    values = []
    for node, v in zip(tensors, args[0]):  # type: ignore[arg-type]
        val = node.meta["val"]
        if math.prod(val.shape) == 0 and val.dim() == 1:
            continue  # eager skips an empty 1-d part
        if not is_complex(val):  # a real part of a complex cat: its values + 0i
            shape = tuple(val.shape)
            v = pairs(
                c,
                lambda k, idx, v=v, shape=shape: parts(k, v, False, shape, idx),
                (*shape, 2),
            )
        values.append(v)
    r = len(c.shape) - 1
    dim = args[1] if len(args) > 1 else c.kwargs.get("dim", 0)
    return c.lower(c.target.op, [values, dim % r])


# ---------------------------------------------------------------------------------------
# FFTs: library functions on XLA, on the pairs.


@lowers_complex(aten._fft_r2c.default, runs_on=RunsOn.XLA)
def fft_r2c(c: Lowering, args) -> Value:
    x, dims, normalization, onesided = args[0], args[1], int(args[2]), bool(args[3])
    r = len(x.shape)
    return call(
        c,
        LibraryFn.FFT_R2C,
        [x],
        [(c.shape, "f32")],
        dim=[d % r for d in dims],
        normalization=normalization,
        onesided=onesided,
    )[0]


@lowers_complex(aten._fft_c2c.default, runs_on=RunsOn.XLA)
def fft_c2c(c: Lowering, args) -> Value:
    z, dims, normalization, forward = args[0], args[1], int(args[2]), bool(args[3])
    r = _rank(c)
    return call(
        c,
        LibraryFn.FFT_C2C,
        [z],
        [(c.shape, "f32")],
        dim=[d % r for d in dims],
        normalization=normalization,
        forward=forward,
    )[0]


@lowers_complex(aten._fft_c2r.default, runs_on=RunsOn.XLA)
def fft_c2r(c: Lowering, args) -> Value:
    z, dims, normalization, size = args[0], args[1], int(args[2]), int(args[3])
    r = _rank(c)
    return call(
        c,
        LibraryFn.FFT_C2R,
        [z],
        [(c.shape, "f32")],
        dim=[d % r for d in dims],
        normalization=normalization,
        last_dim_size=size,
    )[0]
