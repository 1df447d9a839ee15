"""torch → ta: trace a function to ATen (make_fx with core-ATen decompositions), specialised
on its example inputs' shapes, dtypes and strides, and build a ta module.

Every tensor of the graph is a `Value` (`kernel_builder`): a shape and a way to compute
the element at any index, given as affine expressions of the loop dims of the kernel
that reads it. Each ATen op has a lowering (`lowerings`, registered with `@lowers`):

- Inputs are storage: the element at index `i` is `load buf[offset + sum(stride_k *
  i_k)]` on the flat storage buffer of the input (any strides, any storage offset).
- Views (`lowerings.views`) only rewrite the index expressions, so they fold into the
  loads' maps.
- Element-wise ops (`lowerings.elementwise`) emit their scalar op on the operands'
  values at the broadcast index, so a chain of them fuses into the kernel that needs
  its result.
- A reduction or a matmul (`lowerings.reductions`, `lowerings.matmul`) is
  materialised: its own kernel writes a `ta.alloc` buffer, which later values read as
  storage.
- Each graph output gets one kernel that stores it, contiguous, into its output buffer;
  an output that is an input or a view of one is no kernel: the host replays its views
  (`InputView`). Functionalization's write-back of an input the function mutates is an
  output too, which the host copies into the input after the call; a result that is
  that new value or a view of it is the input or that view of it, after the copy-back.

`func.func @forward` takes the inputs (contiguous ones in their torch shape, others as
the flat storage span they view) and runs the kernels in order.

Anything else raises `UnsupportedError`, naming the ATen op and why.
"""

from __future__ import annotations

import functools
import operator
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.utils._pytree as pytree
from torch._decomp import core_aten_decompositions, get_decompositions
from torch.func import functionalize
from torch.fx.experimental.proxy_tensor import get_proxy_mode, has_proxy_slot, make_fx
from torch.fx.proxy import _register_stack_trace_anchor  # private; pinned torch
from torch.fx.traceback import preserve_node_meta
from torch.overrides import TorchFunctionMode
from xdsl.dialects.builtin import ModuleOp

from pallas_ir.affine_analysis import row_major_strides
from pallas_ir.compile_profile import phase
from pallas_ir.frontend.decompositions import (
    ctc_loss_with_length_lists,
    decomposition_table,
)
from pallas_ir.frontend.kernel_builder import (
    DTYPES,
    NARROW_INTS,
    Buffer,
    Check,
    Failure,
    Program,
    UnsupportedError,
    Value,
    storage_value,
    stored_as,
    where,
    wrapped,
)
from pallas_ir.frontend.lowerings import lower
from pallas_ir.frontend.lowerings.complex_pairs import (
    COMPLEX_DTYPES,
    OnComplex,
    involves_complex,
    pair_shape,
)
from pallas_ir.frontend.lowerings.creation import EMPTY
from pallas_ir.frontend.lowerings.registry import stored_if_shared
from pallas_ir.frontend.lowerings.specialised import SCALAR_READ_DECOMPOSITIONS

aten = torch.ops.aten

_DECOMPOSE = [
    aten._softmax,
    aten._log_softmax,
    aten.native_batch_norm,
    aten._native_batch_norm_legit_no_training,
    aten._native_batch_norm_legit,
    aten._native_batch_norm_legit_functional,
    aten.native_group_norm,
    aten.native_dropout,
    # ops made of others the frontend lowers (torch's own decompositions)
    aten.addmv,
    aten.any.default,
    aten.as_strided_copy,
    aten.dist,
    aten.narrow_copy,
    aten.new_empty_strided,
    aten.permute_copy,
    aten.unbind_copy,
    aten.view_copy,
    aten._batch_norm_with_update_functional,
]


def frontend_decompositions() -> dict:
    """The ATen decompositions the frontend traces with (core ATen, and the ops of
    `_DECOMPOSE`, and the frontend's own: `decompositions.py`); AOTAutograd traces
    the forward and backward graphs with them too.
    Not the CPU flash attention's: its second result is not the logsumexp its
    backward reads (torch says Inductor must leave it out); attention is traced as
    its math form instead (`MathAttention`). Nor `take`'s or `roll`'s.

    A copy of a table built once a process: building it took 105 ms, a quarter of a
    small op's compile."""
    return dict(_decomposition_table())


