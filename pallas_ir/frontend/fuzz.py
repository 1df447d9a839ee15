"""Random torch programs for differential testing of `pallas_ir.compile` against eager:
chains of views (slices with steps, permutes, expands, selects), element-wise ops,
gathers and reductions over random shapes and dtypes (float32, bfloat16, int32;
integer chains turn float where torch promotes them). Used by tests/test_frontend_fuzz.py (bounded,
derandomized) and benchmarks/fuzz.py (as long as it is asked). Needs hypothesis (the
`test` extra).

A program is a list of steps applied to a running tensor `t`, each with the extra input
it needs; `build` turns it into a function and its example inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

SIZES = [1, 3, 8, 16, 32, 128]
UNARY = ["tanh", "relu", "neg", "abs", "sigmoid", "exp_clamped"]
FLOAT_RESULT = {"tanh", "sigmoid", "exp_clamped"}
"""Unary ops whose result is float whatever the operand (torch's type promotion)."""
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32}
FLOATS = {"f32", "bf16"}


@dataclass(frozen=True)
class Program:
    shape: tuple[int, ...]
    transposed_input: bool
    steps: tuple[tuple, ...]
    dtype: str = "f32"
    """The input's dtype; other inputs follow the running tensor's at their step."""

    def describe(self) -> str:
        x = f"x: {self.dtype}{list(self.shape)}" + (
            " (passed transposed)" if self.transposed_input else ""
        )
        return x + "".join(f" -> {s[0]}{list(s[1:])}" for s in self.steps)


@st.composite
def programs(draw, max_steps: int = 5) -> Program:
    rank = draw(st.integers(1, 3))
    shape = [draw(st.sampled_from(SIZES)) for _ in range(rank)]
    initial = tuple(shape)
    dtype = first = draw(st.sampled_from(sorted(DTYPES)))
    transposed = rank == 2 and draw(st.booleans())
    steps: list[tuple] = []
    for _ in range(draw(st.integers(1, max_steps))):
        kinds = ["unary", "binary", "scalar", "slice", "permute"]
        if len(shape) > 1:
            kinds += ["reduce", "select"]
        if len(shape) < 3:
            kinds.append("expand")
        if shape[0] > 1:
            kinds.append("index_select")
        kind = draw(st.sampled_from(kinds))
        dim = draw(st.integers(0, len(shape) - 1))
        if kind == "unary":
            op = draw(st.sampled_from(UNARY))
            steps.append(("unary", op))
            dtype = "f32" if op in FLOAT_RESULT and dtype not in FLOATS else dtype
        elif kind == "binary":
            # Another input that broadcasts: the same size, or 1, on each dim.
            other = tuple(n if draw(st.booleans()) else 1 for n in shape)
            op = draw(st.sampled_from(["add", "sub", "mul", "maximum"]))
            steps.append(("binary", op, other, dtype))
        elif kind == "scalar":
            op = draw(st.sampled_from(["add", "mul"]))
            scalars = [0.5, -2.0, 3.0] if dtype in FLOATS else [2, -3, 1]
            steps.append(("scalar", op, draw(st.sampled_from(scalars))))
        elif kind == "slice":
            n = shape[dim]
            start = draw(st.integers(0, n - 1))
            step = draw(st.integers(1, 3))
            steps.append(("slice", dim, start, step))
            shape[dim] = len(range(start, n, step))
        elif kind == "permute":
            perm = tuple(draw(st.permutations(range(len(shape)))))
            steps.append(("permute", perm))
            shape = [shape[p] for p in perm]
        elif kind == "reduce":  # (torch has no mean of integers)
            op = draw(
                st.sampled_from(
                    ["sum", "amax", "mean"] if dtype in FLOATS else ["sum", "amax"]
                )
            )
            keep = draw(st.booleans())
            steps.append(("reduce", op, dim, keep))
            if keep:
                shape[dim] = 1
            else:
                shape.pop(dim)
        elif kind == "expand":
            n = draw(st.sampled_from([2, 8]))
            steps.append(("expand", n))
            shape = [n, *shape]
        elif kind == "select":
            i = draw(st.integers(0, shape[dim] - 1))
            steps.append(("select", dim, i))
            shape.pop(dim)
        else:  # index_select on dim 0 by an index input
            count = draw(st.sampled_from([1, 5, 8]))
            steps.append(("index_select", count, shape[0]))
            shape[0] = count
    return Program(initial, transposed, tuple(steps), first)


def build(p: Program, seed: int = 0) -> tuple[Callable, list[torch.Tensor]]:
    """The program as a torch function of its inputs, and random inputs for it."""
    g = torch.Generator().manual_seed(seed)

    def data(shape, dtype: str) -> torch.Tensor:
        if dtype in FLOATS:
            return torch.randn(*shape, generator=g).to(DTYPES[dtype])
        return torch.randint(-5, 6, tuple(shape), generator=g, dtype=torch.int32)

    x = data(p.shape, p.dtype)
    if p.transposed_input:  # the same values, held transposed (non-contiguous)
        x = x.t().contiguous().t()
    inputs = [x]
    for s in p.steps:
        if s[0] == "binary":
            inputs.append(data(s[2], s[3]))
        elif s[0] == "index_select":
            inputs.append(torch.randint(0, s[2], (s[1],), generator=g))

    def fn(*args: torch.Tensor) -> torch.Tensor:
        t, extra = args[0], iter(args[1:])
        for s in p.steps:
            kind = s[0]
            if kind == "unary":
                t = {
                    "tanh": torch.tanh,
                    "relu": torch.relu,
                    "neg": torch.neg,
                    "abs": torch.abs,
                    "sigmoid": torch.sigmoid,
                    "exp_clamped": lambda v: torch.exp(v.clamp(-4, 4)),
                }[s[1]](t)
            elif kind == "binary":
                o = next(extra)
                t = {
                    "add": torch.add,
                    "sub": torch.sub,
                    "mul": torch.mul,
                    "maximum": torch.maximum,
                }[s[1]](t, o)
            elif kind == "scalar":
                t = t + s[2] if s[1] == "add" else t * s[2]
            elif kind == "slice":
                index = [slice(None)] * t.dim()
                index[s[1]] = slice(s[2], None, s[3])
                t = t[tuple(index)]
            elif kind == "permute":
                t = t.permute(*s[1])
            elif kind == "reduce":
                op, dim, keep = s[1:]
                if op == "amax":
                    t = t.amax(dim, keepdim=keep)
                else:
                    t = getattr(t, op)(dim, keepdim=keep)
            elif kind == "expand":
                t = t.unsqueeze(0).expand(s[1], *t.shape)
            elif kind == "select":
                t = t.select(s[1], s[2])
            else:
                t = t.index_select(0, next(extra))
        return t

    return fn, inputs


def check(got: torch.Tensor, fn: Callable, inputs: list[torch.Tensor], msg: str) -> None:
    """`got` against eager: float32 results exactly as eager's (to 1e-4); bfloat16 ones
    against eager on the same values in float32, rounded (pallas_ir computes bfloat16
    in f32 and rounds where it stores, as Inductor does)."""
    want = fn(*inputs)
    if want.dtype != torch.bfloat16:
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=msg)
        return
    f32 = fn(*[t.float() if t.is_floating_point() else t for t in inputs])
    assert got.dtype == torch.bfloat16, msg
    torch.testing.assert_close(got, f32.bfloat16(), rtol=1.6e-2, atol=1e-5, msg=msg)
