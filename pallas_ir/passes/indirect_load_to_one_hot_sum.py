"""indirect-load-to-one-hot-sum: one element picked from each row by a data-dependent
column (cross-entropy's `x[r, y[r]]`) is the row's sum of the element where the column
is the index and 0 elsewhere, when another kernel reads those rows whole anyway.

A gather of single elements moves fewer than 128 lanes, which no block or row DMA
moves without its neighbours, so `xla-outline` gives it to XLA: one more launch and a
pass through HBM. Where another kernel already loops over the same rows (the row max
and sum of exponentials of a cross-entropy), the pick becomes a loop of that shape,
which `fuse-siblings` fuses with it; the picked value is then computed from data
already in VMEM, and the rows are read once.

```mlir
ta.loop [1] reduce [4096] (%l0, %l1) {
  %y = ta.load %labels[affine_map<(d0, d1) -> (d1)>](%l0, %l1) : memref<4096xi32>
  %c = arith.index_cast %y : i32 to index
  %p = ta.load %x[affine_map<(d0, d1)[s0] -> (d1 * 1024 + s0)>](%l0, %l1)[%c] : memref<4194304xf32>
  ...
// becomes, in a new kernel launched just before, storing %picked:
ta.loop [4096] reduce [1024] (%r, %j) {
  %y = ta.load %labels[affine_map<(d0, d1) -> (d0)>](%r, %j) : memref<4096xi32>
  %e = ta.load %x[affine_map<(d0, d1) -> (d0 * 1024 + d1)>](%r, %j) : memref<4194304xf32>
  %j32 = arith.index_cast %j : index to i32
  %hit = arith.cmpi eq, %j32, %y : i32
  %zero = arith.constant 0.0 : f32
  %one = arith.select %hit, %e, %zero : f32
  %p = ta.reduce <sum> %one : f32
  ta.store %p, %picked[affine_map<(d0) -> (d0)>](%r) : memref<4096xf32>
}
// and the gather reads %picked[d1]
```

The meaning is kept when (each checked; a remark at the load says which fails):
- the load has one symbol, with coefficient 1 in a linear flat index whose loop-dim
  coefficients are multiples of the smallest of them above 1, the row length `C`, as
  is its constant: the index is a row start plus the symbol, and the reference gives the
  symbol the values [0, C) (a larger one is outside the tensor's dim, which the
  frontend's index checks raise for); the whole row lies in the buffer;
- the symbol is an integer cast of a value computed in the loop from loads without
  symbols and pure arithmetic, which the new loop computes again;
- the kernel is launched once, and another launch loops over the new loop's extents and
  reads the same host buffer at the same places, with no launch between the two writing
  it (else the rows would be read for one element each, `C` times the bytes).

The new loop's parallel dims are the loop dims the row start or the symbol's loads
use (a unit one is 0). The sum is exact: every term but one is 0 (a picked -0.0 comes
back as +0.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from pallas_ir.affine_analysis import linearize
from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects.common import WRITABLE_ROLES, ArgRole, find_forward
from pallas_ir.dialects.enums import ReductionKind
from pallas_ir.dialects.tensor_access import (
    AllocOp,
    KernelOp,
    LaunchOp,
    LoadOp,
    LoopOp,
    ReduceOp,
    StoreOp,
    dims_of,
    launches_by_kernel,
    root_buffer,
)
from pallas_ir.passes.indirect_access import Rejected
from pallas_ir.passes.launch_graph import access_key, host_root, remapped, the_loop
from pallas_ir.passes.options import CheckedOptionsPass
from pallas_ir.passes.report import value_name


@dataclass(frozen=True)
class _Pick:
    """A gather of single elements, read as a one-hot sum over rows."""

    load: LoadOp
    row_start: AffineExpr
    """The flat index of the row's first element, in the loop's variables."""
    row_length: int
    index: SSAValue
    """The integer the symbol is cast from."""
    slice: list[Operation]
    """The loop-body ops that compute `index`, in order."""
    dims: list[int]
    """The loop variables the new loop runs over, as its parallel dims."""


def _pick(load: LoadOp, loop: LoopOp) -> _Pick:
    """What the rewrite of `load` needs, or `Rejected` with why not."""
    if len(load.symbols) != 1 or not isinstance(load.buffer, BlockArgument):
        raise Rejected(
            "not one symbol into a kernel argument", "not one symbol into an argument"
        )
    element = load.result.type
    if not (
        isinstance(element, AnyFloat)
        or (isinstance(element, IntegerType) and element.width.data > 1)
    ):
        raise Rejected(f"{element} elements are not summed", "elements not summed")
    if len(load.map.data.results) != 1:
        raise Rejected("the gathered buffer is not flat", "not flat")
    (expr,) = load.map.data.results
    form = linearize(expr)
    if form is None or form.symbols != {0: 1}:
        raise Rejected(
            "the flat index is not a linear row start plus the symbol",
            "not row plus symbol",
        )
    body = loop.body.block
    at = [
        AffineExpr.dimension(d.index)
        if loop.extents[d.index] > 1
        else AffineExpr.constant(0)  # type: ignore[attr-defined]
        for d in load.dims
    ]
    start = expr.replace_dims_and_symbols(at, [AffineExpr.constant(0)])
    start_form = linearize(start)
    assert start_form is not None
    steps = [abs(c) for c in start_form.dims.values() if c != 0]
    wide = [c for c in steps if c > 1]
    if not wide:
        raise Rejected("the symbol indexes no row of a wider array", "no row")
    length = min(wide)
    if any(c % length for c in steps) or start_form.constant % length:
        raise Rejected(
            f"the row starts are not multiples of the row length {length}", "rows overlap"
        )
    top = start_form.constant + sum(
        c * (loop.extents[p] - 1) for p, c in start_form.dims.items() if c > 0
    )
    low = start_form.constant + sum(
        c * (loop.extents[p] - 1) for p, c in start_form.dims.items() if c < 0
    )
    size = load.buffer.type.get_shape()[0]  # type: ignore[attr-defined]
    if low < 0 or top + length > size:
        raise Rejected("a row runs past the buffer", "row out of the buffer")
    symbol = load.symbols[0]
    cast = symbol.owner
    if not isinstance(cast, arith.IndexCastOp) or not isinstance(
        cast.input.type, IntegerType
    ):
        raise Rejected("the symbol is not cast from an integer", "symbol not an integer")
    index = cast.input
    slice_ops: list[Operation] = []
    used = {p for p, c in start_form.dims.items() if c != 0}
    seen: set[SSAValue] = set()
    pending = [index]
    while pending:
        v = pending.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            if v.block is not body:
                raise Rejected(
                    "the index uses a value from outside the loop", "outside value"
                )
            used.add(v.index)
            continue
        o = v.owner
        assert isinstance(o, Operation)
        if isinstance(o, LoadOp):
            if o.symbols or not isinstance(o.buffer, BlockArgument):
                raise Rejected("the index is loaded indirectly", "index load indirect")
            for e in o.map.data.results:
                used |= {o.dims[q].index for q in dims_of(e)}  # type: ignore[attr-defined]
            slice_ops.append(o)
            continue
        elif o.dialect_name() not in ("arith", "math") or o.regions:
            raise Rejected(f"the index is computed by '{o.name}'", "index not arithmetic")
        elif isinstance(o, ReduceOp):
            raise Rejected("the index is a reduction", "index reduced")
        slice_ops.append(o)
        pending += list(o.operands)
    slice_ops.sort(key=lambda o: body.get_operation_index(o))
    dims = sorted(p for p in used if loop.extents[p] > 1)
    return _Pick(load, start, length, index, slice_ops, dims)


def _load(
    buffer: SSAValue, results: list[AffineExpr], variables: list[BlockArgument]
) -> LoadOp:
    """A load at `results`, expressions in the positions of `variables`, with the
    variables they use as its dims."""
    used = sorted(set().union(*(dims_of(r) for r in results)))
    renumbered = [
        AffineExpr.dimension(used.index(q)) if q in used else AffineExpr.constant(0)
        for q in range(len(variables))
    ]
    map_ = AffineMap(
        len(used), 0, tuple(r.replace_dims_and_symbols(renumbered, []) for r in results)
    )
    return LoadOp(buffer, AffineMapAttr(map_), [variables[q] for q in used], [])


def _fresh(name: str, taken: dict[str, KernelOp]) -> str:
    while name in taken:
        name += "_"
    return name


def _row_major(extents: list[int]) -> AffineExpr:
    flat: AffineExpr = AffineExpr.constant(0)
    for k, n in enumerate(extents):
        flat = flat * n + AffineExpr.dimension(k)
    return flat


def _one_hot_kernel(
    name: str, pick: _Pick, loop: LoopOp, kernel: KernelOp
) -> tuple[KernelOp, list[BlockArgument]]:
    """The kernel that stores the picked elements, and the arguments of `kernel` it
    reads, in order (its last argument is the result)."""
    reads: list[BlockArgument] = [pick.load.buffer]  # type: ignore[list-item]
    for o in pick.slice:
        if isinstance(o, LoadOp) and o.buffer not in reads:
            reads.append(o.buffer)  # type: ignore[arg-type]
    extents = [loop.extents[p] for p in pick.dims]
    element = pick.load.result.type
    result = MemRefType(element, [prod(extents)])
    block = Block(arg_types=[*(a.type for a in reads), result])
    for old, new in zip(reads, block.args):
        new.name_hint = old.name_hint
    block.args[-1].name_hint = "picked"
    new_loop = LoopOp(extents, [pick.row_length])
    new_loop.location = loop.location
    variables = list(new_loop.body.block.args)
    for v, p in zip(variables, pick.dims):
        v.name_hint = loop.body.block.args[p].name_hint
    variables[-1].name_hint = "column"
    # The original loop's variables in the new loop's; one it drops has extent 1.
    as_new = [
        AffineExpr.dimension(pick.dims.index(p))
        if p in pick.dims
        else AffineExpr.constant(0)
        for p in range(len(loop.extents))
    ]
    mapping: dict[SSAValue, SSAValue] = dict(zip(reads, block.args))
    for p, v in enumerate(loop.body.block.args):
        if p in pick.dims:
            mapping[v] = variables[pick.dims.index(p)]
    bounds = [(0, n - 1) for n in new_loop.extents]
    ops: list[Operation] = []
    for o in pick.slice:
        if isinstance(o, LoadOp):
            at = [as_new[d.index] for d in o.dims]  # type: ignore[attr-defined]
            copy: Operation = remapped(o, at, variables, bounds, mapping)
        else:
            copy = o.clone(value_mapper=mapping)
        copy.location = o.location
        ops.append(copy)
        for r_old, r_new in zip(o.results, copy.results):
            mapping[r_old] = r_new
    column = variables[-1]
    start = pick.row_start.replace_dims_and_symbols(as_new, [])
    picked = _load(
        mapping[pick.load.buffer],
        [start + AffineExpr.dimension(len(pick.dims))],
        variables,
    )
    picked.result.name_hint = pick.load.result.name_hint
    index = mapping[pick.index]
    column_cast = arith.IndexCastOp(column, index.type)
    hit = arith.CmpiOp(column_cast, index, "eq")
    zero = arith.ConstantOp(
        FloatAttr(0.0, element)
        if isinstance(element, AnyFloat)
        else IntegerAttr(0, element)  # type: ignore[arg-type]
    )
    chosen = arith.SelectOp(hit, picked.result, zero.result)
    total = ReduceOp(ReductionKind.SUM, chosen.result)
    out_map = AffineMap(len(pick.dims), 0, (_row_major(extents),))
    store = StoreOp(
        total.result, block.args[-1], AffineMapAttr(out_map), variables[:-1], []
    )
    for o in (picked, column_cast, hit, zero, chosen, total, store):
        o.location = pick.load.location
    for o in (*ops, picked, column_cast, hit, zero, chosen, total, store):
        new_loop.body.block.add_op(o)
    block.add_op(new_loop)
    roles = [kernel.role_of(a) for a in reads] + [ArgRole.OUT]
    new = KernelOp(name, block.arg_types, roles, Region(block))
    new.location = kernel.location
    return new, reads


def _reads_rows_whole(
    forward_ops: list[Operation],
    launch: LaunchOp,
    candidate: KernelOp,
    host_args: list[SSAValue],
    kernels: dict[str, KernelOp],
) -> bool:
    """Whether an earlier launch loops over the candidate's extents and loads its first
    host buffer where the candidate does, with no launch between writing that buffer."""
    new_loop = the_loop(candidate)
    assert new_loop is not None
    picked = next(
        o
        for o in new_loop.walk()
        if isinstance(o, LoadOp) and o.buffer is candidate.body.block.args[0]
    )
    key, host = access_key(picked), host_root(host_args[0])
    writers_after = False
    for o in reversed(forward_ops[: forward_ops.index(launch)]):
        if not isinstance(o, LaunchOp):
            continue
        other = kernels.get(o.callee.string_value())
        if other is None:
            return False
        loop = the_loop(other)
        reads = [
            a
            for a in other.body.block.args
            if host_root(o.args[a.index]) is host
            and o.args[a.index].type == host_args[0].type
        ]
        if loop is not None and tuple(loop.extents) == tuple(new_loop.extents):
            for load in loop.walk():
                if (
                    isinstance(load, LoadOp)
                    and root_buffer(load.buffer) in reads
                    and access_key(load) == key
                ):
                    return not writers_after
        if any(
            other.role_of(a) in WRITABLE_ROLES and host_root(o.args[a.index]) is host
            for a in other.body.block.args
        ):
            writers_after = True
    return False


@dataclass(frozen=True)
class IndirectLoadToOneHotSumPass(CheckedOptionsPass):
    """Read each single-element gather whose rows another kernel reads whole as a
    one-hot sum over the row, in a kernel of its own that `fuse-siblings` then fuses
    with that reader (see the module docstring for when). Each rewrite gets a remark and
    counts under `gathers as one-hot sums` in `--pass-statistics`; a gather left as it
    was gets a remark saying why.

    Options: none.
    """

    name = "indirect-load-to-one-hot-sum"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forward = find_forward(op)
        if forward is None:
            return
        kernels = {k.sym_name.data: k for k in op.ops if isinstance(k, KernelOp)}
        launches = launches_by_kernel(op)
        for kernel in list(kernels.values()):
            loop = the_loop(kernel)
            its = launches.get(kernel.sym_name.data, [])
            if loop is None or kernel.on_xla:
                continue
            for load in [o for o in loop.body.block.ops if isinstance(o, LoadOp)]:
                if not load.symbols:
                    continue
                if len(its) != 1:
                    emit_remark(
                        load,
                        f"{self.name}: not rewritten: the kernel is launched {len(its)} times",
                    )
                    continue
                try:
                    pick = _pick(load, loop)
                except Rejected as why:
                    emit_remark(load, f"{self.name}: not rewritten: {why.reason}")
                    count(self.name, f"not rewritten: {why.key}")
                    continue
                self.rewrite(op, forward, kernel, loop, pick, its[0], kernels)

    def rewrite(
        self,
        module: ModuleOp,
        forward: func.FuncOp,
        kernel: KernelOp,
        loop: LoopOp,
        pick: _Pick,
        launch: LaunchOp,
        kernels: dict[str, KernelOp],
    ) -> None:
        """Put `pick`'s one-hot kernel before `launch` and read its result in `kernel`,
        when an earlier launch reads the rows whole; else a remark says why not."""
        name, renamed = (
            _fresh(f"{kernel.sym_name.data}_{suffix}", kernels)
            for suffix in ("pick", "picked")
        )
        candidate, reads = _one_hot_kernel(name, pick, loop, kernel)
        host_args = [launch.args[a.index] for a in reads]
        ops = list(forward.body.block.ops)
        if not _reads_rows_whole(ops, launch, candidate, host_args, kernels):
            emit_remark(
                pick.load,
                f"{self.name}: not rewritten: no earlier kernel reads these rows whole, "
                f"and a one-hot sum would read {pick.row_length} elements for each one "
                "picked",
            )
            count(self.name, "not rewritten: rows not read whole elsewhere")
            return
        Rewriter.insert_op(candidate, InsertPoint.before(kernel))
        kernels[name] = candidate
        result_type = candidate.body.block.args[-1].type
        alloc = AllocOp(result_type)
        alloc.result.name_hint = "picked"
        Rewriter.insert_op(alloc, InsertPoint.before(launch))
        new_launch = LaunchOp(name, [*host_args, alloc.result])
        new_launch.location = launch.location
        Rewriter.insert_op(new_launch, InsertPoint.before(launch))
        # The kernel reads the picked elements from a new argument.
        block = kernel.body.block
        arg = block.insert_arg(result_type, len(block.args))
        arg.name_hint = "picked"
        kernel.set_roles([*(r.data for r in kernel.roles.data), ArgRole.IN])
        at = [AffineExpr.dimension(p) for p in pick.dims]
        extents = [loop.extents[p] for p in pick.dims]
        flat = _row_major(extents).replace_dims_and_symbols(at, [])
        read = _load(arg, [flat], list(loop.body.block.args))
        read.location = pick.load.location
        read.result.name_hint = pick.load.result.name_hint
        cast = pick.load.symbols[0].owner
        Rewriter.replace_op(pick.load, read)
        for o in [cast, *reversed(pick.slice)]:
            if isinstance(o, Operation) and all(not r.uses for r in o.results):
                Rewriter.erase_op(o)
        # The kernel may no longer read the gathered buffer at all.
        kept = [a for a in block.args if a.uses or kernel.role_of(a) != ArgRole.IN]
        roles = [kernel.role_of(a) for a in kept]
        args = [[*launch.args, alloc.result][a.index] for a in kept]
        for a in reversed(block.args):
            if a not in kept:
                block.erase_arg(a)
        kernel.set_roles(roles)
        # A kernel of a new name: it computes from other arguments.
        del kernels[kernel.sym_name.data]
        kernel.sym_name = StringAttr(renamed)
        kernels[renamed] = kernel
        replaced = LaunchOp(renamed, args)
        replaced.location = launch.location
        Rewriter.replace_op(launch, replaced)
        emit_remark(
            read,
            f"{self.name}: the element picked from each row of "
            f"{value_name(pick.load.buffer)} is a one-hot sum over the row, in @{name}",
        )
        count(self.name, "gathers as one-hot sums")
