"""Training and real programs: autograd through AOTAutograd, optimizer steps, input
mutation, guards and the eager fallback, each against eager PyTorch; every kernel of
the forward and backward graphs lowers for TPU and AOT-compiles for v5e."""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import pallas_ir
import pallas_ir.compiler
from pallas_ir.check import arg_specs
from pallas_ir.dialects.common import find_forward
from pallas_ir.tpu_check import aot_compile_many

KERNELS: list[pallas_ir.compiler.CompiledFunction] = []
"""Every module compiled by the tests of this file (forward and backward graphs)."""


@pytest.fixture(autouse=True)
def _recorded(monkeypatch):
    """Each compiled program is kept for the TPU compile test at the end; dynamo
    starts afresh for each test."""
    torch._dynamo.reset()
    made = pallas_ir.compiler.CompiledFunction

    def recorded(*args, **kwargs):
        compiled = made(*args, **kwargs)
        KERNELS.append(compiled)
        return compiled

    monkeypatch.setattr(pallas_ir.compiler, "CompiledFunction", recorded)


def _eager_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "pallas_ir:" in str(w.message)]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """A pre-norm GPT block: causal attention (no qkv bias: AdamW would blow up the
    float32 noise of the key bias's gradient, which is zero in exact arithmetic) and
    an MLP with RMSNorm."""

    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.RMSNorm(dim)
        self.fc, self.out = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(d, dim=2)
        q, k, v = (
            z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v)
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        y = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.silu(self.fc(self.norm(x))))


