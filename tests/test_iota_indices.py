"""fold-iota-indices: a gather at `torch.arange` positions is a direct read. Checked
against eager PyTorch; that no index array is computed on XLA is read from the cost
report."""

from __future__ import annotations

import torch
from support.programs import aot_failures

import pallas_ir


def _learned_positions(tokens, token_table, position_table):
    # GPT-2's embeddings: tokens are data, positions are arange(T)
    t = tokens.shape[1]
    return token_table[tokens] + position_table[torch.arange(t)]


def _shifted_positions(x, table):
    # rows 3 .. T + 2 of the table, counted from the end: negative indices wrap
    t = x.shape[1]
    return x + table[torch.arange(t) + 3 - table.shape[0]]


def test_position_rows_are_read_directly() -> None:
    torch.manual_seed(0)
    inputs = [
        torch.randint(0, 256, (4, 128)),
        torch.randn(256, 128),
        torch.randn(128, 128),
    ]
    k = pallas_ir.compile(_learned_positions, inputs)
    kernels = k.ir["fold-iota-indices"].split("func.func")[0]
    assert kernels.count(")[%") == 1  # one data-dependent index left: the tokens'
    report = k.cost_report()
    # the tokens' rows: one XLA call (wrapping negative token ids); the positions' none
    assert len(report.xla_calls) == 1
    torch.testing.assert_close(k(*inputs), _learned_positions(*inputs))


def test_a_shifted_and_wrapped_position_is_read_directly() -> None:
    torch.manual_seed(1)
    inputs = [torch.randn(2, 64, 128), torch.randn(80, 128)]
    k = pallas_ir.compile(_shifted_positions, inputs)
    report = k.cost_report()
    assert not report.xla_calls
    assert ")[%" not in k.ir["fold-iota-indices"].split("func.func")[0]  # no symbols
    torch.testing.assert_close(k(*inputs), _shifted_positions(*inputs))
    assert not aot_failures({"shifted": k}, "v5e")
