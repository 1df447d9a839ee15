"""ta → tile → tl-to-pallas → Python, end to end: every ta example lowers to kernels
that compute what the ta reference interpreter says, lower for TPU and AOT-compile."""

from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType

import pallas_ir
from pallas_ir.check import arg_specs, example_inputs
from pallas_ir.reference import run_forward
from pallas_ir.tpu_check import aot_compile_many, exec_source, lower_for_tpu

FILECHECK = Path(__file__).parent / "filecheck" / "lowering"
EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "ta").glob("*.mlir"))
PIPELINE = (
    "split-kernel-loops,stride-to-reshape,canonicalize-permutation,"
    "indirect-load-to-scalar-prefetch,tile-policy,xla-outline,tile,tl-to-pallas,"
    "pallas-legalize-mosaic"
)


def with_budget(budget: int) -> str:
    """PIPELINE with a VMEM budget for the tile policy, xla-outline and tile."""
    return PIPELINE.replace(
        "tile-policy,xla-outline,tile,",
        f"tile-policy{{vmem-budget={budget}}},xla-outline{{vmem-budget={budget}}},"
        f"tile{{vmem-budget={budget}}},",
    )


def lower(path: Path):
    source = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.verify(source)
    lowered = pallas_ir.parse(path.read_text(), str(path))
    pallas_ir.run_passes(lowered, PIPELINE)
    return source, lowered


def assert_interpret_matches(source, lowered, seed: int) -> None:
    """The emitted kernels, in interpret mode, against the ta reference on the same
    random inputs."""
    inputs = example_inputs(lowered, seed=seed)
    want = run_forward(source, *inputs)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = forward(*map(jnp.asarray, inputs), interpret=True)
    got = got if isinstance(got, tuple | list) else (got,)
    for w, g in zip(want, got, strict=True):
        # XLA sums in another order than numpy: 1e-4 absolute covers 1024-term sums.
        np.testing.assert_allclose(
            np.asarray(g), w.reshape(np.shape(g)), rtol=1e-5, atol=1e-4
        )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lowered_kernels_compute_the_ta_meaning(path: Path) -> None:
    assert_interpret_matches(*lower(path), seed=5)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lowered_kernels_lower_for_tpu(path: Path) -> None:
    _, lowered = lower(path)
    result = lower_for_tpu(pallas_ir.emit_python(lowered), arg_specs(lowered))
    assert result.ok, result.message


@pytest.mark.parametrize("chip", ["v5e", "v6e"])
def test_lowered_kernels_compile_for_tpu(chip: str) -> None:
    items = []
    for path in EXAMPLES:
        _, lowered = lower(path)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    results = aot_compile_many(items, chip=chip)
    bad = {p.stem: r.message for p, r in zip(EXAMPLES, results) if not r.ok}
    assert not bad, bad


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_lowered_kernels_stay_in_their_vmem_budget(path: Path) -> None:
    _, lowered = lower(path)
    for call in pallas_ir.cost_report(lowered).calls:
        assert call.vmem_bytes <= 16 << 20


SPLIT = ["row_sum", "matmul"]


def lower_with_budget(name: str, budget: int):
    path = Path(__file__).parent.parent / "examples" / "ta" / f"{name}.mlir"
    source = pallas_ir.parse(path.read_text(), str(path))
    lowered = pallas_ir.parse(path.read_text(), str(path))
    pipeline = with_budget(budget)
    pallas_ir.run_passes(lowered, pipeline)
    return source, lowered


@pytest.mark.parametrize("name", SPLIT)
def test_reductions_over_budget_accumulate_across_a_sequential_dim(name: str) -> None:
    """With 256 KiB of VMEM the reduction no longer fits one tile: it is split over an
    `arbitrary` grid dim and accumulated in the resident output block, and still
    computes the same numbers (and stays within its budget)."""
    source, lowered = lower_with_budget(name, 256 << 10)
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    semantics = [s.data.value for s in call.dimension_semantics.data]  # type: ignore[attr-defined]
    assert semantics[-1] == "arbitrary" and semantics[:-1] == ["parallel"] * (
        len(semantics) - 1
    )
    (cost,) = pallas_ir.cost_report(lowered).calls
    assert cost.vmem_bytes <= 256 << 10
    assert_interpret_matches(source, lowered, seed=7)


