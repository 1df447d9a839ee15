"""Random torch programs for differential testing against eager PyTorch, of
`pallas_ir.compile` and of `torch.compile(backend="pallas_ir")`. Used by
tests/test_frontend_fuzz.py (bounded, derandomized) and benchmarks/fuzz.py (as long as
it is asked). Needs hypothesis (the `test` extra).

A program is an input `x` and a list of steps, each one line of Python applied to the
running value (and, for some, to an earlier value or a fresh input the step declares);
`source` prints it as the function it is, `function` makes that function, and
`make_inputs` its inputs. Programs come in kinds (`KINDS`), each switchable:
`programs(kinds=...)` draws only those. `check_program` runs one against eager and
raises `Mismatch` where pallas_ir's answer differs (values, dtypes, mutated inputs,
aliasing, or the exception eager's behaviour calls for), and `EagerFallback` where
torch.compile's backend ran part of it in eager PyTorch.

Every step is tried on meta tensors as it is drawn, so torch rejects ill-typed steps
(a bool negated, a mean of integers) before they are kept: a program eager rejects is a
fuzzer bug (`InvalidProgram`), not a finding.
"""

from __future__ import annotations

import itertools
import linecache
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from pallas_ir.frontend.torch_to_ta import UnsupportedError

KINDS: dict[str, str] = {
    "chain": "chains of views, element-wise ops, index_select gathers and reductions "
    "(float32, bfloat16, int32; some inputs passed transposed)",
    "dag": "the same with values used more than once: x + x, x * sigmoid(x), the "
    "running value combined with an earlier intermediate",
    "views": "int64 and bool inputs held expanded (stride 0), sliced (offsets, steps) "
    "and transposed, through views, logic, comparisons, where and casts",
    "index": "index_select, embedding, gather and w[i] (negative indices wrap) with "
    "int64 or int32 index tensors in range",
    "index_oob": "the same, called again with one index out of range: IndexError "
    "naming the op (eager raises IndexError or RuntimeError)",
    "mutation": "programs that write their input x (add_, mul_, x[:, i] = ..., "
    "index_copy_, index_put_): results, inputs and the storage around input views",
    "divmod": "fmod, remainder, //, div(rounding_mode floor / trunc) of dividends near "
    "multiples of the divisor, negative ones, large ratios; float divisors may be 0, "
    "integer ones never are",
    "guard": "pallas_ir.compile's object called with other strides, another dtype or "
    "another number of arguments: UnsupportedError naming what differs",
    "recompile": "the same calls under torch.compile(backend='pallas_ir'): a "
    "recompile and eager's result (or eager's exception)",
}
"""Every program kind, with what it draws."""

SIZES = [1, 3, 8, 16, 32, 128]
MAX_ELEMENTS = 1 << 21
"""No value of a program is larger (an expand of a large value is skipped)."""
UNARY = ["tanh", "relu", "neg", "abs", "sigmoid", "exp_clamped"]
FLOAT_REDUCTIONS = ["sum", "amax", "mean"]
EXACT_UNARY = ["relu", "neg", "abs"]
"""What follows a division in the `divmod` kind. Exact ops only: a transcendental's
last-ulp difference from eager (XLA's tanh is not torch's) flips a later floor or
remainder at a multiple of the divisor, a badly conditioned program, not a bug. And
no `amax` or `exp` of floats, where a division by 0.0 makes NaNs: XLA:CPU drops a
NaN from some max reductions (openxla/xla#21461) and turns a bfloat16 NaN through
`exp` into a number, in interpret mode only; the kernels emit the right ops."""
DTYPES = {
    "f32": torch.float32,
    "bf16": torch.bfloat16,
    "i32": torch.int32,
    "i64": torch.int64,
    "bool": torch.bool,
}
SHORT = {v: k for k, v in DTYPES.items()}
FLOATS = {"f32", "bf16"}
INTS = {"i32", "i64"}
INDEXING = {"index_select", "embedding", "gather", "index"}
"""The indexing steps, each named as its ATen op (which an out-of-range error names)."""


@dataclass(frozen=True)
class Arg:
    """An input of a program: its shape and dtype, how it is held (`layout`: views
    of a contiguous storage applied outermost first: `("transposed", perm)`,
    `("expanded", dim)` (stride 0), `("sliced", dim, start, step)`) and its values
    (`("normal",)`, `("index", n, wrap)`: in [0, n), or [-n, n) where negative
    indices wrap, `("unique", n)`: distinct in [0, n), `("multiples", unit, kmax)`:
    near k * unit, `("divisor", unit, zero)`: unit times small factors, never 0 for
    integers, and 0.0 among them where `zero`)."""

    shape: tuple[int, ...]
    dtype: str = "f32"
    layout: tuple[tuple, ...] = ()
    values: tuple = ("normal",)

    def text(self) -> str:
        text = f"{self.dtype}{list(self.shape)}"
        if self.layout:
            text += " held " + " of ".join(_layout_text(op) for op in self.layout)
        if self.values != ("normal",):
            text += f" values {self.values}"
        return text


def _layout_text(op: tuple) -> str:
    if op[0] == "transposed":
        return f"transposed{op[1]}"
    if op[0] == "expanded":
        return f"expanded(dim={op[1]})"
    return f"sliced(dim={op[1]}, start={op[2]}, step={op[3]})"


@dataclass(frozen=True)
class Program:
    x: Arg
    steps: tuple[tuple, ...]
    kind: str = "chain"
    trial: tuple = ()
    """A second call after the first: `("oob", arg, position, value)`: one index out
    of range; `("strides", arg, layout)`, `("dtype", arg, dtype)`: an input held or
    typed otherwise; `("arity", delta)`: one argument more or fewer."""

    def args(self) -> list[Arg]:
        return [self.x] + [a for s in self.steps for a in s if isinstance(a, Arg)]

    def arg_names(self) -> list[str]:
        names = ["x"]
        for k, s in enumerate(self.steps, 1):
            names += _arg_names(k, s)
        return names

    def describe(self) -> str:
        """The program as Python, its inputs and its second call."""
        lines = [f"[{self.kind}]", source(self)]
        lines += [f"# {n}: {a.text()}" for n, a in zip(self.arg_names(), self.args())]
        if self.trial:
            lines.append(f"# then called with {_trial_text(self)}")
        lines.append(f"# {self!r}")
        return "\n".join(lines)


