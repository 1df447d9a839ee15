"""Decompositions of ATen ops torch has none for, into ops the frontend lowers to
Pallas: pairwise distances (`_cdist_forward`, `_pdist_forward`) as element-wise
differences and a norm (or, where eager takes it, the matmul form of the euclidean
distance), `_trilinear` (`F.bilinear`) as a broadcast product and a sum, and the
chunked `F.linear_cross_entropy` ops as one linear and one cross entropy. Each
computes what eager's CPU kernel computes, in the order it does where that order
shows in the result."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import torch
from torch.nn import _reduction

aten = torch.ops.aten


def _batch_shape(x1: torch.Tensor, x2: torch.Tensor) -> list[int]:
    return list(torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))


def _euclidean_by_mm(x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
    """ATen's `_euclidean_dist`: |a|² + |b|² - 2 a·b as one matmul of padded rows,
    clamped at 0 and square-rooted (its rounding differs from the direct form's)."""
    x1_norm = x1.pow(2).sum(-1, keepdim=True)
    x2_norm = x2.pow(2).sum(-1, keepdim=True)
    x1_ = torch.cat([x1.mul(-2), x1_norm, torch.ones_like(x1_norm)], -1)
    x2_ = torch.cat([x2, torch.ones_like(x2_norm), x2_norm], -1)
    return x1_.matmul(x2_.mT).clamp_min(0).sqrt()


def _p_norm_last(d: torch.Tensor, p: float) -> torch.Tensor:
    """The p-norm of `d` along its last dim as ATen's distance kernels compute it: the
    count of non-zeros for p = 0, the largest magnitude for p = inf."""
    if p == 0:
        return (d != 0).to(d.dtype).sum(-1)
    if p == math.inf:
        return d.abs().amax(-1) if d.shape[-1] else d.abs().sum(-1)
    if p == 1:
        return d.abs().sum(-1)
    if p == 2:
        return (d * d).sum(-1).sqrt()
    return d.abs().pow(p).sum(-1).pow(1 / p)


def cdist_forward(
    x1: torch.Tensor, x2: torch.Tensor, p: float, compute_mode: int | None
) -> torch.Tensor:
    """`torch.cdist`. Eager takes the matmul form for p = 2 with compute_mode 1
    (`use_mm_for_euclid_dist`), or with the default (None or 0) when either side has
    more than 25 rows; else the direct form."""
    r1, r2 = x1.shape[-2], x2.shape[-2]
    batch = _batch_shape(x1, x2)
    x1 = x1.expand(*batch, *x1.shape[-2:])
    x2 = x2.expand(*batch, *x2.shape[-2:])
    mode = 0 if compute_mode is None else compute_mode
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclidean_by_mm(x1, x2)
    return _p_norm_last(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)


def _pair_rows(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows (i, j), i < j, of each of the n(n-1)/2 pairs in pdist's order (row
    major over the upper triangle), computed from the pair's position k: i from the
    root of the triangle numbers, corrected by one either way where f32 rounds it."""
    k = torch.arange(n * (n - 1) // 2, dtype=torch.int64)
    b = 2 * n - 1
    guess = ((b - torch.sqrt((b * b - 8 * k).to(torch.float32))) / 2).floor()
    i = guess.to(torch.int64).clamp(0, max(n - 2, 0))

    def start(r: torch.Tensor) -> torch.Tensor:  # the position of pair (r, r + 1)
        return r * (b - r) // 2

    i = torch.where(start(i + 1) <= k, i + 1, i)
    i = torch.where(start(i) > k, i - 1, i)
    return i, k - start(i) + i + 1


def pdist_forward(x: torch.Tensor, p: float = 2) -> torch.Tensor:
    """`F.pdist`: the p-norm distance of each pair of rows i < j, directly (eager has
    no matmul form for it)."""
    i, j = _pair_rows(x.shape[0])
    return _p_norm_last(x[i] - x[j], p)


def trilinear(
    i1: torch.Tensor,
    i2: torch.Tensor,
    i3: torch.Tensor,
    expand1: list[int],
    expand2: list[int],
    expand3: list[int],
    sumdim: list[int],
    unroll_dim: int = 1,
) -> torch.Tensor:
    """`_trilinear` (what `F.bilinear` traces to): each operand with size-1 dims
    inserted at its `expand` positions, their broadcast product summed over `sumdim`
    (those dims dropped). `unroll_dim` only says how eager loops."""
    del unroll_dim

    def expanded(t: torch.Tensor, dims: list[int]) -> torch.Tensor:
        for d in sorted(dims):
            t = t.unsqueeze(d)
        return t

    product = expanded(i1, expand1) * expanded(i2, expand2) * expanded(i3, expand3)
    # in the operands' type: `sum` would widen ints to int64, eager's `_trilinear` does not
    return product.sum(sumdim, dtype=product.dtype) if sumdim else product


def _linear_cross_entropy(
    input: torch.Tensor,
    linear_weight: torch.Tensor,
    target: torch.Tensor,
    linear_bias: torch.Tensor | None,
    weight: torch.Tensor | None,
    reduction: str,
    ignore_index: int,
) -> torch.Tensor:
    logits = torch.nn.functional.linear(input, linear_weight, linear_bias)
    return torch.nn.functional.cross_entropy(
        logits, target, weight, ignore_index=ignore_index, reduction=reduction
    )


def linear_cross_entropy_chunked(
    input: torch.Tensor,
    linear_weight: torch.Tensor,
    target: torch.Tensor,
    linear_bias: torch.Tensor | None,
    weight: torch.Tensor | None,
    reduction: str,
    ignore_index: int,
    label_smoothing: float,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: torch.dtype,
    allow_retain_graph: bool,
    compute_input_grad: bool,
    compute_linear_weight_grad: bool,
    compute_linear_bias_grad: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """`F.linear_cross_entropy`'s chunked op for reduction mean or sum (label
    smoothing 0, which torch checks before it takes this op): the loss of the whole
    batch at once, and the gradients its backward scales, computed in the forward as
    eager does when asked (else empty)."""
    del label_smoothing, batch_chunk_size, acc_policy, acc_dtype, allow_retain_graph
    logits = torch.nn.functional.linear(input, linear_weight, linear_bias)
    loss = torch.nn.functional.cross_entropy(
        logits, target, weight, ignore_index=ignore_index, reduction=reduction
    )
    kept = target != ignore_index
    safe_target = torch.where(kept, target, 0)
    row_weight = kept.to(input.dtype)
    if weight is not None:
        row_weight = row_weight * weight[safe_target]
    if reduction == "mean":
        row_weight = row_weight / row_weight.sum()
    classes = torch.arange(logits.shape[-1], device=target.device)
    one_hot = (safe_target.unsqueeze(-1) == classes).to(input.dtype)
    # d loss / d logits: (softmax - one-hot) of each row, times its weight
    grad_logits = (logits.softmax(-1) - one_hot) * row_weight.unsqueeze(-1)
    empty = input.new_empty((0, 0))
    return (
        loss,
        grad_logits @ linear_weight if compute_input_grad else empty,
        grad_logits.mT @ input if compute_linear_weight_grad else empty,
        grad_logits.sum(0) if compute_linear_bias_grad else input.new_empty((0,)),
    )


def linear_cross_entropy_chunked_no_reduction(
    input: torch.Tensor,
    linear_weight: torch.Tensor,
    target: torch.Tensor,
    linear_bias: torch.Tensor | None,
    weight: torch.Tensor | None,
    ignore_index: int,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: torch.dtype,
) -> torch.Tensor:
    """The chunked op for reduction none: each row's loss (0 where ignored)."""
    del batch_chunk_size, acc_policy, acc_dtype
    return _linear_cross_entropy(
        input, linear_weight, target, linear_bias, weight, "none", ignore_index
    )