def test_split_reductions_compile_for_tpu() -> None:
    items = []
    for name in SPLIT:
        _, lowered = lower_with_budget(name, 256 << 10)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    results = aot_compile_many(items, chip="v5e")
    bad = {n: r.message for n, r in zip(SPLIT, results) if not r.ok}
    assert not bad, bad


ROW_SUM_BF16 = """
// out = x.sum(dim=1) for x: bf16[64, 8192] (out bf16).
ta.kernel @row_sum(%x: memref<64x8192xbf16> {role = "in"}, %out: memref<64xbf16> {role = "out"}) {
  ta.loop [64] reduce [8192] (%i, %k) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %k) : memref<64x8192xbf16>
    %s = ta.reduce <sum> %v : bf16
    ta.store %s, %out[affine_map<(d0) -> (d0)>](%i) : memref<64xbf16>
  }
}
func.func @forward(%x: memref<64x8192xbf16>) -> memref<64xbf16> {
  %out = ta.alloc : memref<64xbf16>
  ta.launch @row_sum(%x, %out) : memref<64x8192xbf16>, memref<64xbf16>
  func.return %out : memref<64xbf16>
}
"""


def test_bf16_split_reduction_accumulates_in_an_f32_scratch() -> None:
    """A split bf16 sum accumulates its 16 partial sums in an f32 VMEM scratch (init at
    the first `arbitrary` step, finalize at the last), not in the bf16 output block:
    the result is the exact sum to within the rounding of the partial sums and of the
    final bf16 store."""
    lowered = pallas_ir.parse(ROW_SUM_BF16)
    pallas_ir.run_passes(lowered, with_budget(262144))
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    assert call.grid.get_values() == (1, 16)  # type: ignore[attr-defined]
    (acc,) = call.scratch_shapes.data  # type: ignore[attr-defined]
    assert (acc.get_shape(), str(acc.element_type)) == ((64,), "f32")
    (cost,) = pallas_ir.cost_report(lowered).calls
    assert cost.vmem_bytes <= 256 << 10
    (x,) = example_inputs(lowered, seed=3)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    got = np.asarray(forward(jnp.asarray(x), interpret=True)).astype(np.float64)
    exact = x.astype(np.float64).sum(axis=1)
    # 16 partial sums of 512 values (|s| < ~100, bf16 spacing <= 0.5) and the final
    # rounding (|total| < ~400, spacing <= 2): at most 16 * 0.25 + 1.
    np.testing.assert_allclose(got, exact, rtol=0, atol=5.0)
    results = aot_compile_many(
        [(pallas_ir.emit_python(lowered), arg_specs(lowered))], chip="v5e"
    )
    assert results[0].ok, results[0].message


BF16_PRODUCT_RAGGED_K = """
// out = x @ w for x: bf16[16, 1000], w: bf16[1000, 128] (out f32).
ta.kernel @matmul(%x: memref<16x1000xbf16> {role = "in"}, %w: memref<1000x128xbf16> {role = "in"}, %out: memref<16x128xf32> {role = "out"}) {
  ta.loop [16, 128] reduce [1000] (%m, %n, %k) {
    %a = ta.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>](%m, %n, %k) : memref<16x1000xbf16>
    %aw = arith.extf %a : bf16 to f32
    %b = ta.load %w[affine_map<(d0, d1, d2) -> (d2, d1)>](%m, %n, %k) : memref<1000x128xbf16>
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %out[affine_map<(d0, d1, d2) -> (d0, d1)>](%m, %n, %k) : memref<16x128xf32>
  }
}
func.func @forward(%x: memref<16x1000xbf16>, %w: memref<1000x128xbf16>) -> memref<16x128xf32> {
  %out = ta.alloc : memref<16x128xf32>
  ta.launch @matmul(%x, %w, %out) : memref<16x1000xbf16>, memref<1000x128xbf16>, memref<16x128xf32>
  func.return %out : memref<16x128xf32>
}
"""


