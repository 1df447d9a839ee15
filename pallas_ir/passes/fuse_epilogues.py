"""fuse-epilogues: a kernel that reduces into intermediate buffers, and the first kernel
that reads them where they were written, become one kernel: its loop computes the
reductions, then the reader's body on their results (a matrix product's bias,
activation, residual add and cast; a sum's scaling; a mean's division by a count).

```mlir
ta.kernel @k2(%a: ..., %b: ..., %t: memref<98304xf32> {role = "out"}) {
  ta.loop [256, 384] reduce [512] (%i, %j, %k) {
    ...
    %s = ta.reduce <sum> %p : f32
    ta.store %s, %t[affine_map<(d0, d1) -> (d0 * 384 + d1)>](%i, %j) : memref<98304xf32>
  }
}
ta.kernel @k5(%t: memref<98304xf32> {role = "in"}, %o: memref<98304xbf16> {role = "out"}) {
  ta.loop [256, 384] (%i, %j) {
    %v = ta.load %t[affine_map<(d0, d1) -> (d0 * 384 + d1)>](%i, %j) : memref<98304xf32>
    %c = arith.truncf %v : f32 to bf16
    ta.store %c, %o[affine_map<(d0, d1) -> (d0 * 384 + d1)>](%i, %j) : memref<98304xbf16>
  }
}
```

becomes one `ta.loop [256, 384] reduce [512]` that stores `truncf(%s)` into `%o`, and
`%t` is gone: its bytes are written and read no more. The fused kernel is
`@<reducing>_<reader>`, launched where the reader was, and is visited again (it may
still store a result another kernel reads). The tiler computes the reader's ops on the
parallel dims once the sums are whole (`tl.on_last_step` when it splits the
reduction).

A reader may reduce too, over the same points (the fused loop is the reducing one), or
over more (a layer norm's statistics read by the next matrix product at its row: the
fused loop is the reader's, running the reducing body at `_producer_points`), or over
the points the results were written at (nested: cross-entropy's mean of its rows'
losses, in the second run only: the fused loop reduces over the reader's reduction
dims, then the reducing loop's, each `ta.reduce` over its own, `ta.reduce ... over`). When
later launches read the results too (llama's q, k and v projections of one norm), a
reader over more points computes them again and stores none, and the reducing kernel
stays for the later readers, the last of which fuses it away (`_Pair.recompute`).

The pass runs twice in the pipeline: before raise-attention, and after it with
`attention-raised`, when a reducing kernel over a matrix product's result that is left
is no attention's statistics (a norm of a residual stream) and fuses into the next
product's prologue.

The meaning is kept when (each checked; where a reader exists but one fails, a remark
at the reducing loop says which; `docs/passes.md` lists the remarks):
- the reducing kernel has one loop, with reduction dims; the reader has one loop,
  without reductions over the same parallel extents or runs of dims that multiply to
  them (collapsed first, `collapsed`), or with reductions over the same extents, or
  over more points reducing the same extents;
- the results are `ta.alloc`s the reducing kernel writes once; the reader is the first
  launch that reads any. Results it does not read, or that others read later or
  @forward returns, the fused kernel stores as well; a reader over more points would
  store them at every column, so it computes them again instead, when it reads every
  input of the reducing kernel (no more traffic), and stores none;
- every read of a result is at the point the reducing loop wrote (`access_key`), or,
  for a reader over more points, at one place its row-major store wrote that does not
  move along the reader's reductions (places through `ta.reshape` views compared as
  row-major positions in the argument); no data-dependent index;
- a reader that reduces what it computes from a result does so over fewer than two k
  parts (`tpu_rules.MIN_K_PART`): the tiler would never split it, and a fused
  prologue needs whole rows; and, unless `attention-raised`, it does not follow a
  kernel that reduces a matrix product's result, as an attention's statistics do
  (raise-attention fuses those);
- the reader has no access with a data-dependent index (a gather or scatter keeps its
  kernel, where the indirect-access passes make it row DMAs);
- between the two launches only launches run (no library call), and none writes a
  buffer the reducing kernel reads: its work moves to the reader's launch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase, MemRefType, ModuleOp, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import Rewriter
from xdsl.transforms.common_subexpression_elimination import cse

from pallas_ir.affine_analysis import linearize, row_major_strides, simplify
from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects.common import (
    READABLE_ROLES,
    WRITABLE_ROLES,
    ArgRole,
    ReductionKind,
    find_forward,
)
from pallas_ir.dialects.tensor_access import (
    AllocOp,
    KernelOp,
    LaunchOp,
    LoadOp,
    LoopOp,
    ReduceOp,
    ReshapeOp,
    StoreOp,
    contraction,
    has_partial_reductions,
    root_buffer,
    value_dims,
)
from pallas_ir.interval_bounds import expr_bounds
from pallas_ir.passes.launch_graph import (
    NotCollapsible,
    access_key,
    collapsed,
    host_root,
    host_views,
    launch_counts,
    place,
    remapped,
    replace_pair,
    simplify_maps,
    the_loop,
)
from pallas_ir.passes.options import CheckedOptionsPass
from pallas_ir.tpu_rules import MIN_K_PART


@dataclass(frozen=True)
class _Pair:
    producer: LaunchOp
    reader: LaunchOp
    intermediates: dict[BlockArgument, AllocOp]
    """The reducing kernel's results that the reader reads, by the argument storing
    each."""
    reader_kernel: KernelOp
    """The reader's kernel, over the reducing loop's extents (a detached, collapsed
    copy when its loop nests them more finely)."""
    kept: frozenset[BlockArgument]
    """The results read after the pair: those the reader does not read, and those read
    again after it (by other launches, or as results of @forward). The fused kernel
    stores them, unless it computes them again (`recompute`)."""
    producer_points: list[AffineExpr] | None = None
    """When the reader reduces over more points (a matrix product whose prologue
    normalizes rows by their statistics): each variable of the reducing loop as an
    expression of the reader's, which the fused kernel loops over."""
    recompute: bool = False
    """The results are read again after a reader over more points (a norm's statistics
    read by each of the next matrix products): the fused kernel computes them from the
    inputs it reads anyway and stores none, and the reducing kernel stays for the later
    readers (the last of them fuses it away)."""
    nested: bool = False
    """The reader reduces the results over the points they were written at (a mean of
    per-row losses): the fused loop reduces over the reader's reduction dims and then
    the reducing loop's, each `ta.reduce` over its own (`ta.reduce ... over`)."""