def ctc_loss(
    log_probs: torch.Tensor,
    targets: torch.Tensor,
    input_lengths: list[int],
    target_lengths: list[int],
    blank: int = 0,
    reduction: int = 1,
    zero_infinity: bool = False,
) -> torch.Tensor:
    """`F.ctc_loss` with lengths given as lists: eager's composite, whose target
    lengths tensor (the divisor of reduction mean) it writes outside the dispatcher,
    where a trace sees an empty tensor; made here from the list, a constant. A
    composite op never reaches a decomposition table: this is its kernel under the
    Python dispatcher, which tracing enables (as torch's own `upsample_*.vec`)."""
    unbatched = log_probs.dim() == 2
    if unbatched:  # as eager: a batch of one
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    nll = aten._ctc_loss.default(
        log_probs, targets, input_lengths, target_lengths, blank, zero_infinity
    )[0]
    if unbatched:
        nll = nll.squeeze(0)
    if zero_infinity:
        nll = torch.where(nll == math.inf, torch.zeros_like(nll), nll)
    if reduction == 1:  # mean: each loss over its target's length (at least 1)
        lengths = torch.tensor(target_lengths, dtype=nll.dtype).clamp_min(1)
        return (nll / lengths).mean()
    return nll.sum() if reduction == 2 else nll


def ctc_loss_with_length_lists(func: Callable, args: tuple, kwargs: dict):
    """`F.ctc_loss` or `torch.ctc_loss` called with lengths as lists, as `ctc_loss`
    traces it (its reduction as eager's enum); None for any other call. Composite
    ops never reach a decomposition table, so the trace's torch function mode
    calls this."""
    if func is torch.nn.functional.ctc_loss:
        bound = inspect.signature(func).bind(*args, **kwargs)
        bound.apply_defaults()
        named = dict(bound.arguments)
        named["reduction"] = _reduction.get_enum(named["reduction"])
    elif func is torch.ctc_loss and not kwargs:
        names = list(inspect.signature(ctc_loss).parameters)
        named = dict(zip(names, args))
    else:
        return None
    if isinstance(named["input_lengths"], torch.Tensor):
        return None
    return ctc_loss(
        named["log_probs"],
        named["targets"],
        list(named["input_lengths"]),
        list(named["target_lengths"]),
        named.get("blank", 0),
        named.get("reduction", 1),
        named.get("zero_infinity", False),
    )


def decomposition_table() -> dict[object, Callable]:
    """ATen overload → its decomposition (the chunked cross entropy ops where torch
    has them: their module registers them, and `F.linear_cross_entropy` imports it
    only at its first chunked call, which may come after this table is built)."""
    try:
        import torch.nn.modules.linear_cross_entropy
    except ImportError:  # a torch without the chunked ops
        pass
    table: dict[object, Callable] = {
        aten._cdist_forward.default: cdist_forward,
        aten._pdist_forward.default: pdist_forward,
        aten._trilinear.default: trilinear,
    }
    torch_nn = getattr(torch.ops, "torch_nn", None)
    chunked = getattr(torch_nn, "_linear_cross_entropy_batch_chunked", None)
    if chunked is not None:
        table[chunked.default] = linear_cross_entropy_chunked
    unreduced = getattr(
        torch_nn, "_linear_cross_entropy_batch_chunked_no_reduction", None
    )
    if unreduced is not None:
        table[unreduced.default] = linear_cross_entropy_chunked_no_reduction
    return table