def _trial_text(p: Program) -> str:
    names = p.arg_names()
    t = p.trial
    if t[0] == "oob":
        return f"{names[t[1]]}.view(-1)[{t[2]}] = {t[3]}"
    if t[0] == "strides":
        held = " of ".join(_layout_text(op) for op in t[2]) or "contiguous"
        return f"{names[t[1]]} held {held}"
    if t[0] == "dtype":
        return f"{names[t[1]]} as {t[2]}"
    return "one argument more" if t[1] > 0 else "one argument fewer"


def _arg_names(k: int, step: tuple) -> list[str]:
    names: list[str] = []
    for a in step:
        if isinstance(a, Arg):
            name = ("i" if a.values[0] in ("index", "unique") else "a") + str(k)
            names.append(name + "b" if name in names else name)
    return names


def _value(j: int) -> str:
    return "x" if j == 0 else f"v{j}"


UNARY_EXPR = {
    "tanh": "torch.tanh({})",
    "relu": "torch.relu({})",
    "neg": "-{}",
    "abs": "{}.abs()",
    "sigmoid": "torch.sigmoid({})",
    "exp_clamped": "torch.exp({}.clamp(-4, 4))",
    "logical_not": "torch.logical_not({})",
    "bitwise_not": "~{}",
}
BINARY_EXPR = {
    "add": "{} + {}",
    "sub": "{} - {}",
    "mul": "{} * {}",
    "maximum": "torch.maximum({}, {})",
    "logical_and": "torch.logical_and({}, {})",
    "logical_or": "torch.logical_or({}, {})",
    "logical_xor": "torch.logical_xor({}, {})",
    "bitwise_and": "{} & {}",
    "bitwise_or": "{} | {}",
}
NUMERIC_BINARY = ["add", "sub", "mul", "maximum"]
BOOL_BINARY = ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or"]
DIVMOD_EXPR = {
    "fmod": "torch.fmod({}, {})",
    "remainder": "torch.remainder({}, {})",
    "floordiv": "{} // {}",
    "div_floor": "torch.div({}, {}, rounding_mode='floor')",
    "div_trunc": "torch.div({}, {}, rounding_mode='trunc')",
}
REVERSED_DIVMOD_EXPR = {"remainder": "{} % {}", "floordiv": "{} // {}"}
"""A scalar dividend: torch has these two as Python operators."""


def _dims(dim: int, index: str) -> str:
    return ":, " * dim + index


def _src(src: object, prev: str, names: dict, cast: bool) -> str:
    if isinstance(src, Arg):
        return names[src]
    if src == "running":
        return f"{prev}.to(x.dtype)" if cast else prev
    return repr(src)


def _render(k: int, step: tuple) -> list[str]:
    """The lines of step `k` (1-based); the last assigns its value `v{k}`."""
    prev, out = _value(k - 1), f"v{k}"
    names = dict(zip([a for a in step if isinstance(a, Arg)], _arg_names(k, step)))
    kind = step[0]
    if kind == "unary":
        e = UNARY_EXPR[step[1]].format(prev)
    elif kind == "binary":
        e = BINARY_EXPR[step[1]].format(prev, names[step[2]])
    elif kind == "scalar":
        e = f"{prev} + {step[2]!r}" if step[1] == "add" else f"{prev} * {step[2]!r}"
    elif kind == "slice":
        _, dim, start, stride = step
        e = f"{prev}[{_dims(dim, f'{start}::{stride}' if stride > 1 else f'{start}:')}]"
    elif kind == "permute":
        e = f"{prev}.permute({', '.join(map(str, step[1]))})"
    elif kind == "reduce":
        _, op, dim, keep = step
        e = f"{prev}.{op}({dim}, keepdim={keep})"
    elif kind == "expand":
        e = f"{prev}.unsqueeze(0).expand({step[1]}, *{prev}.shape)"
    elif kind == "select":
        e = f"{prev}[{_dims(step[1], str(step[2]))}]"
    elif kind == "index_select":
        e = f"{prev}.index_select({step[1]}, {names[step[2]]})"
    elif kind == "embedding":
        e = f"F.embedding({names[step[1]]}, {prev})"
    elif kind == "gather":
        e = f"{prev}.gather({step[1]}, {names[step[2]]})"
    elif kind == "index":
        e = f"{prev}[{_dims(step[1], names[step[2]])}]"
    elif kind == "reuse":
        e = BINARY_EXPR[step[1]].format(prev, _value(step[2]))
    elif kind == "twice":
        e = BINARY_EXPR[step[1]].format(prev, prev)
    elif kind == "gate":
        e = f"{prev} * torch.{step[1]}({prev})"
    elif kind == "compare":
        e = f"{prev} {step[1]} {step[2]!r}"
    elif kind == "where":
        e = f"torch.where({prev}, {names[step[1]]}, {step[2]!r})"
    elif kind == "cast":
        e = f"{prev}.to({DTYPES[step[1]]})"
    elif kind == "divmod":
        _, op, divisor, reverse = step
        d = names[divisor] if isinstance(divisor, Arg) else repr(divisor)
        if reverse:
            e = REVERSED_DIVMOD_EXPR[op].format(d, prev)
        else:
            e = DIVMOD_EXPR[op].format(prev, d)
    elif kind == "add_":
        e = f"x.add_({_src(step[1], prev, names, cast=True)})"
    elif kind == "mul_":
        e = f"x.mul_({step[1]!r})"
    elif kind == "setitem":
        _, dim, region, src = step
        at = str(region[1]) if region[0] == "select" else f"{region[1]}::{region[2]}"
        return [
            f"x[{_dims(dim, at)}] = {_src(src, prev, names, cast=False)}",
            f"{out} = x",
        ]
    elif kind == "index_copy_":
        _, dim, index, src = step
        e = f"x.index_copy_({dim}, {names[index]}, {_src(src, prev, names, True)})"
    elif kind == "index_put_":
        _, index, src, accumulate = step
        e = (
            f"x.index_put_(({names[index]},), {_src(src, prev, names, True)}, "
            f"accumulate={accumulate})"
        )
    else:
        raise ValueError(f"unknown step {step}")
    return [f"{out} = {e}"]


