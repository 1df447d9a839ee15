"""Torch programs for the frontend's filecheck tests (`python -m pallas_ir.frontend
programs.py:<function> --shapes ...`)."""

import torch


def chain(x, row, column):
    """Element-wise ops with broadcasting: one fused kernel."""
    return torch.tanh(x * 2 - row) + column


def strided(x):
    """A view with steps on two dims, then a transpose: folded into the load's map."""
    return x[::2, 1::3].t() * 3


def row_sums(x):
    return x.sum(dim=1)


def softmax(x):
    return torch.softmax(x, dim=-1)


def embedding(table, ids):
    return torch.nn.functional.embedding(ids, table)


def linear(x, w):
    return x @ w.t()


def swish_twice(x):
    """A value used twice, twice over: each op is emitted once (a DAG, not a tree)."""
    y = x * torch.sigmoid(x)
    return y * torch.sigmoid(y)


def remainder(x, y):
    """Float remainder: C's fmod (`arith.remf`), plus y where the signs differ."""
    return torch.remainder(x, y)
