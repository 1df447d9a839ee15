"""Loop fission at kernel granularity: `split_kernel` makes one `ta.kernel` per
`ta.loop` of a kernel, each taking only the buffers its loop touches with the role that
loop needs, and launches them in order. Shared by split-kernel-loops (every kernel) and
xla-outline (the part of a kernel that runs on XLA). See split-kernel-loops for the
roles and why fission keeps the meaning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.affine_analysis import LinearExpr, linearize
from pallas_ir.dialects.common import ArgRole
from pallas_ir.dialects.tensor_access import (
    KernelOp,
    LaunchOp,
    LoadOp,
    LoopOp,
    StoreOp,
    kernel_launches,
    root_buffer,
)


def _outside_uses(loop: LoopOp) -> set[SSAValue]:
    """Values the loop uses that are defined outside it (in the kernel body)."""
    inner = {loop, *loop.walk()}
    used: set[SSAValue] = set()
    for op in loop.walk():
        for operand in op.operands:
            owner = operand.owner
            outer_op = isinstance(owner, Operation) and owner not in inner
            outer_arg = isinstance(owner, Block) and owner.parent_op() not in inner
            if outer_op or outer_arg:
                used.add(operand)
    return used


def _writes_everything(store: StoreOp, loop: LoopOp) -> bool:
    """Whether the store writes every element of its buffer: its flat offset is
    `sum(c_k * d_k)` with the strides of a row-major numbering of the loop's dims."""
    shape = store.buffer.type.get_shape()  # type: ignore[attr-defined]
    strides = [math.prod(shape[b + 1 :]) for b in range(len(shape))]
    flat = LinearExpr()
    for b, e in enumerate(store.map.data.results):
        lin = linearize(e)
        if lin is None or lin.symbols:
            return False
        flat = flat + lin.scaled(strides[b])
    extents = list(loop.extents)
    terms: dict[int, tuple[int, int]] = {}
    for p, c in flat.dims.items():
        var = store.dims[p]
        if not isinstance(var, BlockArgument) or var.owner is not loop.body.block:
            return False
        if var.index in terms:
            return False
        terms[var.index] = (c, extents[var.index])
    if flat.constant != 0:
        return False
    expected = 1
    for c, e in sorted(t for t in terms.values() if t[1] > 1):
        if c != expected:
            return False
        expected *= e
    return expected == math.prod(shape)


def _arg_index(value: SSAValue) -> int:
    root = root_buffer(value)
    assert isinstance(root, BlockArgument)  # the ta verifier requires it
    return root.index


@dataclass(frozen=True)
class _Part:
    kernel: KernelOp
    args: list[int]
    """The original kernel's argument indices this part takes, in order."""


def split_kernel(module: ModuleOp, kernel: KernelOp) -> list[KernelOp]:
    """One kernel per loop of `kernel`, inserted before it, with every launch of it
    replaced by launches of the parts in order; `kernel` itself is left for the caller
    to erase. A kernel with one loop is returned as it is (nothing changes)."""
    loops = [o for o in kernel.body.block.ops if isinstance(o, LoopOp)]
    if len(loops) < 2:
        return [kernel]
    taken = {
        sym.data
        for o in module.ops
        if isinstance(sym := o.properties.get("sym_name"), StringAttr)
    }
    parts = [
        _part(kernel, loop, loops[:k], _unique(f"{kernel.sym_name.data}_{k}", taken))
        for k, loop in enumerate(loops)
    ]
    for part in parts:
        Rewriter.insert_op(part.kernel, InsertPoint.before(kernel))
    for launch in kernel_launches(module, kernel):
        for part in parts:
            new = LaunchOp(part.kernel.sym_name.data, [launch.args[i] for i in part.args])
            new.location = launch.location
            Rewriter.insert_op(new, InsertPoint.before(launch))
        Rewriter.erase_op(launch)
    return [p.kernel for p in parts]


def _part(kernel: KernelOp, loop: LoopOp, earlier: list[LoopOp], name: str) -> _Part:
    def touched(loops: list[LoopOp], kind: type[Operation]) -> set[int]:
        return {
            _arg_index(a.buffer)  # type: ignore[attr-defined]
            for lp in loops
            for a in lp.walk()
            if isinstance(a, kind)
        }

    reads, writes = touched([loop], LoadOp), touched([loop], StoreOp)
    # An accumulating store reads what it combines with.
    reads |= {
        _arg_index(st.buffer)
        for st in loop.walk()
        if isinstance(st, StoreOp) and st.combine is not None
    }
    whole = {
        _arg_index(st.buffer)
        for st in loop.walk()
        if isinstance(st, StoreOp) and _writes_everything(st, loop)
    }
    written_before = touched(earlier, StoreOp)
    block = kernel.body.block
    used = sorted(reads | writes)
    roles: list[ArgRole] = []
    for i in used:
        role = kernel.role_of(block.args[i])
        if i not in writes:
            roles.append(ArgRole.PREFETCH if role == ArgRole.PREFETCH else ArgRole.IN)
        elif i not in reads and (
            i in whole or (role == ArgRole.OUT and i not in written_before)
        ):
            roles.append(ArgRole.OUT)
        else:
            roles.append(ArgRole.INOUT)
    new_block = Block(arg_types=[block.args[i].type for i in used])
    mapping: dict[SSAValue, SSAValue] = {}
    for i, arg in zip(used, new_block.args):
        arg.name_hint = block.args[i].name_hint
        mapping[block.args[i]] = arg
    # The kernel-level ops the loop needs (views of its buffers, constants), in order.
    needed: set[Operation] = set()
    pending = [v.owner for v in _outside_uses(loop) if isinstance(v.owner, Operation)]
    while pending:
        o = pending.pop()
        if o not in needed:
            needed.add(o)
            pending += [v.owner for v in o.operands if isinstance(v.owner, Operation)]
    for o in block.ops:
        if o in needed or o is loop:
            copy = o.clone(value_mapper=mapping)
            for old, new in zip(o.walk(), copy.walk()):
                new.location = old.location  # diagnostics stay located
            new_block.add_op(copy)
    part = KernelOp(name, new_block.arg_types, roles, Region(new_block))
    part.attributes.update(kernel.attributes)
    part.location = kernel.location
    return _Part(part, used)


def _unique(name: str, taken: set[str]) -> str:
    candidate, k = name, 0
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    taken.add(candidate)
    return candidate