@functools.cache
def _decomposition_table() -> dict:
    table = {
        **core_aten_decompositions(),
        **get_decompositions(_DECOMPOSE),
        **decomposition_table(),
        **SCALAR_READ_DECOMPOSITIONS,
    }
    table.pop(aten._scaled_dot_product_flash_attention_for_cpu.default, None)
    # `take`'s decomposition indexes with its index tensor, which reads a 0-d index's
    # value while tracing; the frontend lowers `take` itself.
    table.pop(aten.take.default, None)
    # `roll`'s decomposition gathers with an arange index; the frontend lowers it as
    # a rotation index, which the kernels read as an in-register roll.
    table.pop(aten.roll.default, None)
    return table


_HOST_READS = (torch.Tensor.numpy, torch.Tensor.__array__, torch.Tensor.tolist)
"""Tensor methods that hand data to Python with no ATen op to see: `.item()` is
`_local_scalar_dense`, which the program specialises on and checks; these are not."""


def _traced_tensor(value) -> bool:
    """Whether `value` is a tensor the active trace follows (one the user's program
    computes or takes), not one of ours outside it."""
    mode = get_proxy_mode()
    return (
        mode is not None
        and isinstance(value, torch.Tensor)
        and has_proxy_slot(value, mode.tracer)
    )


def _user_line() -> str:
    """The innermost frame of the stack outside torch and pallas_ir: the user's line
    that called the op being traced."""
    ours = (str(Path(torch.__file__).parent), str(Path(__file__).parents[1]))
    for frame in reversed(traceback.extract_stack()):
        if not frame.filename.startswith(ours) and not frame.filename.startswith("<"):
            code = f": {frame.line}" if frame.line else ""
            return f"{frame.filename}:{frame.lineno} in {frame.name}{code}"
    return ""


