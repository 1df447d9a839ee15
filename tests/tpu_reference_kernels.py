"""Scratch validation of pallas_ir/tpu_check.py against three hand-written Pallas TPU kernels.

Run:  . .venv/bin/activate && python tests/tpu_reference_kernels.py
"""

import os
import sys
import time

import numpy as np

os.environ.setdefault(
    "JAX_PLATFORMS", "cpu"
)  # else jax (with libtpu installed) probes for a TPU

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

ADD_SRC = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def forward(x, y, interpret=False):
    M, N = x.shape            # (512, 1024) float32
    bm, bn = 128, 512         # grid (4, 2)
    return pl.pallas_call(
        _add_kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), x.dtype),
        grid=(M // bm, N // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
                  pl.BlockSpec((bm, bn), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
        cost_estimate=pl.CostEstimate(flops=M * N, transcendentals=0,
                                      bytes_accessed=3 * M * N * x.dtype.itemsize),
        name="ref_add",
        interpret=interpret,
    )(x, y)
"""

TRANSPOSE_SRC = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _transpose_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...].T


def forward(x, interpret=False):
    M, N = x.shape            # (256, 384) float32 -> (384, 256)
    t = 128
    return pl.pallas_call(
        _transpose_kernel,
        out_shape=jax.ShapeDtypeStruct((N, M), x.dtype),
        grid=(M // t, N // t),
        in_specs=[pl.BlockSpec((t, t), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((t, t), lambda i, j: (j, i)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
        cost_estimate=pl.CostEstimate(flops=0, transcendentals=0,
                                      bytes_accessed=2 * M * N * x.dtype.itemsize),
        name="ref_transpose",
        interpret=interpret,
    )(x)
"""

GATHER_SRC = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _gather_kernel(idx_ref, t_ref, o_ref):
    o_ref[...] = t_ref[...]


def forward(idx, table, interpret=False):
    n, = idx.shape            # 64 int32 indices
    V, one, D = table.shape   # (1000, 1, 256) float32
    return pl.pallas_call(
        _gather_kernel,
        out_shape=jax.ShapeDtypeStruct((n, one, D), table.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(n,),
            in_specs=[pl.BlockSpec((None, one, D),
                                   lambda i, idx_ref: (idx_ref[i], jnp.int32(0), jnp.int32(0)))],
            out_specs=pl.BlockSpec((None, one, D),
                                   lambda i, idx_ref: (i, jnp.int32(0), jnp.int32(0))),
        ),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
        cost_estimate=pl.CostEstimate(flops=0, transcendentals=0,
                                      bytes_accessed=2 * n * D * table.dtype.itemsize + 4 * n),
        name="ref_embedding_gather",
        interpret=interpret,
    )(idx, table)
"""

# (4, 128) f32 blocks on a (64, 256) array: violates the (8, 128) block rule.
ILLEGAL_SRC = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def forward(x, interpret=False):
    return pl.pallas_call(
        lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...] * 2.0),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(16, 2),
        in_specs=[pl.BlockSpec((4, 128), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((4, 128), lambda i, j: (i, j)),
        interpret=interpret,
    )(x)
"""

# 262144 int32 scalar-prefetched = 1 MiB: overflows SMEM (only libtpu sees it).
SMEM_SRC = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(idx_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] + idx_ref[pl.program_id(0)].astype(jnp.float32)


def forward(idx, x, interpret=False):
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(1,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, idx_ref: (i, jnp.int32(0)))],
            out_specs=pl.BlockSpec((8, 128), lambda i, idx_ref: (i, jnp.int32(0)))),
        interpret=interpret,
    )(idx, x)
"""

# ADD with a literal 0 in an index map: fine without x64, int64 under x64 -> AOT failure.
X64_TRAP_SRC = ADD_SRC.replace(
    "pl.BlockSpec((bm, bn), lambda i, j: (i, j))]",
    "pl.BlockSpec((bm, bn), lambda i, j: (i, 0))]",
)
assert X64_TRAP_SRC != ADD_SRC

# Kills the child process the way a libtpu CHECK failure does.
ABORT_SRC = """\
import os
def forward(x, interpret=False):
    os.abort()
"""

HANG_SRC = """\
import time
def forward(x, interpret=False):
    time.sleep(60)