def test_a_bfloat16_product_splits_a_k_no_part_divides() -> None:
    """k = 1000 with bfloat16 factors, in a budget its whole k does not fit: parts of
    384 over a sequential grid dim, the last running past k's end with both factors'
    padding set to 0 (the MXU sums it). Before, a bfloat16 product refused the ragged
    part (its masks were (16, 1, 384) tiles, which Mosaic cannot select on): a product
    over a vocabulary of 50257 ran on XLA. The masks now run on 2-D tiles
    (`SqueezeUnitDims` rebuilds their iotas), and a select on such a tile that is
    left is widened (`WidenPackedSelectOnUnitSublanes`)."""
    source = pallas_ir.parse(BF16_PRODUCT_RAGGED_K)
    lowered = pallas_ir.parse(BF16_PRODUCT_RAGGED_K)
    pallas_ir.run_passes(lowered, with_budget(300_000))
    report = pallas_ir.cost_report(lowered)
    assert not report.xla_calls, report.format()
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    assert call.grid.get_values() == (1, 1, 3)  # type: ignore[attr-defined]
    unit_sublanes = [
        t
        for op in call.walk()
        for t in op.result_types
        if isinstance(t, TensorType) and t.get_num_dims() >= 3 and t.get_shape()[-2] == 1
    ]
    assert not unit_sublanes
    assert_interpret_matches(source, lowered, seed=3)
    legalized = pallas_ir.parse(
        (
            FILECHECK / "legalize-mosaic" / "widen-packed-select-on-unit-sublanes.mlir"
        ).read_text()
    )
    pallas_ir.run_passes(legalized, "pallas-legalize-mosaic")
    items = [(pallas_ir.emit_python(m), arg_specs(m)) for m in (lowered, legalized)]
    for chip in ("v5e", "v6e"):
        results = aot_compile_many(items, chip=chip)
        assert all(r.ok for r in results), [r.message for r in results]


EMBEDDING_2048 = """
// out = emb[idx] for emb: f32[1000, 128], idx: i64[2048].
ta.kernel @lookup(%idx: memref<2048xi64> {role = "in"}, %emb: memref<128000xf32> {role = "in"}, %out: memref<262144xf32> {role = "out"}) {
  ta.loop [2048, 128] (%i, %j) {
    %iv = ta.load %idx[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<2048xi64>
    %s = arith.index_cast %iv : i64 to index
    %v = ta.load %emb[affine_map<(d0, d1)[s0] -> (s0 * 128 + d1)>](%i, %j)[%s] : memref<128000xf32>
    ta.store %v, %out[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<262144xf32>
  }
}
func.func @forward(%idx: memref<2048xi64>, %emb: memref<1000x128xf32>) -> memref<2048x128xf32> {
  %e = ta.reshape %emb : memref<1000x128xf32> to memref<128000xf32>
  %out = ta.alloc : memref<2048x128xf32>
  %o = ta.reshape %out : memref<2048x128xf32> to memref<262144xf32>
  ta.launch @lookup(%idx, %e, %o) : memref<2048xi64>, memref<128000xf32>, memref<262144xf32>
  func.return %out : memref<2048x128xf32>
}
"""


def test_gather_indices_over_smem_are_streamed_in_chunks() -> None:
    """G3c: with 4 KiB of SMEM for indices, the 2048 int32 lookups (8 KiB) do not fit:
    the index buffer becomes an SMEM block of 1024 lookups whose block index is the
    step's first lookup floordiv 1024 (each chunk fetched once), rows by DMA."""
    source = pallas_ir.parse(EMBEDDING_2048)
    lowered = pallas_ir.parse(EMBEDDING_2048)
    pipeline = PIPELINE.replace(
        "indirect-load-to-scalar-prefetch,",
        "indirect-load-to-scalar-prefetch{smem-budget=4096},",
    )
    pallas_ir.run_passes(lowered, pipeline)
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    assert call.n_prefetch == 0  # type: ignore[attr-defined]
    chunk = call.in_specs.data[1]  # type: ignore[attr-defined]
    assert (chunk.shape, chunk.space.value) == ((1024,), "smem")
    (cost,) = pallas_ir.cost_report(lowered).calls
    idx = next(o for o in cost.operands if o.name == "%idx_chunk")
    assert (idx.bytes, idx.fetches) == (2048 * 4, 2)
    assert_interpret_matches(source, lowered, seed=9)
    result = lower_for_tpu(pallas_ir.emit_python(lowered), arg_specs(lowered))
    assert result.ok, result.message
    results = aot_compile_many(
        [(pallas_ir.emit_python(lowered), arg_specs(lowered))], chip="v6e"
    )
    assert results[0].ok, results[0].message