def _additive_attn_mask(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """SDPA's arguments with a boolean `attn_mask` made additive (0 where True, -inf
    where False), as `F.scaled_dot_product_attention` does before it picks a kernel:
    the math kernel itself adds the mask, so a boolean one would add 0 or 1."""
    args, kwargs = tuple(args), dict(kwargs)
    mask = args[3] if len(args) > 3 else kwargs.get("attn_mask")
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        return args, kwargs
    zero = torch.zeros((), dtype=args[0].dtype)
    additive = torch.where(mask, zero, torch.full((), float("-inf"), dtype=args[0].dtype))
    if len(args) > 3:
        return (*args[:3], additive, *args[4:]), kwargs
    return args, {**kwargs, "attn_mask": additive}


class MathAttention(TorchFunctionMode):
    """While tracing, `F.scaled_dot_product_attention` is its math form (matmuls, a
    masked softmax), which differentiates through ops the frontend lowers, rather than
    a fused CPU kernel whose backward has no lowering."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _HOST_READS and args and _traced_tensor(args[0]):
            raise UnsupportedError(
                f"Tensor.{func.__name__}",
                "reads a tensor's data on the host while tracing: the compiled program "
                "would keep the example's values (use tensor ops, or `.item()`, which "
                "the program checks at each call)",
                _user_line(),
            )
        if func is torch._C._nn.scaled_dot_product_attention:
            args, kwargs = _additive_attn_mask(args, kwargs)
            return aten._scaled_dot_product_attention_math.default(*args, **kwargs)[0]
        ctc = ctc_loss_with_length_lists(func, args, kwargs)
        if ctc is not None:
            return ctc
        return func(*args, **kwargs)


def trace_to_aten(
    fn: Callable, example_inputs: Sequence[torch.Tensor]
) -> torch.fx.GraphModule:
    """`fn` on `example_inputs` as a graph of core ATen ops with no mutation but
    functionalization's write-backs (`copy_(input, new_value)` at the end, one per input
    the function writes in place), each node carrying the user's source line
    (`meta["stack_trace"]`).

    The trace runs on fake tensors (shapes and dtypes, no data), so its time does not
    grow with the eager compute: a GPT-2 head's bfloat16 step computed for minutes on
    this CPU while traced. A program that reads a value back to Python (`.item()`, an
    `if` on a tensor: the program is specialised on it) or whose shapes depend on data
    cannot be followed without data: it is traced again on the example inputs, and
    what that trace says is what the user sees."""
    try:
        graph = _trace_to_aten(fn, example_inputs, "fake")
        if not any(_data_dependent(n.meta.get("val")) for n in graph.graph.nodes):
            return graph
    except UnsupportedError:
        pass
    return _trace_to_aten(fn, example_inputs, "real")


def _data_dependent(val) -> bool:
    """Whether a fake trace's value has a size or value it could not know without
    data (`nonzero`'s length, `.item()` of a computed tensor: a symbol)."""
    if isinstance(val, list | tuple):
        return any(_data_dependent(v) for v in val)
    if isinstance(val, torch.SymInt | torch.SymFloat | torch.SymBool):
        return True
    if isinstance(val, torch.Tensor):
        return any(isinstance(d, torch.SymInt) for d in (*val.shape, *val.stride()))
    return False


def _trace_to_aten(
    fn: Callable, example_inputs: Sequence[torch.Tensor], mode: str
) -> torch.fx.GraphModule:
    decompositions = frontend_decompositions()
    if isinstance(fn, torch.fx.GraphModule):
        # dynamo's graph: its nodes carry the user's lines; the interpreter replays them.
        traced = fn
    else:
        # make_fx keeps the frames of functions named `forward` and of registered
        # anchors: the user's function is one.
        _register_stack_trace_anchor(getattr(fn, "forward", fn))
        traced = _traced(
            make_fx(
                fn,
                decomposition_table=decompositions,
                record_stack_traces=True,
                tracing_mode=mode,
            ),
            example_inputs,
        )
    # Decompositions may write in place (rms_norm's `add_`): a second trace through
    # functionalization removes every mutation, keeping each node's source line.
    with preserve_node_meta():
        graph = _traced(
            make_fx(
                functionalize(torch.fx.Interpreter(traced).run, remove="mutations"),
                decomposition_table=decompositions,
                tracing_mode=mode,
            ),
            example_inputs,
        )
    return graph


def _traced(trace: Callable, example_inputs: Sequence[torch.Tensor]):
    """`trace` run on the inputs; a program the tracer cannot follow (a value read back
    to Python with `.item()`, control flow on data) is an UnsupportedError."""
    try:
        with MathAttention():
            return trace(*example_inputs)
    except UnsupportedError:
        raise
    except Exception as e:  # the tracer's reason, first line, and the cause chained
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UnsupportedError("trace", f"{type(e).__name__}: {first}") from e


@dataclass(frozen=True)
class InputPlan:
    """How @forward takes one input: its torch shape, strides and dtype (the compiled
    program is specialised on them), and the flat storage span it views (None for a
    contiguous input, passed in its shape)."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype
    span: int | None
    outside_int32: Failure | None = None
    """What an int64 input holding a value outside int32 raises, where every use of
    it is an index an op checks (no dim is that large: the op's IndexError); None:
    an UnsupportedError (the kernels compute int64 data in int32)."""
    storage_offset: int | None = None
    """The storage offset the program is specialised on, where it reads the storage
    at a place given from the storage's start (`as_strided` with an offset); None:
    any offset (the program reads the span the input views)."""


@dataclass(frozen=True)
class KernelOutput:
    """A result @forward computes: its position among @forward's results."""

    index: int
    dtype: torch.dtype


@dataclass(frozen=True)
class InputView:
    """A result that is an input or a view of one (`return x`, `x.view(...)`,
    `x[::2]`, `x.add_(1).t()`): the host replays the view ops on the caller's tensor
    (after the copy-back of a written one), so it comes back as eager returns it, an
    alias, and no kernel copies it."""

    input: int
    views: tuple[tuple[Callable, tuple, dict], ...]
    """Each view op, its arguments after the viewed tensor, and its kwargs."""

    def of(self, tensors: Sequence[torch.Tensor]) -> torch.Tensor:
        t = tensors[self.input]
        for op, args, kwargs in self.views:
            t = op(t, *args, **kwargs)
        return t


@dataclass(frozen=True)
class ConstantResult:
    """A result that is not a tensor the program computes (None, a size)."""

    value: object


@dataclass(frozen=True)
class EmptyResult:
    """A result with no elements: no kernel computes it, the host makes a new empty
    tensor of eager's shape, strides and dtype at each call."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype

    def make(self) -> torch.Tensor:
        return torch.empty_strided(self.shape, self.stride, dtype=self.dtype)


Result = KernelOutput | InputView | ConstantResult | EmptyResult


@dataclass(frozen=True)
class TracedProgram:
    """`torch_to_ta`'s answer: the ta module and how the host calls it."""

    module: ModuleOp
    inputs: list[InputPlan]
    """The caller's tensors, then the constants, in @forward's argument order."""
    constants: list[torch.Tensor]
    """Values the trace captured (and iotas), passed after the caller's tensors."""
    results: list[Result]
    """The function's results, in order."""
    copy_back: list[tuple[int, KernelOutput]]
    """Inputs the function writes in place: (input position, the new value), copied
    into the input after the call, as AOTAutograd's mutation epilogue does."""
    returns_sequence: bool
    """The function returns a tuple or list (of any length), not one tensor."""
    checks: list[RuntimeCheck]
    """What the host checks after each call, before anything is copied back."""
    random_seed: int | None = None
    """The input that takes the call's random seed (two int32 words the host draws
    from torch's default generator at every call), if a random op needs one."""
    structure: pytree.TreeSpec | None = None
    """How `results` nest, where the function returns sequences inside its sequence
    (`histogramdd`'s (hist, [edges])); None when they do not."""


@dataclass(frozen=True)
class RuntimeCheck:
    """A check the program computes (`Program.check`): where its two results are, and
    what the call raises when it failed."""

    failed: KernelOutput
    worst: KernelOutput
    check: Check

    def raise_if_failed(self, computed: Sequence[torch.Tensor]) -> None:
        if int(computed[self.failed.index]):
            raise self.check.failure.exception(computed[self.worst.index].item())


_TORCH_OF = {"i32": torch.int32, "f32": torch.float32, "f64": torch.float64}
"""The torch dtype of a check's results."""


def copied(t):
    """A copy of `t` with its shape and strides (overlapping ones too: the storage
    span it views is copied); anything but a tensor as it is."""
    if not isinstance(t, torch.Tensor):
        return t
    t = t.detach()
    if t.numel() == 0 or any(s < 0 for s in t.stride()):
        return t.clone()
    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    flat = torch.as_strided(t, (span,), (1,), t.storage_offset()).clone()
    return torch.as_strided(flat, t.shape, t.stride())


_SCATTERS = {
    aten.index_put.default,
    aten._unsafe_index_put.default,
    aten.scatter.src,
    aten.scatter.value,
    aten.scatter_add.default,
}
"""The writes (`frontend/lowerings/scatter.py`) that can update an input in place."""

_HELD_AS_IS = {torch.float32, torch.bfloat16, torch.int32}
"""The dtypes an input is passed in as it is (no int64 words, no widened bool)."""


def _written_in_place(
    graph: torch.fx.GraphModule,
    placeholders: Sequence[torch.fx.Node],
    buffers: Sequence[Buffer],
    example_inputs: Sequence[torch.Tensor],
) -> dict[torch.fx.Node, Buffer]:
    """The scatters that may write into the buffer of the input they update, and that
    buffer: functionalization writes their result back into the input (`copy_`),
    nothing else reads the input, and the host passes it contiguous, in its dtype.
    The kernels then overwrite the input's array, which the host donates."""
    found: dict[torch.fx.Node, Buffer] = {}
    for node in graph.graph.nodes:
        if node.op != "call_function" or node.target is not aten.copy_.default:
            continue
        x, new = node.args[0], node.args[1]
        if x not in placeholders or not isinstance(new, torch.fx.Node):
            continue
        readers = {node}
        if new.target is aten.copy.default and new.args[0] is x:
            # AOTAutograd's graph, functionalized again: copy_(x, copy(x, scatter))
            readers.add(new)
            new = new.args[1]
            if not isinstance(new, torch.fx.Node) or not _alike(new, x):
                continue
        if new.target not in _SCATTERS or new.args[0] is not x:
            continue
        i = list(placeholders).index(x)
        t = example_inputs[i]
        # x is read by the write alone, and only as its base (not as its values too)
        if set(x.users) != {new, *readers} or _operands(new).count(x) != 1:
            continue
        if t.dtype not in _HELD_AS_IS:
            continue
        if t.is_contiguous() and t.numel() > 0:
            found[new] = buffers[i]
    return found


def _alike(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    """Whether the two nodes' values have one shape and dtype."""
    va, vb = a.meta.get("val"), b.meta.get("val")
    return (
        isinstance(va, torch.Tensor)
        and isinstance(vb, torch.Tensor)
        and (va.shape, va.dtype) == (vb.shape, vb.dtype)
    )


def _view_of_input(
    node: torch.fx.Node,
    inputs: Sequence[torch.fx.Node],
    held: Sequence[torch.Tensor],
    written: dict[torch.fx.Node, int],
) -> InputView | None:
    """`node` as view ops applied to one of `inputs` (`held` as the caller holds
    them), or to the new value of an input the function writes in place (`written`:
    the value, the input's position), which is that input after the copy-back; None
    when it computes, or when the view ops, traced on the new value (a contiguous
    tensor), do not apply to the input as held."""
    result = node.meta.get("val")
    views: list[tuple[Callable, tuple, dict]] = []
    while node not in inputs and node not in written:
        target = node.target if node.op == "call_function" else None
        if not isinstance(target, torch._ops.OpOverload) or not target.is_view:
            return None
        if any(
            isinstance(a, torch.fx.Node) for a in (*node.args[1:], *node.kwargs.values())
        ):
            return None
        views.append((target, tuple(node.args[1:]), dict(node.kwargs)))
        node = node.args[0]
    i = written[node] if node in written else list(inputs).index(node)
    view = InputView(i, tuple(reversed(views)))
    try:
        replayed = view.of(held)
    except RuntimeError:  # a `view` the input's strides do not allow
        return None
    return view if replayed.shape == getattr(result, "shape", None) else None


def torch_to_ta(
    fn: Callable, example_inputs: Sequence[torch.Tensor], runtime_checks: bool = True
) -> TracedProgram:
    """The ta module for `fn` on `example_inputs`, and how the host calls it; with
    `runtime_checks`, the program checks its indices (`Program.check`)."""
    for i, t in enumerate(example_inputs):
        if not isinstance(t, torch.Tensor) or not _held(t.dtype):
            got = t.dtype if isinstance(t, torch.Tensor) else type(t).__name__
            raise UnsupportedError(
                f"input {i}",
                "inputs are float32, float64, bfloat16, float16, int32, int64, int16, "
                f"int8, uint8, bool or complex64 tensors, got {got}",
            )
        if t.layout != torch.strided or t.device.type != "cpu":
            raise UnsupportedError(
                f"input {i}",
                f"inputs are dense CPU tensors, got a {t.layout} tensor on {t.device}",
            )
    # The trace runs the function: on copies, so inputs it writes in place (a batch
    # norm's running statistics) change only when the compiled program is called.
    with phase("torch trace"):
        graph = trace_to_aten(fn, [copied(t) for t in example_inputs])
    prog = Program(checking=runtime_checks)
    env = prog.values
    inputs: list[InputPlan] = []
    buffers: list[Buffer] = []
    placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
    # Parameters and constants the trace captured (get_attr) are inputs too: the
    # compiled object passes them after the caller's tensors.
    constants = [n for n in graph.graph.nodes if n.op == "get_attr"]
    constant_values = [getattr(graph, n.target).detach() for n in constants]
    for t in constant_values:
        if not _held(t.dtype):
            raise UnsupportedError("constant", _not_held(t.dtype))
    for node, t in zip(
        [*placeholders, *constants], [*example_inputs, *constant_values], strict=True
    ):
        name = f"in{len(buffers)}"
        shape, stride = tuple(t.shape), tuple(t.stride())
        # A complex tensor comes in as its pairs of reals (`view_as_real`, no copy but
        # of one with its conjugate bit set, whose values the host resolves).
        complex_input = t.dtype in COMPLEX_DTYPES
        data = torch.view_as_real(t.resolve_conj()) if complex_input else t
        element, stored = DTYPES[data.dtype], stored_as(data.dtype)
        if data.is_contiguous() or data.numel() == 0:
            buf = Buffer.holding(name, data.shape, element, stored=stored)
            inputs.append(InputPlan(shape, stride, t.dtype, None))
        else:
            # The call passes the span the tensor views, from its storage offset.
            span = 1 + sum((n - 1) * s for n, s in zip(data.shape, data.stride()))
            buf = Buffer.holding(name, (span,), element, stored=stored)
            inputs.append(InputPlan(shape, stride, t.dtype, span))
        buffers.append(buf)
        env[node] = storage_value(buf, data.shape, data.stride())
        prog.storage_offsets[node] = data.storage_offset()

    prog.in_place = _written_in_place(graph, placeholders, buffers, example_inputs)

    def arg(a):
        return env[a] if isinstance(a, torch.fx.Node) else a

    writes: list[tuple[int, torch.fx.Node]] = []
    for node in graph.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:  # one result of a multi-result op
            env[node] = env[node.args[0]][node.args[1]]  # type: ignore[index]
            continue
        if node.target is aten.copy_.default and node.args[0] in placeholders:
            # functionalization's write-back into an input the function mutates
            writes.append((placeholders.index(node.args[0]), node.args[1]))
            continue
        args = [
            [arg(b) for b in a] if isinstance(a, list | tuple) else arg(a)
            for a in node.args
        ]
        kwargs = {key: arg(a) for key, a in node.kwargs.items()}  # `sorter=` a tensor
        env[node] = _convert_node(prog, node, args, buffers, kwargs)
    for i, node in enumerate([*placeholders, *constants]):
        if inputs[i].dtype == torch.int64:
            failure = _index_failure(node, env, prog)
            inputs[i] = replace(inputs[i], outside_int32=failure)
        if node in prog.specialised_offsets:
            offset = prog.storage_offsets[node]
            inputs[i] = replace(inputs[i], storage_offset=offset)
    (out_node,) = [n for n in graph.graph.nodes if n.op == "output"]
    returned = out_node.args[0]
    returns_sequence = isinstance(returned, list | tuple)
    returned = list(returned) if returns_sequence else [returned]
    structure = None
    if any(isinstance(r, list | tuple) for r in returned):
        returned, structure = pytree.tree_flatten(returned)
    stored: list[KernelOutput] = []
    outputs: list[Buffer] = []
    computed: list[tuple[Value, Buffer]] = []
    """The outputs computed by kernels: made together, so outputs that share
    statistics share a kernel (`Program.store_all`)."""

    def store(r: torch.fx.Node) -> KernelOutput:
        v = env.get(r)
        if not isinstance(v, Value):
            raise UnsupportedError(
                "output",
                "the function must return tensors (a tensor or a tuple or list of "
                "them, or None)",
            )
        dtype = r.meta["val"].dtype
        out = Buffer.holding(
            prog.fresh("out"), v.shape, v.element, stored=stored_as(dtype)
        )
        held = v.stored
        if (
            held is not None
            and (held in buffers[len(inputs) :] or held in in_place)
            and held not in outputs
            and (held.host_shape, held.element, held.boolean)
            == (out.host_shape, out.element, out.boolean)
        ):
            # The value is an intermediate buffer whole (an index_put's copy of its
            # base, written in place), or an input's updated in place: returned as
            # it is, not copied once more.
            outputs.append(held)
        else:
            buffers.append(out)
            outputs.append(out)
            computed.append((v, out))
        stored.append(KernelOutput(len(stored), dtype))
        return stored[-1]

    written = {value: i for i, value in writes}
    in_place = list(prog.in_place.values())
    results: list[Result] = []
    for r in returned:
        if r is None or isinstance(r, int | float | bool):  # a backward's no-grad
            results.append(ConstantResult(r))
            continue
        if isinstance(r, torch.fx.Node) and r in env and env[r] is None:
            results.append(ConstantResult(None))  # an effect token (`with_effects`)
            continue
        if not isinstance(r, torch.fx.Node):
            raise UnsupportedError(
                "output",
                "the function must return tensors (a tensor or a tuple or list of "
                f"them, or None), got {type(r).__name__}",
            )
        # `return x.add_(1)`, `x[0] = y; return x.t()`: views of the input itself,
        # formed after the copy-back, alias it as in eager.
        view = _view_of_input(
            r,
            [*placeholders, *constants],
            [*example_inputs, *constant_values],
            written,
        )
        if view is not None:
            results.append(view)
        elif _is_empty(r):
            val = r.meta["val"]
            results.append(EmptyResult(tuple(val.shape), val.stride(), val.dtype))
        else:
            results.append(store(r))
    copy_back = [(i, store(value)) for i, value in writes if not _is_empty(value)]
    prog.store_all(computed)
    checks = []
    for check in prog.checks:
        for b in (check.failed, check.worst):
            buffers.append(b)
            outputs.append(b)
            stored.append(KernelOutput(len(stored), _TORCH_OF[b.value_element]))
        failed, worst = stored[-2:]
        checks.append(RuntimeCheck(failed, worst, check))
    host_inputs = buffers[: len(inputs)]
    for n, buf in prog.iotas.items():  # passed after the captured constants
        host_inputs.append(buf)
        inputs.append(InputPlan((n,), (1,), torch.int32, None))
        constant_values.append(torch.arange(n, dtype=torch.int32))
    random_seed = None
    if prog.seed is not None:  # drawn anew at every call (the value here is a stand-in)
        random_seed = len(inputs)
        host_inputs.append(prog.seed)
        inputs.append(InputPlan((2,), (1,), torch.int32, None))
        constant_values.append(torch.zeros(2, dtype=torch.int32))
    appended = len(prog.iotas) + (prog.seed is not None)
    module = prog.module(host_inputs, buffers[len(inputs) - appended :], outputs)
    return TracedProgram(
        module,
        inputs,
        constant_values,
        results,
        copy_back,
        returns_sequence,
        checks,
        random_seed,
        structure,
    )


def _is_empty(node: torch.fx.Node) -> bool:
    """`node` is a tensor with no elements (nothing to compute or copy back)."""
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.numel() == 0


_WHOLE_VIEWS = {
    aten.view.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.expand.default,
    aten.unsqueeze.default,
    aten.squeeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.permute.default,
    aten.t.default,
    aten.transpose.int,
    aten.alias.default,
    aten.clone.default,
}
"""Ops whose result holds every value of their first argument (and no other)."""


def _operands(node: torch.fx.Node) -> list[object]:
    flat = []
    for a in (*node.args, *node.kwargs.values()):
        flat.extend(a if isinstance(a, list | tuple) else [a])
    return flat


def _index_failure(node: torch.fx.Node, env: dict, prog: Program) -> Failure | None:
    """The failure of the first op that checks `node`'s values as an index (an int64
    value outside int32 is out of bounds of every dim) when every use of every value
    of `node`, through views that keep them all, is such an index; else None."""
    uses: list[tuple[torch.fx.Node, torch.fx.Node]] = []  # (user, the value it reads)
    pending = [node]
    while pending:
        x = pending.pop()
        for user in x.users:
            val, whole = user.meta.get("val"), x.meta.get("val")
            if (
                user.op == "call_function"
                and user.target in _WHOLE_VIEWS
                and _operands(user).count(x) == 1
                and user.args[0] is x
                and isinstance(val, torch.Tensor)
                and isinstance(whole, torch.Tensor)
                and val.numel() >= whole.numel()
            ):
                pending.append(user)
            else:
                uses.append((user, x))
    first: tuple[int, Failure] | None = None
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    for user, x in uses:
        checked = [
            b.failure
            for b in prog.bounded_indices
            if b.user is user and b.index is env.get(x)
        ]
        if not checked or len(checked) != _operands(user).count(x):
            return None  # a use that is not (only) a checked index
        if first is None or order[user] < first[0]:
            first = (order[user], checked[0])
    return None if first is None else first[1]


def _held(dtype: torch.dtype) -> bool:
    """Whether the program holds tensors of `dtype` (complex ones as pairs of reals)."""
    return dtype in DTYPES or dtype in COMPLEX_DTYPES


def _not_held(dtype: torch.dtype) -> str:
    """Why the program holds no tensor of `dtype`."""
    if dtype == torch.complex128:
        return (
            "complex128 is not compiled: complex values are pairs of float32 (XLA "
            "on TPU has no complex128 FFT)"
        )
    return f"dtype {dtype} is not supported yet"


def _convert_node(prog, node, args, buffers, kwargs=None) -> Value | list[Value]:
    """The value (or values) of graph node `node`, its tensor arguments (and keyword
    arguments: the node's where None) given."""
    kwargs = dict(node.kwargs) if kwargs is None else kwargs
    val = node.meta.get("val")
    if involves_complex(node):  # its complex lowering, on pairs of reals
        vals = val if isinstance(val, list | tuple) else [val]
        for v in vals:
            if isinstance(v, torch.Tensor) and not _held(v.dtype):
                raise UnsupportedError(str(node.target), _not_held(v.dtype), where(node))
        shape = pair_shape(val) if isinstance(val, torch.Tensor) else ()
        target = OnComplex(node.target)
        return lower(prog, node, target, args, kwargs, shape, buffers)
    if isinstance(val, list | tuple) or val is None:  # several results, or none
        return lower(prog, node, node.target, args, kwargs, (), buffers)
    shape = tuple(val.shape) if isinstance(val, torch.Tensor) else ()
    if node.target in EMPTY and not node.users:
        # An unused scratch of any dtype (batch norm's decomposition allocates a uint8
        # reserve buffer it never reads).
        return Value(shape, lambda k, idx: k.constant(0, "i32"), "i32")
    if isinstance(val, torch.Tensor) and val.dtype not in DTYPES:
        raise UnsupportedError(str(node.target), _not_held(val.dtype), where(node))
    value = lower(prog, node, node.target, args, kwargs, shape, buffers)
    assert isinstance(value, Value)
    value = stored_if_shared(prog, node, value, buffers)
    if (
        isinstance(val, torch.Tensor)
        and val.dtype in NARROW_INTS
        and value.stored is None
    ):
        return wrapped(value, val.dtype)  # stored data is in range already
    return value


def check_node(node: torch.fx.Node) -> UnsupportedError | None:
    """Why the frontend cannot compile `node` (of a graph from `trace_to_aten`), or None
    when it can: the node is converted alone, on stand-in inputs, and every result is
    stored, so errors raised while emitting its kernels count too."""
    if node.op != "call_function" or node.target is operator.getitem:
        return None
    prog, buffers = Program(), []

    def stand_in(a):
        if not isinstance(a, torch.fx.Node):
            return a
        val = a.meta.get("val")
        if not isinstance(val, torch.Tensor) or not _held(val.dtype):
            raise UnsupportedError(
                str(node.target),
                f"takes a {getattr(val, 'dtype', type(val).__name__)} value",
                where(node),
            )
        shape = pair_shape(val)
        element = "f32" if val.dtype in COMPLEX_DTYPES else DTYPES[val.dtype]
        buf = Buffer.holding(f"in{len(buffers)}", shape, element)
        buffers.append(buf)
        return storage_value(buf, shape, row_major_strides(shape))

    try:
        args = [
            [stand_in(b) for b in a] if isinstance(a, list | tuple) else stand_in(a)
            for a in node.args
        ]
        kwargs = {key: stand_in(a) for key, a in node.kwargs.items()}
        results = _convert_node(prog, node, args, buffers, kwargs)
        for v in results if isinstance(results, list) else [results]:
            if v is None:  # an effect token: no data
                continue
            if not isinstance(v, Value):
                raise UnsupportedError(str(node.target), "has a non-tensor result")
            prog.kernel(v, Buffer.holding(prog.fresh("out"), v.shape, v.element))
    except UnsupportedError as e:
        return e
    return None
