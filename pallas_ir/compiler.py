"""`pallas_ir.compile(fn, example_inputs)`: a torch function as Pallas kernels, end to end.

The frontend writes ta (`pallas_ir.frontend`), the default pipeline lowers it to pallas,
emit-python writes the module once, and every call runs that module's `forward` (in
interpret mode on a machine without a TPU). The compiled object keeps the IR after each
stage (`.ir`), the Python (`.source`) and the cost report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import torch

import pallas_ir
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects.common import find_forward
from pallas_ir.frontend import UnsupportedError, torch_to_ta
from pallas_ir.registry import default_pipeline
from pallas_ir.tpu_check import exec_source


def _on_tpu() -> bool:
    try:
        return any(d.platform == "tpu" for d in jax.devices())
    except RuntimeError:
        return False


class CompiledFunction:
    """Torch tensors in, torch tensors out, through the emitted Pallas module."""

    def __init__(
        self,
        fn: Callable,
        example_inputs: Sequence[torch.Tensor],
        chip: str = "v5e",
        interpret: bool | None = None,
    ):
        module, self._inputs, self._constants, self._out_dtypes = torch_to_ta(
            fn, example_inputs
        )
        self.ir: dict[str, str] = {"ta": str(module)}
        stage = "ta"
        try:
            pallas_ir.verify(module)
            for stage in default_pipeline(chip).split(","):
                pallas_ir.run_passes(module, stage)
                self.ir[stage.split("{")[0]] = str(module)
        except (pallas_ir.IRError, PassError) as e:  # a compiler limit, said plainly
            raise UnsupportedError(
                f"pipeline stage {stage.split('{')[0]}", str(e).splitlines()[0]
            ) from e
        self.module = module
        self.source = pallas_ir.emit_python(module)
        self.interpret = (not _on_tpu()) if interpret is None else interpret
        # Traced and compiled by XLA at the first call; later calls reuse it.
        self._forward = jax.jit(
            functools.partial(
                exec_source(self.source)["forward"], interpret=self.interpret
            )
        )
        forward = find_forward(module)
        assert forward is not None  # the frontend writes one
        self._n_outputs = len(forward.function_type.outputs)

    def _host(self, t: torch.Tensor, plan: tuple[tuple[int, ...], int | None]):
        shape, span = plan
        if tuple(t.shape) != shape:
            raise UnsupportedError(
                "input", f"compiled for shape {list(shape)}, called with {list(t.shape)}"
            )
        t = t.detach()
        if t.dtype in (torch.int64, torch.bool):  # kernels hold them as int32
            t = t.to(torch.int32)
        if span is not None:  # the flat storage span it views
            t = torch.as_strided(t, (span,), (1,), t.storage_offset())
        t = t.contiguous()
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16: move the bits
            return jnp.asarray(t.view(torch.int16).numpy()).view(jnp.bfloat16)
        return jnp.asarray(t.numpy())

    def __call__(self, *tensors: torch.Tensor):
        tensors = (*tensors, *self._constants)  # parameters the trace captured
        args = [self._host(t, p) for t, p in zip(tensors, self._inputs, strict=True)]
        out = self._forward(*args)
        outs = out if isinstance(out, tuple | list) else (out,)
        results = tuple(
            torch.from_dlpack(jax.block_until_ready(o)).to(dtype)
            for o, dtype in zip(outs, self._out_dtypes, strict=True)
        )
        return results if self._n_outputs > 1 else results[0]

    def cost_report(self):
        return pallas_ir.cost_report(self.module)


def compile(
    fn: Callable,
    example_inputs: Sequence[torch.Tensor],
    *,
    chip: str = "v5e",
    interpret: bool | None = None,
) -> CompiledFunction:
    """Compile `fn`, specialised on the shapes, dtypes and strides of `example_inputs`.
    `interpret=None` runs in interpret mode where there is no TPU."""
    return CompiledFunction(fn, example_inputs, chip, interpret)