def test_many_lookups_into_a_small_table_keep_it_in_vmem() -> None:
    """G4: examples/ta/embedding_many.mlir (4096 lookups into a 50 KiB table): the
    table is one whole VMEM block with a constant index map, fetched once, and the
    model moves 51200 B for it instead of the 2 MiB row DMAs would."""
    _, lowered = lower(Path(__file__).parent.parent / "examples/ta/embedding_many.mlir")
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    table = call.in_specs.data[0]  # type: ignore[attr-defined]
    assert (table.shape, table.space.value) == ((100, 128), "vmem")
    assert [str(e) for e in table.index_map.data.results] == ["0", "0"]  # type: ignore[attr-defined]
    (cost,) = pallas_ir.cost_report(lowered).calls
    emb = next(o for o in cost.operands if o.name.startswith("%emb"))
    assert (emb.bytes, emb.fetches) == (100 * 128 * 4, 1)


def test_lookups_not_divisible_by_8_take_8_rows_a_step() -> None:
    """255 lookups: 32 steps of 8 row DMAs, the last step's extra position clamped to
    the last index (its row lands in the block's padding, which Pallas drops on the
    write), so the output keeps its (255, 128) shape: no relayout, and the same numbers."""
    text = EMBEDDING_2048.replace("2048", "255").replace("262144", "32640")
    source, lowered = pallas_ir.parse(text), pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, PIPELINE)
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    assert call.grid.get_values()[0] == 32  # type: ignore[attr-defined]
    assert "arith.minsi" in str(call)
    report = pallas_ir.cost_report(lowered)
    assert report.ratio < 1.05, report.format()
    assert_interpret_matches(source, lowered, seed=4)
    results = aot_compile_many(
        [(pallas_ir.emit_python(lowered), arg_specs(lowered))], chip="v5e"
    )
    assert results[0].ok, results[0].message


EMBEDDING_BAG = """
// out = F.embedding_bag(idx, emb, mode="sum") for idx: i32[NB, 4], emb: T[1000, 128]
ta.kernel @bag(%idx: memref<NBx4xi32> {role = "prefetch"}, %emb: memref<1000x128xT> {role = "in"}, %out: memref<NBx128xT> {role = "out"}) {
  ta.loop [NB, 128] reduce [4] (%b, %d, %k) {
    %iv = ta.load %idx[affine_map<(d0, d1, d2) -> (d0, d2)>](%b, %d, %k) : memref<NBx4xi32>
    %s = arith.index_cast %iv : i32 to index
    %v = ta.load %emb[affine_map<(d0, d1, d2)[s0] -> (s0, d1)>](%b, %d, %k)[%s] {gather = #ta<gather_strategy dma>} : memref<1000x128xT>
    %r = ta.reduce <sum> %v : T
    ta.store %r, %out[affine_map<(d0, d1) -> (d0, d1)>](%b, %d) : memref<NBx128xT>
  }
}
func.func @forward(%idx: memref<NBx4xi32>, %emb: memref<1000x128xT>) -> memref<NBx128xT> {
  %out = ta.alloc : memref<NBx128xT>
  ta.launch @bag(%idx, %emb, %out) : memref<NBx4xi32>, memref<1000x128xT>, memref<NBx128xT>
  func.return %out : memref<NBx128xT>
}
"""


def _bag(bags: int, dtype: str) -> str:
    return (
        EMBEDDING_BAG.replace("NB", str(bags))
        .replace("xT", f"x{dtype}")
        .replace(": T", f": {dtype}")
    )


