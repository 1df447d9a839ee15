"""Random small differentiable torch programs, for differential testing of gradients
(`torch.compile(backend="pallas_ir")` and `pallas_ir.compile` through AOTAutograd)
against eager PyTorch. Used by tests/test_grad_properties.py (bounded, derandomized)
and benchmarks/grad_fuzz.py (as long as it is asked). Needs hypothesis (the `test`
extra).

A program is Python source: a function of float32 inputs (some requiring grad, some
not) and int64 index inputs, made of matrix products (`mm`, `bmm`, `linear`, `@`),
element-wise math with broadcasting, `softmax`/`log_softmax`, `layer_norm`/`rms_norm`,
reductions, views (transpose, permute, reshape, slices with steps, expand, unsqueeze),
gathers (`index_select`, `embedding`) and `scaled_dot_product_attention`. It is drawn
as text so that a failure prints the program that runs, ready to paste.

Values stay where float32 gradients are well conditioned: every divisor is `1 + o * o`,
fractional powers take `v * v + 1`, `exp` is drawn only for values of small magnitude,
a value grown large (an estimate kept per value) is brought back by a normalising op
before anything else, and `layer_norm` only normalises a dim its value varies along
(a broadcast row would be all rounding noise).
"""

from __future__ import annotations

import linecache
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

# The first of each list is what hypothesis shrinks towards: not a degenerate size.
SIZES = [8, 1, 2, 3, 4, 16]
LAST_SIZES = [16, 1, 3, 8, 32, 128]
MAX_ELEMENTS = 8192
MAX_RANK = 4
LARGE = 30.0
"""A value whose magnitude estimate passes this is normalised before anything else."""


@dataclass(frozen=True)
class Input:
    name: str
    shape: tuple[int, ...]
    kind: str
    """"grad" (float, requires grad), "const" (float, does not) or "index" (int64)."""
    bound: int = 0
    """An index input's values lie in [0, bound)."""
    transposed: bool = False
    """A rank-2 float input held transposed (the same values, not contiguous)."""


@dataclass(frozen=True)
class GradProgram:
    inputs: tuple[Input, ...]
    body: tuple[str, ...]
    """Statements of the function, in order."""
    outputs: tuple[str, ...]

    def source(self) -> str:
        params = ", ".join(i.name for i in self.inputs)
        shapes = "; ".join(
            f"{i.name}: {'i64' if i.kind == 'index' else 'f32'}{list(i.shape)}"
            + {"grad": " (requires grad)", "const": "", "index": f" < {i.bound}"}[i.kind]
            + (" (transposed)" if i.transposed else "")
            for i in self.inputs
        )
        lines = [f"def fn({params}):", f"    # {shapes}"]
        lines += [f"    {s}" for s in self.body]
        lines.append(f"    return {', '.join(self.outputs)}")
        return "\n".join(lines) + "\n"


@dataclass
class _Value:
    name: str
    shape: tuple[int, ...]
    mag: float
    """A rough bound of its typical magnitude."""
    varies: tuple[bool, ...]
    """Per dim: whether its elements differ along it (not a broadcast)."""


def _numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


