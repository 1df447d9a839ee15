"""`torch.compile(fn, backend="pallas_ir")`: the dynamo backend (registered through the
`torch_dynamo_backends` entry point).

Dynamo hands over an FX graph and example inputs; the backend compiles the graph with
`pallas_ir.compile`, specialised on the inputs' concrete shapes (symbolic sizes are
replaced by the example's values). A graph with an op the frontend does not support
runs eagerly instead, with one warning naming the op.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import torch

from pallas_ir.compiler import compile as compile_torch
from pallas_ir.frontend import UnsupportedError


def _concrete(t: torch.Tensor) -> torch.Tensor:
    """An example input with concrete sizes (dynamo may pass symbolic ones)."""
    if all(isinstance(n, int) for n in t.shape):
        return t
    shape = [int(n) for n in t.shape]
    return torch.zeros(shape, dtype=t.dtype)


def pallas_ir_backend(
    gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor]
) -> Callable:
    inputs = [_concrete(t) for t in example_inputs]
    try:
        compiled = compile_torch(gm, inputs)
    except UnsupportedError as e:
        warnings.warn(f"pallas_ir: {e}; this graph runs in eager PyTorch", stacklevel=2)
        return gm.forward

    def run(*args: torch.Tensor):
        out = compiled(*args)
        return out if isinstance(out, tuple) else (out,)

    return run
