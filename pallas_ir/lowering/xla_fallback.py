"""The tiler's fallback: accesses (and kernels) no Pallas idiom covers run as XLA.

`tile` calls these when it cannot tile an access: an index that is not a loop dim plus a
constant after the ta passes (overlapping, negative or `floordiv` strides), an index
computed from data that indirect-load-to-scalar-prefetch left alone (element-wise or
lane gathers, wrapped indices), a gather along a reduction dim, or a store that would
write part of a block. Nothing is mis-tiled and nothing is refused; the part no Pallas
idiom covers becomes its own `ta.kernel {target = "xla"}`, which tl-to-pallas calls with
`pallas.xla_call` and emit-python writes as a vectorized jnp function (an XLA gather or
scatter on TPU):

- a load: a new loop, before the kernel's, computes the value the load reads at every
  point of the loop dims it depends on (its index computation included) into a fresh
  buffer; the kernel then reads that buffer at those dims, a plain tiled access;
- a store: the kernel stores into a fresh buffer at the store's loop dims; a new loop
  after the kernel's copies it to the store's real place;
- a kernel with 64-bit data (TPU kernels have none) runs wholly on XLA.

The new loop goes into the same kernel, which `split_kernel` then cuts into one kernel
per loop with the roles each needs, so the buffer the parts share is allocated on the
host (`ta.alloc`) before every launch. The cost model counts an XLA kernel as a full
read and write of what it touches.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects.common import ArgRole
from pallas_ir.passes.split_kernel_loops import split_kernel


def _loop_of(op: Operation) -> ta.LoopOp | None:
    parent = op.parent_op()
    return parent if isinstance(parent, ta.LoopOp) else None


def _chain(value_op: Operation, loop: ta.LoopOp) -> list[Operation] | None:
    """The ops of the loop body `value_op` depends on (itself included), in program
    order; None if one is not a load or a pure scalar op (a reduction, say)."""
    body = loop.body.block
    seen: set[Operation] = set()
    pending = [value_op]
    while pending:
        op = pending.pop()
        if op in seen:
            continue
        if isinstance(op, ta.ReduceOp | ta.StoreOp) or op.regions:
            return None
        seen.add(op)
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner.parent_block() is body:
                pending.append(owner)
    return [op for op in body.ops if op in seen]


def _used_loop_dims(ops: list[Operation], loop: ta.LoopOp) -> list[int]:
    """The loop dims the ops depend on: map dims of accesses, and loop variables used
    as values."""
    ivs = loop.body.block.args
    used: set[int] = set()
    for op in ops:
        if isinstance(op, ta.LoadOp | ta.StoreOp):
            for p in op.map.data.used_dims():
                used.add(op.dims[p].index)  # type: ignore[attr-defined]
            operands = [op.value] if isinstance(op, ta.StoreOp) else []
            operands += list(op.symbols)
        else:
            operands = list(op.operands)
        used |= {v.index for v in operands if v in ivs}  # type: ignore[attr-defined]
    return sorted(used)


def _remapped(
    op: ta.LoadOp | ta.StoreOp, position: dict[int, int], n_dims: int
) -> AffineMapAttr:
    """The access's map over the new loop's dims (`position`: old loop dim → new)."""
    replacements: list[AffineExpr] = []
    for d in op.dims:
        l = d.index  # type: ignore[attr-defined]
        replacements.append(
            AffineDimExpr(position[l]) if l in position else AffineConstantExpr(0)
        )
    m = op.map.data
    symbols = [AffineExpr.symbol(k) for k in range(m.num_symbols)]
    results = [e.replace_dims_and_symbols(replacements, symbols) for e in m.results]
    return AffineMapAttr(AffineMap(n_dims, m.num_symbols, tuple(results)))


def _identity_on(dims: list[int], n_dims: int) -> AffineMapAttr:
    """`(d0, ..., dn) -> (d_dims[0], ...)`, or `-> (0)` when no dim is used."""
    results: list[AffineExpr] = [AffineDimExpr(d) for d in dims] or [
        AffineConstantExpr(0)
    ]
    return AffineMapAttr(AffineMap(n_dims, 0, tuple(results)))


def _scratch_type(loop: ta.LoopOp, dims: list[int], element: Attribute) -> MemRefType:
    extents = list(loop.extents)
    return MemRefType(element, [extents[d] for d in dims] or [1])


def _add_scratch(module: ModuleOp, kernel: ta.KernelOp, t: MemRefType) -> BlockArgument:
    """A new last kernel argument (`inout`: one loop writes it, another reads it), with a
    fresh `ta.alloc` passed to it at every launch."""
    block = kernel.body.block
    arg = block.insert_arg(t, len(block.args))
    arg.name_hint = "xla"
    kernel.roles = ArrayAttr([*kernel.roles.data, StringAttr(ArgRole.INOUT.value)])
    for launch in [
        o
        for o in module.walk()
        if isinstance(o, ta.LaunchOp) and o.callee.string_value() == kernel.sym_name.data
    ]:
        alloc = ta.AllocOp(t)
        alloc.result.name_hint = "xla"
        Rewriter.insert_op(alloc, InsertPoint.before(launch))
        new = ta.LaunchOp(kernel.sym_name.data, [*launch.args, alloc.result])
        new.location = launch.location
        Rewriter.replace_op(launch, new)
    return arg


def _written(loop: ta.LoopOp) -> set[SSAValue]:
    return {ta.root_buffer(s.buffer) for s in loop.walk() if isinstance(s, ta.StoreOp)}


def _new_loop(extents: list[int]) -> ta.LoopOp:
    loop = ta.LoopOp(extents or [1])
    for k, iv in enumerate(loop.body.block.args):
        iv.name_hint = f"x{k}"
    return loop


def _clone_into(
    ops: list[Operation], loop: ta.LoopOp, new: ta.LoopOp, dims: list[int]
) -> dict[SSAValue, SSAValue]:
    """Clone `ops` (a chain of the old loop) into `new`, whose dim k is old dim dims[k]."""
    position = {l: k for k, l in enumerate(dims)}
    mapping: dict[SSAValue, SSAValue] = {}
    new_ivs = new.body.block.args
    for l, k in position.items():
        mapping[loop.body.block.args[l]] = new_ivs[k]
    for op in ops:
        if isinstance(op, ta.LoadOp):
            clone: Operation = ta.LoadOp(
                op.buffer,
                _remapped(op, position, len(new_ivs)),
                list(new_ivs),
                [mapping[s] for s in op.symbols],
            )
            clone.results[0].name_hint = op.result.name_hint
            mapping[op.result] = clone.results[0]
        else:  # every loop variable it uses is a dim of the new loop
            clone = op.clone(value_mapper=mapping)
            for old, nv in zip(op.results, clone.results):
                nv.name_hint = old.name_hint
                mapping[old] = nv
        clone.location = op.location
        new.body.block.add_op(clone)
    return mapping


def _erase_dead(ops: list[Operation]) -> None:
    for op in reversed(ops):
        if op.parent is not None and all(not r.uses for r in op.results):
            Rewriter.erase_op(op)


def _split(module: ModuleOp, kernel: ta.KernelOp, xla_part: int) -> ta.KernelOp:
    parts = split_kernel(module, kernel)
    Rewriter.erase_op(kernel)
    parts[xla_part].attributes["target"] = ta.XLA_TARGET
    parts[xla_part].attributes["xla_access"] = StringAttr(
        "gather" if xla_part == 0 else "scatter"
    )
    return parts[1 - xla_part]


def outline_load(
    module: ModuleOp, kernel: ta.KernelOp, load: ta.LoadOp
) -> ta.KernelOp | None:
    """Move a load (and the index computation it depends on) into an XLA kernel launched
    before `kernel`. Returns the kernel that is left to tile, or None (and changes
    nothing) when the load cannot be moved: it depends on a reduction, or reads a
    buffer the kernel writes."""
    loop = _loop_of(load)
    if loop is None:
        return None
    # A load whose value only indexes a later load (a double indirection) moves with that
    # load: one XLA gather, not two chained ones.
    for later in loop.body.block.ops:
        if isinstance(later, ta.LoadOp) and later is not load and later.symbols:
            later_chain = _chain(later, loop)
            if later_chain is not None and load in later_chain:
                load = later
    chain = _chain(load, loop)
    if chain is None:
        return None
    written = _written(loop)
    if any(
        ta.root_buffer(o.buffer) in written for o in chain if isinstance(o, ta.LoadOp)
    ):
        return None
    dims = _used_loop_dims(chain, loop)
    t = _scratch_type(loop, dims, load.result.type)
    scratch = _add_scratch(module, kernel, t)
    gather = _new_loop([list(loop.extents)[d] for d in dims])
    mapping = _clone_into(chain, loop, gather, dims)
    n = len(gather.body.block.args)
    store = ta.StoreOp(
        mapping[load.result], scratch, _identity_on(list(range(len(dims))), n),
        list(gather.body.block.args),
    )  # fmt: skip
    store.location = load.location
    gather.body.block.add_op(store)
    Rewriter.insert_op(gather, InsertPoint.before(loop))
    read = ta.LoadOp(
        scratch, _identity_on(dims, len(loop.body.block.args)), list(loop.body.block.args)
    )
    read.location = load.location
    read.result.name_hint = load.result.name_hint
    Rewriter.replace_op(load, read)
    _erase_dead(chain[:-1])
    return _split(module, kernel, 0)


def outline_store(
    module: ModuleOp, kernel: ta.KernelOp, store: ta.StoreOp
) -> ta.KernelOp | None:
    """Make a store an XLA scatter launched after `kernel`: the kernel stores into a
    fresh buffer at the store's loop dims. None (nothing changed) when the store's
    index depends on data or the kernel also reads the buffer it stores to."""
    loop = _loop_of(store)
    if loop is None or store.symbols:
        return None
    target = ta.root_buffer(store.buffer)
    reads = {ta.root_buffer(o.buffer) for o in loop.walk() if isinstance(o, ta.LoadOp)}
    if target in reads:
        return None
    dims = _used_loop_dims([store], loop)
    value = store.value
    t = _scratch_type(loop, dims, value.type)
    scratch = _add_scratch(module, kernel, t)
    n_old = len(loop.body.block.args)
    local = ta.StoreOp(
        value, scratch, _identity_on(dims, n_old), list(loop.body.block.args)
    )
    local.location = store.location
    scatter = _new_loop([list(loop.extents)[d] for d in dims])
    ivs = list(scatter.body.block.args)
    copy = ta.LoadOp(scratch, _identity_on(list(range(len(dims))), len(ivs)), ivs)
    copy.result.name_hint = value.name_hint
    position = {l: k for k, l in enumerate(dims)}
    put = ta.StoreOp(copy.result, store.buffer, _remapped(store, position, len(ivs)), ivs)
    for o in (copy, put):
        o.location = store.location
        scatter.body.block.add_op(o)
    Rewriter.insert_op(scatter, InsertPoint.after(loop))
    Rewriter.replace_op(store, local)
    return _split(module, kernel, 1)


def run_on_xla(kernel: ta.KernelOp) -> None:
    """Hand the whole kernel to XLA."""
    kernel.attributes["target"] = ta.XLA_TARGET