class _NotFused(Exception):
    """Why a reducing kernel and its reader stay apart."""


@dataclass(frozen=True)
class FuseEpiloguesPass(CheckedOptionsPass):
    """Fuse each reducing kernel with the one kernel that reads its result element-wise
    (see the module docstring for when). Each fusion gets a remark naming both kernels
    and counts under `epilogues fused` in `--pass-statistics`; a reducing kernel whose
    reader cannot be fused gets a remark saying why.

    Options: `attention-raised` (default false): raise-attention has run, so a
    reducing kernel over a matrix product's rows that is left is no attention's
    statistics (a norm of a residual stream that holds a product's result), and its
    reader may reduce too.
    """

    name = "fuse-epilogues"

    attention_raised: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forward = find_forward(op)
        if forward is None:
            return
        kernels = {k.sym_name.data: k for k in op.ops if isinstance(k, KernelOp)}
        launched = launch_counts(op)
        # A fused kernel is visited again: it may still store a result another
        # kernel reads.
        worklist = [o for o in forward.body.block.ops if isinstance(o, LaunchOp)]
        worklist.reverse()
        # Host ops in program order, kept through the fusions (a fused launch takes
        # its reader's place), so that ordering them costs no walk of the block.
        order = {o: k for k, o in enumerate(forward.body.block.ops)}
        while worklist:
            launch = worklist.pop()
            if launch.parent is None:
                continue  # fused already
            kernel = kernels.get(launch.callee.string_value())
            loop = the_loop(kernel) if kernel is not None else None
            if kernel is None or loop is None or not loop.reduce_extents:
                continue
            try:
                pair = self.pair(forward, launch, kernel, loop, kernels, launched, order)
            except _NotFused as why:
                emit_remark(loop, f"{self.name}: not fused: {why}")
                continue
            if pair is None:
                continue
            reader = kernels[pair.reader.callee.string_value()]
            fused, fused_launch = fuse(op, pair, kernel, reader)
            order[fused_launch] = order[pair.reader]
            kernels[fused.sym_name.data] = fused
            launched[fused.sym_name.data] = 1
            worklist.append(fused_launch)
            kept = (
                ", which still stores the result read later"
                if pair.kept & pair.intermediates.keys()
                else ""
            )
            if pair.recompute:
                worklist.append(launch)  # its next reader may fuse it too
                kept = (
                    f", which computes the result again; @{kernel.sym_name.data} stays "
                    "for the later readers"
                )
            emit_remark(
                fused,
                f"{self.name}: fused @{kernel.sym_name.data} and its reader "
                f"@{reader.sym_name.data} into @{fused.sym_name.data}{kept}",
            )
            count(self.name, "epilogues fused")

    def pair(
        self,
        forward: func.FuncOp,
        launch: LaunchOp,
        kernel: KernelOp,
        loop: LoopOp,
        kernels: dict[str, KernelOp],
        launched: dict[str, int],
        order: dict[Operation, int],
    ) -> _Pair | None:
        """The reader to fuse `launch` with, None when it has no single reader (nothing
        to say), or `_NotFused` with why not. `order`: the host ops' positions."""
        stored = {root_buffer(s.buffer) for s in loop.walk() if isinstance(s, StoreOp)}
        allocs: dict[BlockArgument, AllocOp] = {}
        users: list[Operation] = []
        for arg in stored:
            assert isinstance(arg, BlockArgument)
            alloc = host_root(launch.args[arg.index]).owner
            if not isinstance(alloc, AllocOp):
                return None
            allocs[arg] = alloc
            its_users = [
                u.operation
                for v in host_views(alloc.result)
                for u in v.uses
                if not isinstance(u.operation, ReshapeOp)
            ]
            if its_users.count(launch) != 1:
                return None  # the kernel writes it twice
            users += [u for u in its_users if u is not launch]
        if not users:
            return None  # nothing reads what it stores
        if any(u.parent_block() is not forward.body.block for u in users):
            raise _NotFused("the result is read inside another op")
        users.sort(key=order.__getitem__)
        if order[users[0]] < order[launch]:
            return None  # read before it is written: another value in that buffer
        reader_launch = users[0]
        if not isinstance(reader_launch, LaunchOp):
            if any(isinstance(u, LaunchOp) for u in users):
                raise _NotFused(
                    f"'{reader_launch.name}' uses the result before a kernel reads it"
                )
            return None  # no kernel reads it: nothing to fuse
        reader = kernels.get(reader_launch.callee.string_value())
        if reader is None or reader.on_xla or kernel.on_xla:
            return None
        name = kernel.sym_name.data
        if launched.get(name) != 1 or launched.get(reader.sym_name.data) != 1:
            raise _NotFused("a kernel launched more than once")
        reader_loop = the_loop(reader)
        if reader_loop is None:
            raise _NotFused(f"@{reader.sym_name.data} is not one loop")
        if has_partial_reductions(loop) or has_partial_reductions(reader_loop):
            raise _NotFused("a loop reduces per-row reductions again already")
        # A reader that reduces runs over the reducing loop's points, or over more.
        widens = bool(reader_loop.reduce_extents) and (
            tuple(reader_loop.parallel_extents),
            tuple(reader_loop.reduce_extents),
        ) != (tuple(loop.parallel_extents), tuple(loop.reduce_extents))
        if any(isinstance(o, LoadOp | StoreOp) and o.symbols for o in reader_loop.walk()):
            # a gather or scatter keeps its kernel, where the indirect-access passes
            # make it row DMAs
            raise _NotFused(
                f"@{reader.sym_name.data} has an access with a data-dependent index"
            )
        if not widens and tuple(reader_loop.parallel_extents) != tuple(
            loop.parallel_extents
        ):
            try:
                reader = collapsed(reader, loop.parallel_extents)
            except NotCollapsible as why:
                raise _NotFused(str(why)) from why
            reader_loop = the_loop(reader)
            assert reader_loop is not None
        read = {
            arg: alloc
            for arg, alloc in allocs.items()
            if any(host_root(a) is alloc.result for a in reader_launch.args)
        }
        written = {
            (root_buffer(s.buffer), access_key(s))
            for s in loop.walk()
            if isinstance(s, StoreOp)
        }
        if any(key is None for _, key in written) or len(written) != len(stored):
            raise _NotFused("a result is stored through a data-dependent index")
        reads_of: dict[BlockArgument, list[LoadOp]] = {}
        for arg, alloc in read.items():
            positions = [
                k
                for k, a in enumerate(reader_launch.args)
                if host_root(a) is alloc.result
            ]
            reader_args = {reader.body.block.args[k] for k in positions}
            for o in reader_loop.walk():
                if not (
                    isinstance(o, LoadOp | StoreOp)
                    and root_buffer(o.buffer) in reader_args
                ):
                    continue
                if isinstance(o, StoreOp) or (
                    not widens and (arg, access_key(o)) not in written
                ):
                    raise _NotFused(
                        f"@{reader.sym_name.data} reads the result elsewhere than "
                        "where it was written"
                    )
                reads_of.setdefault(arg, []).append(o)
        nested = widens and _read_along_reduction(reader_loop, reads_of)
        if nested and any(
            contraction(o) is not None for o in (*loop.walk(), *reader_loop.walk())
        ):
            # a product nested under another reduction would not be an MXU dot
            raise _NotFused(
                f"@{reader.sym_name.data} reduces the results over the points they "
                "were written at, and a matrix product is among the reductions"
            )
        if nested and any(
            isinstance(o, ReduceOp) and ReductionKind(o.kind.data).returns_index
            for o in (*loop.walk(), *reader_loop.walk())
        ):
            # a position is over every reduction dim of its loop (`ta.reduce`)
            raise _NotFused(
                f"@{reader.sym_name.data} reduces the results over the points they "
                "were written at, and an argmax or argmin is among the reductions"
            )
        if nested and not self.attention_raised:
            # the accesses are rewritten in between, where a nested loop's dims
            # would have to be renumbered
            raise _NotFused(
                f"@{reader.sym_name.data} reduces the results over the points they "
                "were written at, which the run after raise-attention fuses"
            )
        # (a nested loop may split the reader's reductions: each block holds whole rows)
        if not nested and reader_loop.reduce_extents and _reduced_in_reader(reads_of):
            if max(reader_loop.reduce_extents) >= 2 * MIN_K_PART:
                raise _NotFused(
                    f"@{reader.sym_name.data} reduces values it computes from the "
                    "result: fused, its reduction could not be split"
                )
        elif not nested and widens:
            raise _NotFused(
                f"@{reader.sym_name.data} loops over more points than the reducing "
                "loop, and uses the result only after its reductions"
            )
        if (
            reader_loop.reduce_extents
            and not self.attention_raised
            and _rows_of_a_product(kernel, launch, kernels)
        ):
            # an attention's scores: raise-attention fuses the product, the row
            # statistics and the weighted sum of values whole (an online softmax)
            raise _NotFused(
                "it reduces a matrix product's result (as attention's statistics "
                f"do), and @{reader.sym_name.data} reduces too"
            )
        points = None
        if widens:
            if not nested and stored != read.keys():
                raise _NotFused(
                    f"@{reader.sym_name.data} loops over more points than the reducing "
                    "loop, which also stores a result it does not read"
                )
            points = _producer_points(loop, reader, reader_loop, reads_of, nested)
        reads = {
            host_root(launch.args[a.index])
            for a in kernel.body.block.args
            if a not in stored
        }
        for between in _ops_between(launch, reader_launch):
            if isinstance(between, ReshapeOp | AllocOp):
                continue
            if not isinstance(between, LaunchOp):
                raise _NotFused(f"'{between.name}' runs between the two kernels")
            other = kernels.get(between.callee.string_value())
            if other is None:
                raise _NotFused("an unknown kernel runs between the two")
            for a in other.body.block.args:
                if (
                    other.role_of(a) in WRITABLE_ROLES
                    and host_root(between.args[a.index]) in reads
                ):
                    raise _NotFused(
                        f"@{other.sym_name.data} writes an input of @{name} in between"
                    )
        # Results the reader does not read, or that are read again after it, are
        # still stored by the fused kernel.
        kept = {
            arg
            for arg, alloc in allocs.items()
            if arg not in read
            or any(
                u.operation is not launch and u.operation is not reader_launch
                for v in host_views(alloc.result)
                for u in v.uses
                if not isinstance(u.operation, ReshapeOp)
            )
        }
        recompute = points is not None and bool(kept) and not nested
        if nested and kept and not _stores_every_point(loop, reader_loop, reads_of):
            raise _NotFused(
                f"@{reader.sym_name.data} reduces the results over the points they "
                "were written at, a result is read again after it, and it does not "
                "read every point (to store them all)"
            )
        reader_reads = {
            host_root(reader_launch.args[a.index])
            for a in reader.body.block.args
            if reader.role_of(a) in READABLE_ROLES
        }
        if recompute and not reads <= reader_reads:
            raise _NotFused(
                f"@{reader.sym_name.data} loops over more points than the reducing "
                "loop, the result is read again after it, and it does not read every "
                f"input of @{name} (to compute the result again at no more traffic)"
            )
        return _Pair(
            launch,
            reader_launch,
            read,
            reader,
            frozenset(kept),
            points,
            recompute,
            nested,
        )


