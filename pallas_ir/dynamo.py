"""`torch.compile(fn, backend="pallas_ir")`: the dynamo backend (registered through the
`torch_dynamo_backends` entry point).

Dynamo hands over an FX graph; the backend compiles it with `pallas_ir.compile` at its
first call, specialised on the call's concrete shapes, and again for each new set of
shapes (under `dynamic=True` dynamo's symbolic sizes are inputs of the graph: they take
the call's values). When the graph has ops the frontend cannot compile,
the graph is traced to ATen and split: the ops it can compile are grouped into
partitions (as large as the graph's dependencies allow), each compiled to one Pallas
module, and the rest run in eager PyTorch between them. One warning names the ops that
run eagerly.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from pallas_ir.compiler import CompiledFunction
from pallas_ir.compiler import compile as compile_torch
from pallas_ir.frontend import UnsupportedError, check_node, trace_to_aten


def _specialised(
    gm: torch.fx.GraphModule, args: Sequence[object]
) -> torch.fx.GraphModule:
    """`gm` with its symbolic-size inputs (dynamo's SymInt placeholders under dynamic
    shapes) replaced by their values in `args`: a graph of tensor inputs only."""
    if all(isinstance(a, torch.Tensor) for a in args):
        return gm
    gm = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, args, strict=True):
        if isinstance(value, torch.Tensor):
            continue
        for user in list(node.users):

            def baked(a, value=value, node=node):
                return value if a is node else a

            user.args = torch.fx.node.map_arg(user.args, baked)
            user.kwargs = torch.fx.node.map_arg(user.kwargs, baked)
        gm.graph.erase_node(node)
    gm.recompile()
    return gm


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


def _compile_graph(
    gm: torch.fx.GraphModule, inputs: Sequence[torch.Tensor]
) -> tuple[Callable, list[str]]:
    """`gm` as one Pallas module, or split around the ops that cannot be; the callable
    returns a tuple, and the list names the ops that run eagerly."""
    try:
        compiled = compile_torch(gm, inputs)
    except UnsupportedError:
        split, eager = partition(gm, inputs)
        return split.forward, eager

    def run(*args: torch.Tensor):
        out = compiled(*args)
        return out if isinstance(out, tuple) else (out,)

    return run, []


def pallas_ir_backend(
    gm: torch.fx.GraphModule, example_inputs: Sequence[object]
) -> Callable:
    """The graph compiled for each set of concrete input shapes it is called with
    (once each): under dynamic shapes, dynamo's symbolic sizes become the call's."""
    compiled: dict[tuple, Callable] = {}
    warned = False

    def run(*args):
        nonlocal warned
        key = tuple(
            (tuple(a.shape), a.stride(), a.dtype) if isinstance(a, torch.Tensor) else a
            for a in args
        )
        if key not in compiled:
            graph = _specialised(gm, args)
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            compiled[key], eager = _compile_graph(graph, tensors)
            if eager and not warned:
                warnings.warn(
                    "pallas_ir: these ops run in eager PyTorch, the rest as Pallas "
                    "kernels: " + "; ".join(eager),
                    stacklevel=2,
                )
                warned = True
        return compiled[key](*[a for a in args if isinstance(a, torch.Tensor)])

    return run
