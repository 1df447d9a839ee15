"""Convolution, pooling and resampling: library functions on XLA
(`pallas_ir.library.convolution`), and `constant_pad_nd`, an element-wise select.

A convolution (any of 1 to 3 spatial dims, transposed, grouped, dilated) is one
`lax.conv_general_dilated`, its backward the same convolution's `jax.vjp`; the pools
gather their windows and reduce them, as eager does (a max pool's index is the flat
position in the input's spatial plane, NaN wins, the last NaN's index); bilinear and
bicubic resampling interpolate along one dim at a time. Nearest resampling, reflect,
replicate and circular padding, `F.unfold`/`F.fold` and pixel (un)shuffle need no
lowering of their own: their decompositions are gathers, selects and views;
`Tensor.unfold` is a view. A max or average pool whose windows all lie inside the
input is a Pallas kernel instead (`windows.py`). A convolution as an implicit GEMM on
the MXU is for later.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from pallas_ir.frontend.kernel_builder import Value, ints, is_float, remap
from pallas_ir.frontend.lowerings import windows
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.frontend.lowerings.windows import Window
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


def _arg(c: Lowering, args, i: int, name: str, default=None):
    """Argument `i` of the op (named `name`), positional or keyword."""
    if len(args) > i:
        return args[i]
    return c.kwargs.get(name, default)


def _per_dim(x, nd: int, default: Sequence[int] | None = None) -> list[int]:
    """An int or a list of ints for each of `nd` spatial dims (one given for all);
    `default` for an empty list (a pool's stride: its kernel size)."""
    values = ints(x) if x is not None else []
    if not values:
        assert default is not None
        return list(default)
    return values * nd if len(values) == 1 else values


def _floats(c: Lowering, values: Sequence[Value], integers: bool = False) -> None:
    """Only float tensors (eager has no integer convolution, resampling or backward);
    with `integers`, int32 and int64 ones too (max and average pools)."""
    for v in values:
        if not is_float(v.element) and not (integers and v.element == "i32"):
            kinds = "float or int" if integers else "float"
            raise c.unsupported(f"takes {kinds} tensors")


def _computed(c: Lowering) -> str:
    """The element type a float result is computed in: f64 for float64, else f32."""
    return "f64" if c.element == "f64" else "f32"


@lowers(aten.convolution.default, runs_on=RunsOn.XLA)
def convolution(c: Lowering, args) -> Value:
    x, w, bias = args[0], args[1], args[2]
    operands = [x, w] if bias is None else [x, w, bias]
    _floats(c, operands)
    nd = len(w.shape) - 2
    (out,) = library_call(
        c,
        LibraryFn.CONVOLUTION,
        operands,
        [(c.shape, c.element)],
        stride=_per_dim(args[3], nd),
        padding=_per_dim(args[4], nd),
        dilation=_per_dim(args[5], nd),
        transposed=bool(args[6]),
        output_padding=_per_dim(args[7], nd),
        groups=int(args[8]),
    )
    return out


def _unused(shape: Sequence[int]) -> Value:
    """A result eager leaves out (None): never read, a zero if it were."""
    return Value(tuple(shape), lambda k, idx: k.constant(0, "f32"))


@lowers(aten.convolution_backward.default, runs_on=RunsOn.XLA)
def convolution_backward(c: Lowering, args) -> list[Value]:
    grad, x, w = args[0], args[1], args[2]
    _floats(c, [grad, x, w])
    nd = len(w.shape) - 2
    mask = [bool(m) for m in args[10]]
    bias_shape = (grad.shape[1] if len(grad.shape) == nd + 2 else grad.shape[0],)
    shapes = [x.shape, w.shape, bias_shape]
    wanted = [s for s, m in zip(shapes, mask) if m]
    results = library_call(
        c,
        LibraryFn.CONVOLUTION_BACKWARD,
        [grad, x, w],
        [(s, _computed(c)) for s in wanted],
        stride=_per_dim(args[4], nd),
        padding=_per_dim(args[5], nd),
        dilation=_per_dim(args[6], nd),
        transposed=bool(args[7]),
        output_padding=_per_dim(args[8], nd),
        groups=int(args[9]),
        mask=mask,
    )
    it = iter(results)
    return [next(it) if m else _unused(s) for s, m in zip(shapes, mask)]


_MAX_POOLS = {
    aten.max_pool2d_with_indices.default: 2,
    aten.max_pool3d_with_indices.default: 3,
}


@lowers(*_MAX_POOLS, runs_on=RunsOn.BOTH)
def max_pool_with_indices(c: Lowering, args) -> list[Value]:
    x, nd = args[0], _MAX_POOLS[c.target]
    _floats(c, [x], integers=True)
    kernel = _per_dim(args[1], nd)
    out_shape = c.shapes[0]
    stride = _per_dim(_arg(c, args, 2, "stride"), nd, kernel)
    padding = _per_dim(_arg(c, args, 3, "padding", 0), nd)
    dilation = _per_dim(_arg(c, args, 4, "dilation", 1), nd)
    window = Window(x.shape, tuple(out_shape), kernel, stride, padding)
    if x.element == "f32" and window.in_pallas() and set(dilation) == {1}:
        return list(windows.max_pool(c.prog, x, window))
    return library_call(
        c,
        LibraryFn.MAX_POOL,
        [x],
        [(out_shape, x.element), (out_shape, "i32")],
        out=list(out_shape[-nd:]),
        kernel=kernel,
        stride=stride,
        padding=padding,
        dilation=dilation,
    )


_ADAPTIVE_MAX_POOLS = {
    aten.adaptive_max_pool2d.default: 2,
    aten.adaptive_max_pool3d.default: 3,
}


@lowers(*_ADAPTIVE_MAX_POOLS, runs_on=RunsOn.XLA)
def adaptive_max_pool(c: Lowering, args) -> list[Value]:
    x, nd = args[0], _ADAPTIVE_MAX_POOLS[c.target]
    _floats(c, [x])
    out_shape = c.shapes[0]
    return library_call(
        c,
        LibraryFn.ADAPTIVE_MAX_POOL,
        [x],
        [(out_shape, _computed(c)), (out_shape, "i32")],
        out=list(out_shape[-nd:]),
    )


_MAX_POOL_BACKWARDS = {
    aten.max_pool2d_with_indices_backward.default: (2, 7),
    aten.max_pool3d_with_indices_backward.default: (3, 7),
    aten.adaptive_max_pool2d_backward.default: (2, 2),
    aten.adaptive_max_pool3d_backward.default: (3, 2),
}
"""Each op: its spatial dims, and the position of its `indices` argument."""


@lowers(*_MAX_POOL_BACKWARDS, runs_on=RunsOn.XLA)
def max_pool_backward(c: Lowering, args) -> Value:
    nd, at = _MAX_POOL_BACKWARDS[c.target]
    grad, x, indices = args[0], args[1], args[at]
    _floats(c, [grad])
    (out,) = library_call(
        c,
        LibraryFn.MAX_POOL_BACKWARD,
        [grad, indices],
        [(c.shape, _computed(c))],
        size=list(x.shape[-nd:]),
    )
    return out


_AVG_POOLS = {aten.avg_pool2d.default: 2, aten.avg_pool3d.default: 3}
_AVG_POOL_BACKWARDS = {
    aten.avg_pool2d_backward.default: 2,
    aten.avg_pool3d_backward.default: 3,
}


def _avg_pool_params(c: Lowering, args, nd: int) -> dict:
    """An average pool's parameters, from its kernel size on (args[0] is the input)."""
    kernel = _per_dim(args[0], nd)
    divisor = _arg(c, args, 5, "divisor_override")
    return {
        "kernel": kernel,
        "stride": _per_dim(_arg(c, args, 1, "stride"), nd, kernel),
        "padding": _per_dim(_arg(c, args, 2, "padding", 0), nd),
        "count_include_pad": bool(_arg(c, args, 4, "count_include_pad", True)),
        "divisor_override": int(divisor) if divisor else 0,
    }


@lowers(*_AVG_POOLS, runs_on=RunsOn.BOTH)
def avg_pool(c: Lowering, args) -> Value:
    x, nd = args[0], _AVG_POOLS[c.target]
    _floats(c, [x], integers=True)
    params = _avg_pool_params(c, args[1:], nd)
    window = Window(
        x.shape, tuple(c.shape), params["kernel"], params["stride"], params["padding"]
    )
    if x.element == "f32" and window.in_pallas():
        return windows.avg_pool(c.prog, x, window, params["divisor_override"])
    (out,) = library_call(
        c,
        LibraryFn.AVG_POOL,
        [x],
        [(c.shape, x.element)],
        out=list(c.shape[-nd:]),
        **params,
    )
    return out


@lowers(*_AVG_POOL_BACKWARDS, runs_on=RunsOn.XLA)
def avg_pool_backward(c: Lowering, args) -> Value:
    grad, x, nd = args[0], args[1], _AVG_POOL_BACKWARDS[c.target]
    _floats(c, [grad])
    (out,) = library_call(
        c,
        LibraryFn.AVG_POOL_BACKWARD,
        [grad],
        [(c.shape, _computed(c))],
        size=list(x.shape[-nd:]),
        **_avg_pool_params(c, args[2:], nd),
    )
    return out


_ADAPTIVE_AVG_POOLS = {
    aten._adaptive_avg_pool2d.default: 2,
    aten._adaptive_avg_pool3d.default: 3,
}
_ADAPTIVE_AVG_POOL_BACKWARDS = {
    aten._adaptive_avg_pool2d_backward.default: 2,
    aten._adaptive_avg_pool3d_backward.default: 3,
}


@lowers(*_ADAPTIVE_AVG_POOLS, runs_on=RunsOn.XLA)
def adaptive_avg_pool(c: Lowering, args) -> Value:
    x, nd = args[0], _ADAPTIVE_AVG_POOLS[c.target]
    _floats(c, [x])
    (out,) = library_call(
        c,
        LibraryFn.ADAPTIVE_AVG_POOL,
        [x],
        [(c.shape, _computed(c))],
        out=list(c.shape[-nd:]),
    )
    return out


@lowers(*_ADAPTIVE_AVG_POOL_BACKWARDS, runs_on=RunsOn.XLA)
def adaptive_avg_pool_backward(c: Lowering, args) -> Value:
    grad, x, nd = args[0], args[1], _ADAPTIVE_AVG_POOL_BACKWARDS[c.target]
    _floats(c, [grad])
    (out,) = library_call(
        c,
        LibraryFn.ADAPTIVE_AVG_POOL_BACKWARD,
        [grad],
        [(c.shape, _computed(c))],
        size=list(x.shape[-nd:]),
    )
    return out


_UPSAMPLES = {
    aten.upsample_linear1d.default: (1, LibraryFn.UPSAMPLE_LINEAR),
    aten.upsample_bilinear2d.default: (2, LibraryFn.UPSAMPLE_LINEAR),
    aten.upsample_trilinear3d.default: (3, LibraryFn.UPSAMPLE_LINEAR),
    aten.upsample_bicubic2d.default: (2, LibraryFn.UPSAMPLE_BICUBIC),
}
_UPSAMPLES_VEC = {
    aten.upsample_linear1d.vec: (1, LibraryFn.UPSAMPLE_LINEAR),
    aten.upsample_bilinear2d.vec: (2, LibraryFn.UPSAMPLE_LINEAR),
    aten.upsample_trilinear3d.vec: (3, LibraryFn.UPSAMPLE_LINEAR),
    aten.upsample_bicubic2d.vec: (2, LibraryFn.UPSAMPLE_BICUBIC),
}


@lowers(*_UPSAMPLES, *_UPSAMPLES_VEC, runs_on=RunsOn.XLA)
def upsample(c: Lowering, args) -> Value:
    """Linear, bilinear, trilinear and bicubic resampling (`align_corners` either
    way; the user's scale factors, where given, set the source positions as in
    eager). The `.vec` forms take the scale factors as one list."""
    x = args[0]
    _floats(c, [x])
    if x.element == "f64":  # (the library function places them in float32)
        raise c.unsupported("not in float64: source positions in float64")
    if c.target in _UPSAMPLES:
        nd, fn = _UPSAMPLES[c.target]
        names = ["scales"] if nd == 1 else ["scales_d", "scales_h", "scales_w"][-nd:]
        scales = [_arg(c, args, 3 + d, name) for d, name in enumerate(names)]
    else:
        nd, fn = _UPSAMPLES_VEC[c.target]
        scales = list(_arg(c, args, 3, "scale_factors") or [None] * nd)
    (out,) = library_call(
        c,
        fn,
        [x],
        [(c.shape, _computed(c))],
        out=list(c.shape[-nd:]),
        align_corners=bool(_arg(c, args, 2, "align_corners", False)),
        scales=[float(s) if s else 0.0 for s in scales],
    )
    return out


@lowers(aten._upsample_bilinear2d_aa.default, runs_on=RunsOn.XLA)
def upsample_bilinear_aa(c: Lowering, args) -> Value:
    """Antialiased bilinear resampling: a matrix of eager's filter weights a dim."""
    x = args[0]
    _floats(c, [x])
    scales = [_arg(c, args, 3, "scales_h"), _arg(c, args, 4, "scales_w")]
    (out,) = library_call(
        c,
        LibraryFn.UPSAMPLE_BILINEAR_AA,
        [x],
        [(c.shape, "f32")],
        out=list(c.shape[-2:]),
        align_corners=bool(_arg(c, args, 2, "align_corners", False)),
        scales=[float(s) if s else 0.0 for s in scales],
    )
    return out


@lowers(aten.grid_sampler_2d.default, aten.grid_sampler_3d.default, runs_on=RunsOn.XLA)
def grid_sampler(c: Lowering, args) -> Value:
    """`F.grid_sample`: gathers of the input at the grid's positions, weighted."""
    x, grid = args[0], args[1]
    _floats(c, [x, grid])
    mode, padding = (
        int(_arg(c, args, 2, "interpolation_mode", 0)),
        int(_arg(c, args, 3, "padding_mode", 0)),
    )
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise c.unsupported(f"interpolation mode {mode}, padding mode {padding}")
    if mode == 2 and len(x.shape) != 4:  # eager raises too
        raise c.unsupported("bicubic interpolation takes a 4-D input only")
    (out,) = library_call(
        c,
        LibraryFn.GRID_SAMPLE,
        [x, grid],
        [(c.shape, "f32")],
        mode=mode,
        padding=padding,
        align_corners=bool(_arg(c, args, 4, "align_corners", False)),
    )
    return out


@lowers(aten.constant_pad_nd.default)
def constant_pad_nd(c: Lowering, args) -> Value:
    """Padding (or cropping, a negative pad) with a constant: each element reads the
    input in bounds (its index taken mod the dim's length, as `cat` does) and the
    position along each padded dim selects it or the constant."""
    a, pad = args[0], ints(args[1])
    value = _arg(c, args, 2, "value", 0)
    shape, element, prog = c.shape, c.element, c.prog
    rank = len(shape)
    low = [0] * rank
    for j in range(len(pad) // 2):
        low[rank - 1 - j] = pad[2 * j]
    if math.prod(a.shape) == 0:
        return Value(shape, lambda k, idx: k.constant(value, element), element)

    def emit(k, idx):
        at, inside = [], None
        for d, (i, lo, n, m) in enumerate(zip(idx, low, a.shape, shape)):
            bounds = [(lo, "sge")] if lo > 0 else []
            bounds += [(lo + n, "slt")] if lo + n < m else []
            at.append((i - lo) % n if bounds else i - lo)
            for limit, predicate in bounds:
                position = prog.position(k, idx[d], m)
                here = k.cmp(predicate, position, k.constant(limit, "i32"))
                inside = here if inside is None else k.op("arith.andi", inside, here)
        v = k.cast(a.emit(k, at), a.element, element)
        if inside is None:
            return v
        return k.op("arith.select", inside, v, k.constant(value, element))

    return Value(shape, emit, element)


@lowers(aten.unfold.default)
def unfold(c: Lowering, args) -> Value:
    """`Tensor.unfold(dim, size, step)`, a view: window i of `dim` is the new last
    dim, reading element i * step + j."""
    a, step = args[0], int(args[3])
    if not a.shape:  # a 0-d tensor's one element, as a window of 1
        return remap(a, c.shape, lambda idx: [])
    dim = int(args[1]) % len(a.shape)

    def index(idx):
        out = list(idx[:-1])
        out[dim] = idx[dim] * step + idx[-1]
        return out

    return remap(a, c.shape, index)