def _ops_between(first: Operation, last: Operation) -> Iterator[Operation]:
    """The ops of a block after `first` and before `last`."""
    op = first.next_op
    while op is not None and op is not last:
        yield op
        op = op.next_op


def _rows_of_a_product(
    kernel: KernelOp, launch: LaunchOp, kernels: dict[str, KernelOp]
) -> bool:
    """Whether the kernel reads a buffer that a matrix product's kernel launched before
    it writes (its inputs' writers, found through the uses of their views)."""
    for a in kernel.body.block.args:
        if kernel.role_of(a) != ArgRole.IN:
            continue
        for view in host_views(host_root(launch.args[a.index])):
            for use in view.uses:
                other = use.operation
                writer = (
                    kernels.get(other.callee.string_value())
                    if isinstance(other, LaunchOp)
                    else None
                )
                loop = the_loop(writer) if writer is not None else None
                if (
                    writer is not None
                    and loop is not None
                    and writer.role_of(writer.body.block.args[use.index])
                    in WRITABLE_ROLES
                    and any(contraction(o) is not None for o in loop.body.block.ops)
                    and other.is_before_in_block(launch)
                ):
                    return True
    return False


def _computed_from(reads_of: dict[BlockArgument, list[LoadOp]]) -> set[Operation]:
    """The reader's ops that compute from its reads of the results."""
    pending: list[Operation] = [o for loads in reads_of.values() for o in loads]
    seen: set[Operation] = set()
    while pending:
        o = pending.pop()
        if o not in seen:
            seen.add(o)
            pending += [u.operation for r in o.results for u in r.uses]
    return seen


