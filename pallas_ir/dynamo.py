"""`torch.compile(fn, backend="pallas_ir")`: the dynamo backend (registered through the
`torch_dynamo_backends` entry point).

Dynamo hands over an FX graph and example inputs; the backend compiles it with
`pallas_ir.compile`, specialised on the inputs' concrete shapes (symbolic sizes are
replaced by the example's values). When the graph has ops the frontend cannot compile,
the graph is traced to ATen and split: the ops it can compile are grouped into
partitions (as large as the graph's dependencies allow), each compiled to one Pallas
module, and the rest run in eager PyTorch between them. One warning names the ops that
run eagerly.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from pallas_ir.compiler import CompiledFunction
from pallas_ir.compiler import compile as compile_torch
from pallas_ir.frontend import UnsupportedError, check_node, trace_to_aten


def _concrete(t: torch.Tensor) -> torch.Tensor:
    """An example input with concrete sizes (dynamo may pass symbolic ones)."""
    if all(isinstance(n, int) for n in t.shape):
        return t
    shape = [int(n) for n in t.shape]
    return torch.zeros(shape, dtype=t.dtype)


class _Compilable(OperatorSupportBase):
    """The ATen nodes the frontend compiles; the reasons for the others, kept."""

    def __init__(self) -> None:
        self.rejected: dict[torch.fx.Node, UnsupportedError] = {}

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function":  # inputs and outputs stay in the outer graph
            return False
        error = check_node(node)
        if error is not None:
            self.rejected[node] = error
        return error is None


class _CompiledPartition(torch.nn.Module):
    """A partition of the ATen graph, run by its compiled Pallas module."""

    def __init__(self, compiled: CompiledFunction):
        super().__init__()
        self.compiled = compiled

    def forward(self, *tensors: torch.Tensor):
        return self.compiled(*tensors)


def _example(graph: torch.fx.GraphModule, node: torch.fx.Node) -> torch.Tensor:
    """A real tensor like the traced value of `node` (shape, strides, dtype)."""
    if node.op == "get_attr":  # a constant the trace captured: itself
        return getattr(graph, str(node.target))
    val = node.meta["val"]
    return torch.empty_strided(val.shape, val.stride(), dtype=val.dtype).zero_()


def partition(
    gm: torch.fx.GraphModule, inputs: Sequence[torch.Tensor]
) -> tuple[torch.fx.GraphModule, list[str]]:
    """`gm` as an ATen graph whose compilable ops run as Pallas modules (one per
    partition) and the rest eagerly, and a line for each op that runs eagerly."""
    aten = trace_to_aten(gm, inputs)
    support = _Compilable()
    partitioner = CapabilityBasedPartitioner(
        aten, support, allows_single_node_partition=True
    )
    split = partitioner.fuse_partitions(partitioner.propose_partitions())
    eager = [str(e) for e in support.rejected.values()]
    for node in list(split.graph.nodes):
        if node.op != "call_module":
            continue
        sub = getattr(split, str(node.target))
        examples = [_example(split, a) for a in node.args]  # type: ignore[arg-type]
        try:
            setattr(
                split, str(node.target), _CompiledPartition(compile_torch(sub, examples))
            )
        except UnsupportedError as e:  # the partition as a whole: eager, said once
            eager.append(str(e))
    split.recompile()
    return split, eager


def pallas_ir_backend(
    gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor]
) -> Callable:
    inputs = [_concrete(t) for t in example_inputs]
    try:
        compiled = compile_torch(gm, inputs)
    except UnsupportedError:
        split, eager = partition(gm, inputs)
        warnings.warn(
            "pallas_ir: these ops run in eager PyTorch, the rest as Pallas kernels: "
            + "; ".join(eager),
            stacklevel=2,
        )
        return split.forward

    def run(*args: torch.Tensor):
        out = compiled(*args)
        return out if isinstance(out, tuple) else (out,)

    return run
