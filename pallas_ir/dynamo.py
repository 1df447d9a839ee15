"""`torch.compile(fn, backend="pallas_ir")`: the dynamo backend (registered through the
`torch_dynamo_backends` entry point).

Dynamo hands over an FX graph; AOTAutograd (`torch._dynamo.backends.common.aot_autograd`,
with the frontend's decompositions and the min-cut rematerialization partitioner, as
Inductor uses) functionalizes it, lifts parameters and buffers to inputs, and splits it
into a forward and a backward graph (or one inference graph when nothing requires grad).
Each graph is a `CompiledGraph`: compiled at its first call, specialised on the call's
concrete shapes, and again for each new set of shapes. An inference graph writes the
inputs it mutates itself (`keep_inference_input_mutations`: a KV-cache write is made
in place); for a training graph AOTAutograd's runtime copies the new values of mutated
inputs back after the call. It regenerates outputs that alias inputs.

A graph with ops the frontend cannot compile is split: the ops it can compile are
grouped into partitions (as large as the graph's dependencies allow), each compiled to
one Pallas module, and the rest run in eager PyTorch between them. Anything else that
fails (AOTAutograd's trace, the partitioner) runs the graph in eager PyTorch. One warning
names what runs eagerly; the backend never raises.
"""

from __future__ import annotations

import functools
import traceback
import warnings
from collections.abc import Callable, Sequence

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from pallas_ir.compile_profile import gc_paused
from pallas_ir.compiler import CompiledGraph, specialised
from pallas_ir.frontend import UnsupportedError, check_node, trace_to_aten
from pallas_ir.frontend.torch_to_ta import (
    MathAttention,
    copied,
    frontend_decompositions,
)

EAGER_NOTICE = "pallas_ir: these ops run in eager PyTorch, the rest as Pallas kernels: "
"""How the one warning of a graph with eager ops begins; the ops follow, `; `-separated."""


class _Compilable(OperatorSupportBase):
    """The ATen nodes the frontend compiles; the reasons for the others, kept."""

    def __init__(self) -> None:
        self.rejected: dict[torch.fx.Node, UnsupportedError] = {}

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function":  # inputs and outputs stay in the outer graph
            return False
        into = node.args[0] if node.args else None
        if (
            node.target is torch.ops.aten.copy_.default
            and isinstance(into, torch.fx.Node)
            and into.op == "placeholder"
        ):
            # The graph's write into its input stays in the outer graph too, as
            # AOTAutograd's epilogue would run it: no op of the user's runs eagerly.
            return False
        error = check_node(node)
        if error is not None:
            self.rejected[node] = error
        return error is None


class _CompiledPartition(torch.nn.Module):
    """A partition of the ATen graph, compiled to a Pallas module at its first call
    for the tensors it is called with (an eager op before it may hand over other
    strides than the trace saw), once per signature."""

    def __init__(self, sub: torch.fx.GraphModule, graph: CompiledGraph):
        super().__init__()
        self.graph = graph
        (output,) = [n for n in sub.graph.nodes if n.op == "output"]
        self.returns_sequence = isinstance(output.args[0], tuple | list)

    def forward(self, *tensors: torch.Tensor):
        out = self.graph(list(tensors))
        return out if self.returns_sequence else out[0]


def partition(
    gm: torch.fx.GraphModule,
    inputs: Sequence[torch.Tensor],
    compiled: Callable[[torch.fx.GraphModule], CompiledGraph] = CompiledGraph,
) -> tuple[torch.fx.GraphModule, list[str]]:
    """`gm` as an ATen graph whose compilable ops run as Pallas modules (one per
    partition, `compiled(partition)`, by default a `CompiledGraph` that raises when
    the pipeline rejects it) and the rest eagerly, and a line for each op that runs
    eagerly."""
    # The trace runs the graph: on copies, as an inference graph writes its inputs.
    aten = trace_to_aten(gm, [copied(t) for t in inputs])
    support = _Compilable()
    partitioner = CapabilityBasedPartitioner(
        aten, support, allows_single_node_partition=True
    )
    split = partitioner.fuse_partitions(partitioner.propose_partitions())
    eager = [str(e) for e in support.rejected.values()]
    for node in list(split.graph.nodes):
        if node.op == "call_module":
            sub = getattr(split, str(node.target))
            setattr(split, str(node.target), _CompiledPartition(sub, compiled(sub)))
    split.recompile()
    return split, eager