"""


def _specs():
    from pallas_ir.tpu_check import ArraySpec as S

    return {
        "add": [S((512, 1024), "float32"), S((512, 1024), "float32")],
        "transpose": [S((256, 384), "float32")],
        "gather": [S((64,), "int32"), S((1000, 1, 256), "float32")],
        "illegal": [S((64, 256), "float32")],
        "smem": [S((262144,), "int32"), S((8, 128), "float32")],
    }


def _ns(src):
    ns = {"__name__": "refmod"}
    exec(compile(src, "<ref>", "exec"), ns)
    return ns


def check_numerics():
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 1024), dtype=np.float32)
    y = rng.standard_normal((512, 1024), dtype=np.float32)
    t0 = time.perf_counter()
    np.testing.assert_allclose(
        np.asarray(
            _ns(ADD_SRC)["forward"](jnp.asarray(x), jnp.asarray(y), interpret=True)
        ),
        x + y,
        rtol=1e-6,
    )
    a = rng.standard_normal((256, 384), dtype=np.float32)
    np.testing.assert_allclose(
        np.asarray(_ns(TRANSPOSE_SRC)["forward"](jnp.asarray(a), interpret=True)), a.T
    )
    idx = rng.integers(0, 1000, size=64, dtype=np.int32)
    table = rng.standard_normal((1000, 1, 256), dtype=np.float32)
    np.testing.assert_allclose(
        np.asarray(
            _ns(GATHER_SRC)["forward"](
                jnp.asarray(idx), jnp.asarray(table), interpret=True
            )
        ),
        table[idx],
    )
    print(
        f"interpret=True numerics: add/transpose/gather match numpy ({time.perf_counter() - t0:.2f} s)"
    )


def show(label, r, wall=None):
    w = f" wall={wall * 1e3:.0f}ms" if wall is not None else ""
    print(
        f"  {label:<28} ok={r.ok!s:<5} stage={r.stage:<7} t={r.elapsed_s * 1e3:7.1f}ms{w}"
    )
    if r.message:
        print("    | " + r.message.replace("\n", "\n    | "))


def main():
    from pallas_ir import tpu_check as tc

    sp = _specs()
    good = [("add", ADD_SRC), ("transpose", TRANSPOSE_SRC), ("gather", GATHER_SRC)]

    check_numerics()

    print("\n== tier 1: lower_for_tpu (in process), two passes")
    for p in range(2):
        for name, src in good:
            r = tc.lower_for_tpu(src, sp[name])
            assert r.ok, r
            show(f"pass{p} {name}", r)
    for name, src in [("illegal", ILLEGAL_SRC), ("smem", SMEM_SRC)]:
        show(f"lower {name}", tc.lower_for_tpu(src, sp[name]))

    for chip in ("v5e", "v6e"):
        print(f"\n== tier 2: aot_compile_many, one child, {chip}")
        items = [(src, sp[name]) for name, src in good] * 2
        t0 = time.perf_counter()
        rs = tc.aot_compile_many(items, chip=chip)
        wall = time.perf_counter() - t0
        for (name, _), r in zip(good * 2, rs):
            assert r.ok, r
            show(f"{chip} {name}", r)
        print(
            f"  batch wall {wall:.2f} s; child overhead (wall - sum of items) {wall - sum(r.elapsed_s for r in rs):.2f} s"
        )

    print("\n== single aot_compile_for_tpu calls (one child each)")
    for name, src in good:
        t0 = time.perf_counter()
        r = tc.aot_compile_for_tpu(src, sp[name])
        wall = time.perf_counter() - t0
        assert r.ok, r
        show(f"v5e {name}", r, wall)

    print("\n== bad kernels in one batch with good ones (v5e)")
    batch = [
        ("add", ADD_SRC, sp["add"]),
        ("illegal", ILLEGAL_SRC, sp["illegal"]),
        ("smem", SMEM_SRC, sp["smem"]),
        ("abort", ABORT_SRC, sp["illegal"]),
        ("transpose", TRANSPOSE_SRC, sp["transpose"]),
        ("gather", GATHER_SRC, sp["gather"]),
    ]
    t0 = time.perf_counter()
    rs = tc.aot_compile_many([(s, p) for _, s, p in batch], chip="v5e")
    wall = time.perf_counter() - t0
    for (name, _, _), r in zip(batch, rs):
        show(name, r)
    print(f"  batch wall {wall:.2f} s (includes the re-runs after the abort)")
    assert [r.ok for r in rs] == [True, False, False, False, True, True]
    assert rs[1].stage == "lower" and rs[2].stage == "compile"
    assert rs[3].message.startswith("TPU compiler process died with signal SIGABRT")

    print("\n== timeout (per item) in a batch")
    t0 = time.perf_counter()
    rs = tc.aot_compile_many(
        [
            (ADD_SRC, sp["add"]),
            (HANG_SRC, sp["illegal"]),
            (TRANSPOSE_SRC, sp["transpose"]),
        ],
        timeout=4,
    )
    wall = time.perf_counter() - t0
    for name, r in zip(["add", "hang", "transpose"], rs):
        show(name, r)
    print(f"  batch wall {wall:.2f} s")
    assert [r.ok for r in rs] == [True, False, True] and "timed out" in rs[1].message

    print("\n== x64 in the child")
    rs = tc.aot_compile_many(
        [(src, sp[name]) for name, src in good] + [(X64_TRAP_SRC, sp["add"])],
        chip="v5e",
        x64=True,
    )
    for (name, _), r in zip(good + [("add with literal 0 (trap)", None)], rs):
        show(f"x64 {name}", r)
    assert all(r.ok for r in rs[:3]) and not rs[3].ok
    r = tc.aot_compile_for_tpu(X64_TRAP_SRC, sp["add"])
    show("no-x64 add with literal 0", r)
    assert r.ok

    print("\n== x64 on in the caller (in-process lowering + child)")
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        for name, src in good:
            r = tc.lower_for_tpu(src, sp[name])
            assert r.ok, r
            show(f"caller-x64 lower {name}", r)
        rs = tc.aot_compile_many([(src, sp[name]) for name, src in good])
        assert all(r.ok for r in rs), rs
        print("  caller-x64 aot_compile_many (child x64=False): all ok")
    finally:
        jax.config.update("jax_enable_x64", False)

    print("\n== require_* helpers")
    try:
        tc.require_tpu_lowering(ILLEGAL_SRC, sp["illegal"])
    except tc.TpuCheckError as e:
        print("  TpuCheckError:", str(e).splitlines()[0])
    print("\nALL CHECKS PASSED")


if __name__ == "__main__":
    main()
