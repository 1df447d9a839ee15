"""`pallas_ir.compile(fn, example_inputs)`: a torch function as Pallas kernels, end to end.

The frontend writes ta (`pallas_ir.frontend`), the default pipeline lowers it to pallas,
emit-python writes the module once, and every call runs that module's `forward` (in
interpret mode on a machine without a TPU). The compiled object keeps the IR after each
stage (`.ir`), the Python (`.source`) and the cost report.

A module's parameters and buffers are inputs of the program, read from the module at
every call (a replaced Parameter is seen). A call is guarded: inputs must have the
example inputs' shapes, dtypes and strides. Inputs the function writes in place get the
new values after the call; results that are views of inputs come back as views. When an
input requires grad (and grad mode is on) the call goes through AOTAutograd: the forward
and backward graphs are compiled the same way (`CompiledGraph`), so `.backward()` runs
Pallas kernels too.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils._pytree as pytree
from torch._functorch.aot_autograd import aot_function
from torch._functorch.partitioners import min_cut_rematerialization_partition
from xdsl.dialects.builtin import ModuleOp

import pallas_ir
from pallas_ir.cache import (
    CompileCache,
    cache_root,
    deserialized,
    entry_key,
    exported_program,
    serialized,
    use_jax_compilation_cache,
)
from pallas_ir.compile_profile import (
    CompileProfile,
    collecting,
    count_program,
    gc_paused,
    phase,
)
from pallas_ir.diagnostics import PassError
from pallas_ir.dtypes import holds_float64
from pallas_ir.frontend import UnsupportedError, torch_to_ta
from pallas_ir.frontend.kernel_builder import WIDENED
from pallas_ir.frontend.torch_to_ta import (
    ConstantResult,
    EmptyResult,
    InputPlan,
    InputView,
    KernelOutput,
    MathAttention,
    frontend_decompositions,
)
from pallas_ir.registry import default_pipeline
from pallas_ir.tpu_check import exec_source
from pallas_ir.tpu_rules import CHIPS


def _share_elements(a: torch.Tensor, b: object) -> bool:
    """Whether tensor `b` views an element of `a`'s storage that `a` views too."""
    if not isinstance(b, torch.Tensor) or a.numel() == 0 or b.numel() == 0:
        return False
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False

    def span(t: torch.Tensor) -> tuple[int, int]:  # bytes of the storage it views
        last = sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
        start = t.storage_offset() * t.element_size()
        return start, start + (last + 1) * t.element_size()

    (a0, a1), (b0, b1) = span(a), span(b)
    if a1 <= b0 or b1 <= a0:
        return False
    if a.dtype != b.dtype:  # views of one storage as two dtypes: overlapping bytes
        return True
    marks = torch.zeros(max(a1, b1) // a.element_size(), dtype=torch.bool)
    torch.as_strided(marks, a.shape, a.stride(), a.storage_offset()).fill_(True)
    return bool(torch.as_strided(marks, b.shape, b.stride(), b.storage_offset()).any())


def _to_torch(a: jax.Array) -> torch.Tensor:
    """A result of the jitted program as a CPU tensor: shared through DLPack where it
    lies in host memory, copied to the host from a TPU (whose arrays DLPack cannot
    export: "__dlpack__ device only supported for CPU and GPU")."""
    if all(d.platform == "cpu" for d in a.devices()):
        return torch.from_dlpack(a)
    host = np.array(jax.device_get(a))  # a writable copy, as torch.from_numpy wants
    if host.dtype == jnp.bfloat16:  # numpy's bfloat16 (ml_dtypes) is not torch's
        return torch.from_numpy(host.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(host)


def _on_tpu() -> bool:
    try:
        return any(d.platform == "tpu" for d in jax.devices())
    except RuntimeError:
        return False


def _state_names(fn: Callable) -> list[str]:
    """The parameters and buffers of a module `fn` (lifted to inputs), else none. A
    GraphModule's are the graph's (dynamo and AOTAutograd already lift them)."""
    if not isinstance(fn, torch.nn.Module) or isinstance(fn, torch.fx.GraphModule):
        return []
    return [n for n, _ in fn.named_parameters()] + [n for n, _ in fn.named_buffers()]


def _with_state_as_inputs(fn: Callable, names: list[str], n_inputs: int) -> Callable:
    """`fn` as a function of (*inputs, *parameters and buffers)."""
    if not names:
        return fn

    def call(*tensors):
        state = dict(zip(names, tensors[n_inputs:], strict=True))
        return torch.func.functional_call(fn, state, tuple(tensors[:n_inputs]))

    return call


def _effective_strides(shape: Sequence[int], stride: Sequence[int]) -> tuple[int, ...]:
    """The strides that place elements (a dim of size 1 has none that matters)."""
    return tuple(s if n > 1 else 0 for n, s in zip(shape, stride, strict=True))


def _word_input(plan: InputPlan) -> Callable[[jax.Array], jax.Array]:
    """The in-program conversion of one input to the type @forward takes: int64 data
    comes in as its int32 words (a view, no host op) and keeps the low word
    (little-endian), bool becomes int32."""
    if plan.dtype == torch.int64:
        shape = plan.shape if plan.span is None else (plan.span,)
        return lambda words: words.reshape(*shape, 2)[..., 0]
    if plan.dtype == torch.bool:
        return lambda x: x.astype(jnp.int32)
    if plan.dtype in WIDENED:  # int8, uint8, int16 to int32; float16 to float32
        wide = jnp.float32 if WIDENED[plan.dtype] == torch.float32 else jnp.int32
        return lambda x: x.astype(wide)
    return lambda x: x


def _outside_int32(words: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Whether an int64 input (as its int32 words, low first) holds a value outside
    int32, and the low and high words of one that does."""
    pairs = words.reshape(-1, 2)
    low, high = pairs[:, 0], pairs[:, 1]
    outside = high != jnp.right_shift(low, 31)  # not the sign extension of the low word
    first = jnp.argmax(outside)
    return outside.any(), low[first], high[first]


def stage_names(stages: list[str]) -> list[str]:
    """Each stage's name: its pass, or, for a pass that ran before in the pipeline
    (`fuse-epilogues`, again after raise-attention), its whole spec with options, and
    `#k` after a spec that repeats (`cse`, `cse#2`)."""
    names: list[str] = []
    for spec in stages:
        name = spec.split("{")[0]
        if name in names:
            name = spec
        while name in names:  # the same spec again: numbered
            name = f"{spec}#{sum(n.split('#')[0] == spec for n in names) + 1}"
        names.append(name)
    return names


class StageIR(Mapping[str, str]):
    """The IR after each stage of the pipeline, by stage name ("ta" first). Printing
    every stage of every compile cost about a sixth of compile time, so only the ta
    module is printed; a read of a later stage runs the pipeline again from it (the
    passes are deterministic) up to that stage, and prints that stage. The module is
    kept where it stopped, so reading stages in pipeline order runs each pass once
    (verifying and printing every stage on any first read made `test_attention.py`
    take 83 s instead of 71)."""

    def __init__(self, ta: str, pipeline: str):
        self.pipeline = pipeline
        self._stages = pipeline.split(",")
        self._names = ["ta", *stage_names(self._stages)]
        self._printed: dict[str, str] = {"ta": ta}
        self._module: ModuleOp | None = None
        self._ran = 0
        """How many stages `_module` has been through."""

    def __getitem__(self, name: str) -> str:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._printed:
            target = self._names.index(name)
            if self._module is None or self._ran > target:
                self._module, self._ran = pallas_ir.parse(self._printed["ta"]), 0
            while self._ran < target:
                # verified as the compile verified it: once, as it leaves the pipeline
                pallas_ir.run_passes(
                    self._module, self._stages[self._ran], verify_each=False
                )
                self._ran += 1
            self._printed[name] = str(self._module)
        return self._printed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """`module` (ta) through `pipeline`, in place; a pass's error as an
    UnsupportedError naming the stage."""
    stage = "ta"
    try:
        with phase("verify"):
            pallas_ir.verify(module)
        # Verifying after every pass took a third of compile time: the module is
        # verified as it enters and as it leaves (pallas-opt verifies each pass).
        stages = pipeline.split(",")
        for stage, stage_name in zip(stages, stage_names(stages), strict=True):
            with phase(stage_name):
                pallas_ir.run_passes(module, stage, verify_each=False)
        with phase("verify"):
            pallas_ir.verify(module)
    except (pallas_ir.IRError, PassError) as e:  # a compiler limit, said plainly
        raise UnsupportedError(
            f"pipeline stage {stage.split('{')[0]}", str(e).splitlines()[0]
        ) from e
    return module


class CompiledFunction:
    """Torch tensors in, torch tensors out, through the emitted Pallas module."""

    @gc_paused()  # the whole compile
    def __init__(
        self,
        fn: Callable,
        example_inputs: Sequence[torch.Tensor],
        chip: str = "v5e",
        interpret: bool | None = None,
        runtime_checks: bool = True,
        cache: bool | str | os.PathLike = True,
    ):
        if chip not in CHIPS:
            raise ValueError(f"chip must be one of {', '.join(CHIPS)}, got {chip!r}")
        self._fn = fn
        self._n_inputs = len(example_inputs)
        self._state = _state_names(fn)
        self._traceable = _with_state_as_inputs(fn, self._state, self._n_inputs)
        self.compile_profile = CompileProfile()
        """Seconds by phase of this program's compile and first call."""
        with collecting(self.compile_profile):
            self._compile(example_inputs, chip, runtime_checks, cache)
        self.chip = chip
        self.runtime_checks = runtime_checks
        self.interpret = (not _on_tpu()) if interpret is None else interpret
        with collecting(self.compile_profile), phase("exec"):
            emitted = exec_source(self.source)
            forward = functools.partial(emitted["forward"], interpret=self.interpret)
        # Inputs the kernels update in place (a KV-cache write): their arrays are made
        # for each call (`host_arguments`), so the program may overwrite them.
        self.donated: tuple[int, ...] = emitted.get("DONATE_ARGNUMS", ())
        conversions = [_word_input(p) for p in self._plans]
        wide = [
            i
            for i, p in enumerate(self._plans)
            if p.dtype == torch.int64 and runtime_checks and math.prod(p.shape)
        ]
        self._wide_inputs = wide

        def program(*args):
            out = forward(*[c(a) for c, a in zip(conversions, args, strict=True)])
            return out, [_outside_int32(args[i]) for i in wide]

        # Traced and compiled by XLA at the first call (`_executable`).
        self._forward = jax.jit(program, donate_argnums=self.donated)
        self._compiled: Callable | None = None
        self._differentiable: dict[tuple[bool, ...], Callable] = {}

    def _compile(
        self,
        example_inputs: Sequence[torch.Tensor],
        chip: str,
        runtime_checks: bool,
        cache: bool | str | os.PathLike,
    ) -> None:
        """The frontend, then the pipeline and the emitter, or their output from the
        on-disk cache (`pallas_ir.cache`)."""
        examples = [*example_inputs, *self._live_state()]
        with phase("frontend"):
            traced = torch_to_ta(self._traceable, examples, runtime_checks)
            ta_text = str(traced.module)
        module = traced.module
        self._plans = traced.inputs
        self._constants = traced.constants
        self._results = traced.results
        self._copy_back = traced.copy_back
        self._returns_sequence = traced.returns_sequence
        self._structure = traced.structure
        self._checks = traced.checks
        self._random_seed = traced.random_seed
        self.computes = bool(traced.copy_back or traced.checks) or any(
            isinstance(r, KernelOutput) for r in traced.results
        )
        pipeline = default_pipeline(chip)
        self.ir = StageIR(ta_text, pipeline)
        self._module: ModuleOp | None = None
        self._cache_setting = cache
        root = cache_root(cache)
        self._cache = None if root is None else CompileCache(root)
        self._cache_key = entry_key(
            ta_text,
            pipeline=pipeline,
            chip=chip,
            runtime_checks=runtime_checks,
            # how the host passes each input (int64 as words, bool widened in the
            # program): the exported program's argument types
            inputs=[(str(p.dtype), p.shape, p.span) for p in self._plans],
        )
        if self._cache is not None:
            with phase("cache"):
                entry = self._cache.read(self._cache_key, "module.json")
            if entry is not None:
                emitted = json.loads(entry)
                self.source, self._float64 = emitted["source"], emitted["float64"]
                count_program(from_cache=True)
                return
        self._module = run_pipeline(module, pipeline)
        self._float64 = holds_float64(module)
        with phase("emit"):
            self.source = pallas_ir.emit_python(module)
        count_program(from_cache=False)
        if self._cache is not None:
            with phase("cache"):
                emitted = {"source": self.source, "float64": self._float64}
                self._cache.write(
                    self._cache_key, "module.json", json.dumps(emitted).encode()
                )

    @property
    def module(self) -> ModuleOp:
        """The pallas module the source was emitted from (lowered again from the ta
        module where the source came from the cache: the passes are deterministic)."""
        if self._module is None:
            self._module = run_pipeline(pallas_ir.parse(self.ir["ta"]), self.ir.pipeline)
        return self._module

    def _executable(self, args: Sequence[jax.Array]) -> Callable:
        """The program compiled by XLA for `args`' shapes at the first call. Where the
        cache is on, the program traced and lowered (`jax.export`) is read from it, or
        written to it, and compiled through jax's persistent compilation cache. In
        interpret mode on little data, XLA compiles it unoptimized
        (`INTERPRET_COMPILER_OPTIONS`)."""
        if self._compiled is not None:
            return self._compiled
        with collecting(self.compile_profile), gc_paused():
            program = self._forward
            if self._cache is not None:
                use_jax_compilation_cache(self._cache.root)
                mode = "interpret" if self.interpret else "mosaic"
                name = f"program-{mode}-{jax.default_backend()}"
                with phase("cache"):
                    exported = deserialized(self._cache.read(self._cache_key, name))
                if exported is None:
                    with phase("jax export"):  # jax's trace and lowering, kept
                        exported = exported_program(self._forward, args)
                    if exported is not None and (blob := serialized(exported)):
                        with phase("cache"):
                            self._cache.write(self._cache_key, name, blob)
                if exported is not None:
                    program = jax.jit(exported.call, donate_argnums=self.donated)
            with phase("jax trace"):
                traced = program.trace(*args)
            with phase("jax lower"):
                lowered = traced.lower()
            options = None
            if (
                self.interpret
                and jax.default_backend() == "cpu"
                and os.environ.get("PALLAS_IR_OPTIMIZE_INTERPRET") != "1"
                and sum(a.nbytes for a in args) <= INTERPRET_FAST_COMPILE_BYTES
            ):
                options = dict(INTERPRET_COMPILER_OPTIONS)
            with phase("xla compile"):
                self._compiled = lowered.compile(compiler_options=options)
        return self._compiled

    def _x64(self):
        """The context the program runs in: x64 on where it holds float64 (its arrays
        are made and traced as float64 only then; the emitted `forward` turns it on
        too, for its own values)."""
        return jax.enable_x64(True) if self._float64 else contextlib.nullcontext()

    def _live_state(self) -> list[torch.Tensor]:
        """The module's parameters and buffers as they are now."""
        if not self._state:
            return []
        state = {**dict(self._fn.named_parameters()), **dict(self._fn.named_buffers())}
        return [state[n] for n in self._state]

    def _what(self, i: int) -> str:
        """How a message names @forward's input `i`."""
        if i < self._n_inputs:
            return f"input {i}"
        if i < self._n_inputs + len(self._state):
            return f"{self._state[i - self._n_inputs]} of the module"
        return f"a tensor the function captured ({i - self._n_inputs} after the inputs)"

    def _guard(self, tensors: Sequence[object]) -> None:
        """The call's tensors are like the example inputs, or an UnsupportedError
        naming what differs (a compiled program is specialised on them)."""
        if len(tensors) != self._n_inputs + len(self._state):
            raise UnsupportedError(
                "call",
                f"compiled for {self._n_inputs} inputs, called with "
                f"{len(tensors) - len(self._state)}",
            )
        for i, (t, plan) in enumerate(zip(tensors, self._plans, strict=False)):
            what = self._what(i)
            if not isinstance(t, torch.Tensor):
                raise UnsupportedError(what, f"expected a tensor, got {type(t).__name__}")
            if t.layout != torch.strided or t.device.type != "cpu":
                raise UnsupportedError(
                    what, f"expected a dense CPU tensor, got {t.layout} on {t.device}"
                )
            if t.dtype != plan.dtype:
                raise UnsupportedError(
                    what, f"compiled for dtype {plan.dtype}, called with {t.dtype}"
                )
            if tuple(t.shape) != plan.shape:
                raise UnsupportedError(
                    what,
                    f"compiled for shape {list(plan.shape)}, called with {list(t.shape)}",
                )
            if plan.storage_offset not in (None, t.storage_offset()):
                raise UnsupportedError(
                    what,
                    f"compiled for storage offset {plan.storage_offset}, called with "
                    f"{t.storage_offset()} (an as_strided reads the storage from its "
                    "start: compile again for it)",
                )
            if _effective_strides(t.shape, t.stride()) != _effective_strides(
                plan.shape, plan.stride
            ):
                raise UnsupportedError(
                    what,
                    f"compiled for strides {plan.stride}, called with {t.stride()} "
                    "(a different memory layout: compile again for it)",
                )

        for i, _ in self._copy_back:
            for j, other in enumerate(tensors):
                if j != i and _share_elements(tensors[i], other):  # type: ignore[arg-type]
                    raise UnsupportedError(
                        self._what(i),
                        f"shares memory with {self._what(j)}, and the function writes "
                        f"it in place: the program would read {self._what(j)} as it "
                        "was before the write (pass a clone of one of them)",
                    )

    def _host(self, t: torch.Tensor, plan: InputPlan) -> jax.Array:
        """The array @forward's program takes for `t` (no copy where numpy can view)."""
        t = t.detach()
        if t.is_complex():  # its pairs of reals (a view)
            t = torch.view_as_real(t.resolve_conj())
        if plan.span is not None:  # the flat storage span it views
            t = torch.as_strided(t, (plan.span,), (1,), t.storage_offset())
        t = t.contiguous()
        if t.dtype == torch.int64:  # its int32 words; the program keeps the low ones
            flat = t.reshape(-1)
            if flat.stride(0) != 1:  # a one-element view keeps its stride
                flat = flat.clone(memory_format=torch.contiguous_format)
            return jnp.asarray(flat.view(torch.int32).numpy())
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16: move the bits
            return jnp.asarray(t.view(torch.int16).numpy()).view(jnp.bfloat16)
        return jnp.asarray(t.numpy())

    def host_arguments(self, *tensors: torch.Tensor) -> list[jax.Array]:
        """The arrays the jitted program takes for a call with `tensors` (the inputs,
        then the program's constants and its random seed): what a benchmark times it
        on. Under `jax.enable_x64` where the program holds float64."""
        everything = [*tensors, *self._constants]
        if self._random_seed is not None:  # torch's generator: manual_seed repeats
            everything[self._random_seed] = torch.randint(
                -(2**31), 2**31 - 1, (2,), dtype=torch.int32
            )
        with self._x64():
            return [
                self._host(t, p) for t, p in zip(everything, self._plans, strict=True)
            ]

    def _run(self, tensors: Sequence[torch.Tensor]):
        computed: list[torch.Tensor] = []
        if self.computes:  # else every result is a view of an input
            with self._x64():
                args = self.host_arguments(*tensors)
                out, ranges = self._executable(args)(*args)
            for i, (outside, low, high) in zip(self._wide_inputs, ranges, strict=True):
                if bool(outside):  # a value the kernels' int32 would wrap
                    value = (int(high) << 32) | (int(low) & 0xFFFFFFFF)
                    index = self._plans[i].outside_int32
                    if index is not None:  # every use is a checked index
                        raise index.exception(value)
                    raise UnsupportedError(
                        self._what(i),
                        f"holds the int64 value {value}, outside the int32 range the "
                        "kernels compute int64 data in",
                    )
            outs = out if isinstance(out, tuple | list) else (out,)
            computed = [_to_torch(jax.block_until_ready(o)) for o in outs]

        def value(r: KernelOutput) -> torch.Tensor:
            if r.dtype.is_complex:  # computed as pairs of reals
                return torch.view_as_complex(computed[r.index])
            return computed[r.index].to(r.dtype)

        for check in self._checks:  # before any input is written
            check.raise_if_failed(computed)
        with torch.no_grad():  # the epilogue of an in-place write
            for i, new in self._copy_back:
                tensors[i].copy_(value(new))
        results = []
        for r in self._results:
            if isinstance(r, KernelOutput):
                results.append(value(r))
            elif isinstance(r, InputView):
                results.append(r.of(tensors))
            elif isinstance(r, EmptyResult):
                results.append(r.make())
            else:
                assert isinstance(r, ConstantResult)
                results.append(r.value)
        return tuple(results)

    def __call__(self, *tensors: torch.Tensor):
        every = (*tensors, *self._live_state())
        self._guard(every)
        if torch.is_grad_enabled() and any(t.requires_grad for t in every):
            results = self._with_autograd(every)
        else:
            results = self._run(every)
            if self._structure is not None:  # AOTAutograd's results come nested
                return pytree.tree_unflatten(list(results), self._structure)
        return results if self._returns_sequence else results[0]

    def _with_autograd(self, tensors: Sequence[torch.Tensor]) -> tuple:
        """The call through AOTAutograd: its forward and backward graphs compiled
        like this function (one per pattern of inputs that require grad)."""
        key = tuple(t.requires_grad for t in tensors)
        if key not in self._differentiable:
            graph = functools.partial(
                CompiledGraph,
                chip=self.chip,
                interpret=self.interpret,
                runtime_checks=self.runtime_checks,
                cache=self._cache_setting,
            )
            self._differentiable[key] = aot_function(
                self._traceable,
                fw_compiler=graph,
                bw_compiler=graph,
                partition_fn=min_cut_rematerialization_partition,
                decompositions=frontend_decompositions(),
            )
        with MathAttention():  # the first call traces
            out = self._differentiable[key](*tensors)
        return tuple(out) if isinstance(out, tuple | list) else (out,)

    def cost_report(self):
        return pallas_ir.cost_report(self.module)


class CompiledGraph:
    """An ATen graph of AOTAutograd (a forward, backward or inference graph),
    compiled with `CompiledFunction` at its first call, for that call's concrete
    inputs, and once more for each new signature (dynamic sizes come in as ints).
    `on_unsupported(graph, inputs, error)` gives the callable to run instead when the
    graph cannot compile whole; by default the error is raised."""

    def __init__(
        self,
        gm: torch.fx.GraphModule,
        example_inputs: Sequence[object] = (),
        *,
        chip: str = "v5e",
        interpret: bool | None = None,
        runtime_checks: bool = True,
        cache: bool | str | os.PathLike = True,
        on_unsupported: Callable | None = None,
    ):
        self.gm = gm
        # AOTAutograd passes the arguments as one list (an instance attribute: the
        # wrapper dynamo puts around a backward copies the instance's __dict__).
        self._boxed_call = True
        self.chip = chip
        self.interpret = interpret
        self.runtime_checks = runtime_checks
        self.cache = cache
        self.on_unsupported = on_unsupported
        self.compiled: dict[tuple, Callable] = {}
        self.offset_inputs: set[int] = set()
        """Tensor inputs a compiled program is specialised on the storage offset of
        (`InputPlan.storage_offset`): another offset compiles again."""

    def _compile(self, args: Sequence[object]) -> Callable:
        graph = specialised(self.gm, args)
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        try:
            compiled = CompiledFunction(
                graph, tensors, self.chip, self.interpret, self.runtime_checks, self.cache
            )
        except UnsupportedError as e:
            if self.on_unsupported is None:
                raise
            return self.on_unsupported(graph, tensors, e)
        self.offset_inputs |= {
            i
            for i, plan in enumerate(compiled._plans[: len(tensors)])
            if plan.storage_offset is not None
        }

        def run(*tensors: torch.Tensor):
            with torch.no_grad():  # AOTAutograd's graphs hold no autograd state
                return compiled._run(tensors)

        return run

    def _key(self, args: list) -> tuple:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        return (
            *(
                (tuple(a.shape), a.stride(), a.dtype)
                if isinstance(a, torch.Tensor)
                else a
                for a in args
            ),
            *(tensors[i].storage_offset() for i in sorted(self.offset_inputs)),
        )

    def __call__(self, args: list) -> tuple:
        if self._key(args) not in self.compiled:
            run = self._compile(args)
            self.compiled[self._key(args)] = run  # (with the offsets it depends on)
        out = self.compiled[self._key(args)](
            *[a for a in args if isinstance(a, torch.Tensor)]
        )
        return tuple(out) if isinstance(out, tuple | list) else (out,)


def specialised(gm: torch.fx.GraphModule, args: Sequence[object]) -> torch.fx.GraphModule:
    """`gm` with its symbolic-size inputs (SymInt placeholders under dynamic shapes)
    replaced by their values in `args`: a graph of tensor inputs only."""
    if all(isinstance(a, torch.Tensor) for a in args):
        return gm
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, object] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    values = dict(zip(placeholders, args, strict=True))
    for node in gm.graph.nodes:
        if node.op == "placeholder" and not isinstance(values[node], torch.Tensor):
            env[node] = values[node]
        else:
            env[node] = graph.node_copy(node, lambda n: env[n])
    return torch.fx.GraphModule(gm, graph)


INTERPRET_COMPILER_OPTIONS: Mapping[str, int] = {"xla_backend_optimization_level": 0}
"""XLA's options for a program whose kernels run in interpret mode (on a CPU) on little
data (`INTERPRET_FAST_COMPILE_BYTES`): no LLVM optimization, since there compiling costs
more than running. Measured on 2 cores: the tiny GPT's training step
(`examples/torch/train_tiny_gpt.py`) spends 2.6 s in XLA's compile of its two programs
instead of 5.3 s, and a call takes 4.3 ms instead of 1.9 (forward) and 4.7 ms instead
of 1.8 (backward); a softmax of (4096, 1024) (16 MB) would compile 0.5 s slower and run
38 ms slower a call, so data that large keeps XLA's defaults. So does a TPU program,
and any program with `PALLAS_IR_OPTIMIZE_INTERPRET=1`."""

INTERPRET_FAST_COMPILE_BYTES = 1 << 20
"""The most argument bytes a program compiled with `INTERPRET_COMPILER_OPTIONS` takes:
each MB costs an unoptimized call about 2.4 ms more (the softmax above)."""


def compile(
    fn: Callable,
    example_inputs: Sequence[torch.Tensor],
    *,
    chip: str = "v5e",
    interpret: bool | None = None,
    runtime_checks: bool = True,
    cache: bool | str | os.PathLike = True,
) -> CompiledFunction:
    """Compile `fn`, specialised on the shapes, dtypes and strides of `example_inputs`.
    `interpret=None` runs in interpret mode where there is no TPU. With
    `runtime_checks` (the default) the program checks its indices and int64 inputs
    and the call raises (IndexError, UnsupportedError) where eager would compute with
    them; off, nothing is checked and such a call is undefined. `cache` (see
    `pallas_ir.cache`): True keeps the compiled program in the on-disk cache the
    environment names, a path keeps it there, False keeps none."""
    return CompiledFunction(fn, example_inputs, chip, interpret, runtime_checks, cache)
