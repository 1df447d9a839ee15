"""The pass tests' inputs as whole programs, for tests and benchmarks (not the library).

A pass test's input is one `ta.kernel`; `with_single_launch` adds a `@forward` that
launches it, `pass_test_programs` collects every such chunk of the filecheck files,
and `lower_on_host_storage` lowers one the way the frontend would hold its buffers.
`benchmarks/` imports this with `tests/` on `sys.path`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument

from pallas_ir.check import forward_of


def hold_storage_on_host(module: ModuleOp) -> None:
    """Give @forward's flat buffers the N-D shape its kernels view them as.

    The pass tests' inputs launch their kernel on flat host buffers, which a TPU would
    relayout to every N-D view (a wrapper reshape that changes the last two dims is an
    HBM copy). A frontend holds torch tensors in their N-D storage shape and passes the
    kernels flat views of it, which is free; this rewrite models that, on a ta module
    after the ta passes: a flat @forward argument or allocation that the kernels it is
    launched on view as exactly one N-D shape takes that shape, with a host `ta.reshape`
    to the flat buffer for the launches (the returned value keeps the N-D shape).
    Meaning is unchanged: the same elements in the same order."""
    from xdsl.dialects.builtin import FunctionType, MemRefType
    from xdsl.rewriter import InsertPoint, Rewriter

    from pallas_ir.dialects import tensor_access as ta

    forward = forward_of(module)
    block = forward.body.block
    kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, ta.KernelOp)}
    views: dict[object, set[MemRefType]] = {}
    for launch in block.ops:
        if not isinstance(launch, ta.LaunchOp):
            continue
        kernel = kernels.get(launch.callee.string_value())
        if kernel is None:
            continue
        for arg, operand in zip(kernel.body.block.args, launch.args):
            shapes = {
                op.result.type
                for op in kernel.body.block.ops
                if isinstance(op, ta.ReshapeOp) and op.source is arg
            }
            views.setdefault(operand, set()).update(shapes)  # type: ignore[arg-type]
    for value, shapes in views.items():
        t = value.type  # type: ignore[attr-defined]
        if len(shapes) != 1 or not isinstance(t, MemRefType) or t.get_num_dims() != 1:
            continue
        (nd,) = shapes
        if not isinstance(value, BlockArgument) and not isinstance(
            value.owner,
            ta.AllocOp,  # type: ignore[attr-defined]
        ):
            continue
        uses = [u for u in value.uses if not isinstance(u.operation, func.ReturnOp)]  # type: ignore[attr-defined]
        if isinstance(value, BlockArgument):
            new_arg = block.insert_arg(nd, value.index)
            new_arg.name_hint = value.name_hint
            value.replace_all_uses_with(new_arg)
            block.erase_arg(value)
            value = new_arg
            where = InsertPoint.at_start(block)
        else:
            alloc = value.owner  # type: ignore[attr-defined]
            new_alloc = ta.AllocOp(nd)
            new_alloc.result.name_hint = alloc.result.name_hint
            Rewriter.insert_op(new_alloc, InsertPoint.before(alloc))
            alloc.result.replace_all_uses_with(new_alloc.result)
            Rewriter.erase_op(alloc)
            value = new_alloc.result
            where = InsertPoint.after(new_alloc)
        flat = ta.ReshapeOp(value, t)  # type: ignore[arg-type]
        flat.result.name_hint = f"{value.name_hint}_flat" if value.name_hint else None
        Rewriter.insert_op(flat, where)
        for use in uses:
            use.operation.operands[use.index] = flat.result
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    forward.function_type = FunctionType.from_lists(
        [a.type for a in block.args], [v.type for v in ret.arguments]
    )


_DECLARED = re.compile(r"\b(\w+): (?:f16|bf16|f32|f64|i1|i8|i16|i32|i64)\[([\d, ]+)\]")
"""`x: f32[64, 256]`: how the pass tests' comments give a buffer's torch shape."""


def with_single_launch(text: str) -> str | None:
    """A module of one `ta.kernel` (a pass test's input) plus a @forward that launches
    it: readable buffers in, written buffers out (outputs start as allocations). An
    argument (not an output) whose torch shape the text declares in a comment
    (`x: f32[64, 256]`, the same number of elements) is held in that shape on the host
    and passed to the kernel as a flat view, as the frontend does; the rest keep the
    kernel's types. None if the text is not exactly one valid kernel."""
    from xdsl.dialects.builtin import MemRefType

    import pallas_ir
    from pallas_ir.dialects import tensor_access as ta
    from pallas_ir.dialects.common import WRITABLE_ROLES, ArgRole

    try:
        module = pallas_ir.parse(text)
        pallas_ir.verify(module)
    except pallas_ir.IRError:
        return None
    kernels = [op for op in module.ops if isinstance(op, ta.KernelOp)]
    if len(kernels) != 1 or any(not isinstance(op, ta.KernelOp) for op in module.ops):
        return None
    (kernel,) = kernels
    comments = "\n".join(ln for ln in text.splitlines() if ln.lstrip().startswith("//"))
    declared: dict[str, list[int]] = {}
    for name, dims in _DECLARED.findall(comments):
        declared.setdefault(name, [int(d) for d in dims.split(",")])
    params, views, allocs, launch, results = [], [], [], [], []
    for arg in kernel.body.block.args:
        t = arg.type
        assert isinstance(t, MemRefType)
        name = f"%a{arg.index}"
        shape = declared.get(arg.name_hint or "")
        returned: tuple[str, MemRefType] = (name, t)
        if kernel.role_of(arg) == ArgRole.OUT:
            allocs.append(f"  {name} = ta.alloc : {t}")
        elif (
            shape is not None
            and shape != list(t.get_shape())
            and math.prod(shape) == t.element_count()
        ):
            held = MemRefType(t.element_type, shape)
            params.append(f"{name}_held: {held}")
            views.append(f"  {name} = ta.reshape {name}_held : {held} to {t}")
            returned = (f"{name}_held", held)
        else:
            params.append(f"{name}: {t}")
        launch.append((name, t))
        if kernel.role_of(arg) in WRITABLE_ROLES:
            results.append(returned)
    args = ", ".join(n for n, _ in launch)
    types = ", ".join(str(t) for _, t in launch)
    out_types = ", ".join(str(t) for _, t in results)
    return (
        text
        + f"\nfunc.func @forward({', '.join(params)}) -> ({out_types}) {{\n"
        + "\n".join(views + allocs)
        + f"\n  ta.launch @{kernel.sym_name.data}({args}) : {types}\n"
        + f"  func.return {', '.join(n for n, _ in results)} : {out_types}\n}}\n"
    )


def pass_test_programs(root: Path) -> list[tuple[str, str]]:
    """Every single-kernel chunk of the `.mlir` files under `root` (the pass tests'
    inputs), as `(file#chunk, program)` with a @forward from `with_single_launch`."""
    cases = []
    for path in sorted(root.rglob("*.mlir")):
        chunks = re.split(r"^// -----\s*$", path.read_text(), flags=re.MULTILINE)
        for k, chunk in enumerate(chunks):
            if (text := with_single_launch(chunk)) is not None:
                cases.append((f"{path.relative_to(root)}#{k}", text))
    return cases


def lower_on_host_storage(module: ModuleOp, chip: str = "v5e") -> ModuleOp:
    """The default pipeline, with the host holding each buffer in the N-D shape its
    kernel views it as once the ta passes have made the views (as the frontend does:
    see `hold_storage_on_host`). Rewrites `module` in place and returns it."""
    import pallas_ir
    from pallas_ir.registry import TA_PASSES, lowering_pipeline

    pallas_ir.run_passes(module, TA_PASSES)
    hold_storage_on_host(module)
    pallas_ir.run_passes(module, lowering_pipeline(chip))
    return module
