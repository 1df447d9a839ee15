"""`--verify-semantics`: run the program on the same random inputs before and after each
pass, and report the first output element a pass changed.

Two levels: every ta kernel on its own (exactly; it needs no host function), and, when
the module has a `func.func @forward`, the whole program with the interpreter of the
level it is at (ta, tl or pallas), so the lowering passes are checked too."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from pallas_ir.diagnostics import Diagnostic, Severity, location_of
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import WRITABLE_ROLES, find_forward
from pallas_ir.reference import pallas as pallas_reference
from pallas_ir.reference.inputs import forward_inputs, is_pallas_level
from pallas_ir.reference.ops import ReferenceError
from pallas_ir.reference.ta import random_buffers, run_forward, run_kernel


def _eps(dtype: np.dtype) -> float:
    if dtype.kind == "f":
        return float(np.finfo(dtype).eps)
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype).eps)


@dataclass
class KernelRun:
    inputs: list[np.ndarray]
    outputs: dict[int, np.ndarray]
    """Argument index -> final contents, for the out/inout arguments."""


def _run(kernel: ta.KernelOp, inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
    buffers = [a.copy() for a in inputs]
    run_kernel(kernel, buffers)
    return {
        arg.index: buffers[arg.index]
        for arg in kernel.body.block.args
        if kernel.role_of(arg) in WRITABLE_ROLES
    }


def _kernels(module: ModuleOp) -> list[ta.KernelOp]:
    return [op for op in module.walk() if isinstance(op, ta.KernelOp)]


def snapshot(
    module: ModuleOp, seed: int = 0
) -> tuple[dict[str, KernelRun], list[Diagnostic]]:
    """Run each kernel of the pass pipeline's input on random inputs."""
    runs: dict[str, KernelRun] = {}
    problems: list[Diagnostic] = []
    for kernel in _kernels(module):
        name = kernel.sym_name.data
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        try:
            inputs = random_buffers(kernel, rng)
            runs[name] = KernelRun(inputs, _run(kernel, inputs))
        except ReferenceError as e:
            problems.append(
                Diagnostic(
                    Severity.ERROR,
                    f"verify-semantics: cannot run @{name} on the input: {e}",
                    location_of(kernel),
                )
            )
    return runs, problems


def _first_difference(before: np.ndarray, after: np.ndarray) -> tuple[int, ...] | None:
    if before.shape != after.shape:
        return ()
    if before.dtype.kind == "f":
        same = (before == after) | (np.isnan(before) & np.isnan(after))
    else:
        same = before == after
    if same.all():
        return None
    return tuple(int(i) for i in np.argwhere(~same)[0])


def compare(
    module: ModuleOp, runs: dict[str, KernelRun], pass_name: str
) -> list[Diagnostic]:
    """Errors for every kernel whose outputs the pass changed. Kernels lowered out of
    `ta` by the pass are no longer checked here."""
    problems: list[Diagnostic] = []
    for kernel in _kernels(module):
        name = kernel.sym_name.data
        if name not in runs:
            continue
        run = runs[name]
        where = location_of(kernel)
        try:
            after = _run(kernel, run.inputs)
        except ReferenceError as e:
            problems.append(
                Diagnostic(
                    Severity.ERROR,
                    f"verify-semantics: after '{pass_name}', @{name} no longer runs: {e}",
                    where,
                )
            )
            continue
        for index, before in run.outputs.items():
            at = _first_difference(before, after[index])
            if at is None:
                continue
            arg = kernel.body.block.args[index]
            label = f"%{arg.name_hint}" if arg.name_hint else f"argument #{index}"
            detail = (
                f"at {list(at)}: {before[at]!r} before, {after[index][at]!r} after"
                if at
                else f"its shape changed from {before.shape} to {after[index].shape}"
            )
            problems.append(
                Diagnostic(
                    Severity.ERROR,
                    f"verify-semantics: '{pass_name}' changed what @{name} computes: "
                    f"output {label} first differs {detail}",
                    where,
                )
            )
    return problems


# ---------------------------------------------------------------------------------------
# The whole program: @forward before and after each pass, through the lowering too


@dataclass
class ForwardRun:
    inputs: list[np.ndarray]
    outputs: list[np.ndarray]


def _run_forward(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """@forward's results with the interpreter of its level."""
    copies = [a.copy() for a in inputs]
    forward = find_forward(module)
    if forward is not None and is_pallas_level(forward):
        return pallas_reference.run_forward(module, *copies)
    return run_forward(module, *copies)


def snapshot_forward(
    module: ModuleOp, seed: int = 0
) -> tuple[ForwardRun | None, list[Diagnostic]]:
    forward = find_forward(module)
    if forward is None:
        return None, []
    try:
        inputs = forward_inputs(module, forward, seed)
        return ForwardRun(inputs, _run_forward(module, inputs)), []
    except ReferenceError as e:
        return None, [
            Diagnostic(
                Severity.ERROR,
                f"verify-semantics: cannot run @forward on the input: {e}",
                location_of(forward),
            )
        ]


def compare_forward(
    module: ModuleOp, run: ForwardRun, pass_name: str
) -> list[Diagnostic]:
    """An error if @forward's results changed. Lowerings may reorder float sums (a
    row summed in tiles), so floats agree to 1e-5, relative and absolute to the largest
    result magnitude; integers agree exactly. (Each ta kernel is also compared exactly
    by `compare`, as long as it is still a ta kernel.)"""
    forward = find_forward(module)
    where = location_of(forward)
    try:
        after = _run_forward(module, run.inputs)
    except ReferenceError as e:
        return [
            Diagnostic(
                Severity.ERROR,
                f"verify-semantics: after '{pass_name}', @forward no longer runs: {e}",
                where,
            )
        ]
    for k, (before, now) in enumerate(zip(run.outputs, after, strict=True)):
        now = np.asarray(now).reshape(before.shape)
        if before.dtype.kind == "f" or before.dtype.name == "bfloat16":
            # Reordered float sums differ by a few ulps of the largest magnitude around,
            # and, rounded to a narrow type, by one of its ulps (eps). ml_dtypes (1.1 s to
            # import) is loaded only where a bfloat16 array already holds it.
            scale = float(np.max(np.abs(before[np.isfinite(before)]), initial=1.0))
            rtol = max(1e-5, _eps(before.dtype))
            close = np.isclose(now, before, rtol=rtol, atol=rtol * scale, equal_nan=True)
        else:
            close = now == before
        if close.all():
            continue
        at = tuple(int(i) for i in np.argwhere(~close)[0])
        return [
            Diagnostic(
                Severity.ERROR,
                f"verify-semantics: '{pass_name}' changed what @forward computes: "
                f"result #{k} first differs at {list(at)}: {before[at]!r} before, "
                f"{now[at]!r} after",
                where,
            )
        ]
    return []
