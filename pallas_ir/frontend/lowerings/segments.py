"""`embedding_bag` and its backward, and `segment_reduce`: library functions on XLA
(`pallas_ir.library.indexing`), the rows gathered and reduced per bag (segment sums
and maxima), the backward a scatter-add into the table. The indices are checked
against the table as `embedding`'s are. The forward's other results (the bag of each
index, the bag sizes, where each maximum came from) are eager's, which its backward
reads; one eager gives empty is an empty value."""

from __future__ import annotations

import torch

from pallas_ir.frontend.kernel_builder import Value
from pallas_ir.frontend.lowerings.indexing import check_in_range
from pallas_ir.frontend.lowerings.library import library_call
from pallas_ir.frontend.lowerings.linalg import bound, call, empty, results
from pallas_ir.frontend.lowerings.registry import Lowering, RunsOn, lowers
from pallas_ir.library import LibraryFn

aten = torch.ops.aten


@lowers(
    aten._embedding_bag_forward_only.default,
    aten._embedding_bag.default,
    runs_on=RunsOn.XLA,
)
def embedding_bag(c: Lowering, args) -> list[Value]:
    named = bound(c, args)
    weight, indices, offsets = named["weight"], named["indices"], named["offsets"]
    weights = named["per_sample_weights"]
    if named["scale_grad_by_freq"] or named["sparse"]:
        raise c.unsupported("scale_grad_by_freq and sparse gradients")
    check_in_range(c, indices, weight.shape[0], False, 0)
    mode = int(named["mode"])
    wanted = results(c)
    (bags, width), element = wanted[0][0], wanted[1][1]
    made = [
        (bags, width),
        tuple(indices.shape),
        (bags,),
        (bags, width) if mode == 2 else (bags,),
    ]
    computed = call(
        c,
        LibraryFn.EMBEDDING_BAG,
        [weight, indices, offsets, *([weights] if weights is not None else [])],
        [wanted[0], *((shape, element) for shape in made[1:])],
        mode=mode,
        include_last_offset=bool(named["include_last_offset"]),
        padding_idx=int(named["padding_idx"]),
    )
    return [
        v if shape == want else empty(want, kind)
        for v, shape, (want, kind) in zip(computed, made, wanted)
    ]


@lowers(aten._embedding_bag_backward.default, runs_on=RunsOn.XLA)
def embedding_bag_backward(c: Lowering, args) -> Value:
    named = bound(c, args)
    if named["scale_grad_by_freq"] or named["sparse"]:
        raise c.unsupported("scale_grad_by_freq and sparse gradients")
    weights = named["per_sample_weights"]
    return call(
        c,
        LibraryFn.EMBEDDING_BAG_BACKWARD,
        [
            named["grad"],
            named["indices"],
            named["offsets"],
            named["maximum_indices"],
            *([weights] if weights is not None else []),
        ],
        [(c.shape, c.element)],
        num_weights=int(named["num_weights"]),
        mode=int(named["mode"]),
        padding_idx=int(named["padding_idx"]),
    )[0]


@lowers(aten.segment_reduce.default, runs_on=RunsOn.XLA)
def segment_reduce(c: Lowering, args) -> Value:
    named = bound(c, args)
    data, reduce = named["data"], str(named["reduce"])
    lengths, offsets = named["lengths"], named["offsets"]
    extents = lengths if lengths is not None else offsets
    if extents is None or named["indices"] is not None:
        raise c.unsupported("segments given by indices (eager: not implemented)")
    axis = int(named["axis"]) % max(len(data.shape), 1)
    if axis != 0 or len(extents.shape) != 1:
        raise c.unsupported("segments along an axis other than 0")
    if reduce not in ("sum", "mean", "max", "min", "prod"):
        raise c.unsupported(f"reduce={reduce!r}")
    initial = named["initial"]
    out, invalid, total = library_call(
        c,
        LibraryFn.SEGMENT_REDUCE,
        [data, extents],
        [(c.shape, c.element), ((), "i1"), ((), "i32")],
        reduce=reduce,
        offsets=lengths is None,
        initial=None if initial is None else float(initial),
    )
    if not named["unsafe"]:
        c.prog.check(
            invalid,
            total,
            RuntimeError,
            str(c.target),
            f"the segments do not cover the {data.shape[0]} rows of the data "
            "(a negative length, a first offset other than 0, or a total of {value})",
            c.where,
        )
    return out