@pytest.mark.parametrize("bags", [8, 10, 64])
def test_embedding_bags_take_8_bags_a_step(bags: int) -> None:
    """Consecutive bags read consecutive indices, so 8 bags (a sublane tile of the
    output) take one grid step: 32 row DMAs, summed per bag, and the (bags, 128) output
    is stored as it is (one bag a step would need its (bags, 1, 128) view, a relayout).
    10 bags: a ragged last step, its extra lookups clamped to the last index."""
    text = _bag(bags, "f32")
    source, lowered = pallas_ir.parse(text), pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, PIPELINE)
    (call,) = [op for op in lowered.walk() if op.name == "pallas.call"]
    assert call.grid.get_values()[0] == -(-bags // 8)  # type: ignore[attr-defined]
    assert "8x4x128" in str(call)  # the 32 rows, as 8 bags of 4
    report = pallas_ir.cost_report(lowered)
    # The only host copy: the (bags, 4) indices flattened for SMEM (2 x 4 B a lookup).
    assert report.wrapper_copy_bytes == 2 * bags * 4 * 4, report.format()
    assert report.ratio < 1.05, report.format()
    assert_interpret_matches(source, lowered, seed=bags)
    results = aot_compile_many(
        [(pallas_ir.emit_python(lowered), arg_specs(lowered))], chip="v5e"
    )
    assert results[0].ok, results[0].message


@pytest.mark.parametrize("dtype", ["bf16", "i8"])
def test_packed_rows_are_gathered_a_sublane_at_a_time(dtype: str) -> None:
    """Rows of 16- and 8-bit data share 32-bit sublanes, so Mosaic cannot DMA one row.
    A bf16 embedding bag copies, per lookup, the two rows of its row's sublane into a
    (rows, 2, 128) buffer and keeps one of each pair (twice the gathered bytes); int8
    would copy four rows a lookup, more than an XLA gather's extra pass, so its gather
    runs on XLA. Both match the reference and compile for TPU."""
    text = _bag(16, dtype)
    source, lowered = pallas_ir.parse(text), pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, PIPELINE)
    starts = [op for op in lowered.walk() if op.name == "pallas.dma_start"]
    if dtype == "bf16":
        assert starts and all(op.row_count == 2 for op in starts)  # type: ignore[attr-defined]
        (call,) = pallas_ir.cost_report(lowered).calls
        emb = next(o for o in call.operands if o.name.startswith("%emb"))
        assert emb.bytes == 2 * emb.minimum == 2 * 16 * 4 * 128 * 2
    else:
        assert not starts
        assert [x.kind for x in pallas_ir.cost_report(lowered).xla_calls] == ["gather"]
    inputs = example_inputs(lowered, seed=2)
    want = run_forward(source, *inputs)
    forward = exec_source(pallas_ir.emit_python(lowered))["forward"]
    (got,) = (forward(*map(jnp.asarray, inputs), interpret=True),)
    # bf16 sums of 4 terms round once per add in the reference, in f32 in the kernel.
    np.testing.assert_allclose(
        np.asarray(got, dtype=np.float32),
        want[0].astype(np.float32).reshape(np.shape(got)),
        rtol=2e-2,
        atol=2e-2,
    )
    results = aot_compile_many(
        [(pallas_ir.emit_python(lowered), arg_specs(lowered))], chip="v5e"
    )
    assert results[0].ok, results[0].message


def _gather_program(shape: tuple[int, ...], n: int, names: list[str]) -> str:
    """out[i, ...] = x[idx_0[i], ..., idx_{g-1}[i], ...]: the first g dims of x picked by
    the index buffers `names` (a name may repeat: `x[idx, idx]`), the rest whole."""
    rest = shape[len(names) :]
    loop = ", ".join(["%i", *(f"%r{k}" for k in range(len(rest)))])
    dims = ", ".join(f"d{k}" for k in range(len(rest) + 1))
    unique = list(dict.fromkeys(names))
    xs, os_ = "x".join(map(str, shape)), "x".join(map(str, (n, *rest)))
    reads = "".join(
        f"    %a{k} = ta.load %{s}[affine_map<({dims}) -> (d0)>]({loop}) : memref<{n}xi32>\n"
        f"    %s{k} = arith.index_cast %a{k} : i32 to index\n"
        for k, s in enumerate(unique)
    )
    picked = [f"s{unique.index(s)}" for s in names]
    picked += [f"d{k + 1}" for k in range(len(rest))]
    syms = ", ".join(f"s{k}" for k in range(len(unique)))
    idx_types = ", ".join(f"memref<{n}xi32>" for _ in unique)
    return f"""
ta.kernel @k({"".join(f'%{s}: memref<{n}xi32> {{role = "in"}}, ' for s in unique)}%x: memref<{xs}xf32> {{role = "in"}}, %out: memref<{os_}xf32> {{role = "out"}}) {{
  ta.loop [{", ".join(map(str, (n, *rest)))}] ({loop}) {{
{reads}    %v = ta.load %x[affine_map<({dims})[{syms}] -> ({", ".join(picked)})>]({loop})[{", ".join("%s" + str(k) for k in range(len(unique)))}] : memref<{xs}xf32>
    ta.store %v, %out[affine_map<({dims}) -> ({dims})>]({loop}) : memref<{os_}xf32>
  }}
}}
func.func @forward({", ".join(f"%{s}: memref<{n}xi32>" for s in unique)}, %x: memref<{xs}xf32>) -> memref<{os_}xf32> {{
  %out = ta.alloc : memref<{os_}xf32>
  ta.launch @k({", ".join("%" + s for s in unique)}, %x, %out) : {idx_types}, memref<{xs}xf32>, memref<{os_}xf32>
  func.return %out : memref<{os_}xf32>
}}
"""


