"""Losses run as library functions on XLA (`pallas_ir.library.losses`): the CTC
loss, whose alpha recursion over time is a scan."""

from __future__ import annotations

import torch

from pallas_ir.frontend.kernel_builder import Value, const, ints, remap
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


@lowers(aten._ctc_loss.default, aten._ctc_loss.Tensor, runs_on=RunsOn.XLA)
def ctc_loss(c: Lowering, args) -> list[Value]:
    """(negative log likelihood, log alpha), as eager's CPU kernel computes them;
    `zero_infinity` only changes the backward (the caller zeroes an infinite loss)."""
    log_probs, targets, input_lengths, target_lengths = args[:4]
    blank = int(args[4] if len(args) > 4 else c.kwargs.get("blank", 0))
    if log_probs.element != "f32":
        raise c.unsupported("takes float32 or bfloat16 log probabilities")
    unbatched = len(log_probs.shape) == 2
    if unbatched:  # (T, C) and one target sequence: a batch of one
        t, classes = log_probs.shape
        log_probs = remap(log_probs, (t, 1, classes), lambda idx: [idx[0], idx[2]])
    nll_shape, alpha_shape = c.shapes
    states = alpha_shape[-1]
    operands = [log_probs, targets]
    params = {}
    if isinstance(input_lengths, Value):
        operands += [input_lengths, target_lengths]
    else:
        params = {
            "input_lengths": ints(input_lengths),
            "target_lengths": ints(target_lengths),
        }
    batch = log_probs.shape[1]
    nll, alpha = library_call(
        c,
        LibraryFn.CTC_LOSS,
        operands,
        [((batch,), "f32"), ((batch, log_probs.shape[0], states), "f32")],
        blank=blank,
        states=states,
        **params,
    )
    if unbatched:
        nll = remap(nll, tuple(nll_shape), lambda idx: [const(0)])
        alpha = remap(alpha, tuple(alpha_shape), lambda idx: [const(0), *idx])
    return [nll, alpha]