def _reduced_in_reader(reads_of: dict[BlockArgument, list[LoadOp]]) -> bool:
    """Whether a reduction of the reader takes a value computed from a result."""
    return any(isinstance(o, ReduceOp) for o in _computed_from(reads_of))


def _read_along_reduction(
    reader_loop: LoopOp, reads_of: dict[BlockArgument, list[LoadOp]]
) -> bool:
    """Whether the reader reads the results along its reduction dims: it reduces them
    over the points they were written at (cross-entropy's mean of per-row losses)."""
    n_par = len(reader_loop.parallel_extents)
    return bool(reader_loop.reduce_extents) and any(
        d >= n_par
        for loads in reads_of.values()
        for o in loads
        for e in place(o)  # simplified with the loop's ranges
        for d in e.used_dims()
    )


def _stores_every_point(
    loop: LoopOp, reader_loop: LoopOp, reads_of: dict[BlockArgument, list[LoadOp]]
) -> bool:
    """Whether the reader's points read each of the reducing loop's stored places
    once: its place (one, `_producer_points` checks) is a row-major numbering of as
    many points, so a nested loop that stores a result there writes every element."""
    load = next(o for loads in reads_of.values() for o in loads)
    form = linearize(_flat_place(load))
    if form is None or form.symbols or form.constant != 0:
        return False
    extents = list(reader_loop.extents)
    expected = 1
    for d, stride in sorted(form.dims.items(), key=lambda kv: kv[1]):
        if stride != expected:
            return False
        expected *= extents[d]
    return expected == prod(loop.parallel_extents)


