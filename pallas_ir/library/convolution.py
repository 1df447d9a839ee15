"""Convolution, pooling and resampling, as torch computes them.

Arrays are laid out as torch's: leading dims (a batch, channels), then the `nd`
spatial dims last. Output sizes come from the call (the frontend knows them from the
trace), so `ceil_mode` and the like need no arithmetic here. Pools gather each window
position ("tap") of every output point into a stack, then reduce the stack:
what eager's loops compute, in its order where the order decides a result (the index
a max pool picks).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def computed(x):
    """`x` in the type it is computed in: float32 for bfloat16 (whose stored arrays
    a call may be given), as eager computes it; ints as they are."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    return x.astype(jnp.promote_types(x.dtype, jnp.float32))


def conv_dimensions(nd):
    """`lax.conv_general_dilated`'s dimension numbers for torch's layouts: input and
    output (N, C, *spatial), weight (O, I, *spatial)."""
    spatial = "DHW"[3 - nd :]
    rank = (1,) * (nd + 2)
    return lax.conv_dimension_numbers(
        rank, rank, ("NC" + spatial, "OI" + spatial, "NC" + spatial)
    )


def conv_nd(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """torch's convolution of a batch `x` (N, C, *spatial) without bias, in float32
    (`Precision.HIGHEST`: no bfloat16 passes on a TPU). A transposed convolution is
    the gradient of the convolution with respect to its input: a convolution of the
    input dilated by `stride` with the flipped kernel, its in and out channels
    swapped within each group."""
    nd = w.ndim - 2
    if transposed:
        cin, cout = w.shape[0], w.shape[1]
        kernel = w.shape[2:]
        w = w.reshape(groups, cin // groups, cout, *kernel)
        w = jnp.swapaxes(w, 1, 2).reshape(groups * cout, cin // groups, *kernel)
        w = jnp.flip(w, axis=tuple(range(2, nd + 2)))
        reach = [d * (k - 1) for d, k in zip(dilation, kernel)]
        pads = [(r - p, r - p + q) for r, p, q in zip(reach, padding, output_padding)]
        strides, lhs_dilation = (1,) * nd, tuple(stride)
    else:
        pads = [(p, p) for p in padding]
        strides, lhs_dilation = tuple(stride), (1,) * nd
    return lax.conv_general_dilated(
        x,
        w,
        strides,
        pads,
        lhs_dilation=lhs_dilation,
        rhs_dilation=tuple(dilation),
        dimension_numbers=conv_dimensions(nd),
        feature_group_count=groups,
        precision=lax.Precision.HIGHEST,
    )


def lib_convolution(
    x, w, *bias, stride, padding, dilation, transposed, output_padding, groups
):
    """`aten.convolution`: 1, 2 or 3 spatial dims, strided, padded, dilated, grouped,
    transposed; an input without a batch dim too; `bias` is none or one (C_out,)."""
    x, w, bias = computed(x), computed(w), [computed(b) for b in bias]
    batched = x.ndim == w.ndim
    x = x if batched else x[None]
    out = conv_nd(x, w, stride, padding, dilation, transposed, output_padding, groups)
    if bias:
        out = out + bias[0].reshape((-1,) + (1,) * (w.ndim - 2))
    return (out if batched else out[0],)


def lib_convolution_backward(
    grad, x, w, *, stride, padding, dilation, transposed, output_padding, groups, mask
):
    """`aten.convolution_backward`: the gradients with respect to the input, the
    weight and the bias, those `mask` asks for, in that order (by `jax.vjp` of the
    same convolution: XLA leaves out what is not asked for)."""
    grad, x, w = computed(grad), computed(x), computed(w)
    batched = x.ndim == w.ndim
    x, grad = (x, grad) if batched else (x[None], grad[None])

    def forward(x, w):
        return conv_nd(
            x, w, stride, padding, dilation, transposed, output_padding, groups
        )

    _, pullback = jax.vjp(forward, x, w)
    grad_x, grad_w = pullback(grad)
    grads = [
        grad_x if batched else grad_x[0],
        grad_w,
        jnp.sum(grad, axis=(0, *range(2, grad.ndim))),
    ]
    return tuple(g for g, wanted in zip(grads, mask) if wanted)


def pool_window_positions(n, out, kernel, stride, padding, dilation):
    """Where each tap of each window of a pool along one dim reads, (out, kernel), and
    whether that is inside the input (not padding)."""
    o = jnp.arange(out)[:, None]
    k = jnp.arange(kernel)[None, :]
    at = o * stride - padding + k * dilation
    return at, (at >= 0) & (at < n)


def adaptive_pool_positions(n, out):
    """The taps of an adaptive pool's windows along one dim: window o reads
    [floor(o * n / out), ceil((o + 1) * n / out)), padded to the longest window (a
    tap past a window's end is not in it)."""
    o = jnp.arange(out)
    start = (o * n) // out
    end = ((o + 1) * n + out - 1) // out
    longest = max(((i + 1) * n + out - 1) // out - (i * n) // out for i in range(out))
    at = start[:, None] + jnp.arange(longest)[None, :]
    return at, at < end[:, None]


def pool_taps(x, positions):
    """The stack of the taps of every window, for per-dim (positions, inside) of the
    `nd` last dims of `x` (`pool_window_positions`): the values read (taps, *lead, *out)
    (a tap outside the input reads its nearest element), whether each tap is inside
    the input (taps, *out), and the flat index in the input's spatial plane each
    reads (taps, *out). Taps are in row-major order of the window, eager's."""
    nd = len(positions)
    lead = x.ndim - nd
    sizes = x.shape[lead:]
    inside = jnp.ones((1,) * (2 * nd), bool)
    index = jnp.zeros((1,) * (2 * nd), jnp.int32)
    stride = 1
    for d in reversed(range(nd)):  # the dims before d are not split yet
        at, ok = positions[d]
        clamped = jnp.clip(at, 0, sizes[d] - 1)
        x = jnp.take(x, clamped.reshape(-1), axis=lead + d)
        x = x.reshape(x.shape[: lead + d] + at.shape + x.shape[lead + d + 1 :])
        shape = [1] * (2 * nd)
        shape[2 * d : 2 * d + 2] = at.shape
        inside = inside & ok.reshape(shape)
        index = index + (clamped * stride).astype(jnp.int32).reshape(shape)
        stride *= sizes[d]
    # x is (*lead, out_1, k_1, ..., out_nd, k_nd): the window dims go first
    split = x.shape[lead:]
    windows = [2 * d + 1 for d in range(nd)]
    outs = [2 * d for d in range(nd)]
    x = jnp.transpose(
        x, [lead + d for d in windows] + list(range(lead)) + [lead + d for d in outs]
    )
    x = x.reshape((-1,) + x.shape[nd:])

    def stacked(a):
        a = jnp.transpose(jnp.broadcast_to(a, split), windows + outs)
        return a.reshape((-1,) + a.shape[nd:])

    return x, stacked(inside), stacked(index)


def pool_max_of_taps(values, inside, index):
    """torch's max pool over stacked taps: the largest value inside the input and the
    first tap holding it, or NaN and the last NaN tap where the window holds one;
    the lowest value and the first tap inside where all are that (its loop keeps a
    value when `v > max or isnan(v)`). The value and the tap's flat index."""
    lead = values.ndim - inside.ndim
    inside = jnp.expand_dims(inside, tuple(range(1, lead + 1)))
    floating = jnp.issubdtype(values.dtype, jnp.floating)
    lowest = -jnp.inf if floating else jnp.iinfo(values.dtype).min
    nan = jnp.isnan(values) & inside if floating else jnp.zeros(values.shape, bool)
    kept = jnp.where(inside & ~nan, values, lowest)
    best = jnp.max(kept, axis=0)
    first = jnp.argmax((kept == best) & inside, axis=0)
    last_nan = values.shape[0] - 1 - jnp.argmax(jnp.flip(nan, axis=0), axis=0)
    has_nan = jnp.any(nan, axis=0)
    tap = jnp.where(has_nan, last_nan, first)
    index = jnp.broadcast_to(
        jnp.expand_dims(index, tuple(range(1, lead + 1))), values.shape
    )
    at = jnp.take_along_axis(index, tap[None], axis=0)[0]
    if floating:
        best = jnp.where(has_nan, jnp.nan, best).astype(values.dtype)
    return best, at


def lib_max_pool(x, *, out, kernel, stride, padding, dilation):
    """`aten.max_pool{1,2,3}d_with_indices`: the max of each window (padding is not
    in it) and its flat index in the input's spatial plane."""
    nd = len(out)
    sizes = x.shape[x.ndim - nd :]
    positions = [
        pool_window_positions(*args)
        for args in zip(sizes, out, kernel, stride, padding, dilation)
    ]
    return pool_max_of_taps(*pool_taps(x, positions))


def lib_adaptive_max_pool(x, *, out):
    """`aten.adaptive_max_pool{2,3}d`: the max of each adaptive window and its flat
    index in the input's spatial plane."""
    sizes = x.shape[x.ndim - len(out) :]
    return pool_max_of_taps(
        *pool_taps(x, [adaptive_pool_positions(n, m) for n, m in zip(sizes, out)])
    )


def lib_max_pool_backward(grad, indices, *, size):
    """The backward of a max pool (`max_pool{2,3}d_with_indices_backward`,
    `adaptive_max_pool{2,3}d_backward`): each output's gradient added at the flat
    index in the input's spatial plane (of shape `size`) its max came from."""
    grad = computed(grad)
    nd = len(size)
    lead = grad.shape[: grad.ndim - nd]
    plane = 1
    for n in size:
        plane *= n
    rows = 1
    for n in lead:
        rows *= n
    g = grad.reshape(rows, -1)
    i = indices.reshape(rows, -1)
    row = jnp.arange(rows)[:, None]
    out = jnp.zeros((rows, plane), grad.dtype).at[row, i].add(g)
    return (out.reshape(*lead, *size),)


def pool_mean_of_taps(x, positions, divisor):
    """The sum of each window's elements inside the input over `divisor` (an int32
    array); 0 for a window with none inside (as eager). Integers divide as eager
    divides them, truncating."""
    values, inside, _ = pool_taps(x, positions)
    lead = values.ndim - inside.ndim
    inside = jnp.expand_dims(inside, tuple(range(1, lead + 1)))
    total = jnp.sum(jnp.where(inside, values, 0), axis=0, dtype=values.dtype)
    empty = ~jnp.any(inside, axis=0)
    divisor = jnp.where(empty, 1, divisor)
    if jnp.issubdtype(values.dtype, jnp.floating):
        mean = total / divisor.astype(values.dtype)
    else:
        mean = lax.div(total, divisor.astype(values.dtype))
    return jnp.where(empty, 0, mean)


def avg_pool_nd(x, out, kernel, stride, padding, count_include_pad, divisor_override):
    """torch's average pool: the sum of each window's elements inside the input over
    the window's size within the padded input (`count_include_pad`), the count of
    its elements inside the input, or `divisor_override` (0: none)."""
    nd = len(out)
    sizes = x.shape[x.ndim - nd :]
    divisor = jnp.ones((), jnp.int32)
    positions = []
    for d in range(nd):
        n, k, s, p = sizes[d], kernel[d], stride[d], padding[d]
        positions.append(pool_window_positions(n, out[d], k, s, p, 1))
        start = jnp.arange(out[d]) * s - p
        end = jnp.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = jnp.maximum(start, 0), jnp.minimum(end, n)
        shape = [1] * nd
        shape[d] = out[d]
        divisor = divisor * (end - start).astype(jnp.int32).reshape(shape)
    if divisor_override:
        divisor = jnp.full((), divisor_override, jnp.int32)
    return pool_mean_of_taps(x, positions, divisor)


def lib_avg_pool(x, *, out, kernel, stride, padding, count_include_pad, divisor_override):
    """`aten.avg_pool{2,3}d`, of floats or ints."""
    return (
        avg_pool_nd(
            computed(x), out, kernel, stride, padding, count_include_pad, divisor_override
        ),
    )


def lib_avg_pool_backward(
    grad, *, size, kernel, stride, padding, count_include_pad, divisor_override
):
    """`aten.avg_pool{2,3}d_backward`: the pool's gradient (it is linear) with
    respect to an input of spatial shape `size`."""
    grad = computed(grad)
    nd = len(size)
    lead = grad.shape[: grad.ndim - nd]
    out = grad.shape[grad.ndim - nd :]

    def forward(x):
        return avg_pool_nd(
            x, out, kernel, stride, padding, count_include_pad, divisor_override
        )

    _, pullback = jax.vjp(forward, jnp.zeros((*lead, *size), grad.dtype))
    return pullback(grad)


def adaptive_avg_pool_nd(x, out):
    """torch's adaptive average pool: the mean of each adaptive window."""
    nd = len(out)
    sizes = x.shape[x.ndim - nd :]
    positions = [adaptive_pool_positions(n, m) for n, m in zip(sizes, out)]
    divisor = jnp.ones((), jnp.int32)
    for d, (_, inside) in enumerate(positions):
        shape = [1] * nd
        shape[d] = out[d]
        divisor = divisor * jnp.sum(inside, axis=1, dtype=jnp.int32).reshape(shape)
    return pool_mean_of_taps(x, positions, divisor)


def lib_adaptive_avg_pool(x, *, out):
    """`aten._adaptive_avg_pool{2,3}d`."""
    return (adaptive_avg_pool_nd(computed(x), out),)


def lib_adaptive_avg_pool_backward(grad, *, size):
    """`aten._adaptive_avg_pool{2,3}d_backward`, for an input of spatial shape
    `size`."""
    grad = computed(grad)
    nd = len(size)
    lead = grad.shape[: grad.ndim - nd]
    out = grad.shape[grad.ndim - nd :]
    _, pullback = jax.vjp(
        lambda x: adaptive_avg_pool_nd(x, out), jnp.zeros((*lead, *size), grad.dtype)
    )
    return pullback(grad)


def interpolate_source_index(n, out, align_corners, scale, cubic):
    """Where each output position reads along a dim of n elements (a float32 position
    in the input), as torch's `area_pixel_compute_source_index` computes it (`scale`
    is the user's scale factor, 0 for none; the ratio is rounded to float32 from
    the exact one, as torch's float32 division gives it)."""
    o = jnp.arange(out, dtype=jnp.float32)
    if align_corners:
        ratio = jnp.float32((n - 1) / (out - 1) if out > 1 else 0)
        return o * ratio
    ratio = jnp.float32(1 / scale if scale > 0 else n / out)
    at = ratio * (o + 0.5) - 0.5
    return at if cubic else jnp.maximum(at, 0)


def interpolate_low(at, n):
    """The input position below float position `at` along a dim of n elements, and
    the fraction of the way to the next (torch's `guard_index_and_lambda`)."""
    low = jnp.minimum(jnp.floor(at).astype(jnp.int32), n - 1)
    return low, jnp.clip(at - low, 0, 1)


def interpolate_along(x, axis, index, weights):
    """The sum over taps t of `weights[t]` times `x` taken at `index[t]` along `axis`
    (both (out,) arrays): interpolation along one dim."""
    shape = [1] * x.ndim
    shape[axis] = -1
    total = None
    for i, w in zip(index, weights):
        term = jnp.take(x, i, axis=axis) * w.reshape(shape).astype(x.dtype)
        total = term if total is None else total + term
    return total


def lib_upsample_linear(x, *, out, align_corners, scales):
    """`aten.upsample_{linear1d,bilinear2d,trilinear3d}`: linear interpolation along
    each of the last len(out) dims in turn, from torch's source positions."""
    x = computed(x)
    nd = len(out)
    for d in range(nd):
        axis = x.ndim - nd + d
        n = x.shape[axis]
        at = interpolate_source_index(n, out[d], align_corners, scales[d], False)
        low, frac = interpolate_low(at, n)
        high = jnp.minimum(low + 1, n - 1)
        x = interpolate_along(x, axis, [low, high], [1 - frac, frac])
    return (x,)


def bicubic_weights(t):
    """The four weights of torch's bicubic interpolation (A = -0.75) at fraction t."""
    a = -0.75
    near = [((a + 2) * s - (a + 3)) * s * s + 1 for s in (t, 1 - t)]  # |s| <= 1
    far = [((a * s - 5 * a) * s + 8 * a) * s - 4 * a for s in (t + 1, 2 - t)]
    return [far[0], near[0], near[1], far[1]]


def lib_upsample_bicubic(x, *, out, align_corners, scales):
    """`aten.upsample_bicubic2d`: cubic convolution along each of the last two dims,
    from the four inputs around torch's source position (clamped to the edge)."""
    x = computed(x)
    nd = len(out)
    for d in range(nd):
        axis = x.ndim - nd + d
        n = x.shape[axis]
        at = interpolate_source_index(n, out[d], align_corners, scales[d], True)
        low, frac = interpolate_low(at, n)
        index = [jnp.clip(low + k, 0, n - 1) for k in (-1, 0, 1, 2)]
        x = interpolate_along(x, axis, index, bicubic_weights(frac))
    return (x,)


def grid_reflect(at, twice_low, twice_high):
    """ATen's `reflect_coordinates`: `at` reflected off the bounds low and high
    (given doubled) until it lies between them."""
    if twice_low == twice_high:
        return jnp.zeros_like(at)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    at = jnp.abs(at - low)
    extra = jnp.fmod(at, span)
    flips = jnp.floor(at / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + low, span - extra + low)


def grid_padded(at, n, padding, align_corners):
    """ATen's `compute_coordinates`: a source position under the padding mode (0
    zeros: as it is; 1 border: clipped; 2 reflection: reflected, then clipped)."""
    if padding == 2:
        twice = (0, 2 * (n - 1)) if align_corners else (-1, 2 * n - 1)
        at = grid_reflect(at, *twice)
    if padding in (1, 2):
        at = jnp.clip(at, 0, n - 1)
    return at


def grid_unnormalized(coord, n, align_corners):
    """A grid coordinate in [-1, 1] as a position in a dim of `n` elements."""
    if align_corners:
        return (coord + 1) / 2 * (n - 1)
    return ((coord + 1) * n - 1) / 2


def grid_taps(x, index):
    """The elements of `x` (N, C, *spatial) at integer positions `index` (one array
    (N, *out) a spatial dim), 0 where any is out of bounds: (N, C, *out)."""
    spatial = x.shape[2:]
    inside = jnp.ones(index[0].shape, bool)
    flat = jnp.zeros(index[0].shape, jnp.int32)
    for at, n in zip(index, spatial):
        inside = inside & (at >= 0) & (at < n)
        flat = flat * n + jnp.clip(at, 0, n - 1).astype(jnp.int32)
    rows = x.reshape(x.shape[0], x.shape[1], -1)
    taken = jnp.take_along_axis(rows, flat.reshape(flat.shape[0], 1, -1), axis=2)
    taken = taken.reshape(x.shape[:2] + index[0].shape[1:])
    return jnp.where(inside[:, None], taken, 0)


def lib_grid_sample(x, grid, *, mode, padding, align_corners):
    """`aten.grid_sampler_{2d,3d}`: `x` (N, C, *spatial) read at the positions of
    `grid` (N, *out, nd; its last dim x, y[, z] in [-1, 1]) by mode 0 bilinear
    (trilinear in 3d), 1 nearest (ties to even) or 2 bicubic (A = -0.75), padding
    0 zeros, 1 border or 2 reflection, as ATen's CPU kernels compute it."""
    x, grid = computed(x), computed(grid)
    spatial = x.shape[2:]
    nd = len(spatial)
    # the spatial dims in x's order (z, y, x): grid's last dim lists them reversed
    coords = [grid[..., nd - 1 - d] for d in range(nd)]
    if mode == 2:
        at = [grid_unnormalized(g, n, align_corners) for g, n in zip(coords, spatial)]
        low = [jnp.floor(a) for a in at]
        weights = [bicubic_weights(a - lo) for a, lo in zip(at, low)]
        total = 0
        for i in range(4):
            row = 0
            for j in range(4):
                index = []
                for d, tap in enumerate((i, j)):
                    p = grid_padded(low[d] - 1 + tap, spatial[d], padding, align_corners)
                    index.append(p.astype(jnp.int32))
                row = row + grid_taps(x, index) * weights[1][j][:, None]
            total = total + row * weights[0][i][:, None]
        return (total,)
    at = [
        grid_padded(grid_unnormalized(g, n, align_corners), n, padding, align_corners)
        for g, n in zip(coords, spatial)
    ]
    if mode == 1:
        return (grid_taps(x, [jnp.round(a).astype(jnp.int32) for a in at]),)
    low = [jnp.floor(a) for a in at]
    total = 0
    for corner in range(2**nd):
        bits = [(corner >> (nd - 1 - d)) & 1 for d in range(nd)]
        weight = 1
        for a, lo, b in zip(at, low, bits):
            weight = weight * (a - lo if b else lo + 1 - a)
        index = [(lo + b).astype(jnp.int32) for lo, b in zip(low, bits)]
        total = total + grid_taps(x, index) * weight[:, None]
    return (total,)


def antialias_weights(n, out, align_corners, scale):
    """The (out, n) matrix of ATen's antialiased bilinear resampling along a dim of
    `n` (`_upsample_bilinear2d_aa`): each output's triangle filter, widened by the
    scale when shrinking, over the inputs its support covers, normalised to sum 1."""
    if align_corners:
        ratio = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n / out
    support = max(ratio, 1.0)
    center = ratio * (jnp.arange(out, dtype=jnp.float32) + 0.5)
    low = jnp.maximum((center - support + 0.5).astype(jnp.int32), 0)
    high = jnp.minimum((center + support + 0.5).astype(jnp.int32), n)
    inv = 1.0 / ratio if ratio >= 1.0 else 1.0
    j = jnp.arange(n)[None, :]
    covered = (j >= low[:, None]) & (j < high[:, None])
    t = (j - center[:, None] + 0.5) * inv
    weight = jnp.where(covered, jnp.maximum(1.0 - jnp.abs(t), 0.0), 0.0)
    total = jnp.sum(weight, 1, keepdims=True)
    return jnp.where(total != 0, weight / jnp.where(total != 0, total, 1), 0.0)


def lib_upsample_bilinear_aa(x, *, out, align_corners, scales):
    """`aten._upsample_bilinear2d_aa`: the last two dims each resampled by a matrix
    of antialiasing weights (width first, as eager's separable passes go)."""
    x = computed(x)
    for axis in (x.ndim - 1, x.ndim - 2):
        d = axis - (x.ndim - 2)
        w = antialias_weights(x.shape[axis], out[d], align_corners, scales[d])
        x = jnp.moveaxis(
            jnp.tensordot(x, w, axes=([axis], [1]), precision=lax.Precision.HIGHEST),
            -1,
            axis,
        )
    return (x,)