class ConvBatchNorm(nn.Module):
    """A CNN with train-mode BatchNorm (its convolution and `convolution_backward` are
    library calls on XLA)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(F.relu(self.bn(self.conv(x))).mean((2, 3)))


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _train(model, inputs, optimizer, steps=3, compiled=True):
    """`steps` optimizer steps of a sum-of-squares loss; the losses."""
    run = torch.compile(model, backend="pallas_ir") if compiled else model
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = run(*inputs).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize(
    ("make", "inputs", "optimizer", "expect_eager"),
    [
        (MLP, [_randn(8, 32)], torch.optim.SGD, None),
        (MLP, [_randn(8, 32)], torch.optim.AdamW, None),
        (Block, [_randn(2, 16, 64)], torch.optim.AdamW, None),
        (
            lambda: ConvBatchNorm().train(),
            [_randn(2, 3, 8, 8)],
            torch.optim.SGD,
            None,
        ),
    ],
    ids=["mlp-sgd", "mlp-adamw", "gpt_block-adamw", "cnn_batchnorm-sgd"],
)
def test_training_steps_match_eager(make, inputs, optimizer, expect_eager) -> None:
    """Losses, gradients, parameters and buffers after 3 optimizer steps match eager:
    the backward graph is compiled, every parameter gets its gradient."""
    torch.manual_seed(0)
    model = make()
    reference = copy.deepcopy(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _train(model, inputs, optimizer(model.parameters(), lr=1e-2))
    want = _train(
        reference, inputs, optimizer(reference.parameters(), lr=1e-2), compiled=False
    )
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(
        model.named_parameters(), reference.parameters(), strict=True
    ):
        assert p.grad is not None, f"{name} got no gradient"
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6, msg=name)
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=name)
    for (name, b), c in zip(model.named_buffers(), reference.buffers(), strict=True):
        torch.testing.assert_close(b, c, rtol=1e-5, atol=1e-6, msg=name)
    eager = _eager_warnings(caught)
    if expect_eager is None:
        assert not eager, eager
    else:  # the fallback is said, and is the only thing that runs eagerly
        assert eager and all(expect_eager in w for w in eager), eager
        assert "batch_norm" not in " ".join(eager)


def test_a_classifier_loss_is_one_kernel_that_keeps_its_rows_for_the_backward() -> None:
    """`cross_entropy(x @ w, y)` trained: the forward graph's loss is one kernel (its
    rows' statistics nested under the mean, `fuse-epilogues`), which also stores each
    row's statistics the backward graph reads; the loss and the gradient are eager's."""
    torch.manual_seed(0)
    w = torch.randn(128, 512, requires_grad=True)
    x, y = torch.randn(256, 128), torch.randint(0, 512, (256,))

    def step(x, y):
        return F.cross_entropy(x @ w, y)

    start = len(KERNELS)
    loss = torch.compile(step, backend="pallas_ir")(x, y)
    loss.backward()
    got = w.grad.clone()
    w.grad = None
    want = step(x, y)
    want.backward()
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got, w.grad, rtol=1e-4, atol=1e-6)
    forward = KERNELS[start]
    kernels = [c.kernel for c in forward.cost_report().calls]
    assert len(kernels) == 2 and not forward.cost_report().xla_calls, kernels
    assert " over [" in forward.ir["fuse-epilogues{attention-raised=true}"]


def test_gradients_flow_through_an_op_that_falls_back() -> None:
    """The silent bug this issue names: with an op that runs eagerly in the middle,
    the parameters before it still get their gradients."""
    torch.manual_seed(0)
    first, last = nn.Linear(16, 32), nn.Linear(32, 8)

    def f(x):
        h = torch.tanh(first(x))
        resampled = nn.functional.interpolate(
            h[None, None], (3, 32), mode="bicubic", antialias=True
        )
        return last(resampled[0, 0].sum(0) * h).sum()

    x = _randn(4, 16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.compile(f, backend="pallas_ir")(x).backward()
    got = [p.grad.clone() for p in (*first.parameters(), *last.parameters())]
    for p in (*first.parameters(), *last.parameters()):
        p.grad = None
    f(x).backward()
    want = [p.grad for p in (*first.parameters(), *last.parameters())]
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)
    forward, backward = _eager_warnings(caught)  # one a graph
    assert "_upsample_bicubic2d_aa" in forward
    assert "_upsample_bicubic2d_aa_backward" in backward


def test_no_grad_compiles_a_forward_only() -> None:
    """Under no_grad only an inference graph is compiled: it returns the results and
    saves no activations."""
    model = MLP()
    x = _randn(8, 32)
    KERNELS.clear()
    with torch.no_grad():
        got = torch.compile(model, backend="pallas_ir")(x)
        want = model(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert got.grad_fn is None
    (program,) = KERNELS
    forward = find_forward(program.module)
    assert forward is not None and len(forward.function_type.outputs) == 1


def test_compiled_optimizer_step_matches_eager() -> None:
    """`torch.compile(optimizer.step)`: the element-wise update over the parameters
    compiles to Pallas kernels (no eager fallback) and matches eager."""
    torch.manual_seed(0)
    model = MLP()
    reference = copy.deepcopy(model)
    x = _randn(8, 32)
    for make in (torch.optim.SGD, torch.optim.AdamW):
        torch._dynamo.reset()
        opt, ref_opt = (
            make(model.parameters(), lr=1e-2),
            make(reference.parameters(), lr=1e-2),
        )
        step = torch.compile(opt.step, backend="pallas_ir")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                for m, o, s in ((model, opt, step), (reference, ref_opt, ref_opt.step)):
                    o.zero_grad()
                    m(x).pow(2).mean().backward()
                    s()
        assert not _eager_warnings(caught)
        for p, q in zip(model.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_pallas_ir_compile_differentiates_and_sees_live_parameters() -> None:
    """`pallas_ir.compile(module, ...)` reads the module's parameters at each call
    (a replaced Parameter too) and its results carry gradients."""
    torch.manual_seed(0)
    model = MLP()
    x = _randn(8, 32)
    compiled = pallas_ir.compile(model, [x])
    model.fc1.weight = nn.Parameter(torch.randn(64, 32))
    got = compiled(x)
    torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)
    got.pow(2).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).pow(2).sum().backward()
    for g, p in zip(grads, model.parameters(), strict=True):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5)


# -- mutation ---------------------------------------------------------------------


def test_train_mode_batch_norm_updates_running_statistics() -> None:
    for compile_ in ("pallas_ir.compile", "torch.compile"):
        bn, reference = nn.BatchNorm1d(16).train(), nn.BatchNorm1d(16).train()
        x = _randn(8, 16)
        run = pallas_ir.compile(bn, [x]) if compile_ == "pallas_ir.compile" else None
        run = run or torch.compile(bn, backend="pallas_ir")
        with torch.no_grad():
            for _ in range(2):
                torch.testing.assert_close(run(x), reference(x), rtol=1e-5, atol=1e-5)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            torch.testing.assert_close(
                getattr(bn, name), getattr(reference, name), msg=f"{compile_}: {name}"
            )


def _kv_write_static(cache, k):
    cache[:, :, 5] = k
    return cache.sum(-1)


def _kv_write_tensor_position(cache, k, pos):
    cache[:, :, pos] = k
    return cache.sum(-1)


def _kv_index_copy(cache, k, pos):
    cache.index_copy_(2, pos, k)
    return cache.sum(-1)


def _kv_index_put(cache, k, pos):
    cache.index_put_((pos,), k)
    return cache * 2


def _add_in_place(x):
    x.add_(1)
    return x * 2


MUTATIONS = {
    "cache[:, :, 5] = k": (
        _kv_write_static,
        lambda: [torch.zeros(2, 4, 16, 8), _randn(2, 4, 8)],
    ),
    "cache[:, :, pos] = k": (
        _kv_write_tensor_position,
        lambda: [torch.zeros(2, 4, 16, 8), _randn(2, 4, 1, 8), torch.tensor([3])],
    ),
    "index_copy_": (
        _kv_index_copy,
        lambda: [torch.zeros(2, 4, 16, 8), _randn(2, 4, 2, 8), torch.tensor([3, 9])],
    ),
    "index_put_": (
        _kv_index_put,
        lambda: [torch.zeros(16, 8), _randn(2, 8), torch.tensor([1, 6])],
    ),
    "add_": (_add_in_place, lambda: [_randn(8, 128)]),
}


@pytest.mark.parametrize("api", ["pallas_ir.compile", "torch.compile"])
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_input_mutation_is_copied_back(name: str, api: str) -> None:
    fn, make = MUTATIONS[name]
    inputs, reference = make(), make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if api == "pallas_ir.compile":
            run = pallas_ir.compile(fn, [t.clone() for t in inputs])
        else:
            run = torch.compile(fn, backend="pallas_ir")
        got = run(*inputs)
    want = fn(*reference)
    torch.testing.assert_close(got, want)
    for t, r in zip(inputs, reference, strict=True):
        torch.testing.assert_close(t, r)
    assert not _eager_warnings(caught)


def test_a_cache_passed_in_and_updated_inside() -> None:
    """gpt-fast's pattern: a KV-cache module's buffers updated at positions inside
    the compiled attention step, across several decode steps."""

    class KVCache(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.zeros(1, 2, 16, 8))
            self.register_buffer("v", torch.zeros(1, 2, 16, 8))

        def update(self, pos, k, v):
            self.k[:, :, pos] = k
            self.v[:, :, pos] = v
            return self.k, self.v

    def decode(cache, pos, q, k, v):
        keys, values = cache.update(pos, k, v)
        return F.scaled_dot_product_attention(q, keys, values)

    cache, reference = KVCache(), KVCache()
    step = torch.compile(decode, backend="pallas_ir")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            q, k, v = (_randn(1, 2, 1, 8, seed=3 * i + j) for j in range(3))
            pos = torch.tensor([i])
            torch.testing.assert_close(
                step(cache, pos, q, k, v),
                decode(reference, pos, q, k, v),
                rtol=1e-5,
                atol=1e-5,
            )
    torch.testing.assert_close(cache.k, reference.k)
    torch.testing.assert_close(cache.v, reference.v)
    assert not _eager_warnings(caught)


def test_in_place_ops_from_modules_compile() -> None:
    """In-place ops that dynamo graphs keep (`add_` in nn.RMSNorm, `sigmoid_`/`tanh_`
    in nn.LSTMCell) are functionalized and compiled."""
    torch.manual_seed(0)
    norm, cell = nn.RMSNorm(64), nn.LSTMCell(8, 16)
    x, y = _randn(4, 64), _randn(2, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.testing.assert_close(torch.compile(norm, backend="pallas_ir")(x), norm(x))
        got = torch.compile(cell, backend="pallas_ir")(y)
    torch.testing.assert_close(got, cell(y), rtol=1e-5, atol=1e-6)
    assert not _eager_warnings(caught)


@pytest.mark.parametrize("api", ["pallas_ir.compile", "torch.compile"])
def test_outputs_that_alias_inputs_are_views(api: str) -> None:
    x = _randn(8, 128)

    def f(x):
        return x, x.view(16, 64), x[::2], x + 1

    run = pallas_ir.compile(f, [x]) if api == "pallas_ir.compile" else None
    run = run or torch.compile(f, backend="pallas_ir")
    got = run(x)
    for g, w in zip(got, f(x), strict=True):
        torch.testing.assert_close(g, w)
    for view in got[:3]:
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert view.storage_offset() == 0
    x.mul_(2)  # a write to the input shows through the views, as in eager
    torch.testing.assert_close(got[2], x[::2])


def _write_column_return_a_view(x, a):
    x[:, 2] = a
    return x[:, :, 6].permute(1, 0)


def _write_through_a_view(x):
    y = x.t()
    y.mul_(0.5)
    return y, y[1]


def _view_before_the_write(x):
    first = x[0]
    x.add_(1)
    return first, x.view(-1), x.diagonal()


WRITTEN_AND_VIEWED = {
    # the fuzzer's program (issue 13): an int32 input held transposed of a slice
    "x[:, 2] = a; x[:, :, 6].permute": (
        _write_column_return_a_view,
        lambda: [
            torch.arange(8 * 8 * 32, dtype=torch.int32)
            .view(16, 8, 16)[:, :, ::2]
            .permute(2, 1, 0),
            _randn(1, 16),
        ],
    ),
    "x.mul_(0.5).permute": (
        lambda x: x.mul_(0.5).permute(2, 1, 0),
        lambda: [_randn(3, 32, 128)],
    ),
    "x.add_(y).expand": (
        lambda x, y: x.add_(y).unsqueeze(0).expand(2, 8),
        lambda: [_randn(32).bfloat16()[2::3][:8], _randn(8, seed=1).bfloat16()],
    ),
    "y = x.t(); y.mul_(0.5)": (
        _write_through_a_view,
        lambda: [_randn(8, 16, 2)[:, :, 0]],
    ),
    "x[0] before x.add_(1)": (_view_before_the_write, lambda: [_randn(16, 16)]),
}


@pytest.mark.parametrize("api", ["pallas_ir.compile", "torch.compile"])
@pytest.mark.parametrize("name", list(WRITTEN_AND_VIEWED))
def test_views_of_a_written_input_are_views_of_it(name: str, api: str) -> None:
    """A result that is a view of an input the function writes in place comes back
    as that view of the caller's tensor, after the write, as in eager (before: a
    copy)."""
    fn, make = WRITTEN_AND_VIEWED[name]
    inputs, reference = make(), make()
    if api == "pallas_ir.compile":
        run = pallas_ir.compile(fn, make())
    else:
        run = torch.compile(fn, backend="pallas_ir")
    got, want = run(*inputs), fn(*reference)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    x, x_eager = inputs[0], reference[0]
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w)
        assert g.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert (g.stride(), g.storage_offset()) == (w.stride(), w.storage_offset())
    for t, r in zip(inputs, reference, strict=True):
        torch.testing.assert_close(t, r)
    if x._base is not None:  # the storage around a view
        torch.testing.assert_close(x._base, x_eager._base)
    x.zero_(), x_eager.zero_()  # a later write shows through the views
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w)


# -- guards ------------------------------------------------------------------------


def test_a_call_unlike_the_example_is_an_error() -> None:
    """pallas_ir.compile is specialised: a call with another layout, dtype or shape
    is an UnsupportedError naming what differs (before: 2045 of 2048 wrong)."""
    x = _randn(2, 4, 16, 16).to(memory_format=torch.channels_last)
    compiled = pallas_ir.compile(lambda a: a.sum(1), [x])
    torch.testing.assert_close(compiled(x), x.sum(1))
    for other, says in [
        (
            x.contiguous(),
            r"input 0: compiled for strides \(1024, 1, 64, 4\), called with",
        ),
        (
            x.double(),
            r"input 0: compiled for dtype torch.float32, called with torch.float64",
        ),
        (
            x[:, :, :8],
            r"input 0: compiled for shape \[2, 4, 16, 16\], called with \[2, 4, 8, 16\]",
        ),
    ]:
        with pytest.raises(pallas_ir.UnsupportedError, match=says):
            compiled(other)


def test_torch_compile_recompiles_for_another_layout() -> None:
    x = _randn(2, 4, 16, 16)
    f = torch.compile(lambda a: a.sum(1), backend="pallas_ir")
    for t in (x.to(memory_format=torch.channels_last), x, x.double()):
        torch.testing.assert_close(f(t), t.sum(1))


def test_a_slice_whose_storage_extends_past_it() -> None:
    base = _randn(64, 256)
    view = base[8:40, 128:]
    for run in (
        pallas_ir.compile(lambda a: a * 2, [view]),
        torch.compile(lambda a: a * 2, backend="pallas_ir"),
    ):
        torch.testing.assert_close(run(view), view * 2)


# -- the fallback never raises -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fn", "make"),
    [
        (
            "one_hot",
            lambda i: F.one_hot(i, 8).float() * 2,
            lambda: [
                torch.randint(0, 8, (16,), generator=torch.Generator().manual_seed(0))
            ],
        ),
        ("lstm", nn.LSTM(8, 16, batch_first=True), lambda: [_randn(2, 5, 8)]),
        (
            "write at a 0-d position",
            lambda c, k, p: _kv_write_tensor_position(c, k, p),
            lambda: [torch.zeros(2, 4, 16, 8), _randn(2, 4, 8), torch.tensor(3)],
        ),
    ],
)
def test_what_cannot_compile_runs_eagerly_without_raising(name, fn, make) -> None:
    inputs, reference = make(), make()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        got = torch.compile(fn, backend="pallas_ir")(*inputs)
    want = fn(*reference)
    torch.testing.assert_close(got, want)
    for t, r in zip(inputs, reference, strict=True):
        torch.testing.assert_close(t, r)


# -- TPU -----------------------------------------------------------------------------


def test_every_forward_and_backward_kernel_aot_compiles_for_v5e() -> None:
    """Runs last in this file: every module the tests above compiled (forward,
    backward, inference and optimizer graphs) compiles for a v5e."""
    assert KERNELS
    unique = {k.source: k for k in KERNELS if k.computes}
    results = aot_compile_many(
        [(k.source, arg_specs(k.module)) for k in unique.values()], chip="v5e"
    )
    failed = [
        (k.source[:200], r.message) for k, r in zip(unique.values(), results) if not r.ok
    ]
    assert not failed, failed


def test_the_tiny_gpt_example_trains_like_eager() -> None:
    """`examples/torch/train_tiny_gpt.py`: AdamW steps of its GPT under torch.compile
    (one layer and 6 steps here, to keep CI short; the script's default is 2 layers and
    20 steps), its loss curve within 1e-4 of eager (the script checks it), with nothing
    left to eager PyTorch."""
    script = Path(__file__).parent.parent / "examples" / "torch" / "train_tiny_gpt.py"
    run = subprocess.run(
        [sys.executable, "-W", "always", str(script), "--steps", "6", "--layers", "1"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "largest loss difference" in run.stdout
    assert "pallas_ir: these ops run in eager" not in run.stderr, run.stderr[-2000:]