def _flat_place(access: LoadOp | StoreOp) -> AffineExpr:
    """The `place` of an access as a row-major position in its kernel argument: the
    index into the buffer it accesses (the argument, or a `ta.reshape` view of it, both
    row-major) linearized row-major."""
    where = place(access)
    view = access.buffer.type
    assert isinstance(view, MemRefType)
    if len(where) == 1:
        return where[0]
    strides = row_major_strides(list(view.get_shape()))
    flat = AffineExpr.constant(0)
    for e, stride in zip(where, strides, strict=True):
        flat = flat + e * stride
    loop = access.parent_op()
    while not isinstance(loop, LoopOp):
        assert loop is not None, "ta.load and ta.store verify inside a ta.loop"
        loop = loop.parent_op()
    return simplify(flat, [(0, n - 1) for n in loop.extents])


def _producer_points(
    loop: LoopOp,
    reader: KernelOp,
    reader_loop: LoopOp,
    reads_of: dict[BlockArgument, list[LoadOp]],
    nested: bool = False,
) -> list[AffineExpr]:
    """Each variable of the reducing loop as an expression of the fused loop's
    variables: its parallel ones from the place the reader reads the results at (one
    place, which a row-major store of the reducing loop's parallel dims wrote), its
    reduction ones the reader's. `_NotFused` unless the two reduce over the same extents
    and that place is a point the reducing loop stored. `nested`: the reader reads the
    place along its reductions, and the reducing loop's reductions are new dims after
    the reader's (the fused loop's extents are the reader's, then those)."""
    name = reader.sym_name.data
    n_rows = len(loop.parallel_extents)
    for variable in loop.body.block.args:
        if nested and variable.index >= n_rows:
            continue  # the same variable of the fused loop
        for use in variable.uses:
            if not isinstance(use.operation, LoadOp | StoreOp) or variable not in (
                use.operation.dims
            ):
                raise _NotFused("the reducing loop uses a loop index as a value")
    if nested:
        reduced = set(range(n_rows, len(loop.extents)))
        for store in loop.walk():
            if isinstance(store, StoreOp) and value_dims(store.value, loop) & reduced:
                raise _NotFused(
                    "a result stored by the reducing loop varies along its reduction"
                )
    elif tuple(reader_loop.reduce_extents) != tuple(loop.reduce_extents):
        raise _NotFused(
            f"@{name} reduces over {list(reader_loop.reduce_extents)}, not the "
            f"{list(loop.reduce_extents)} of the reducing loop"
        )
    extents = list(loop.parallel_extents)
    strides = row_major_strides(extents)
    stored = {
        str(where): where
        for where in (_flat_place(s) for s in loop.walk() if isinstance(s, StoreOp))
    }
    form = linearize(next(iter(stored.values())))
    row_major = {k: strides[k] for k, n in enumerate(extents) if n > 1}
    if len(stored) != 1 or form is None or form.symbols or form.dims != row_major:
        raise _NotFused("the results are not stored row-major over the reducing loop")
    places = {
        str(where): where
        for where in (_flat_place(o) for loads in reads_of.values() for o in loads)
    }
    if len(places) != 1:
        raise _NotFused(f"@{name} reads the results at more than one place")
    (read_at,) = places.values()
    n_par = len(reader_loop.parallel_extents)
    fused_extents = list(reader_loop.extents)
    if nested:
        fused_extents += list(loop.reduce_extents)
    bounds = [(0, n - 1) for n in fused_extents]
    offset = read_at - form.constant
    span = expr_bounds(offset, bounds, [])
    if span is None or span[0] < 0 or span[1] >= prod(extents):
        raise _NotFused(f"@{name} reads the results outside what was stored")
    points = [
        simplify((offset // stride) % n, bounds) if n > 1 else AffineExpr.constant(0)
        for stride, n in zip(strides, extents, strict=True)
    ]
    if nested:
        _check_nested_points(name, points, extents, reader_loop)
    first = len(reader_loop.extents) if nested else n_par
    points += [AffineExpr.dimension(first + j) for j in range(len(loop.reduce_extents))]
    (where,) = stored.values()
    again = simplify(where.replace_dims_and_symbols(points, []), bounds)
    if str(again) != str(read_at):
        raise _NotFused(
            f"@{name} reads the results elsewhere than where they were written"
        )
    return points


def _check_nested_points(
    name: str, points: list[AffineExpr], rows: list[int], reader_loop: LoopOp
) -> None:
    """`_NotFused` unless each of the reducing loop's rows is one variable of the
    reader's (its accesses then stay a loop dim plus a constant, which the tiler takes:
    `l.view(8, 8).sum(1)` of row values `l` would read `x[8 * d0 + d1, d2]`), and each
    of the reader's reductions walks the rows (a reduction over more, `(softmax(x) **
    2).sum()`, would hold a value per element of the rows beside the row's own
    reductions: a unit lane dim in the kernel)."""
    walked: set[int] = set()
    for point, n in zip(points, rows, strict=True):
        if n == 1:
            continue
        if not isinstance(point, AffineDimExpr) or point.position in walked:
            raise _NotFused(
                f"@{name} reads the results at a place that is not one of its loop "
                "dims per dim of the results"
            )
        walked.add(point.position)
    n_par = len(reader_loop.parallel_extents)
    extents = reader_loop.extents
    if any(extents[d] > 1 and d not in walked for d in range(n_par, len(extents))):
        raise _NotFused(
            f"@{name} reduces the results over the points they were written at and "
            "over more"
        )


def fuse(
    module: ModuleOp, pair: _Pair, kernel: KernelOp, reader_op: KernelOp
) -> tuple[KernelOp, LaunchOp]:
    """One kernel for `pair` and its launch, where the reader's was; the two kernels,
    their launches and the intermediates not kept are erased (the reader's only, when
    the fused kernel computes the results again: `pair.recompute`)."""
    reader = pair.reader_kernel
    loop, reader_loop = the_loop(kernel), the_loop(reader)
    assert loop is not None and reader_loop is not None
    stores = [s for s in loop.walk() if isinstance(s, StoreOp)]
    value_at = {(root_buffer(s.buffer), access_key(s)): s.value for s in stores}
    dropped = {
        arg for arg in pair.intermediates if pair.recompute or arg not in pair.kept
    }
    intermediate = {
        v for alloc in pair.intermediates.values() for v in host_views(alloc.result)
    }
    kept = [a for a in kernel.body.block.args if a not in dropped]
    reader_kept = [
        a for a in reader.body.block.args if pair.reader.args[a.index] not in intermediate
    ]
    # The reader's arguments that are a result, by the producer's argument storing it.
    result_of = {
        a: arg
        for a in reader.body.block.args
        for arg, alloc in pair.intermediates.items()
        if host_root(pair.reader.args[a.index]) is alloc.result
    }
    # An input both kernels read is one argument of the fused kernel.
    inputs = {
        pair.producer.args[a.index]: a for a in kept if kernel.role_of(a) == ArgRole.IN
    }
    shared = {
        a: inputs[pair.reader.args[a.index]]
        for a in reader_kept
        if reader.role_of(a) == ArgRole.IN and pair.reader.args[a.index] in inputs
    }
    reader_kept = [a for a in reader_kept if a not in shared]
    block = Block(arg_types=[a.type for a in [*kept, *reader_kept]])
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip([*kept, *reader_kept], block.args):
        new.name_hint = old.name_hint
        mapping[old] = new
    for a, same in shared.items():
        mapping[a] = mapping[same]
    # Kernel-level ops (views, constants) of both, but not those of the intermediates.
    for source in (kernel, reader):
        for o in source.body.block.ops:
            if isinstance(o, LoopOp):
                continue
            if isinstance(o, ReshapeOp) and root_buffer(o.result) not in mapping:
                continue
            block.add_op(o.clone(value_mapper=mapping))
    if pair.producer_points is not None:
        return _fuse_widening(
            module, pair, kernel, reader_op, block, mapping, kept, reader_kept, result_of
        )

    new_loop = loop.clone(value_mapper=mapping)
    for old, new in zip(loop.walk(), new_loop.walk()):
        new.location = old.location
        for r_old, r_new in zip(old.results, new.results):
            mapping[r_old] = r_new
    for old, new in zip(stores, [s for s in new_loop.walk() if isinstance(s, StoreOp)]):
        if root_buffer(old.buffer) in dropped:
            Rewriter.erase_op(new)
    body = new_loop.body.block
    # A reader without reductions runs over the parallel dims; one with them over the
    # same points as the reducing loop (checked when paired).
    for old, new in zip(reader_loop.body.block.args, body.args):
        mapping[old] = new

    def result(load: LoadOp) -> SSAValue:
        arg = result_of[root_buffer(load.buffer)]  # type: ignore[index]
        return mapping[value_at[(arg, access_key(load))]]

    _copy_reader_body(reader_loop, body, mapping, result_of, result)
    block.add_op(new_loop)
    return _replace(module, pair, kernel, reader_op, block, kept, reader_kept, dropped)


def _copy_reader_body(
    reader_loop: LoopOp,
    body: Block,
    mapping: dict[SSAValue, SSAValue],
    result_of: dict[BlockArgument, BlockArgument],
    result: Callable[[LoadOp], SSAValue],
) -> None:
    """The reader's loop body at the end of `body`, each load of a result replaced
    by `result` of it (the value the reducing body stored there)."""
    for o in reader_loop.body.block.ops:
        if isinstance(o, LoadOp) and root_buffer(o.buffer) in result_of:
            mapping[o.result] = result(o)
            continue
        copy = o.clone(value_mapper=mapping)
        copy.location = o.location
        body.add_op(copy)
        for r_old, r_new in zip(o.results, copy.results):
            mapping[r_old] = r_new


def _replace(
    module: ModuleOp,
    pair: _Pair,
    kernel: KernelOp,
    reader_op: KernelOp,
    block: Block,
    kept: list[BlockArgument],
    reader_kept: list[BlockArgument],
    dropped: AbstractSet[BlockArgument],
) -> tuple[KernelOp, LaunchOp]:
    """The fused kernel of `block` and its launch in place of the pair's, with the
    intermediates `dropped` erased (when the reducing kernel goes too)."""
    roles: list[ArgRole] = [kernel.role_of(a) for a in kept]
    roles += [pair.reader_kernel.role_of(a) for a in reader_kept]
    args = [pair.producer.args[a.index] for a in kept]
    args += [pair.reader.args[a.index] for a in reader_kept]
    fused, launch = replace_pair(
        module,
        block,
        roles,
        args,
        (pair.producer, kernel),
        (pair.reader, reader_op),
        keep_first=pair.recompute,
    )
    if pair.recompute:
        return fused, launch
    for arg in dropped:
        for view in reversed(host_views(pair.intermediates[arg].result)):
            Rewriter.erase_op(view.owner)  # type: ignore[arg-type]
    return fused, launch


def _fuse_widening(
    module: ModuleOp,
    pair: _Pair,
    kernel: KernelOp,
    reader_op: KernelOp,
    block: Block,
    mapping: dict[SSAValue, SSAValue],
    kept: list[BlockArgument],
    reader_kept: list[BlockArgument],
    result_of: dict[BlockArgument, BlockArgument],
) -> tuple[KernelOp, LaunchOp]:
    """`fuse` for a reader that reduces over more points: the fused loop is the
    reader's, and runs the reducing loop's body at `pair.producer_points`. A nested
    pair's loop reduces over the reducing loop's reduction dims too, after the
    reader's: each reduction of the reducing body over those, each of the reader's
    over its own (`ta.reduce ... over`)."""
    loop, reader_loop = the_loop(kernel), the_loop(pair.reader_kernel)
    assert loop is not None and reader_loop is not None and pair.producer_points
    inner = list(loop.reduce_extents) if pair.nested else []
    new_loop = LoopOp(
        list(reader_loop.parallel_extents), [*reader_loop.reduce_extents, *inner]
    )
    new_loop.location = reader_loop.location
    variables = list(new_loop.body.block.args)
    for old, new in zip(reader_loop.body.block.args, variables):
        new.name_hint = old.name_hint
        mapping[old] = new
    n_par, n_reader = len(loop.parallel_extents), len(reader_loop.extents)
    inner_dims = list(range(n_reader, len(variables)))
    for j, d in enumerate(inner_dims):
        # the reducing loop's reduction variables are the fused loop's last ones
        old = loop.body.block.args[n_par + j]
        variables[d].name_hint = old.name_hint
        mapping[old] = variables[d]
    bounds = [(0, n - 1) for n in new_loop.extents]
    body = new_loop.body.block
    result_value: dict[SSAValue, SSAValue] = {}
    for o in loop.body.block.ops:
        if isinstance(o, StoreOp):
            result_value[root_buffer(o.buffer)] = mapping[o.value]
            if not pair.nested or root_buffer(o.buffer) not in pair.kept:
                continue  # read by the reader only, or computed again later
            # a nested loop stores a result read later where the reader reads it
            at = [pair.producer_points[d.index] for d in o.dims]  # type: ignore[attr-defined]
            body.add_op(remapped(o, at, variables, bounds, mapping))
            continue
        if isinstance(o, LoadOp):
            at = [pair.producer_points[d.index] for d in o.dims]  # type: ignore[attr-defined]
            copy: Operation = remapped(o, at, variables, bounds, mapping)
        else:
            copy = o.clone(value_mapper=mapping)
            copy.location = o.location
            if isinstance(copy, ReduceOp) and inner_dims:
                copy.properties["over"] = DenseArrayBase.from_list(i64, inner_dims)
        body.add_op(copy)
        for r_old, r_new in zip(o.results, copy.results):
            mapping[r_old] = r_new
    producer_loads = [o for o in body.ops if isinstance(o, LoadOp)]
    producer_ops = set(body.ops)
    _copy_reader_body(
        reader_loop,
        body,
        mapping,
        result_of,
        lambda load: result_value[result_of[root_buffer(load.buffer)]],  # type: ignore[index]
    )
    if inner_dims:
        outer = list(range(len(reader_loop.parallel_extents), n_reader))
        for o in list(body.ops):
            if o in producer_ops:
                continue
            if isinstance(o, ReduceOp):
                o.properties["over"] = DenseArrayBase.from_list(i64, outer)
            elif isinstance(o, LoadOp):
                # over every variable of the fused loop, as the reducing body's
                # loads are, so that `cse` merges a load both bodies make
                at = [AffineExpr.dimension(d.index) for d in o.dims]  # type: ignore[attr-defined]
                Rewriter.replace_op(o, remapped(o, at, variables, bounds))
    _in_reader_views(producer_loads, body, bounds)
    simplify_maps(new_loop)  # the two bodies' loads of one place print equally
    block.add_op(new_loop)
    cse(new_loop)
    for view in [o for o in block.ops if isinstance(o, ReshapeOp)]:
        if not view.result.uses:
            Rewriter.erase_op(view)  # the reducing body's, moved to the reader's view
    dropped = {a: alloc for a, alloc in pair.intermediates.items() if a not in pair.kept}
    return _replace(module, pair, kernel, reader_op, block, kept, reader_kept, dropped)


def _in_reader_views(
    producer_loads: list[LoadOp], body: Block, bounds: list[tuple[int, int]]
) -> None:
    """Each of the reducing body's loads of a buffer that the reader's body loads
    through another view (`ta.reshape`s of one argument, from the two kernels), moved
    to the reader's view: the same element, read where the reader reads it, so `cse`
    makes one load of two and the tiler sees one access (a row read through a
    `4x128x256` view by one and a `512x256` view by the other)."""
    reader_views: dict[SSAValue, SSAValue] = {}
    for o in body.ops:
        if isinstance(o, LoadOp) and o not in producer_loads and not o.symbols:
            reader_views.setdefault(root_buffer(o.buffer), o.buffer)
    for load in producer_loads:
        view = reader_views.get(root_buffer(load.buffer))
        if view is None or view is load.buffer or load.symbols:
            continue
        shape = view.type.get_shape()  # type: ignore[attr-defined]
        flat = _flat_place(load)
        index = [
            simplify((flat // stride) % n, bounds) if n > 1 else AffineExpr.constant(0)
            for stride, n in zip(row_major_strides(list(shape)), shape, strict=True)
        ]
        dims = list(load.dims)
        moved = LoadOp(view, AffineMapAttr(AffineMap(len(dims), 0, tuple(index))), dims)
        moved.location = load.location
        moved.result.name_hint = load.result.name_hint
        Rewriter.replace_op(load, moved)