class _Draft:
    """A program being drawn: its inputs, statements and values."""

    def __init__(self, draw, slices: bool):
        self.draw = draw
        self.slices = slices
        self.inputs: list[Input] = []
        self.body: list[str] = []
        self.values: list[_Value] = []

    def input(self, shape: Sequence[int], kind: str | None = None, bound: int = 0):
        if kind is None:
            kind = self.draw(st.sampled_from(["grad", "grad", "const"]))
        name = f"{'i' if kind == 'index' else 'x'}{len(self.inputs)}"
        transposed = len(shape) == 2 and kind != "index" and self.draw(st.booleans())
        self.inputs.append(Input(name, tuple(shape), kind, bound, transposed))
        return name

    def let(self, expr: str, shape, mag: float, varies) -> _Value:
        v = _Value(f"v{len(self.values)}", tuple(shape), mag, tuple(varies))
        self.body.append(f"{v.name} = {expr}")
        self.values.append(v)
        return v

    def size(self, last: bool = False) -> int:
        return self.draw(st.sampled_from(LAST_SIZES if last else SIZES))

    def dim(self, v: _Value) -> int:
        return self.draw(st.integers(0, len(v.shape) - 1))

    def operand(self, v: _Value) -> _Value:
        """The operand of a binary op: an earlier value that broadcasts with `v` to
        v's shape, or a new input of such a shape (some dims 1, maybe fewer dims)."""
        fits = [
            o
            for o in self.values
            if len(o.shape) <= len(v.shape)
            and all(a in (1, b) for a, b in zip(o.shape[::-1], v.shape[::-1]))
        ]
        if fits and self.draw(st.booleans()):
            return self.draw(st.sampled_from(fits))
        rank = self.draw(st.integers(1, len(v.shape)))
        shape = [n if self.draw(st.booleans()) else 1 for n in v.shape[-rank:]]
        varies = [n > 1 for n in shape]
        return _Value(self.input(shape), tuple(shape), 3.0, tuple(varies))


def _broadcast_varies(v: _Value, o: _Value) -> tuple[bool, ...]:
    pad = (False,) * (len(v.shape) - len(o.shape)) + o.varies
    return tuple(a or (b and n > 1) for a, b, n in zip(v.varies, pad, v.shape))