class _EagerNotice:
    """The one warning of a dynamo graph: what of it runs in eager PyTorch (its
    forward and backward graphs are compiled at different times; each new line is
    said once)."""

    def __init__(self) -> None:
        self.said: set[str] = set()

    def warn(self, lines: Sequence[str]) -> None:
        new = [line for line in lines if line not in self.said]
        if not new:
            return
        self.said.update(new)
        warnings.warn(
            EAGER_NOTICE + "; ".join(new),
            stacklevel=3,
        )


def _failure(e: BaseException) -> str:
    """One line for an unexpected failure: its type, message and where it arose."""
    first = (str(e).strip().splitlines() or [""])[0]
    frame = traceback.extract_tb(e.__traceback__)[-1:] if e.__traceback__ else []
    at = f" (at {frame[0].filename}:{frame[0].lineno})" if frame else ""
    return f"{type(e).__name__}: {first}{at}"


def _split_or_eager(
    notice: _EagerNotice,
    graph: torch.fx.GraphModule,
    inputs: Sequence[torch.Tensor],
    error: UnsupportedError,
) -> Callable:
    """What runs a graph that does not compile whole: split around the ops that do
    not compile, or, when even that fails, the graph in eager PyTorch."""

    def compiled(part: torch.fx.GraphModule) -> CompiledGraph:
        return _GuardedGraph(part, notice=notice, split=False)

    try:
        split, eager = partition(graph, inputs, compiled)
    except Exception as e:  # noqa: BLE001 - the backend never raises: eager instead
        notice.warn([f"the whole graph ({error}; splitting it: {_failure(e)})"])
        return graph.forward
    notice.warn(eager)
    return split.forward


def _eager(
    notice: _EagerNotice,
    graph: torch.fx.GraphModule,
    inputs: Sequence[torch.Tensor],
    error: UnsupportedError,
) -> Callable:
    """A partition the pipeline rejects as a whole runs eagerly, said once."""
    notice.warn([str(error)])
    return graph.forward


class _GuardedGraph(CompiledGraph):
    """A `CompiledGraph` that never raises: a graph that does not compile whole is
    split around its ops that do not (`split`; a partition is not split again), and
    whatever else fails at compile time runs the graph in eager PyTorch, said in the
    warning."""

    def __init__(
        self, gm, example_inputs=(), *, notice: _EagerNotice, split: bool = True
    ):
        super().__init__(
            gm,
            example_inputs,
            on_unsupported=functools.partial(
                _split_or_eager if split else _eager, notice
            ),
        )
        self.notice = notice

    def _compile(self, args: Sequence[object]) -> Callable:
        try:
            return super()._compile(args)
        except Exception as e:  # noqa: BLE001 - a compiler bug must not stop training
            self.notice.warn([f"the whole graph ({_failure(e)})"])
            return specialised(self.gm, args).forward


def pallas_ir_backend(
    gm: torch.fx.GraphModule, example_inputs: Sequence[object]
) -> Callable:
    """Dynamo's graph through AOTAutograd, its forward and backward graphs compiled by
    pallas_ir; the graph itself in eager PyTorch when AOTAutograd cannot trace it."""
    notice = _EagerNotice()
    compiler = functools.partial(_GuardedGraph, notice=notice)
    backend = aot_autograd(
        fw_compiler=compiler,
        bw_compiler=compiler,
        inference_compiler=compiler,
        partition_fn=min_cut_rematerialization_partition,
        decompositions=frontend_decompositions(),
        # An inference graph writes its mutated inputs itself (`copy_` at its end),
        # so a KV-cache write is made in place in the kernels, not copied back after.
        keep_inference_input_mutations=True,
    )
    try:
        # AOTAutograd traces the joint graph here
        with MathAttention(), gc_paused():
            return backend(gm, example_inputs)
    except Exception as e:  # noqa: BLE001 - the backend never raises
        notice.warn([f"the whole graph (AOTAutograd: {_failure(e)})"])
        return gm.forward
