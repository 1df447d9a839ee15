"""Matrix products as one kernel with their epilogue, in blocks the roofline picks.

- fuse-epilogues puts the bias, activation, residual add, scale and cast that follow a
  product into the product's kernel (one launch; the f32 product is never stored).
- The tiler splits a long contraction over a sequential grid dim and runs the epilogue
  once, on the whole sum (`tl.accumulate`, `tl.on_last_step`).
- fuse-siblings makes kernels that read one input over the same loop one kernel (a
  norm's statistics, a softmax's row max and sum).
- Contraction tiles come from a roofline against the chip's VMEM (`policy.roofline`):
  at 4096^2 the kernel moves fewer HBM bytes than jax's example Pallas matmul, in the
  same cost model.

Each program is checked against eager, its ta module against the reference interpreter,
and its kernels against the TPU compiler for v5e and v6e."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from support.programs import aot_failures, compile_programs, flat, ta_reference

import pallas_ir
from pallas_ir.check import arg_specs
from pallas_ir.compiler import run_pipeline
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.lowering.tile import set_tile_sizes
from pallas_ir.registry import default_pipeline
from pallas_ir.tpu_check import aot_compile_many

BF16 = torch.bfloat16


def _bf16(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).to(BF16)


def _read_twice(x, w):
    h = x @ w
    return torch.relu(h), torch.sigmoid(h) * 2


def _heads_out_projection(y, w):
    b, h, t, d = y.shape
    return y.transpose(1, 2).reshape(b, t, h * d) @ w.t()


# the product and both readers in one kernel (fuse-epilogues: fused with the first
# reader, the kernel still stores the product, and fuses with the second)
PRODUCT_READ_TWICE_LAUNCHES = 1


# name → (function, inputs, pallas_calls)
PROGRAMS = {
    "bf16_matmul_cast": (
        lambda x, w: x @ w,
        lambda: [_bf16(256, 512), _bf16(512, 384)],
        1,
    ),
    "linear_bias_gelu": (
        lambda x, w, b: F.gelu(F.linear(x, w, b)),
        lambda: [torch.randn(256, 512), torch.randn(384, 512) / 16, torch.randn(384)],
        1,
    ),
    # k = 8192 does not fit whole: split, the epilogue on the last step
    "linear_bias_gelu_long_k": (
        lambda x, w, b: F.gelu(F.linear(x, w, b)),
        lambda: [torch.randn(128, 8192), torch.randn(256, 8192) / 64, torch.randn(256)],
        1,
    ),
    "bf16_linear_tanh_gelu": (
        lambda x, w, b: F.gelu(F.linear(x, w, b), approximate="tanh"),
        lambda: [_bf16(256, 2048), _bf16(512, 2048), _bf16(512)],
        1,
    ),
    "residual_add": (
        lambda x, w, r: x @ w + r,
        lambda: [torch.randn(128, 1024), torch.randn(1024, 256), torch.randn(128, 256)],
        1,
    ),
    "addmm_alpha_beta": (
        lambda b, x, w: torch.addmm(b, x, w, beta=0.5, alpha=2.0),
        lambda: [torch.randn(256), torch.randn(64, 128), torch.randn(128, 256)],
        1,
    ),
    "bmm_scaled": (
        lambda q, k: torch.bmm(q, k) * 0.125,
        lambda: [torch.randn(4, 128, 64), torch.randn(4, 64, 256)],
        1,
    ),
    # Mosaic's dot takes floats: an int32 product and its epilogue are one XLA kernel
    "relu_of_int32_matmul": (
        lambda x, w: torch.relu(x @ w),
        lambda: [
            torch.randint(-8, 8, (64, 256), dtype=torch.int32),
            torch.randint(-8, 8, (256, 128), dtype=torch.int32),
        ],
        0,
    ),
    # a linear on a 3-D input is a [rows, n] loop, the residual add a [b, t, n] one:
    # the add is collapsed into the product's loop and fused
    "linear_3d_residual": (
        lambda x, w, b, r: F.linear(x, w, b) + r,
        lambda: [
            torch.randn(2, 64, 256),
            torch.randn(128, 256) / 16,
            torch.randn(128),
            torch.randn(2, 64, 128),
        ],
        1,
    ),
    # the norm's statistics in the product's prologue (fuse-epilogues: the rows are
    # shorter than two k parts, so the product's contraction is never split)
    "layer_norm_then_linear": (
        lambda x, g, b, w: F.linear(F.layer_norm(x, (512,), g, b), w),
        lambda: [
            torch.randn(64, 512),
            torch.randn(512),
            torch.randn(512),
            torch.randn(256, 512) / 16,
        ],
        1,
    ),
    # the row max and row sum in the bmm's prologue (fuse-epilogues: rows of 256 are
    # never split), the bmm's result stored where the output's view reads it
    "softmax_then_bmm": (
        lambda s, v: torch.softmax(s, -1) @ v,
        lambda: [torch.randn(4, 128, 256), torch.randn(4, 256, 64)],
        1,
    ),
    # attention in plain torch at T = 512: raise-attention makes the scores, the
    # softmax's statistics and att @ v one ta.attention, tiled as flash attention
    "attention_t512": (
        lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) * 0.125, -1) @ v,
        lambda: [torch.randn(2, 4, 512, 64) for _ in range(3)],
        1,
    ),
    # causal, with the mask of masked_fill in the score region
    "causal_attention_t256": (
        lambda q, k, v: _causal_attention(q, k, v),
        lambda: [torch.randn(1, 2, 256, 64) for _ in range(3)],
        1,
    ),
    # an attention layer's output projection: the heads merged back, `(b, h, t, d)`
    # read as `(b, t, h * d)`, times the weight. canonicalize-permutation splits the k
    # into (h, d); both factors walk both, so they are one merged k of a `tl.dot`
    "heads_out_projection": (
        _heads_out_projection,
        lambda: [torch.randn(2, 8, 128, 32), torch.randn(256, 256) / 16],
        1,
    ),
    "bf16_heads_out_projection": (
        _heads_out_projection,
        lambda: [_bf16(2, 4, 64, 128), _bf16(384, 512)],
        1,
    ),
    # a product per head: rows (h, t) of the head-split view are one m of the dot. Its
    # form multiplied out and summed (before) came out wrong under XLA:CPU in interpret
    # mode, by up to 38 (t = 64) or 31 (t = 12), where the kernel is right
    "per_head_projection": (
        lambda x, w: x.view(2, 64, 4, 32).transpose(1, 2) @ w,
        lambda: [torch.randn(2, 64, 128), torch.randn(32, 48)],
        1,
    ),
    "per_head_projection_odd_rows": (
        lambda x, w: x.view(2, 12, 4, 32).transpose(1, 2) @ w,
        lambda: [torch.randn(2, 12, 128), torch.randn(32, 48)],
        1,
    ),
    # the product is read by two kernels: both fused into its kernel, nothing stored
    "product_read_twice": (
        _read_twice,
        lambda: [torch.randn(64, 256), torch.randn(256, 128)],
        PRODUCT_READ_TWICE_LAUNCHES,
    ),
}


@pytest.fixture(scope="module")
def compiled():
    return compile_programs({n: (fn, make) for n, (fn, make, _) in PROGRAMS.items()})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    got, want = flat(k(*inputs)), flat(fn(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.dtype == BF16:  # one bf16 ulp: the f32 sums are ordered differently
            torch.testing.assert_close(g, w, rtol=8e-3, atol=8e-3 * w.abs().max().item())
        elif g.dtype.is_floating_point:
            scale = w.abs().max().item()
            torch.testing.assert_close(g, w, rtol=1e-5, atol=2e-6 * scale)
        else:
            assert torch.equal(g, w)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_launches(name: str, compiled) -> None:
    """A product and its epilogue are one pallas_call (an integer one, one XLA call)."""
    k = compiled[name][0]
    report = k.cost_report()
    assert k.source.count("pl.pallas_call(") == PROGRAMS[name][2]
    assert len(report.xla_calls) == (0 if PROGRAMS[name][2] else 1)


def test_the_product_is_not_stored(compiled) -> None:
    """Fused, the f32 product of a bf16 matmul is never written to HBM: the kernel
    moves its operands and its bf16 result, the minimum."""
    report = compiled["bf16_matmul_cast"][0].cost_report()
    assert report.modelled == report.minimum == 2 * (256 * 512 + 512 * 384 + 256 * 384)


@pytest.mark.parametrize(
    "name", ["linear_bias_gelu_long_k", "bf16_linear_tanh_gelu", "heads_out_projection"]
)
def test_fused_ta_means_eager(name: str, compiled) -> None:
    k, fn, inputs = compiled[name]
    assert "fuse-epilogues" in k.ir
    arrays = [
        t.float().numpy().astype(ml_dtypes.bfloat16) if t.dtype == BF16 else t.numpy()
        for t in inputs
    ]
    got = ta_reference(k, arrays)
    for g, w in zip(got, flat(fn(*inputs)), strict=True):
        w = w.float().numpy()
        np.testing.assert_allclose(
            np.asarray(g, np.float32), w, rtol=1e-2, atol=1e-2 * abs(w).max()
        )


@pytest.mark.parametrize("name", ["per_head_projection", "per_head_projection_odd_rows"])
def test_rows_of_several_dims_are_one_dot(name: str, compiled) -> None:
    """A product whose rows span two loop dims (heads and tokens) is one dot of the
    merged rows, not the factors multiplied out on the VPU."""
    source = compiled[name][0].source
    kernel = source[source.index("_kernel(") : source.index("def forward")]
    assert "jnp.dot(" in kernel
    assert "jnp.sum(" not in kernel


@pytest.mark.parametrize("name", ["heads_out_projection", "bf16_heads_out_projection"])
def test_an_output_projection_is_one_dot_on_the_weight_as_held(
    name: str, compiled
) -> None:
    """Summed over heads and head dims, the product is one dot on the MXU per step (its
    two reduction dims merged into one k), not the factors multiplied out and summed on
    the VPU (`jnp.sum` of a (t, n, h, d) product: 1 ms of a llama layer's 1.5 on a
    v5e). The weight, which the kernel views as (n, h, d), is read as the host holds
    it, (n, h * d), and split in registers: no relayout copy before the call."""
    k = compiled[name][0]
    kernel = k.source[k.source.index("_kernel(") : k.source.index("def forward")]
    assert "jnp.dot(" in kernel
    assert "jnp.sum(" not in kernel
    assert k.cost_report().wrapper_copy_bytes == 0


def test_a_split_contraction_runs_its_epilogue_on_the_last_step(compiled) -> None:
    tile = compiled["linear_bias_gelu_long_k"][0].ir["tile"]
    assert "sequential" in tile
    assert "tl.accumulate <sum>" in tile and "tl.on_last_step" in tile


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_fused_products_compile_for_tpu(compiled, chip: str) -> None:
    assert not aot_failures(compiled, chip)


def test_an_int64_product_is_refused_plainly() -> None:
    """int64 data is computed in int32 with each op's wrap checked; a matrix product's
    sum has no such check, so it is refused, naming the op and why."""
    x = torch.randint(-8, 8, (16, 32))
    with pytest.raises(pallas_ir.UnsupportedError, match="aten.mm.*int64 matrix product"):
        pallas_ir.compile(lambda x: x @ x.t(), [x])


def _matmul_ta(n: int, dtype: str) -> str:
    widen = (
        ""
        if dtype == "f32"
        else "    %x = arith.extf %xn : bf16 to f32\n    %y = arith.extf %yn : bf16 to f32\n"
    )
    loads = ("%x", "%y") if dtype == "f32" else ("%xn", "%yn")
    m = f"memref<{n}x{n}x{dtype}>"
    out = f"memref<{n}x{n}xf32>"
    return f"""
