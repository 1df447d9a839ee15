"""Rotations end to end: `torch.roll` and a `cat` of slices that rotate one tensor (a
rotary embedding's rotate-half) read their operand at a rotation index, `(d + c) mod
n`, which the kernel reads as the whole dim rolled in registers (`pltpu.roll`). Each
program is checked against eager, its ta module against the reference interpreter, and
its kernels against the TPU compiler (v5e and v6e); the launch counts say that no
rotation became a gather (whose index checks and XLA gather took three launches)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support.programs import (
    aot_failures,
    assert_like_eager,
    compile_programs,
    ta_reference,
)

import pallas_ir


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), -1)


def _rotary(x, cos, sin):
    """GPT-NeoX / llama rotary embedding of (B, T, H, D) heads read as (B, H, T, D)."""
    x = x.transpose(1, 2)
    return x * cos + _rotate_half(x) * sin


def _three_part_rotation(x):
    # x[:, 5:] then x[:, :5] in two pieces: the parts rotate x by 5
    return torch.cat((x[:, 5:], x[:, :2], x[:, 2:5]), 1) * 2


def _not_a_rotation(x, y):
    # parts from two tensors: each read in bounds at its own index, picked by position
    return torch.cat((x[:, 64:], y[:, :64]), 1)


# name -> (function, inputs, Pallas launches, XLA kernels)
PROGRAMS = {
    "roll_lanes": (lambda x: torch.roll(x, 1, -1), lambda: [torch.randn(64, 384)], 1, 0),
    "roll_rows": (
        lambda x: torch.roll(x, -3, 0) + 1,
        lambda: [torch.randn(48, 256)],
        1,
        0,
    ),
    "roll_two_dims": (
        lambda x: torch.roll(x, (5, 7), (0, 1)),
        lambda: [torch.randn(40, 200)],
        1,
        0,
    ),
    "roll_leading": (
        lambda x: torch.roll(x, 2, 0) * x,
        lambda: [torch.randn(6, 16, 128)],
        1,
        0,
    ),
    "roll_bf16_rows": (
        lambda x: torch.roll(x, 3, 0),
        lambda: [torch.randn(64, 256).bfloat16()],
        1,
        0,
    ),
    "roll_int_lanes": (
        lambda x: torch.roll(x, 100, 1) * 3,
        lambda: [torch.randint(-50, 50, (16, 256), dtype=torch.int32)],
        1,
        0,
    ),
    # the flattened roll crosses rows: XLA, one kernel (no gather, no index check)
    "roll_flattened": (
        lambda x: torch.roll(x, 100),
        lambda: [torch.randn(16, 256)],
        0,
        1,
    ),
    "rotate_half": (_rotate_half, lambda: [torch.randn(4, 8, 128)], 1, 0),
    "rotary_heads": (
        _rotary,
        lambda: [torch.randn(2, 64, 4, 32), torch.randn(64, 32), torch.randn(64, 32)],
        1,
        0,
    ),
    "three_part_rotation": (_three_part_rotation, lambda: [torch.randn(8, 128)], 1, 0),
    # the heads of a projection, each rotated: read as the (64, 256) block the host
    # holds, split into heads and rolled in registers
    "rotated_heads_of_a_projection": (
        lambda x: torch.roll(x.view(64, 8, 32).transpose(0, 1), 16, -1),
        lambda: [torch.randn(64, 256)],
        1,
        0,
    ),
    # a legacy empty 1-D part, which cat skips whatever its rank (OpInfo's sample)
    "rotation_with_an_empty_part": (
        lambda e, x: torch.cat((e, -x[:, 64:], x[:, :64]), 1),
        lambda: [torch.empty(0), torch.randn(8, 128)],
        1,
        0,
    ),
    # rank-1 rolls, rolled as one row of lanes (Mosaic rotates no rank-1 value)
    "next_token_labels": (
        lambda ids: torch.roll(ids, -1) * (ids != 0),
        lambda: [torch.randint(0, 5, (512,))],
        2,
        0,
    ),
    "fftshift_1d": (torch.fft.fftshift, lambda: [torch.randn(128)], 1, 0),
    "roll_of_a_unit_row": (
        lambda x: torch.roll(x, 3, 1),
        lambda: [torch.randn(1, 256)],
        1,
        0,
    ),
    # a rotated dim that walks part of a buffer dim: viewed apart
    "roll_of_a_slice": (
        lambda x: torch.roll(x[:64], 3, 0),
        lambda: [torch.randn(128)],
        1,
        0,
    ),
    "row_of_a_roll": (
        lambda x: torch.roll(x, 3, 1)[2],
        lambda: [torch.randn(8, 128)],
        1,
        0,
    ),
    # rotations of rotations are one rotation
    "rotate_half_twice": (
        lambda x: _rotate_half(_rotate_half(x)),
        lambda: [torch.randn(8, 128)],
        1,
        0,
    ),
    "roll_of_a_roll": (
        lambda x: torch.roll(torch.roll(x, 3, 1), 5, 1) * 2,
        lambda: [torch.randn(8, 128)],
        1,
        0,
    ),
    # another access splits the rotated dim into (2, 64): a shift by 64 rotates the
    # outer part, (o + 1) mod 2
    "rotation_of_a_split_dim": (
        lambda x, y: (
            torch.roll(x, 64, 1) + y.view(8, 64, 2).transpose(1, 2).reshape(8, 128)
        ),
        lambda: [torch.randn(8, 128), torch.randn(8, 128)],
        1,
        0,
    ),
    "not_a_rotation": (
        _not_a_rotation,
        lambda: [torch.randn(8, 128), torch.randn(8, 128)],
        1,
        0,
    ),
}


@pytest.fixture(scope="module")
def compiled():
    return compile_programs({n: (fn, make) for n, (fn, make, *_) in PROGRAMS.items()})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    assert_like_eager(k(*inputs), fn(*inputs), rtol=0, atol=0)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rotations_are_read_in_place(name: str, compiled) -> None:
    """One kernel, no gather: a rotation is a roll of the tile, not an index."""
    k = compiled[name][0]
    report = k.cost_report()
    assert (len(report.calls), len(report.xla_calls)) == PROGRAMS[name][2:]
    rolls = k.source.count("pltpu.roll(")
    if name in ("roll_flattened", "not_a_rotation"):
        assert rolls == 0
    else:
        assert rolls >= 1


@pytest.mark.parametrize("name", ["roll_two_dims", "rotary_heads", "three_part_rotation"])
def test_ta_reference_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got = ta_reference(k, [t.numpy() for t in inputs])
    for g, w in zip(got, [fn(*inputs)], strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_rolled_kernels_compile_for_tpu(compiled, chip: str) -> None:
    assert not aot_failures(compiled, chip)


def test_a_rotation_split_by_another_access_is_still_correct() -> None:
    """A loop dim rotated in one access and split into halves by another (a view that
    reads x's columns as (2, 64)) cannot keep its rotation: the access is left as it
    was and the kernel still computes eager's result."""

    def fn(x, y):
        return torch.roll(x, 3, 1) + y.view(8, 2, 64).flip(1).reshape(8, 128)

    x, y = torch.randn(8, 128), torch.randn(8, 128)
    k = pallas_ir.compile(fn, [x, y])
    assert_like_eager(k(x, y), fn(x, y), rtol=0, atol=0)