@pytest.mark.parametrize(
    "shape,n,names",
    [
        ((100, 50, 256), 64, ["i0", "i1"]),  # x[i0, i1]
        ((20, 30, 40, 128), 37, ["i0", "i1", "i2"]),  # three dims, a ragged last step
        ((64, 64, 128), 10, ["i0", "i0"]),  # x[idx, idx]
    ],
    ids=["two", "three_ragged", "same_twice"],
)
def test_several_gathered_dims_take_rows_by_dma(shape, n, names) -> None:
    """Gathers that pick several leading dims of a big table: one row DMA per lookup at
    `x.at[i0, i1, pl.ds(i2, 1)]` (all indices prefetched), exact traffic, no relayout."""
    text = _gather_program(shape, n, names)
    source, lowered = pallas_ir.parse(text), pallas_ir.parse(text)
    pallas_ir.run_passes(lowered, PIPELINE)
    starts = [op for op in lowered.walk() if op.name == "pallas.dma_start"]
    assert starts and all(len(op.src_lead) == len(names) - 1 for op in starts)  # type: ignore[attr-defined]
    report = pallas_ir.cost_report(lowered)
    assert not report.xla_calls and report.ratio == 1.0, report.format()
    assert_interpret_matches(source, lowered, seed=n)
    results = aot_compile_many(
        [(pallas_ir.emit_python(lowered), arg_specs(lowered))], chip="v5e"
    )
    assert results[0].ok, results[0].message


INT8_BINARY = """
// out = x OP y for x, y: i8[64, 256] (wrapping, as torch's int8 arithmetic)
ta.kernel @k(%x: memref<64x256xi8> {role = "in"}, %y: memref<64x256xi8> {role = "in"}, %out: memref<64x256xi8> {role = "out"}) {
  ta.loop [64, 256] (%i, %j) {
    %a = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xi8>
    %b = ta.load %y[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xi8>
    %m = arith.OP %a, %b : i8
    ta.store %m, %out[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x256xi8>
  }
}
func.func @forward(%x: memref<64x256xi8>, %y: memref<64x256xi8>) -> memref<64x256xi8> {
  %out = ta.alloc : memref<64x256xi8>
  ta.launch @k(%x, %y, %out) : memref<64x256xi8>, memref<64x256xi8>, memref<64x256xi8>
  func.return %out : memref<64x256xi8>
}
"""


def test_int8_arithmetic_runs_on_int32_in_the_kernel() -> None:
    """Mosaic has no 8-bit vector multiply (nor add on every chip):
    `pallas-legalize-mosaic` runs i8 tile arithmetic on sign-extended i32 and narrows
    the result, whose low 8 bits are the i8 wrapping result. Products of values in [-8, 8) stay in range; 127 * 2
    wraps to -2 in both."""
    items = []
    for op in ("muli", "addi", "subi", "maxsi", "minsi"):
        text = INT8_BINARY.replace("OP", op)
        source, lowered = pallas_ir.parse(text), pallas_ir.parse(text)
        pallas_ir.run_passes(lowered, PIPELINE)
        (call,) = [o for o in lowered.walk() if o.name == "pallas.call"]
        widened = [o for o in call.walk() if o.name == "pallas.convert"]
        assert len(widened) == 3, op  # both operands up, the result down
        assert_interpret_matches(source, lowered, seed=7)
        items.append((pallas_ir.emit_python(lowered), arg_specs(lowered)))
    forward = exec_source(items[0][0])["forward"]  # muli
    x = np.full((64, 256), 127, np.int8)
    y = np.full((64, 256), 2, np.int8)
    np.testing.assert_array_equal(np.asarray(forward(x, y, interpret=True)), x * y)
    results = aot_compile_many(items, chip="v5e")
    assert all(r.ok for r in results), [r.message for r in results]