def source(p: Program) -> str:
    """The program as the Python function it is."""
    params = p.arg_names() + (["*unused"] if p.trial[:1] == ("arity",) else [])
    lines = [f"def program({', '.join(params)}):"]
    for k, s in enumerate(p.steps, 1):
        lines += ["    " + line for line in _render(k, s)]
    lines.append(f"    return {_value(len(p.steps))}")
    return "\n".join(lines) + "\n"


_counter = itertools.count()


def function(p: Program) -> Callable:
    """The program as a function, its source registered with linecache (so error
    messages and tracebacks can quote its lines)."""
    text = source(p)
    filename = f"<fuzz program {next(_counter)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"torch": torch, "F": F}
    exec(compile(text, filename, "exec"), scope)  # noqa: S102 - the program is ours
    return scope["program"]


# Inputs.


def _hold(shape: Sequence[int], layout: Sequence[tuple], fill: Callable) -> torch.Tensor:
    """A tensor of `shape` viewing a contiguous storage that `fill(shape)` makes, by
    the views of `layout`."""
    shape = list(shape)
    if not layout:
        return fill(shape)
    op, rest = layout[0], layout[1:]
    if op[0] == "transposed":
        perm = op[1]
        inner = _hold([shape[p] for p in perm], rest, fill)
        return inner.permute(*sorted(range(len(perm)), key=lambda d: perm[d]))
    if op[0] == "expanded":
        inner = _hold([1 if d == op[1] else n for d, n in enumerate(shape)], rest, fill)
        return inner.expand(*shape)
    _, dim, start, step = op
    span = (shape[dim] - 1) * step + 1
    inner = _hold(
        [start + span + 1 if d == dim else n for d, n in enumerate(shape)], rest, fill
    )
    index = [slice(None)] * len(shape)
    index[dim] = slice(start, start + span, step)
    return inner[tuple(index)]


def _near_multiples(shape, dtype: str, unit, kmax: int, g) -> torch.Tensor:
    """k * unit for random k in [-kmax, kmax], some exactly, some one ulp off (2^-100
    off 0), some half a unit off (floats), or off by -1, 0, 1 (integers)."""
    k = torch.randint(-kmax, kmax + 1, tuple(shape), generator=g, dtype=torch.float64)
    pick = torch.randint(0, 4, tuple(shape), generator=g)
    if dtype in INTS:
        off = torch.tensor([0, 1, -1, 0], dtype=torch.float64)[pick]
        return (k * unit + off).to(DTYPES[dtype])
    exact = (k * unit).float()
    # An ulp off 0 is subnormal, which XLA and the TPU flush to zero (docs/torch.md):
    # 2^-100 instead, whose remainders are normal (a divisor below 2^-102 leaves
    # subnormal ones) and by which eager's vectorized fmod does not overflow to NaN.
    tiny = 2.0**-100
    up = torch.nextafter(exact, torch.tensor(float("inf")))
    down = torch.nextafter(exact, torch.tensor(float("-inf")))
    values = torch.stack(
        [
            exact,
            torch.where(exact == 0, tiny, up),
            torch.where(exact == 0, -tiny, down),
            exact + unit / 2,
        ]
    )
    return values.gather(0, pick.unsqueeze(0))[0].to(DTYPES[dtype])


def _divisors(shape, dtype: str, unit, zero: bool, g) -> torch.Tensor:
    factors = [1, -1, 2, -2] + ([0.5, -0.5] if dtype not in INTS else [3, -7])
    table = torch.tensor([unit * f for f in factors] + ([0.0] if zero else []))
    pick = torch.randint(0, len(table), tuple(shape), generator=g)
    return table[pick].to(DTYPES[dtype])


def _fill(arg: Arg, g: torch.Generator) -> Callable:
    def fill(shape: list[int]) -> torch.Tensor:
        style = arg.values[0]
        if style == "normal":
            if arg.dtype in FLOATS:
                return torch.randn(*shape, generator=g).to(DTYPES[arg.dtype])
            if arg.dtype == "bool":
                return torch.randint(0, 2, tuple(shape), generator=g).bool()
            return torch.randint(-5, 6, tuple(shape), generator=g).to(DTYPES[arg.dtype])
        if style == "index":
            _, n, wrap = arg.values
            low = -n if wrap else 0
            i = torch.randint(low, n, tuple(shape), generator=g)
            return i.to(DTYPES[arg.dtype])
        if style == "unique":
            i = torch.randperm(arg.values[1], generator=g)[: shape[0]]
            return i.to(DTYPES[arg.dtype])
        if style == "multiples":
            return _near_multiples(shape, arg.dtype, *arg.values[1:], g)
        return _divisors(shape, arg.dtype, *arg.values[1:], g)

    return fill


def _make(arg: Arg, g: torch.Generator) -> torch.Tensor:
    return _hold(arg.shape, arg.layout, _fill(arg, g))


def _meta(arg: Arg) -> torch.Tensor:
    dtype = DTYPES[arg.dtype]
    return _hold(
        arg.shape, arg.layout, lambda s: torch.empty(s, dtype=dtype, device="meta")
    )


def make_inputs(p: Program, seed: int = 0, trial: bool = False) -> list[torch.Tensor]:
    """Fresh random inputs for `p` (the same for the same seed), for its second call
    (`p.trial`) when `trial`."""
    g = torch.Generator().manual_seed(seed)
    args = p.args()
    inputs = [_make(a, g) for a in args]
    if not trial or not p.trial:
        return inputs
    what = p.trial[0]
    if what == "oob":
        _, i, position, value = p.trial
        inputs[i] = inputs[i].contiguous()
        inputs[i].view(-1)[position] = value
    elif what == "strides":
        _, i, layout = p.trial
        inputs[i] = _make(replace(args[i], layout=layout), g)
    elif what == "dtype":
        _, i, dtype = p.trial
        inputs[i] = inputs[i].to(DTYPES[dtype])
    elif p.trial[1] > 0:
        inputs.append(torch.zeros(3))
    else:
        inputs.pop()
    return inputs


