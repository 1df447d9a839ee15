"""xla-outline's plan (`lowering/tile/outline_plan.py`): every access of a kernel that no
Pallas idiom covers, classified at once with its reason and outlining form, or why the
kernel runs on XLA whole, on the lit cases of the tiler's XLA fallback. (That the
outlined programs compute what the ta reference does is checked by those lit files'
`--verify-semantics` runs.)"""

from __future__ import annotations

from pathlib import Path

import pytest

import pallas_ir
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.lowering.tile.outline_plan import OutlinePlan, plan_outlining
from pallas_ir.lowering.tile.policy import RejectionKind

FILECHECK = Path(__file__).parent / "filecheck"
LIT_FILES = [
    FILECHECK / "lowering" / "tile" / "xla-fallback.mlir",
    FILECHECK / "passes" / "xla-outline" / "xla-outline.mlir",
]


def _plan(kernel_name: str) -> tuple[OutlinePlan, ta.KernelOp]:
    for path in LIT_FILES:
        for chunk in path.read_text().split("// -----"):
            if f"ta.kernel @{kernel_name}(" in chunk:
                module = pallas_ir.parse(chunk)
                (kernel,) = [
                    k
                    for k in module.ops
                    if isinstance(k, ta.KernelOp) and k.sym_name.data == kernel_name
                ]
                return plan_outlining(module, kernel), kernel
    raise AssertionError(f"no lit case defines @{kernel_name}")


def test_two_odd_reads_are_planned_in_one_step() -> None:
    plan, _ = _plan("two_odd_reads")
    assert [(a.form, a.op.result.name_hint) for a in plan.accesses] == [  # type: ignore[union-attr]
        (ta.XlaAccess.GATHER, "a"),
        (ta.XlaAccess.GATHER, "s"),
    ]
    assert plan.accesses[0].reason.startswith("tile: index 0 (((d0 * -1) + 63))")
    assert plan.accesses[1].reason.startswith("tile: index 1 (((d0 * -1) + 63))")
    assert plan.whole_kernel is None
    assert str(plan) == "to XLA: gather %a, gather %s; the rest to tile"


def test_an_access_no_tile_size_allows_is_planned_with_the_odd_reads() -> None:
    plan, _ = _plan("offset_store")
    assert [str(a) for a in plan.accesses] == [
        "gather %a",
        "gather %q",
        "scatter the store to %out",
    ]
    assert (
        plan.accesses[2].reason == "tile: no legal tile size for loop dim 0 (extent 64)"
    )
    assert plan.whole_kernel is None


@pytest.mark.parametrize(
    ("kernel", "form"),
    [
        ("flip_matmul", ta.XlaAccess.GATHER),
        ("diag_matmul", ta.XlaAccess.GATHER),
        ("strided_store", ta.XlaAccess.SCATTER),
        ("wrapped", ta.XlaAccess.INDEX),
    ],
)
def test_one_access_to_xla(kernel: str, form: ta.XlaAccess) -> None:
    plan, _ = _plan(kernel)
    assert [a.form for a in plan.accesses] == [form]
    assert plan.whole_kernel is None


def test_a_double_indirection_is_one_xla_step() -> None:
    # Both the perm[idx[i]] load and the x[perm[idx[i]]] load are no gather Pallas
    # tiles; the first moves with the second (only the row index goes to XLA).
    plan, _ = _plan("double_indirect")
    assert [(a.form, str(a)) for a in plan.accesses] == [
        (ta.XlaAccess.INDEX, "index %pv")
    ]
    assert plan.whole_kernel is None


def test_64_bit_index_math_moves_with_the_index() -> None:
    # `wrapped` computes its row index in i64: the i64 ops move to XLA with the index,
    # so the 64-bit data does not send the kernel to XLA whole.
    plan, _ = _plan("wrapped")
    assert plan.whole_kernel is None


@pytest.mark.parametrize(
    ("kernel", "kind"),
    [
        ("anti_diag", RejectionKind.XLA_FUSION),
        ("anti_diagonal", RejectionKind.XLA_FUSION),
        ("read_back", RejectionKind.XLA_FUSION),
        ("increment", RejectionKind.WIDE_DATA),
        ("by_argmax", RejectionKind.ACCESS),
    ],
)
def test_whole_kernel_on_xla(kernel: str, kind: RejectionKind) -> None:
    plan, _ = _plan(kernel)
    assert plan.accesses == ()
    assert plan.whole_kernel is not None and plan.whole_kernel.kind is kind
    assert str(plan).startswith("to XLA: nothing; the rest runs on XLA (tile: ")