def _unary(d: _Draft, v: _Value) -> _Value:
    ops = ["tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "square", "cube"]
    ops += ["sqrt1p", "rsqrt1p", "pow15", "scale", "third", "shift"]
    if v.mag <= 4:
        ops.append("exp")
    op = d.draw(st.sampled_from(ops))
    n = v.name
    expr, mag = {
        "exp": (f"torch.exp({n})", math.exp(v.mag)),
        "tanh": (f"torch.tanh({n})", 1.0),
        "sigmoid": (f"torch.sigmoid({n})", 1.0),
        "relu": (f"torch.relu({n})", v.mag),
        "gelu": (f"F.gelu({n})", v.mag),
        "gelu_tanh": (f'F.gelu({n}, approximate="tanh")', v.mag),
        "silu": (f"F.silu({n})", v.mag),
        "square": (f"{n} ** 2", v.mag**2),
        "cube": (f"torch.pow({n}, 3)", v.mag**3),
        "sqrt1p": (f"({n} * {n} + 1) ** 0.5", v.mag + 1),
        "rsqrt1p": (f"({n} * {n} + 1) ** -0.5", 1.0),
        "pow15": (f"torch.pow({n} * {n} + 1, 1.5)", (v.mag**2 + 1) ** 1.5),
        "scale": (f"{n} * 0.5", v.mag / 2),
        "third": (f"{n} / 3.0", v.mag / 3),
        "shift": (f"1.5 - {n}", v.mag + 1.5),
    }[op]
    return d.let(expr, v.shape, mag, v.varies)


def _binary(d: _Draft, v: _Value) -> _Value:
    o = d.operand(v)
    op = d.draw(st.sampled_from(["mul", "add", "sub", "div", "maximum", "where"]))
    a, b = v.name, o.name
    if d.draw(st.booleans()) and op in ("mul", "add", "maximum"):
        a, b = b, a  # the broadcast operand first
    expr, mag = {
        "mul": (f"{a} * {b}", v.mag * o.mag),
        "add": (f"{a} + {b}", v.mag + o.mag),
        "sub": (f"{a} - {b}", v.mag + o.mag),
        "div": (f"{v.name} / (1 + {o.name} * {o.name})", v.mag),
        "maximum": (f"torch.maximum({a}, {b})", max(v.mag, o.mag)),
        "where": (f"torch.where({o.name} > 0, {v.name}, {o.name})", max(v.mag, o.mag)),
    }[op]
    return d.let(expr, v.shape, mag, _broadcast_varies(v, o))


def _matmul(d: _Draft, v: _Value) -> _Value | None:
    rank, k = len(v.shape), v.shape[-1]
    kinds = ["linear", "gram"] if rank >= 2 else []
    if rank == 2:
        kinds.append("mm")
    if rank == 3:
        kinds += ["bmm", "matmul"]
    if not kinds:
        return None
    kind = d.draw(st.sampled_from(kinds))
    scale = math.sqrt(k)
    if kind == "gram":  # the value against itself, as attention scores are
        m = v.shape[-2]
        shape = (*v.shape[:-1], m)
        if _numel(shape) > MAX_ELEMENTS:
            return None
        varies = (*v.varies[:-1], v.varies[-2])
        return d.let(
            f"{v.name} @ {v.name}.transpose(-1, -2)", shape, v.mag**2 * scale, varies
        )
    n = d.size(last=True)
    shape = (*v.shape[:-1], n)
    if _numel(shape) > MAX_ELEMENTS:
        return None
    varies = (*v.varies[:-1], True)
    mag = v.mag * 3.0 * scale
    if kind == "linear":
        w = d.input((n, k))
        if d.draw(st.booleans()):
            expr = f"F.linear({v.name}, {w}, {d.input((n,))})"
        else:
            expr = f"F.linear({v.name}, {w})"
    elif kind == "mm":
        expr = f"torch.mm({v.name}, {d.input((k, n))})"
    elif kind == "bmm":
        expr = f"torch.bmm({v.name}, {d.input((v.shape[0], k, n))})"
    else:  # a batch of matrices times one matrix
        expr = f"{v.name} @ {d.input((k, n))}"
    return d.let(expr, shape, mag, varies)


def _normalise(d: _Draft, v: _Value) -> _Value:
    ops = ["softmax", "log_softmax", "rms_norm", "tanh"]
    if v.shape[-1] > 1 and v.varies[-1]:
        ops.append("layer_norm")
    op = d.draw(st.sampled_from(ops))
    n, last = v.name, v.shape[-1]
    if op == "tanh":
        return d.let(f"torch.tanh({n})", v.shape, 1.0, v.varies)
    if op in ("softmax", "log_softmax"):
        dim = d.draw(st.sampled_from([-1, d.dim(v)]))
        mag = 1.0 if op == "softmax" else min(2 * v.mag, 2 * LARGE) + math.log(last)
        fn = "torch.softmax" if op == "softmax" else "F.log_softmax"
        return d.let(f"{fn}({n}, dim={dim})", v.shape, mag, v.varies)
    args = [n, f"({last},)"]
    affine = d.draw(st.integers(0, 2 if op == "layer_norm" else 1))
    if affine >= 1:
        args.append(d.input((last,)))
    if affine == 2:
        args.append(d.input((last,)))
    fn = "F.layer_norm" if op == "layer_norm" else "F.rms_norm"
    return d.let(f"{fn}({', '.join(args)})", v.shape, 4.0 * 3.0, v.varies)


def _reduce(d: _Draft, v: _Value) -> _Value:
    op = d.draw(st.sampled_from(["sum", "mean", "amax"]))
    rank = len(v.shape)
    # One dim, or several (not all of them unless kept: a 0-d value takes no views).
    count = d.draw(st.integers(1, rank)) if d.draw(st.booleans()) else 1
    dims = sorted(d.draw(st.permutations(range(rank)))[:count])
    keep = count == rank or d.draw(st.booleans())
    n = math.prod(v.shape[i] for i in dims)
    shape, varies = list(v.shape), list(v.varies)
    for i in reversed(dims):
        if keep:
            shape[i], varies[i] = 1, False
        else:
            del shape[i], varies[i]
    mag = v.mag * (2 * math.sqrt(n) if op == "sum" else 1)
    at = str(dims[0]) if count == 1 else str(tuple(dims))
    return d.let(f"{v.name}.{op}({at}, keepdim={keep})", shape, mag, varies)


def _view(d: _Draft, v: _Value) -> _Value | None:
    rank = len(v.shape)
    kinds = ["slice", "reshape"] if d.slices else ["reshape"]
    if rank >= 2:
        kinds += ["transpose", "permute"]
    if rank == 2:
        kinds.append("t")
    if rank < MAX_RANK:
        kinds += ["unsqueeze", "expand"]
    if 1 in v.shape:
        kinds.append("expand_dim")
    kind = d.draw(st.sampled_from(kinds))
    n = v.name
    shape, varies = list(v.shape), list(v.varies)
    if kind == "transpose":
        a, b = d.draw(st.permutations(range(rank)))[:2]
        shape[a], shape[b], varies[a], varies[b] = (
            shape[b],
            shape[a],
            varies[b],
            varies[a],
        )
        return d.let(f"{n}.transpose({a}, {b})", shape, v.mag, varies)
    if kind == "t":
        return d.let(f"{n}.t()", shape[::-1], v.mag, varies[::-1])
    if kind == "permute":
        perm = d.draw(st.permutations(range(rank)))
        shape2 = [shape[p] for p in perm]
        return d.let(
            f"{n}.permute{tuple(perm)}", shape2, v.mag, [varies[p] for p in perm]
        )
    if kind == "slice":
        dim = d.dim(v)
        start = d.draw(st.integers(0, shape[dim] - 1))
        step = d.draw(st.integers(1, 3))
        stop = d.draw(st.integers(start + 1, shape[dim]))
        index = ["..."] if dim == rank - 1 else [":"] * dim
        index.append(f"{start}:{stop}:{step}" if step > 1 else f"{start}:{stop}")
        shape[dim] = len(range(start, stop, step))
        return d.let(f"{n}[{', '.join(index)}]", shape, v.mag, varies)
    if kind == "unsqueeze":
        dim = d.draw(st.integers(0, rank))
        shape.insert(dim, 1)
        varies.insert(dim, False)
        return d.let(f"{n}.unsqueeze({dim})", shape, v.mag, varies)
    if kind == "expand":  # a new leading dim
        count = d.draw(st.sampled_from([2, 3, 4]))
        if _numel(shape) * count > MAX_ELEMENTS:
            return None
        sizes = ", ".join(str(s) for s in [count, *shape])
        return d.let(f"{n}.expand({sizes})", [count, *shape], v.mag, [False, *varies])
    if kind == "expand_dim":  # a dim of 1 broadcast
        dim = d.draw(st.sampled_from([i for i, s in enumerate(shape) if s == 1]))
        count = d.draw(st.sampled_from([2, 3, 8]))
        if _numel(shape) * count > MAX_ELEMENTS:
            return None
        shape[dim] = count
        sizes = ", ".join("-1" if i != dim else str(count) for i in range(rank))
        return d.let(f"{n}.expand({sizes})", shape, v.mag, varies)
    # reshape: merge two neighbouring dims, split one, or flatten all
    choices = ["flatten"]
    if rank >= 2:
        choices.append("merge")
    splittable = [i for i, s in enumerate(shape) if s in (4, 8, 16, 32, 128)]
    if splittable and rank < MAX_RANK:
        choices.append("split")
    how = d.draw(st.sampled_from(choices))
    if how == "flatten":
        new, new_varies = [_numel(shape)], [any(varies)]
    elif how == "merge":
        i = d.draw(st.integers(0, rank - 2))
        new = [*shape[:i], shape[i] * shape[i + 1], *shape[i + 2 :]]
        new_varies = [*varies[:i], varies[i] or varies[i + 1], *varies[i + 2 :]]
    else:
        i = d.draw(st.sampled_from(splittable))
        new = [*shape[:i], 2, shape[i] // 2, *shape[i + 1 :]]
        new_varies = [*varies[:i], varies[i], varies[i], *varies[i + 1 :]]
    return d.let(f"{n}.reshape({', '.join(map(str, new))})", new, v.mag, new_varies)


def _gather(d: _Draft, v: _Value) -> _Value | None:
    kinds = ["index_select"]
    if len(v.shape) == 2:
        kinds.append("embedding")
    kind = d.draw(st.sampled_from(kinds))
    count = d.draw(st.sampled_from([1, 3, 8]))
    if kind == "index_select":
        dim = d.dim(v)
        idx = d.input((count,), "index", v.shape[dim])
        shape, varies = list(v.shape), list(v.varies)
        shape[dim] = count
        return d.let(f"{v.name}.index_select({dim}, {idx})", shape, v.mag, varies)
    lookups = (count,) if d.draw(st.booleans()) else (2, count)
    idx = d.input(lookups, "index", v.shape[0])
    shape = (*lookups, v.shape[1])
    varies = (*(True for _ in lookups), v.varies[1])
    return d.let(f"F.embedding({idx}, {v.name})", shape, v.mag, varies)


def _attention(d: _Draft, v: _Value) -> _Value | None:
    """Scaled dot-product attention with `v` as the queries (and keys and values, or
    new inputs of as many rows)."""
    if len(v.shape) < 3:
        return None
    *batch, _, e = v.shape
    if d.draw(st.booleans()):
        k = w = v.name
    else:
        rows = d.size()
        k, w = d.input((*batch, rows, e)), d.input((*batch, rows, e))
    causal = ", is_causal=True" if d.draw(st.booleans()) else ""
    expr = f"F.scaled_dot_product_attention({v.name}, {k}, {w}{causal})"
    return d.let(expr, v.shape, max(v.mag, 3.0), v.varies)


_STEPS = {
    "matmul": _matmul,
    "unary": _unary,
    "binary": _binary,
    "normalise": _normalise,
    "reduce": _reduce,
    "view": _view,
    "gather": _gather,
    "attention": _attention,
}


@st.composite
def grad_programs(
    draw,
    min_steps: int = 2,
    max_steps: int = 6,
    gathers: bool = True,
    slices: bool = True,
    attention: bool = True,
) -> GradProgram:
    """A random differentiable program of `min_steps` to `max_steps` ops.
    `gathers=False` draws no index_select or embedding, `slices=False` no slices
    (their backward graphs scatter), `attention=False` no scaled_dot_product_attention."""
    d = _Draft(draw, slices)
    rank = draw(st.sampled_from([2, 3, 1]))
    shape = [d.size() for _ in range(rank - 1)] + [d.size(last=True)]
    first = d.input(shape, "grad")
    v = _Value(first, tuple(shape), 3.0, tuple(n > 1 for n in shape))
    d.values.append(v)
    kinds = [
        k
        for k in _STEPS
        if (gathers or k != "gather") and (attention or k != "attention")
    ]
    for _ in range(draw(st.integers(min_steps, max_steps))):
        # Mostly the latest value, sometimes an earlier one: programs branch and join.
        v = (
            d.values[-1]
            if draw(st.integers(0, 3)) < 3
            else draw(st.sampled_from(d.values))
        )
        if v.mag > LARGE:
            new = _normalise(d, v)
        else:
            new = _STEPS[draw(st.sampled_from(kinds))](d, v)
        if new is None:  # too large: something that keeps the size
            new = _unary(d, v)
    # Every value no later statement reads is an output: each step counts in the loss.
    later = [" ".join(d.body[i + 1 :]) for i in range(len(d.body))]
    outputs = [
        v.name
        for v, rest in zip(d.values[1:], later, strict=True)
        if not re.search(rf"\b{v.name}\b", rest)
    ]
    return GradProgram(tuple(d.inputs), tuple(d.body), tuple(outputs))


def build(p: GradProgram) -> Callable:
    """The program as a function (its source in linecache, so tracebacks and
    pallas_ir's diagnostics show its lines)."""
    source = p.source()
    filename = f"<grad_fuzz {abs(hash(source)):x}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict = {"torch": torch, "F": F}
    exec(compile(source, filename, "exec"), scope)  # noqa: S102 - the drawn program
    return scope["fn"]


def make_inputs(
    p: GradProgram, seed: int = 0, dtype: torch.dtype = torch.float32
) -> list[torch.Tensor]:
    """Fresh inputs for `p` (the same values for the same seed): standard normal
    floats of `dtype`, with requires_grad where the program says, and int64 indices."""
    g = torch.Generator().manual_seed(seed)
    tensors = []
    for i in p.inputs:
        if i.kind == "index":
            tensors.append(torch.randint(0, i.bound, i.shape, generator=g))
        else:
            t = torch.randn(i.shape, generator=g, dtype=torch.float64).to(dtype)
            if i.transposed:
                t = t.t().contiguous().t()
            tensors.append(t.requires_grad_(i.kind == "grad"))
    return tensors


@dataclass
class Run:
    outputs: list[torch.Tensor]
    grads: list[torch.Tensor | None]
    """The .grad of every input that requires grad, in input order."""


def forward_backward(fn: Callable, inputs: list[torch.Tensor]) -> Run:
    """`fn` on `inputs`, then the sum of squares of its outputs differentiated."""
    out = fn(*inputs)
    outputs = list(out) if isinstance(out, tuple | list) else [out]
    loss = sum((o**2).sum() for o in outputs)
    loss.backward()
    return Run([o.detach() for o in outputs], [t.grad for t in inputs if t.requires_grad])


def mismatches(p: GradProgram, got: Run, seed: int = 0) -> list[str]:
    """Where `got` (the program run by a compiler on `make_inputs(p, seed)`) differs
    from eager: each output and gradient within rtol 1e-4 and an atol of 1e-4 times the
    tensor's largest magnitude (at least 1), of eager's float32 result or, where that
    misses, of eager's float64 one (eager's own float32 rounding is no finding). Around
    eager's float32 result, each element also allows eager's own float32 error there
    (its distance from float64): an ill-conditioned program (an RMS norm of rows that
    are multiples of one vector, whose inputs' gradients are 0 in float64 and 131 in
    float32) is not a finding when the compiled result is as near eager's."""
    fn = build(p)
    want32 = forward_backward(fn, make_inputs(p, seed))
    want64 = forward_backward(fn, make_inputs(p, seed, torch.float64))
    names = [i.name for i in p.inputs if i.kind == "grad"]
    found = []
    rows = [(f"output {n}", 0) for n in p.outputs] + [(f"grad of {n}", 1) for n in names]
    gots = got.outputs + got.grads
    w32s = want32.outputs + want32.grads
    w64s = want64.outputs + want64.grads
    if len(gots) != len(w32s):
        return [f"{len(gots)} outputs and grads, eager has {len(w32s)}"]
    for (what, _), g, w32, w64 in zip(rows, gots, w32s, w64s, strict=True):
        if g is None or w32 is None:
            if (g is None) != (w32 is None):
                found.append(
                    f"{what}: {'None' if g is None else 'a tensor'}, eager "
                    f"has {'None' if w32 is None else 'a tensor'}"
                )
            continue
        if g.shape != w32.shape or g.dtype != w32.dtype:
            found.append(
                f"{what}: {g.dtype}{list(g.shape)}, eager has "
                f"{w32.dtype}{list(w32.shape)}"
            )
            continue
        own = (w32.double() - w64).abs().nan_to_num(0).to(w32.dtype)
        error = _excess(g, w32, own)
        if error > 0 and _excess(g.double(), w64) > 0:
            diff = (g.double() - w64).abs().nan_to_num(math.inf)
            at = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
            found.append(
                f"{what}: max |diff| {diff.max().item():.3g} at {list(at)} "
                f"(got {g[at].item():.6g}, eager f32 {w32[at].item():.6g}, "
                f"f64 {w64[at].item():.6g})"
            )
    return found


def _excess(
    got: torch.Tensor, want: torch.Tensor, slack: torch.Tensor | float = 0.0
) -> float:
    """How far `got` is outside the tolerance around `want`, widened by `slack` at
    each element (0 if within)."""
    scale = max(1.0, want.abs().max().item()) if want.numel() else 1.0
    allowed = 1e-4 * scale + 1e-4 * want.abs() + slack
    diff = (got - want).abs()
    if not torch.equal(got.isnan(), want.isnan()):
        return math.inf
    diff = torch.where(want.isnan(), 0, diff)
    return (diff - allowed).clamp_min(0).max().item() if diff.numel() else 0.0