# Programs.


class _Draft:
    """A program being drawn: its steps so far, and every value on meta tensors."""

    def __init__(self, x: Arg, kind: str):
        self.x, self.kind = x, kind
        self.steps: list[tuple] = []
        self.env: dict[str, object] = {"x": _meta(x)}
        self.views_of_x = {"x"}
        """Values that view x's storage (a write to x shows in them)."""

    @property
    def prev(self) -> str:
        return _value(len(self.steps))

    @property
    def value(self) -> torch.Tensor:
        return self.env[self.prev]

    @property
    def shape(self) -> list[int]:
        return list(self.value.shape)

    @property
    def dtype(self) -> str:
        return SHORT[self.value.dtype]

    def values(self) -> list[torch.Tensor]:
        return [self.env[_value(j)] for j in range(len(self.steps) + 1)]

    def add(self, step: tuple | None) -> bool:
        """Keep `step` if torch accepts it on the values so far."""
        if step is None:
            return False
        k = len(self.steps) + 1
        env = dict(self.env)
        for a, name in zip([a for a in step if isinstance(a, Arg)], _arg_names(k, step)):
            env[name] = _meta(a)
        try:
            exec("\n".join(_render(k, step)), {"torch": torch, "F": F}, env)  # noqa: S102
        except Exception:  # noqa: BLE001 - torch rejects the step
            return False
        out = env[f"v{k}"]
        if (
            not isinstance(out, torch.Tensor)
            or out.numel() > MAX_ELEMENTS
            or out.numel() == 0
            or out.dim() > 4
        ):
            return False
        views = ("slice", "permute", "expand", "select")
        if step[0] in MUTATIONS or (step[0] in views and self.prev in self.views_of_x):
            self.views_of_x.add(f"v{k}")
        self.env = env
        self.steps.append(step)
        return True

    def program(self, trial: tuple = ()) -> Program:
        return Program(self.x, tuple(self.steps), self.kind, trial)