ta.kernel @mm(%a: {m} {{role = "in"}}, %b: {m} {{role = "in"}}, %c: {out} {{role = "out"}}) {{
  ta.loop [{n}, {n}] reduce [{n}] (%i, %j, %k) {{
    {loads[0]} = ta.load %a[affine_map<(d0, d1, d2) -> (d0, d2)>](%i, %j, %k) : {m}
    {loads[1]} = ta.load %b[affine_map<(d0, d1, d2) -> (d2, d1)>](%i, %j, %k) : {m}
{widen}    %p = arith.mulf %x, %y : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %c[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : {out}
  }}
}}
func.func @forward(%a: {m}, %b: {m}) -> {out} {{
  %c = ta.alloc : {out}
  ta.launch @mm(%a, %b, %c) : {m}, {m}, {out}
  func.return %c : {out}
}}
"""


def _lowered(text: str, chip: str, tiles=None):
    module = pallas_ir.parse(text)
    if tiles is not None:
        (loop,) = [op for op in module.walk() if isinstance(op, ta.LoopOp)]
        set_tile_sizes(loop, tiles)
    pallas_ir.run_passes(module, default_pipeline(chip))
    return module, pallas_ir.cost_report(module)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_4096_matmul_moves_no_more_than_the_jax_example(dtype: str, chip: str) -> None:
    """x @ w at 4096^2: one launch, and no more HBM bytes than jax's example Pallas
    matmul's blocks (512 x 512, k 512) in the same cost model; within the chip's
    default scoped VMEM (no vmem_limit asked)."""
    text = _matmul_ta(4096, dtype)
    ours_module, ours = _lowered(text, chip)
    _, example = _lowered(text, chip, [512, 512, 512])
    assert len(ours.calls) == 1 and not ours.xla_calls
    assert ours.modelled <= example.modelled
    assert "vmem_limit_bytes" not in str(ours_module)


def bf16_matmul_ta(n: int) -> str:
    """The ta module the frontend writes for `x @ w` of two bf16 (n, n) matrices: the
    product summed in f32, then narrowed (checked against the frontend at n = 256)."""
    nn = n * n
    return f"""
    ta.kernel @k2(%in0: memref<{nn}xbf16> {{role = "in"}}, %in1: memref<{nn}xbf16> {{role = "in"}}, %t1: memref<{nn}xf32> {{role = "out"}}) {{
      ta.loop [{n}, {n}] reduce [{n}] (%l0, %l1, %l2) {{
        %v1 = ta.load %in0[affine_map<(d0, d1, d2) -> (((d0 * {n}) + d2))>](%l0, %l1, %l2) : memref<{nn}xbf16>
        %v2 = arith.extf %v1 : bf16 to f32
        %v3 = ta.load %in1[affine_map<(d0, d1, d2) -> (((d2 * {n}) + d1))>](%l0, %l1, %l2) : memref<{nn}xbf16>
        %v4 = arith.extf %v3 : bf16 to f32
        %v5 = arith.mulf %v2, %v4 : f32
        %v6 = ta.reduce <sum> %v5 : f32
        ta.store %v6, %t1[affine_map<(d0, d1) -> (((d0 * {n}) + d1))>](%l0, %l1) : memref<{nn}xf32>
      }}
    }}
    ta.kernel @k5(%t1: memref<{nn}xf32> {{role = "in"}}, %out3: memref<{nn}xbf16> {{role = "out"}}) {{
      ta.loop [{n}, {n}] (%l0, %l1) {{
        %v1 = ta.load %t1[affine_map<(d0, d1) -> (((d0 * {n}) + d1))>](%l0, %l1) : memref<{nn}xf32>
        %v2 = arith.truncf %v1 : f32 to bf16
        ta.store %v2, %out3[affine_map<(d0, d1) -> (((d0 * {n}) + d1))>](%l0, %l1) : memref<{nn}xbf16>
      }}
    }}
    func.func @forward(%in0: memref<{n}x{n}xbf16>, %in1: memref<{n}x{n}xbf16>) -> memref<{n}x{n}xbf16> {{
      %in0_flat = ta.reshape %in0 : memref<{n}x{n}xbf16> to memref<{nn}xbf16>
      %in1_flat = ta.reshape %in1 : memref<{n}x{n}xbf16> to memref<{nn}xbf16>
      %t1 = ta.alloc : memref<{n}x{n}xf32>
      %t1_flat = ta.reshape %t1 : memref<{n}x{n}xf32> to memref<{nn}xf32>
      %out3 = ta.alloc : memref<{n}x{n}xbf16>
      %out3_flat = ta.reshape %out3 : memref<{n}x{n}xbf16> to memref<{nn}xbf16>
      ta.launch @k2(%in0_flat, %in1_flat, %t1_flat) : memref<{nn}xbf16>, memref<{nn}xbf16>, memref<{nn}xf32>
      ta.launch @k5(%t1_flat, %out3_flat) : memref<{nn}xf32>, memref<{nn}xbf16>
      func.return %out3 : memref<{n}x{n}xbf16>
    }}
    """


def test_the_bf16_matmul_ta_is_the_frontends() -> None:
    k = pallas_ir.compile(lambda x, w: x @ w, [_bf16(256, 256), _bf16(256, 256)])
    assert str(pallas_ir.parse(k.ir["ta"])) == str(pallas_ir.parse(bf16_matmul_ta(256)))


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_4096_matmul_tiles_compile_for_tpu(chip: str) -> None:
    """The roofline's 4096^2 blocks, with the dot's own VMEM (`dot_vmem_bytes`),
    compile for both chips. The bf16 product starts from the frontend's ta
    (`bf16_matmul_ta`): tracing runs the product in eager torch, and a CPU without
    bf16 arithmetic takes minutes for a 4096^3 one (measured: 2.3 s for 1024^3 on
    this project's CI machine, an AMD EPYC)."""
    f32 = pallas_ir.compile(
        lambda x, w: x @ w, [torch.randn(4096, 4096), torch.randn(4096, 4096)], chip=chip
    )
    module = run_pipeline(pallas_ir.parse(bf16_matmul_ta(4096)), default_pipeline(chip))
    items = [
        (f32.source, arg_specs(f32.module)),
        (pallas_ir.emit_python(module), arg_specs(module)),
    ]
    results = aot_compile_many(items, chip=chip)
    assert all(r.ok for r in results), [r.message for r in results]


def _causal_attention(q, k, v):
    t = q.shape[-2]
    mask = torch.ones(t, t, dtype=torch.bool).triu(1)
    scores = (q @ k.transpose(-2, -1) * 0.125).masked_fill(mask, float("-inf"))
    return torch.softmax(scores, -1) @ v


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_causal_attention_at_t8192_compiles_for_tpu(chip: str) -> None:
    """B=1, H=2, T=8192, D=64: one flash-attention kernel (an online softmax over a
    sequential grid dim of key blocks; the (T, T) scores never reach HBM), and the
    mask's int64 `arange` difference, bounded by the graph, has no overflow check."""
    qkv = [torch.randn(1, 2, 8192, 64) for _ in range(3)]
    k = pallas_ir.compile(_causal_attention, qkv, chip=chip)
    assert k.ir["tile"].count("tl.kernel @") == 1
    assert "tl.accumulate <sum>" in k.ir["tile"] and "rescaled" in k.ir["tile"]
    assert not aot_failures({"causal_t8192": k}, chip)
