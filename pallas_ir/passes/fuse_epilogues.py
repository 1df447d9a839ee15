"""fuse-epilogues: a kernel that reduces into an intermediate buffer, and the one kernel
that reads that buffer element-wise where it was written, become one kernel: its loop
computes the reductions, then the reader's body on their results (a matrix product's
bias, activation, residual add and cast; a sum's scaling).

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
`@<reducing>_<reader>`, launched where the reader was. The tiler computes the reader's
ops on the parallel dims once the sums are whole (`tl.on_last_step` when it splits the
reduction).

The meaning is kept when (each checked; where a reader exists but one fails, a remark
at the reducing loop says which):
- the reducing kernel has one loop, with reduction dims, and stores only the
  intermediate; the reader has one loop without reductions, over the same parallel
  extents or over runs of dims that multiply to them, collapsed first (`collapsed`);
- the intermediate is a `ta.alloc` that the reducing kernel writes once; the reader is
  the first launch that reads it. Where others read it too, or @forward returns it,
  the fused kernel stores it as well (all of them come after the reader, where the
  fused kernel runs): the reader's read of it is what fusing saves;
- every read of it is at the point the reducing loop wrote (the same view, index
  expressions after simplification with the loop's ranges, and dims; no data-dependent
  index), so each reader point gets the value its own point computed;
- the reader has no access with a data-dependent index (a gather or scatter keeps its
  kernel, where the indirect-access passes make it row DMAs);
- between the two launches only launches run (no library call), and none writes a
  buffer the reducing kernel reads: its work moves to the reader's launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.rewriter import Rewriter

from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects.common import WRITABLE_ROLES, ArgRole, find_forward
from pallas_ir.dialects.tensor_access import (
    AllocOp,
    KernelOp,
    LaunchOp,
    LoadOp,
    LoopOp,
    ReshapeOp,
    StoreOp,
    root_buffer,
)
from pallas_ir.passes.launch_graph import (
    NotCollapsible,
    access_key,
    collapsed,
    host_root,
    host_views,
    launch_counts,
    replace_pair,
    the_loop,
)
from pallas_ir.passes.options import CheckedOptionsPass


@dataclass(frozen=True)
class _Pair:
    producer: LaunchOp
    reader: LaunchOp
    intermediate: AllocOp
    reader_kernel: KernelOp
    """The reader's kernel, over the reducing loop's extents (a detached, collapsed
    copy when its loop nests them more finely)."""
    kept: bool
    """Whether the intermediate is read after the reader (by other launches, or as a
    result of @forward), so the fused kernel stores it too."""


class _NotFused(Exception):
    """Why a reducing kernel and its reader stay apart."""


@dataclass(frozen=True)
class FuseEpiloguesPass(CheckedOptionsPass):
    """Fuse each reducing kernel with the one kernel that reads its result element-wise
    (see the module docstring for when). Each fusion gets a remark naming both kernels
    and counts under `epilogues fused` in `--pass-statistics`; a reducing kernel whose
    reader cannot be fused gets a remark saying why.

    Options: none.
    """

    name = "fuse-epilogues"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forward = find_forward(op)
        if forward is None:
            return
        kernels = {k.sym_name.data: k for k in op.ops if isinstance(k, KernelOp)}
        launched = launch_counts(op)
        for launch in [o for o in forward.body.block.ops if isinstance(o, LaunchOp)]:
            if launch.parent is None:
                continue  # fused already
            kernel = kernels.get(launch.callee.string_value())
            loop = the_loop(kernel) if kernel is not None else None
            if kernel is None or loop is None or not loop.reduce_extents:
                continue
            try:
                pair = self.pair(forward, launch, kernel, loop, kernels, launched)
            except _NotFused as why:
                emit_remark(loop, f"{self.name}: not fused: {why}")
                continue
            if pair is None:
                continue
            reader = kernels[pair.reader.callee.string_value()]
            fused = fuse(op, pair, kernel, reader)
            kernels[fused.sym_name.data] = fused
            launched[fused.sym_name.data] = 1
            kept = ", which still stores the result read later" if pair.kept else ""
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
    ) -> _Pair | None:
        """The reader to fuse `launch` with, None when it has no single reader (nothing
        to say), or `_NotFused` with why not."""
        stored = {root_buffer(s.buffer) for s in loop.walk() if isinstance(s, StoreOp)}
        if len(stored) != 1:
            return None
        (arg,) = stored
        assert isinstance(arg, BlockArgument)
        alloc = host_root(launch.args[arg.index]).owner
        if not isinstance(alloc, AllocOp):
            return None
        users = [
            u.operation
            for v in host_views(alloc.result)
            for u in v.uses
            if not isinstance(u.operation, ReshapeOp)
        ]
        readers = [u for u in users if u is not launch]
        if not readers or users.count(launch) != 1:
            return None  # nothing reads it, or the kernel writes it twice
        ops = list(forward.body.block.ops)
        if any(u.parent_block() is not forward.body.block for u in readers):
            raise _NotFused("the result is read inside another op")
        readers.sort(key=ops.index)
        if any(ops.index(u) < ops.index(launch) for u in readers):
            return None  # read before it is written: another value in that buffer
        reader_launch = readers[0]
        if not isinstance(reader_launch, LaunchOp):
            if any(isinstance(u, LaunchOp) for u in readers):
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
        if reader_loop is None or reader_loop.reduce_extents:
            raise _NotFused(f"@{reader.sym_name.data} is not one loop without reductions")
        if any(isinstance(o, LoadOp | StoreOp) and o.symbols for o in reader_loop.walk()):
            # a gather or scatter keeps its kernel, where the indirect-access passes
            # make it row DMAs
            raise _NotFused(
                f"@{reader.sym_name.data} has an access with a data-dependent index"
            )
        if tuple(reader_loop.parallel_extents) != tuple(loop.parallel_extents):
            try:
                reader = collapsed(reader, loop.parallel_extents)
            except NotCollapsible as why:
                raise _NotFused(str(why)) from why
            reader_loop = the_loop(reader)
            assert reader_loop is not None
        positions = [
            k for k, a in enumerate(reader_launch.args) if host_root(a) is alloc.result
        ]
        written = {access_key(s) for s in loop.walk() if isinstance(s, StoreOp)}
        if None in written or len(written) != 1:
            raise _NotFused("the reduction is stored through a data-dependent index")
        reader_args = {reader.body.block.args[k] for k in positions}
        for o in reader_loop.walk():
            reads_it = (
                isinstance(o, LoadOp | StoreOp) and root_buffer(o.buffer) in reader_args
            )
            if reads_it and (isinstance(o, StoreOp) or access_key(o) not in written):
                raise _NotFused(
                    f"@{reader.sym_name.data} reads the result elsewhere than where "
                    "it was written"
                )
        reads = {
            host_root(launch.args[a.index])
            for a in kernel.body.block.args
            if a is not arg
        }
        for between in ops[ops.index(launch) + 1 : ops.index(reader_launch)]:
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
        return _Pair(launch, reader_launch, alloc, reader, kept=len(readers) > 1)


def fuse(
    module: ModuleOp, pair: _Pair, kernel: KernelOp, reader_op: KernelOp
) -> KernelOp:
    """One kernel for `pair`, launched where the reader was; the two kernels, their
    launches and (unless `pair.kept`) the intermediate are erased."""
    reader = pair.reader_kernel
    loop, reader_loop = the_loop(kernel), the_loop(reader)
    assert loop is not None and reader_loop is not None
    stores = [s for s in loop.walk() if isinstance(s, StoreOp)]
    (written,) = {root_buffer(s.buffer) for s in stores}
    value_at = {access_key(s): s.value for s in stores}
    intermediate = set(host_views(pair.intermediate.result))
    kept = [a for a in kernel.body.block.args if pair.kept or a is not written]
    reader_kept = [
        a for a in reader.body.block.args if pair.reader.args[a.index] not in intermediate
    ]
    block = Block(arg_types=[a.type for a in [*kept, *reader_kept]])
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip([*kept, *reader_kept], block.args):
        new.name_hint = old.name_hint
        mapping[old] = new
    # Kernel-level ops (views, constants) of both, but not those of the intermediate.
    for source in (kernel, reader):
        for o in source.body.block.ops:
            if isinstance(o, LoopOp):
                continue
            if isinstance(o, ReshapeOp) and root_buffer(o.result) not in mapping:
                continue
            block.add_op(o.clone(value_mapper=mapping))
    new_loop = loop.clone(value_mapper=mapping)
    for old, new in zip(loop.walk(), new_loop.walk()):
        new.location = old.location
        for r_old, r_new in zip(old.results, new.results):
            mapping[r_old] = r_new
    if not pair.kept:
        for new in [s for s in new_loop.walk() if isinstance(s, StoreOp)]:
            Rewriter.erase_op(new)
    body = new_loop.body.block
    n_par = len(loop.parallel_extents)
    for old, new in zip(reader_loop.body.block.args, body.args[:n_par]):
        mapping[old] = new
    reader_args = {reader.body.block.args[k] for k in range(len(pair.reader.args))}
    for o in reader_loop.body.block.ops:
        if isinstance(o, LoadOp) and root_buffer(o.buffer) in reader_args - set(
            reader_kept
        ):
            mapping[o.result] = mapping[value_at[access_key(o)]]
            continue
        copy = o.clone(value_mapper=mapping)
        copy.location = o.location
        body.add_op(copy)
        for r_old, r_new in zip(o.results, copy.results):
            mapping[r_old] = r_new
    block.add_op(new_loop)
    roles: list[ArgRole] = [kernel.role_of(a) for a in kept]
    roles += [reader.role_of(a) for a in reader_kept]
    args = [pair.producer.args[a.index] for a in kept]
    args += [pair.reader.args[a.index] for a in reader_kept]
    fused, _ = replace_pair(
        module, block, roles, args, (pair.producer, kernel), (pair.reader, reader_op)
    )
    if not pair.kept:
        for view in reversed(host_views(pair.intermediate.result)):
            Rewriter.erase_op(view.owner)  # type: ignore[arg-type]
    return fused