def _broadcasts_to(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether a value of shape `a` broadcasts to `b` (an in-place write's source)."""
    return len(a) <= len(b) and all(m in (n, 1) for m, n in zip(reversed(a), reversed(b)))


def _broadcasts(a: Sequence[int], b: Sequence[int]) -> bool:
    return all(m == n or 1 in (m, n) for m, n in zip(reversed(a), reversed(b)))


def _draw_layout(draw, shape: Sequence[int], expand: bool = True) -> tuple[tuple, ...]:
    ops: list[tuple] = []
    for _ in range(draw(st.integers(1, 2))):
        choices = ["sliced"] + (["expanded"] if expand else [])
        if len(shape) > 1:
            choices.append("transposed")
        what = draw(st.sampled_from(choices))
        if what == "transposed":
            perm = tuple(draw(st.permutations(range(len(shape)))))
            if perm == tuple(range(len(shape))):
                perm = perm[::-1]
            ops.append(("transposed", perm))
        elif what == "expanded":  # a dim of more than one element where there is one
            wide = [d for d, n in enumerate(shape) if n > 1] or list(range(len(shape)))
            ops.append(("expanded", draw(st.sampled_from(wide))))
        else:
            dim = draw(st.integers(0, len(shape) - 1))
            ops.append(("sliced", dim, draw(st.integers(0, 3)), draw(st.integers(1, 3))))
    return tuple(ops)


def _draw_shape(draw, low: int = 1, high: int = 3) -> tuple[int, ...]:
    return tuple(
        draw(st.sampled_from(SIZES)) for _ in range(draw(st.integers(low, high)))
    )


def _scalar(draw, dtype: str):
    return draw(st.sampled_from([0.5, -2.0, 3.0] if dtype in FLOATS else [2, -3, 1]))


def _index_dtype(draw) -> str:
    return draw(st.sampled_from(["i64", "i64", "i32"]))


# One function a step: a step for the draft's running value, or None.


def _unary(draw, d: _Draft, unary: list[str] = UNARY, **_):
    return (
        "unary",
        draw(
            st.sampled_from(
                ["logical_not", "bitwise_not"] if d.dtype == "bool" else unary
            )
        ),
    )


def _binary(draw, d: _Draft, layouts: bool = False, **_):
    other = tuple(n if draw(st.booleans()) else 1 for n in d.shape)
    if len(other) > 1 and draw(st.integers(0, 3)) == 0:
        other = other[1:]  # fewer dims: broadcast from the left too
    layout = _draw_layout(draw, other) if layouts and draw(st.booleans()) else ()
    ops = BOOL_BINARY if d.dtype == "bool" else NUMERIC_BINARY
    return ("binary", draw(st.sampled_from(ops)), Arg(other, d.dtype, layout))


def _scalar_step(draw, d: _Draft, **_):
    if d.dtype == "bool":
        return None
    return ("scalar", draw(st.sampled_from(["add", "mul"])), _scalar(draw, d.dtype))


def _slice(draw, d: _Draft, **_):
    dim = draw(st.integers(0, len(d.shape) - 1))
    return ("slice", dim, draw(st.integers(0, d.shape[dim] - 1)), draw(st.integers(1, 3)))


def _permute(draw, d: _Draft, **_):
    return ("permute", tuple(draw(st.permutations(range(len(d.shape))))))


def _reduce(draw, d: _Draft, float_reductions: list[str] = FLOAT_REDUCTIONS, **_):
    if len(d.shape) < 2:
        return None
    if d.dtype == "bool":
        ops = ["any", "all", "sum"]
    else:  # (torch has no mean of integers)
        ops = float_reductions if d.dtype in FLOATS else ["sum", "amax"]
    op = draw(st.sampled_from(ops))
    return ("reduce", op, draw(st.integers(0, len(d.shape) - 1)), draw(st.booleans()))


def _expand(draw, d: _Draft, **_):
    if len(d.shape) >= 3:
        return None
    return ("expand", draw(st.sampled_from([2, 8])))


def _select(draw, d: _Draft, **_):
    if len(d.shape) < 2:
        return None
    dim = draw(st.integers(0, len(d.shape) - 1))
    return ("select", dim, draw(st.integers(0, d.shape[dim] - 1)))


def _index_select(draw, d: _Draft, any_dim: bool = False, wide: bool = False, **_):
    dim = draw(st.integers(0, len(d.shape) - 1)) if any_dim else 0
    if d.shape[dim] < 2:
        return None
    count = draw(st.sampled_from([1, 5, 8]))
    dtype = _index_dtype(draw) if wide else "i64"
    return (
        "index_select",
        dim,
        Arg((count,), dtype, values=("index", d.shape[dim], False)),
    )


def _embedding(draw, d: _Draft, **_):
    if len(d.shape) != 2:
        return None
    shape = draw(st.sampled_from([(5,), (8,), (2, 3)]))
    return (
        "embedding",
        Arg(shape, _index_dtype(draw), values=("index", d.shape[0], False)),
    )


def _gather(draw, d: _Draft, **_):
    dim = draw(st.integers(0, len(d.shape) - 1))
    shape = tuple(
        draw(st.sampled_from([1, 3, 8])) if e == dim else draw(st.sampled_from([1, n]))
        for e, n in enumerate(d.shape)
    )
    return ("gather", dim, Arg(shape, "i64", values=("index", d.shape[dim], False)))


def _advanced_index(draw, d: _Draft, **_):
    dim = draw(st.integers(0, min(1, len(d.shape) - 1)))
    shape = draw(st.sampled_from([(4,), (2, 3)]))
    return (
        "index",
        dim,
        Arg(shape, _index_dtype(draw), values=("index", d.shape[dim], True)),
    )


def _reuse(draw, d: _Draft, **_):
    earlier = [j for j, v in enumerate(d.values()[:-1]) if _broadcasts(v.shape, d.shape)]
    if not earlier:
        return None
    ops = BOOL_BINARY if d.dtype == "bool" else NUMERIC_BINARY
    op, j = draw(st.sampled_from(ops)), draw(st.sampled_from(earlier))
    if op == "sub" and d.values()[j].dtype == torch.bool:
        return None  # eager rejects `-` of a bool, and meta tensors do not
    return ("reuse", op, j)


def _twice(draw, d: _Draft, **_):
    ops = BOOL_BINARY if d.dtype == "bool" else NUMERIC_BINARY
    return ("twice", draw(st.sampled_from(ops)))


def _gate(draw, d: _Draft, **_):
    if d.dtype == "bool":
        return None
    return ("gate", draw(st.sampled_from(["sigmoid", "tanh"])))


def _compare(draw, d: _Draft, **_):
    if d.dtype == "bool":
        return None
    return (
        "compare",
        draw(st.sampled_from([">", "<=", "==", "!="])),
        _scalar(draw, "i32"),
    )


def _where(draw, d: _Draft, layouts: bool = True, **_):
    if d.dtype != "bool":
        return None
    other = tuple(n if draw(st.booleans()) else 1 for n in d.shape)
    dtype = draw(st.sampled_from(["f32", "i32", "i64"]))
    layout = _draw_layout(draw, other) if layouts and draw(st.booleans()) else ()
    return ("where", Arg(other, dtype, layout), _scalar(draw, dtype))


def _cast(draw, d: _Draft, **_):
    return (
        "cast",
        draw(st.sampled_from(sorted({"f32", "i32", "i64", "bool"} - {d.dtype}))),
    )


def _divmod(draw, d: _Draft, unit=3.0, **_):
    if d.dtype == "bool":
        return None
    op = draw(st.sampled_from(sorted(DIVMOD_EXPR)))
    integer = d.dtype in INTS
    if draw(st.booleans()):  # a tensor divisor
        other = tuple(n if draw(st.booleans()) else 1 for n in d.shape)
        dtype = draw(st.sampled_from([d.dtype, "f32"] if integer else [d.dtype]))
        unit_of = unit if dtype in INTS or not integer else float(unit)
        zero = dtype not in INTS and draw(st.integers(0, 3)) == 0
        return ("divmod", op, Arg(other, dtype, values=("divisor", unit_of, zero)), False)
    factors = [1, -1, 2, -2, 3] if integer else [1, -1, 0.5, -0.5, 2, 0]
    divisor = unit * draw(st.sampled_from(factors))
    if not integer and op in REVERSED_DIVMOD_EXPR and draw(st.integers(0, 3)) == 0:
        return ("divmod", op, divisor, True)
    return ("divmod", op, divisor, False)


MUTATIONS = {"add_", "mul_", "setitem", "index_copy_", "index_put_"}


def _mutation(draw, d: _Draft, **_):
    """A write to x, from the running value where it fits (and does not alias x),
    else from a fresh input or a scalar."""
    x = d.env["x"]
    xshape, xdtype = list(x.shape), SHORT[x.dtype]
    running_ok = d.prev not in d.views_of_x and len(d.steps) > 0
    what = draw(st.sampled_from(sorted(MUTATIONS)))
    if what == "mul_":
        return ("mul_", _scalar(draw, xdtype))
    if what == "add_":
        if running_ok and _broadcasts_to(d.shape, xshape) and draw(st.booleans()):
            return ("add_", "running")
        if draw(st.integers(0, 3)) == 0:
            return ("add_", _scalar(draw, xdtype))
        other = tuple(n if draw(st.booleans()) else 1 for n in xshape)
        return ("add_", Arg(other, xdtype))
    if what == "setitem":
        dim = draw(st.integers(0, len(xshape) - 1))
        n = xshape[dim]
        if draw(st.booleans()):
            region = ("select", draw(st.integers(0, n - 1)))
            target = xshape[:dim] + xshape[dim + 1 :]
        else:
            start, step = draw(st.integers(0, n - 1)), draw(st.integers(1, 3))
            region = ("slice", start, step)
            target = xshape[:dim] + [len(range(start, n, step))] + xshape[dim + 1 :]
        if running_ok and _broadcasts_to(d.shape, target) and draw(st.booleans()):
            return ("setitem", dim, region, "running")
        if draw(st.integers(0, 2)) == 0 or not target:
            return ("setitem", dim, region, _scalar(draw, xdtype))
        other = tuple(m if draw(st.booleans()) else 1 for m in target)
        return (
            "setitem",
            dim,
            region,
            Arg(other, draw(st.sampled_from([xdtype, "f32"]))),
        )
    if what == "index_copy_":
        dim = draw(st.integers(0, len(xshape) - 1))
        n = xshape[dim]
        count = draw(st.integers(1, min(n, 5)))
        index = Arg((count,), "i64", values=("unique", n))
        want = xshape[:dim] + [count] + xshape[dim + 1 :]
        if running_ok and d.shape == want and draw(st.booleans()):
            return ("index_copy_", dim, index, "running")
        return ("index_copy_", dim, index, Arg(tuple(want), xdtype))
    accumulate = draw(st.booleans())
    n = xshape[0]
    count = draw(st.integers(1, min(n, 5) if not accumulate else 8))
    values = ("index", n, True) if accumulate else ("unique", n)
    index = Arg((count,), _index_dtype(draw) if accumulate else "i64", values=values)
    want = [count] + xshape[1:]
    if running_ok and _broadcasts_to(d.shape, want) and draw(st.booleans()):
        return ("index_put_", index, "running", accumulate)
    other = tuple(m if draw(st.booleans()) else 1 for m in want)
    return ("index_put_", index, Arg(other, xdtype), accumulate)


CHAIN_STEPS = [
    _unary,
    _binary,
    _scalar_step,
    _slice,
    _permute,
    _reduce,
    _expand,
    _select,
    _index_select,
]
DAG_STEPS = [_reuse, _twice, _gate]
VIEW_STEPS = [_slice, _permute, _select, _expand]
INDEX_STEPS = [_index_select, _embedding, _gather, _advanced_index]


def _extend(draw, d: _Draft, menu: list, count: int, tries: int = 3, **extra) -> None:
    """Up to `count` more steps from `menu` (a step torch rejects is drawn again)."""
    for _ in range(count):
        for _ in range(tries):
            if d.add(draw(st.sampled_from(menu))(draw, d, **extra)):
                break


def _chain(draw, max_steps: int, dag: bool) -> _Draft:
    shape = _draw_shape(draw)
    layout = (("transposed", (1, 0)),) if len(shape) == 2 and draw(st.booleans()) else ()
    d = _Draft(
        Arg(shape, draw(st.sampled_from(["bf16", "f32", "i32"])), layout),
        "dag" if dag else "chain",
    )
    menu = CHAIN_STEPS + (DAG_STEPS * 3 if dag else [])
    _extend(draw, d, menu, draw(st.integers(1, max_steps)))
    if dag and not any(s[0] in ("reuse", "twice", "gate") for s in d.steps):
        _extend(draw, d, DAG_STEPS, 1, tries=6)
    return d


def _views(draw, max_steps: int) -> _Draft:
    shape = _draw_shape(draw)
    dtype = draw(st.sampled_from(["i64", "bool"]))
    d = _Draft(Arg(shape, dtype, _draw_layout(draw, shape)), "views")
    menu = VIEW_STEPS * 2 + [
        _unary,
        _scalar_step,
        _compare,
        _where,
        _cast,
        _reduce,
        _twice,
        _reuse,
        _index_select,
        _binary,
    ]
    _extend(draw, d, menu, draw(st.integers(1, max_steps)), layouts=True)
    return d


def _indexing(draw, max_steps: int, kind: str) -> _Draft:
    shape = _draw_shape(draw)
    layout = _draw_layout(draw, shape) if draw(st.integers(0, 2)) == 0 else ()
    d = _Draft(
        Arg(shape, draw(st.sampled_from(["f32", "bf16", "i32", "i64"])), layout), kind
    )
    before = draw(st.integers(0, max(0, min(2, max_steps - 1))))
    _extend(draw, d, CHAIN_STEPS + DAG_STEPS, before)
    _extend(draw, d, INDEX_STEPS, 1, tries=8, any_dim=True, wide=True)
    if not any(s[0] in INDEXING for s in d.steps):
        d.add(("index_select", 0, Arg((3,), "i64", values=("index", d.shape[0], False))))
    _extend(
        draw,
        d,
        CHAIN_STEPS + INDEX_STEPS,
        draw(st.integers(0, max(0, min(2, max_steps - before - 1)))),
    )
    return d


def _oob_trial(draw, p: Program) -> tuple:
    """One element of one index input of p set out of range."""
    args, indexes = p.args(), []
    for i, a in enumerate(args):
        if a.values[0] == "index":
            indexes.append(i)
    i = draw(st.sampled_from(indexes))
    arg = args[i]
    n, wrap = arg.values[1], arg.values[2]
    bad = [n, n + 7, 5000, -n - 1, 2**31 - 1] + ([] if wrap else [-1])
    if arg.dtype == "i64":
        bad += [2**32 + 1, -(2**32)]  # in range once narrowed to 32 bits
    position = draw(st.integers(0, math.prod(arg.shape) - 1))
    return ("oob", i, position, draw(st.sampled_from(bad)))


def _mutating(draw, max_steps: int) -> _Draft:
    shape = _draw_shape(draw)
    layout = _draw_layout(draw, shape, expand=False) if draw(st.booleans()) else ()
    d = _Draft(
        Arg(shape, draw(st.sampled_from(["f32", "bf16", "i32", "i64"])), layout),
        "mutation",
    )
    _extend(draw, d, CHAIN_STEPS + DAG_STEPS, draw(st.integers(0, 2)))
    _extend(draw, d, [_mutation], 1, tries=8)
    _extend(
        draw,
        d,
        CHAIN_STEPS + DAG_STEPS + [_mutation],
        draw(st.integers(0, max(0, max_steps - len(d.steps)))),
    )
    return d


def _dividing(draw, max_steps: int) -> _Draft:
    shape = _draw_shape(draw)
    dtype = draw(st.sampled_from(["f32", "bf16", "i32", "i64"]))
    integer = dtype in INTS
    unit = draw(
        st.sampled_from([1, 2, 3, 7, 10] if integer else [3.0, 0.1, 1.0, 0.7, 2.5])
    )
    # Integers stay small enough for a product of two (`v * v`) to fit int32, the
    # range int64 data is computed in (docs/torch.md); larger is an UnsupportedError.
    kmax = draw(st.sampled_from([20, 1000] if integer else [20, 10**6]))
    layout = _draw_layout(draw, shape) if draw(st.integers(0, 2)) == 0 else ()
    d = _Draft(Arg(shape, dtype, layout, ("multiples", unit, kmax)), "divmod")
    _extend(draw, d, VIEW_STEPS, draw(st.integers(0, 1)))
    _extend(draw, d, [_divmod], 1, tries=6, unit=unit)
    rest = [_divmod, _divmod, _unary, _scalar_step, _reduce, _twice, _binary]
    _extend(
        draw,
        d,
        rest,
        draw(st.integers(0, max(0, min(2, max_steps - len(d.steps))))),
        unit=unit,
        unary=EXACT_UNARY,
        float_reductions=["sum", "mean"],
    )
    return d


def _runs_on(p: Program, trial: tuple) -> bool:
    """Whether eager takes p's second call (on meta tensors)."""
    args = p.args()
    tensors = [_meta(a) for a in args]
    if trial[0] == "dtype":
        tensors[trial[1]] = tensors[trial[1]].to(DTYPES[trial[2]])
    elif trial[0] == "strides":
        tensors[trial[1]] = _meta(replace(args[trial[1]], layout=trial[2]))
    elif trial[0] == "arity":
        tensors = (
            tensors + [torch.empty(3, device="meta")] if trial[1] > 0 else tensors[:-1]
        )
    try:
        function(replace(p, trial=trial))(*tensors)
    except Exception:  # noqa: BLE001 - eager rejects the call
        return False
    return True


def _called_otherwise(draw, max_steps: int, kind: str) -> Program:
    d = _chain(draw, min(max_steps, 3), dag=draw(st.booleans()))
    d.kind = kind
    p = d.program()
    args = p.args()
    i = draw(st.integers(0, len(args) - 1))
    swaps = {"f32": "bf16", "bf16": "f32", "i32": "i64", "i64": "i32"}
    what = draw(st.sampled_from(["strides", "strides", "dtype", "arity"]))
    if what == "strides":
        layout = (
            _draw_layout(draw, args[i].shape)
            if draw(st.integers(0, 3)) or not args[i].layout
            else ()
        )
        if layout == args[i].layout:
            layout = ()
        trial = ("strides", i, layout)
    elif what == "dtype" and args[i].dtype in swaps:
        trial = ("dtype", i, swaps[args[i].dtype])
    else:
        trial = ("arity", draw(st.sampled_from([1, -1])))
    if kind == "recompile" and trial[0] == "dtype" and not _runs_on(p, trial):
        trial = ("arity", 1)
    return replace(p, trial=trial)


@st.composite
def programs(draw, kinds: Sequence[str] = tuple(KINDS), max_steps: int = 5) -> Program:
    """A random program of one of `kinds`."""
    unknown = set(kinds) - set(KINDS)
    assert not unknown, f"unknown program kinds {sorted(unknown)}"
    kind = draw(st.sampled_from(sorted(kinds)))
    if kind in ("chain", "dag"):
        return _chain(draw, max_steps, dag=kind == "dag").program()
    if kind == "views":
        return _views(draw, max_steps).program()
    if kind in ("index", "index_oob"):
        p = _indexing(draw, max_steps, kind).program()
        return replace(p, trial=_oob_trial(draw, p)) if kind == "index_oob" else p
    if kind == "mutation":
        return _mutating(draw, max_steps).program()
    if kind == "divmod":
        return _dividing(draw, max_steps).program()
    return _called_otherwise(draw, max_steps, kind)


# Checking against eager.


class Mismatch(AssertionError):
    """pallas_ir's answer differs from eager's: a value, a dtype, a mutated input, an
    alias, or the exception raised (or not)."""


class InvalidProgram(Exception):
    """Eager rejects a drawn program: a bug of the fuzzer."""


class EagerFallback(Exception):
    """torch.compile(backend="pallas_ir") ran part of a program in eager PyTorch,
    though every program of the kinds it runs is one pallas_ir compiles."""


def _without_fallback(compiled: Callable, notice: str) -> Callable:
    """`compiled`, raising EagerFallback where the backend warns (a warning that
    starts with `notice`) that ops ran eagerly."""

    def call(*args):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            out = compiled(*args)
        for w in said:
            if str(w.message).startswith(notice):
                raise EagerFallback(str(w.message))
        return out

    return call


def _outputs(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _upcast(t: torch.Tensor) -> torch.Tensor:
    return t.float() if t.dtype == torch.bfloat16 else t


def compare(
    got: torch.Tensor,
    want: torch.Tensor,
    reference: torch.Tensor,
    what: str,
    bf16: bool = False,
) -> None:
    """`got` against eager's `want`: as eager's (floats to 1e-4); but where the
    program reads bfloat16 data (`bf16`), against eager on the same values in float32
    (`reference`), cast to eager's dtype (bfloat16 results rounded), floats to
    bfloat16's precision: pallas_ir computes bfloat16 in f32 and rounds where it
    stores, as Inductor does; eager's own result, bit for bit, passes too (where
    pallas_ir stores a bfloat16 value where eager does: an input written in place and
    read again). NaN where eager has NaN."""
    try:
        if got.dtype != want.dtype:
            raise AssertionError(f"dtype {got.dtype}, eager's {want.dtype}")
        if bf16 and want.is_floating_point() and torch.equal(got, want):
            return
        if bf16 and want.is_floating_point():
            torch.testing.assert_close(
                got, reference.to(want.dtype), rtol=1.6e-2, atol=1e-5, equal_nan=True
            )
        elif bf16:
            torch.testing.assert_close(got, reference.to(want.dtype))
        else:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
    except AssertionError as e:
        raise Mismatch(f"{what}: {e}") from None


def _storage(t: torch.Tensor) -> torch.Tensor:
    """The whole contiguous storage `t` views (its base)."""
    return t._base if t._base is not None else t


def _outside_unchanged(got: torch.Tensor, fresh: torch.Tensor, what: str) -> None:
    """The elements of `got`'s storage outside the view `got` are as they were."""
    base = _storage(got)
    if base is got:
        return
    inside = torch.zeros(base.numel(), dtype=torch.bool)
    offset = got.storage_offset() - base.storage_offset()
    inside[
        torch.as_strided(torch.arange(base.numel()), got.shape, got.stride(), offset)
    ] = True
    if not torch.equal(base.reshape(-1)[~inside], _storage(fresh).reshape(-1)[~inside]):
        raise Mismatch(f"{what}: elements of its storage outside the view were written")


def _shares(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def expect_eager(
    fn: Callable, call: Callable, make: Callable[[], list], first: bool
) -> None:
    """`call` on inputs from `make` gives eager's results, leaves its inputs as eager
    leaves them (values, and the storage around views), and returns views of inputs
    where eager does; or, where eager raises, raises the same type."""
    want_inputs = make()
    try:
        want = _outputs(fn(*want_inputs))
    except Exception as e:
        if first:
            raise InvalidProgram(f"eager raised {type(e).__name__}: {e}") from e
        expect_raises(call, make(), type(e), ())
        return
    ref_inputs = [_upcast(t) for t in make()]
    try:
        reference = _outputs(fn(*ref_inputs))
    except Exception as e:
        raise InvalidProgram(f"eager in float32 raised {type(e).__name__}: {e}") from e
    bf16 = any(t.dtype == torch.bfloat16 for t in want_inputs)
    got_inputs = make()
    got = _outputs(call(*got_inputs))
    if len(got) != len(want):
        raise Mismatch(f"{len(got)} results, eager's {len(want)}")
    for k, (g, w, r) in enumerate(zip(got, want, reference)):
        compare(g, w, r, f"result {k}", bf16)
    fresh = make()
    for i, (g, w, r) in enumerate(zip(got_inputs, want_inputs, ref_inputs)):
        compare(g, w, r, f"input {i} after the call", bf16)
        _outside_unchanged(g, fresh[i], f"input {i}")
    for k, (g, w) in enumerate(zip(got, want)):  # values first: they matter more
        for i, (gi, wi) in enumerate(zip(got_inputs, want_inputs)):
            if _shares(w, wi) != _shares(g, gi):
                how = "a view of" if _shares(w, wi) else "not a view of"
                raise Mismatch(f"result {k} is {how} input {i} in eager, not here")


def expect_raises(
    call: Callable, inputs: list, expected: type, names: Sequence[str]
) -> None:
    """`call(*inputs)` raises `expected` (or a subclass), its message naming every
    one of `names`."""
    try:
        call(*inputs)
    except expected as e:
        missing = [n for n in names if n not in str(e)]
        if missing:
            raise Mismatch(
                f"{type(e).__name__} does not name {missing}: {str(e).splitlines()[0]}"
            ) from None
        return
    except Exception as e:  # noqa: BLE001 - another exception is a finding
        raise Mismatch(
            f"expected {expected.__name__} naming {list(names)}, got "
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        ) from None
    raise Mismatch(f"expected {expected.__name__} naming {list(names)}, got a result")


def _effective_strides(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(s if n > 1 else 0 for n, s in zip(t.shape, t.stride()))


def check_program(
    p: Program, compile: Callable, seed: int = 0, eager_notice: str | None = None
) -> list:
    """Run `p` against eager: compiled with `compile(fn, example_inputs)` (e.g.
    `pallas_ir.compile`), or with torch.compile for the "recompile" kind; then its
    second call (`p.trial`). Raises `Mismatch` or whatever pallas_ir raised, and
    `EagerFallback` where torch.compile's backend warns with `eager_notice`
    (`pallas_ir.dynamo.EAGER_NOTICE`, given by the caller: this level cannot import
    it) that ops ran eagerly; returns the objects `compile` made (whose modules the
    caller may AOT-compile)."""
    fn = function(p)

    def fresh() -> list[torch.Tensor]:
        return make_inputs(p, seed)

    def second() -> list[torch.Tensor]:
        return make_inputs(p, seed, trial=True)

    try:  # (before pallas_ir sees it: a program eager rejects is not a finding)
        fn(*fresh())
    except Exception as e:
        raise InvalidProgram(f"eager raised {type(e).__name__}: {e}") from e
    if p.kind == "recompile":
        torch._dynamo.reset()
        call, made = torch.compile(fn, backend="pallas_ir"), []
        if eager_notice is not None:
            call = _without_fallback(call, eager_notice)
    else:
        call = compile(fn, fresh())
        made = [call]
    expect_eager(fn, call, fresh, first=True)
    if not p.trial:
        return made
    what = p.trial[0]
    if what == "oob":
        try:
            fn(*second())
        except (IndexError, RuntimeError):
            pass
        else:
            raise InvalidProgram("eager took the out-of-range index")
        step = next(s for s in p.steps if any(a is p.args()[p.trial[1]] for a in s))
        expect_raises(call, second(), IndexError, [step[0]])
    elif p.kind == "recompile":
        expect_eager(fn, call, second, first=False)
    elif what == "arity":
        expect_raises(call, second(), UnsupportedError, ["inputs"])
    elif what == "dtype":
        expect_raises(call, second(), UnsupportedError, [f"input {p.trial[1]}", "dtype"])
    else:
        i = p.trial[1]
        if _effective_strides(second()[i]) == _effective_strides(fresh()[i]):
            expect_eager(fn, call, second, first=False)  # the same layout after all
        else:
            expect_raises(call, second(), UnsupportedError, [f"input {i}", "strides"])
    return made
