"""The tl-to-pallas pass: each launch of a `tl.kernel` becomes a `pallas.call`, and
`@forward` a function of SSA tensors (the package docstring says how)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineMap,
)

from pallas_ir.analysis.cost_model import call_cost, grid_compute
from pallas_ir.diagnostics import PassError
from pallas_ir.dialects import pallas
from pallas_ir.dialects import tensor_access as ta
from pallas_ir.dialects import tiled_loop as tl
from pallas_ir.dialects.common import (
    ELEMENTWISE_DIALECTS,
    READABLE_ROLES,
    WRITABLE_ROLES,
    ArgRole,
    find_forward,
)
from pallas_ir.lowering.ta_to_xla import XlaFunctions
from pallas_ir.lowering.tl_to_pallas.access import KernelConverter, grid_scalar, tensor_of
from pallas_ir.lowering.tl_to_pallas.accumulate import (
    accumulate,
    accumulator_type,
    grid_condition,
    running_total,
    sequential_steps,
)
from pallas_ir.lowering.tl_to_pallas.gathers import (
    copied_in_vmem,
    gather_rows,
    index_chunk_spec,
    packed_rows,
    resident,
    row_strided,
    rows_source,
    strided_rows,
)
from pallas_ir.lowering.tl_to_pallas.host import Host
from pallas_ir.lowering.tl_to_pallas.scatters import (
    check_scatters,
    scatter_rows,
    scatter_scratch,
    scatter_semantics,
)
from pallas_ir.passes.options import CHIP, CheckedOptionsPass, Rule
from pallas_ir.tpu_rules import (
    CHIPS,
    MAX_ELEMENT_BITS,
    vmem_limit,
)

_SEMANTICS = {
    tl.GridSemantics.PARALLEL: pallas.DimensionSemantics.PARALLEL,
    tl.GridSemantics.SEQUENTIAL: pallas.DimensionSemantics.ARBITRARY,
}


@dataclass(frozen=True)
class TlToPallasPass(CheckedOptionsPass):
    """Convert `tl.kernel`s and the `func.func @forward` that launches them to `pallas`.

    Options:
    - `chip` (`v5e` | `v6e`, default `v5e`): a call whose VMEM footprint (double-buffered
      blocks plus scratch, padded to whole VMEM tiles: `tpu_rules.vmem_block_bytes`)
      exceeds the chip's default scoped VMEM gets `vmem_limit_bytes`
      (`tpu_rules.vmem_limit`); one over the chip's physical VMEM is an error.
    """

    name = "tl-to-pallas"
    option_rules: ClassVar[dict[str, Rule]] = {"chip": CHIP}

    chip: str = "v5e"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: dict[str, tl.KernelOp | ta.KernelOp] = {
            k.sym_name.data: k for k in op.ops if isinstance(k, tl.KernelOp)
        }
        kernels.update(
            (k.sym_name.data, k)
            for k in op.ops
            if isinstance(k, ta.KernelOp) and k.on_xla
        )
        if not kernels:
            return
        forward = find_forward(op)
        if forward is None:
            raise PassError(
                next(iter(kernels.values())),
                "tl-to-pallas: needs a func.func @forward that launches the kernels",
            )
        host = Host(forward)
        xla_functions = XlaFunctions(list(kernels))
        for host_op in forward.body.block.ops:
            self.convert_host_op(host_op, host, kernels, xla_functions)
        result_types = (
            [r.type for r in host.block.last_op.operands] if host.block.last_op else []
        )
        new_forward = func.FuncOp(
            "forward",
            ([a.type for a in host.block.args], result_types),
            Region(host.block),
        )
        new_forward.location = forward.location
        donated = _overwritten_arguments(forward, kernels, host)
        if donated:
            new_forward.arg_attrs = ArrayAttr(
                [
                    DictionaryAttr(
                        {pallas.DONATED_ARGUMENT: UnitAttr()} if k in donated else {}
                    )
                    for k in range(len(host.block.args))
                ]
            )
        for k in kernels.values():
            op.body.block.erase_op(k)
        op.body.block.insert_op_after(new_forward, forward)
        op.body.block.insert_ops_before(xla_functions.functions, new_forward)
        op.body.block.erase_op(forward)

    def convert_host_op(
        self,
        host_op: Operation,
        host: Host,
        kernels: dict[str, tl.KernelOp | ta.KernelOp],
        xla_functions: XlaFunctions,
    ) -> None:
        if isinstance(host_op, ta.AllocOp):
            host.root[host_op.result] = host_op.result
            host.value[host_op.result] = None
        elif isinstance(host_op, ta.ReshapeOp):
            host.root[host_op.result] = host.root[host_op.source]
        elif isinstance(host_op, ta.LaunchOp):
            name = host_op.callee.string_value()
            if name not in kernels:
                raise PassError(
                    host_op, f"tl-to-pallas: @{name} is not a tl.kernel (run tile first)"
                )
            kernel = kernels[name]
            if isinstance(kernel, ta.KernelOp):
                call = self.convert_xla_launch(kernel, host_op, host, xla_functions)
            else:
                call = self.convert_launch(kernel, host_op, host)
            call.location = host_op.location
        elif isinstance(host_op, func.ReturnOp):
            ret = func.ReturnOp(*[host.read(v, host_op) for v in host_op.arguments])
            host.add(ret)
        else:
            raise PassError(host_op, f"tl-to-pallas: unexpected host op '{host_op.name}'")

    @staticmethod
    def convert_xla_launch(
        kernel: ta.KernelOp, launch: ta.LaunchOp, host: Host, functions: XlaFunctions
    ) -> pallas.XlaCallOp:
        """A launch of an XLA kernel: its readable buffers in, its written ones out;
        it calls the kernel's `xla.func` (ta-to-xla)."""
        args = kernel.body.block.args
        roles = [kernel.role_of(a) for a in args]
        ins = [
            host.read(launch.args[k], launch, as_stored=True)
            for k, r in enumerate(roles)
            if r in READABLE_ROLES
        ]
        outs = [k for k, r in enumerate(roles) if r in WRITABLE_ROLES]
        out_types = [tensor_of(host.root[launch.args[k]].type) for k in outs]  # type: ignore[arg-type]
        name = functions.get(kernel, [v.type for v in ins], out_types)  # type: ignore[misc]
        call = pallas.XlaCallOp(name, ins, out_types)
        host.add(call)
        for k, result in zip(outs, call.outs):
            host.write(launch.args[k], result)
        return call

    def convert_launch(
        self, kernel: tl.KernelOp, launch: ta.LaunchOp, host: Host
    ) -> pallas.CallOp:
        (grid,) = [g for g in kernel.body.block.ops if isinstance(g, tl.GridOp)]
        conv = KernelConverter(kernel, grid)
        # (a tl.on_last_step's or tl.when's body is converted into a pallas.when, op
        # for op)
        body_ops = list(grid.body.walk())
        # Scalar prefetch: every prefetch buffer a scalar_load or a gather reads. A
        # gather's `in` index buffer (too big for SMEM) is streamed instead (G3c).
        chunked: list[BlockArgument] = []
        for o in body_ops:
            if isinstance(o, tl.GatherOp):
                for index in o.indices:
                    assert isinstance(index, BlockArgument)
                    streamed = kernel.role_of(index) != ArgRole.PREFETCH
                    if streamed and len(o.indices) > 1:
                        raise PassError(
                            o,
                            "tl-to-pallas: a gather by several index buffers reads them "
                            "whole from SMEM (prefetch); streaming them is not done",
                        )
                    group = chunked if streamed else conv.prefetch
                    if index not in group:
                        group.append(index)
            if isinstance(o, tl.ScatterOp) and o.index not in conv.prefetch:
                conv.prefetch.append(o.index)  # type: ignore[arg-type]
            if isinstance(o, tl.ScalarLoadOp):
                arg = o.buffer
                assert isinstance(arg, BlockArgument)
                if arg not in conv.prefetch:
                    conv.prefetch.append(arg)
                conv.scalar_loads[o.result] = (
                    conv.prefetch.index(arg),
                    conv.grid_map(o.map.data, o.dims, o),
                )
        row_loads = [o for o in body_ops if isinstance(o, tl.LoadOp) and row_strided(o)]
        loads = [o for o in body_ops if isinstance(o, tl.LoadOp) and o not in row_loads]
        # Gathers and row-strided loads both copy rows by DMA from an array left in HBM.
        gathers: list[tl.GatherOp | tl.LoadOp] = [
            o for o in body_ops if isinstance(o, tl.GatherOp) or o in row_loads
        ]
        stores = [o for o in body_ops if isinstance(o, tl.StoreOp)]
        # Scattered buffers stay in HBM, aliased to outputs: rows move by DMA writes.
        scatters = [o for o in body_ops if isinstance(o, tl.ScatterOp)]
        for o in [*loads, *gathers, *stores, *scatters]:
            if isinstance(o, tl.LoadOp | tl.StoreOp):
                buffer = o.buffer
            else:
                buffer = o.table if isinstance(o, tl.GatherOp) else o.dest
            element = buffer.type.element_type  # type: ignore[attr-defined]
            if getattr(element, "bitwidth", 0) > MAX_ELEMENT_BITS:
                name = f"%{buffer.name_hint}" if buffer.name_hint else "a buffer"
                raise PassError(
                    o,
                    f"tl-to-pallas: TPU kernels have no 64-bit types and {name} holds "
                    f"{element}; only scalar-prefetch indices are narrowed (to i32)",
                )
        stored: dict[SSAValue, tl.StoreOp] = {}
        for s in stores:
            if s.buffer in stored:
                raise PassError(
                    s, "tl-to-pallas: a buffer is stored twice in one grid step"
                )
            stored[s.buffer] = s
        check_scatters(scatters, body_ops)
        in_accesses = [
            conv.access(o, o.result.type, o.buffer.type.get_shape()) for o in loads
        ]  # type: ignore[arg-type, union-attr]
        out_accesses = [
            conv.access(s, s.value.type, s.buffer.type.get_shape()) for s in stores
        ]  # type: ignore[arg-type, union-attr]
        # One operand per distinct block: loads of one buffer through one block spec
        # (an array read at two loop dims whose tiles are whole, as topk compares each
        # element with each other) share its ref, so the block is fetched once.
        operand_of: dict[tuple[SSAValue, pallas.BlockSpecAttr], int] = {}
        load_operand = [
            operand_of.setdefault((o.buffer, a.spec), len(operand_of))
            for o, a in zip(loads, in_accesses)
        ]
        operand_loads = [loads[load_operand.index(k)] for k in range(len(operand_of))]
        operand_specs = [spec for _, spec in operand_of]
        # inout buffers keep what the kernel does not write: pass them in and alias.
        alias_inputs: list[BlockArgument] = []
        aliases: list[tuple[int, int]] = []
        n_pre = len(conv.prefetch)
        for k, s in enumerate(stores):
            buf = s.buffer
            assert isinstance(buf, BlockArgument)
            if kernel.role_of(buf) != ArgRole.INOUT:
                continue
            alias_inputs.append(buf)
            aliases.append(
                (n_pre + len(operand_loads) + len(gathers) + len(alias_inputs) - 1, k)
            )
        for k, sc in enumerate(scatters):
            assert isinstance(sc.dest, BlockArgument)
            alias_inputs.append(sc.dest)
            aliases.append(
                (
                    n_pre + len(operand_loads) + len(gathers) + len(alias_inputs) - 1,
                    len(stores) + k,
                )
            )
        # A gather's index buffer is read flat (tl.gather's offsets are row-major
        # positions): an N-D one is flattened on the host with its i32 conversion.
        scalar_read = {o.buffer for o in body_ops if isinstance(o, tl.ScalarLoadOp)}
        flat_index = {
            a: TensorType(i32, [a.type.element_count()])  # type: ignore[attr-defined]
            for a in [*conv.prefetch, *chunked]
            if a not in scalar_read and a.type.get_num_dims() != 1  # type: ignore[attr-defined]
        }
        for sc in scatters:
            if sc.index in scalar_read and sc.index.type.get_num_dims() != 1:  # type: ignore[attr-defined]
                raise PassError(
                    sc,
                    "tl-to-pallas: a scatter reads its index buffer flat, and a "
                    "tl.scalar_load reads it N-D; one of them has to change",
                )

        def index_operand(a: BlockArgument) -> SSAValue:
            value = host.as_int32(host.read(launch.args[a.index], launch))
            if a in flat_index:
                value = host.add(pallas.ReshapeOp(value, flat_index[a])).results[0]
            return value

        operands = [index_operand(a) for a in conv.prefetch]
        operands += [
            host.read(launch.args[o.buffer.index], launch)  # type: ignore[attr-defined]
            for o in operand_loads
        ]
        operands += [
            host.read(launch.args[rows_source(g).index], launch) for g in gathers
        ]  # type: ignore[attr-defined]
        operands += [host.read(launch.args[a.index], launch) for a in alias_inputs]
        operands += [index_operand(a) for a in chunked]
        result_types = [tensor_of(s.buffer.type) for s in stores]  # type: ignore[arg-type]
        result_types += [tensor_of(sc.dest.type) for sc in scatters]  # type: ignore[arg-type]
        # Gathered tables stay in HBM (`any`): rows come by manual DMA; a table marked
        # `table = "vmem"` (G4) is one whole block that stays resident (its index never
        # changes, so it is fetched once), and the row DMAs are local VMEM copies.
        n_grid = len(grid.extents)
        table_specs = [
            pallas.BlockSpecAttr(
                rows_source(g).type.get_shape(),  # type: ignore[attr-defined]
                AffineMap(
                    n_grid,
                    0,
                    tuple(AffineConstantExpr(0) for _ in rows_source(g).type.get_shape()),  # type: ignore[attr-defined]
                ),
            )
            if resident(g)
            else pallas.BlockSpecAttr.any()
            for g in gathers
        ]
        in_specs = [
            *operand_specs,
            *table_specs,
            *[pallas.BlockSpecAttr.any()] * len(alias_inputs),
            *(index_chunk_spec(a, gathers, conv) for a in chunked),
        ]
        out_specs = [a.spec for a in out_accesses]
        out_specs += [pallas.BlockSpecAttr.any()] * len(scatters)
        # The kernel region.
        ref_types: list[pallas.RefType] = []
        for a in conv.prefetch:
            t = a.type
            assert isinstance(t, MemRefType)
            shape = flat_index[a].get_shape() if a in flat_index else t.get_shape()
            ref_types.append(pallas.RefType(shape, i32, pallas.MemorySpace.SMEM))
        for o, spec in zip(operand_loads, operand_specs):
            ref_types.append(pallas.RefType(spec.ref_shape(), o.result.type.element_type))  # type: ignore[union-attr]
        for a, spec in zip(
            [*(rows_source(g) for g in gathers), *alias_inputs],
            in_specs[len(operand_specs) :],
        ):
            t = a.type
            assert isinstance(t, MemRefType)
            ref_types.append(pallas.RefType(t.get_shape(), t.element_type, spec.space))
        for spec in in_specs[len(in_specs) - len(chunked) :]:
            ref_types.append(pallas.RefType(spec.ref_shape(), i32, spec.space))
        for s, acc in zip(stores, out_accesses):
            ref_types.append(
                pallas.RefType(acc.spec.ref_shape(), s.value.type.element_type)
            )  # type: ignore[union-attr]
        for sc in scatters:
            t = sc.dest.type
            assert isinstance(t, MemRefType)
            ref_types.append(
                pallas.RefType(t.get_shape(), t.element_type, pallas.MemorySpace.ANY)
            )
        # Each gather's rows land in a VMEM buffer, signalled on a DMA semaphore.
        scratch: list[pallas.RefType] = []
        for g in gathers:
            t = g.result.type
            assert isinstance(t, TensorType)
            # Rows land in a (rows, lanes) buffer; a strided load's leading dims are 1.
            if isinstance(g, tl.GatherOp):
                shape = list(t.get_shape())
                if (packed := packed_rows(g)) > 1:  # one slab of packed rows a lookup
                    shape.insert(1, packed)
            else:  # whole rows of the array (a lane step compacts them after)
                shape = [t.get_shape()[-2], g.buffer.type.get_shape()[-1]]  # type: ignore[attr-defined]
            scratch.append(pallas.RefType(shape, t.element_type))
            if not copied_in_vmem(g):  # a DMA signals its semaphore
                scratch.append(pallas.RefType([], i32, pallas.MemorySpace.SEMAPHORE))
        # Each scatter's tile is stored to VMEM rows, written out by DMA.
        scatter_refs_at: dict[tl.ScatterOp, tuple[int, int]] = {}
        for sc in scatters:
            more = scatter_scratch(sc)
            scatter_refs_at[sc] = (len(scratch), len(scratch) + len(more))
            scratch += more
        # A split reduction of 8- or 16-bit data accumulates in a 32-bit VMEM scratch
        # (initialised at the first step of its sequential dims, written to the output
        # block, narrowed, at the last); wider data accumulates in the output block.
        acc_scratch: dict[tl.StoreOp, int] = {}
        for st in stores:
            vt = st.value.type
            assert isinstance(vt, TensorType)
            if st.accumulate is not None and (wide := accumulator_type(vt)) is not None:
                acc_scratch[st] = len(scratch)
                scratch.append(pallas.RefType(vt.get_shape(), wide.element_type))
        # A tl.accumulate keeps its running total in a VMEM scratch of its tile.
        total_scratch: dict[tl.AccumulateOp, int] = {}
        for o in body_ops:
            if isinstance(o, tl.AccumulateOp):
                total_scratch[o] = len(scratch)
                t = o.partial.type
                assert isinstance(t, TensorType)
                scratch.append(pallas.RefType(t.get_shape(), t.element_type))
        body = Block(arg_types=[*ref_types, *scratch])
        refs = list(body.args)
        for ref, a in zip(refs, conv.prefetch):
            ref.name_hint = f"{a.name_hint}_ref" if a.name_hint else None
        n_in = len(operand_loads)
        in_refs = refs[n_pre : n_pre + n_in]
        table_refs = refs[n_pre + n_in : n_pre + n_in + len(gathers)]
        first_out = n_pre + n_in + len(gathers) + len(alias_inputs) + len(chunked)
        chunk_refs = dict(zip(chunked, refs[first_out - len(chunked) : first_out]))
        for a, ref in chunk_refs.items():
            ref.name_hint = f"{a.name_hint}_chunk" if a.name_hint else None
        out_refs = refs[first_out : first_out + len(stores)]
        dest_refs = refs[
            first_out + len(stores) : first_out + len(stores) + len(scatters)
        ]
        scratch_refs = refs[first_out + len(stores) + len(scatters) :]
        # Each gather's rows buffer, then its semaphore where it has one.
        gather_refs: dict[Operation, tuple[SSAValue, SSAValue, SSAValue | None]] = {}
        at = 0
        for table_ref, g in zip(table_refs, gathers, strict=True):
            sem = None if copied_in_vmem(g) else scratch_refs[at + 1]
            gather_refs[g] = (table_ref, scratch_refs[at], sem)
            at += 1 if sem is None else 2
        for ref, g in zip(table_refs, gathers):
            source = rows_source(g)
            where = "vmem" if resident(g) else "hbm"
            ref.name_hint = f"{source.name_hint}_{where}" if source.name_hint else None
        for _, rows_ref, sem in gather_refs.values():
            rows_ref.name_hint = "rows"
            if sem is not None:
                sem.name_hint = "sem"
        for k in [*acc_scratch.values(), *total_scratch.values()]:
            scratch_refs[k].name_hint = "acc"
        alias_refs = refs[n_pre + n_in + len(gathers) : first_out - len(chunked)]
        for sc, ref, kept in zip(scatters, dest_refs, alias_refs[-len(scatters) :]):
            if sc.dest.name_hint:  # the input ref is unused: it only aliases the output
                name = sc.dest.name_hint
                ref.name_hint, kept.name_hint = f"{name}_hbm", f"{name}_in"
            lo, hi = scatter_refs_at[sc]
            for name, r in zip(("rows", "sem", "old", "new"), scratch_refs[lo:hi]):
                r.name_hint = name
        for ref, o in zip(in_refs, operand_loads):
            ref.name_hint = f"{o.buffer.name_hint}_ref" if o.buffer.name_hint else None
        for ref, s in zip(out_refs, stores):
            ref.name_hint = f"{s.buffer.name_hint}_out" if s.buffer.name_hint else None
        values: dict[SSAValue, SSAValue] = {}
        # The accumulates some tl.previous reads, and the totals they held before.
        read_before = {o.accumulate for o in body_ops if isinstance(o, tl.PreviousOp)}
        previous_of: dict[tl.AccumulateOp, SSAValue] = {}
        load_refs = {
            o: (in_refs[k], acc) for o, k, acc in zip(loads, load_operand, in_accesses)
        }
        store_refs = dict(zip(stores, zip(out_refs, out_accesses)))
        into: dict[Block | None, Block] = {grid.body.block: body}
        for o in body_ops:
            new: Operation | None = None
            block = into[o.parent_block()]
            if isinstance(o, tl.ScalarLoadOp):
                continue
            if isinstance(o, tl.LoadOp) and o in gather_refs:
                table_ref, rows_ref, sem = gather_refs[o]
                assert sem is not None  # rows from HBM, by DMA
                *prologue, new = strided_rows(conv, o, table_ref, rows_ref, sem)
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
            elif isinstance(o, tl.LoadOp):
                ref, acc = load_refs[o]
                new = pallas.LoadOp(ref, o.result.type, acc.indexers)  # type: ignore[arg-type]
            elif isinstance(o, tl.GatherOp):
                table_ref, rows_ref, sem = gather_refs[o]
                start = conv.grid_map(o.map.data, o.dims, o).results[0]
                chunk = None
                if o.indices[0] in chunk_refs:
                    # The step's lookups are at `start mod C` of its SMEM chunk.
                    index_refs = [chunk_refs[o.indices[0]]]  # type: ignore[index]
                    chunk = index_refs[0].type.get_shape()[0]  # type: ignore[attr-defined]
                else:
                    index_refs = [refs[conv.prefetch.index(i)] for i in o.indices]  # type: ignore[arg-type]
                *prologue, new = gather_rows(
                    start, index_refs, table_ref, rows_ref, sem, o, chunk
                )
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
            elif isinstance(o, tl.ScatterOp):
                lo, hi = scatter_refs_at[o]
                index_ref = refs[conv.prefetch.index(o.index)]  # type: ignore[arg-type]
                dest_ref = dest_refs[scatters.index(o)]
                *prologue, new = scatter_rows(
                    conv, o, values[o.value], index_ref, dest_ref, scratch_refs[lo:hi]
                )
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
            elif isinstance(o, tl.StoreOp) and o.accumulate is not None:
                ref, acc = store_refs[o]
                acc_ref = scratch_refs[acc_scratch[o]] if o in acc_scratch else None
                *prologue, new = accumulate(
                    o, values[o.value], ref, acc.indexers, grid, acc_ref
                )
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
            elif isinstance(o, tl.StoreOp):
                ref, acc = store_refs[o]
                new = pallas.StoreOp(values[o.value], ref, acc.indexers)
            elif isinstance(o, tl.AccumulateOp):
                acc_ref = scratch_refs[total_scratch[o]]
                factor = None if o.rescale is None else values[o.rescale]
                (*prologue, new), before = running_total(
                    o, values[o.partial], acc_ref, grid, factor, o in read_before
                )
                if before is not None:
                    previous_of[o] = before
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
            elif isinstance(o, tl.PreviousOp):
                # The scratch as the accumulate read it, before its combination.
                before = previous_of[o.accumulate]
                if before.name_hint is None:
                    before.name_hint = o.result.name_hint
                values[o.result] = before
                continue
            elif isinstance(o, tl.OnLastStepOp):
                prologue, last = sequential_steps(grid, lambda k, n: n - 1)
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
                into[o.body.block] = Block()
                new = pallas.WhenOp(last, Region(into[o.body.block]))
            elif isinstance(o, tl.WhenOp):
                (condition,) = conv.grid_map(o.map.data, o.dims, o).results
                prologue, runs = grid_condition(condition, o)
                for p in prologue:
                    p.location = o.location
                    block.add_op(p)
                into[o.body.block] = Block()
                when = pallas.WhenOp(runs, Region(into[o.body.block]))
                when.location = o.location
                block.add_op(when)
                # Outside the pallas.when, each result is its accumulator's scratch:
                # this step's total where the body ran, the total so far elsewhere.
                for result, total in zip(o.totals, o.yield_op.values, strict=True):
                    read = pallas.LoadOp(
                        scratch_refs[total_scratch[total.owner]],  # type: ignore[index]
                        result.type,  # type: ignore[arg-type]
                    )
                    read.location = o.location
                    read.result.name_hint = result.name_hint
                    block.add_op(read)
                    values[result] = read.result
                continue
            elif isinstance(o, tl.YieldOp):
                continue  # its tl.when's results read the accumulators' scratch
            elif isinstance(o, tl.TransposeOp):
                new = pallas.TransposeOp(values[o.source], o.permutation.get_values())
            elif isinstance(o, tl.RollOp):
                new = pallas.RollOp(
                    values[o.source], o.shift.value.data, o.dim.value.data
                )
            elif isinstance(o, tl.IotaOp):
                start = conv.grid_map(o.map.data, o.dims, o).results[0]
                *prologue, offset = grid_scalar(start, o)[0]
                for p in [*prologue, offset]:
                    p.location = o.location
                    block.add_op(p)
                new = pallas.IotaOp(offset.results[0], o.dim.value.data, o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.DotOp):
                new = pallas.DotOp(values[o.lhs], values[o.rhs], o.precision_of())
            elif isinstance(o, tl.ReshapeOp):
                new = pallas.ReshapeOp(values[o.source], o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.BroadcastOp):
                new = pallas.BroadcastOp(values[o.source], o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.ReduceOp):
                new = pallas.ReduceOp(o.kind.data, values[o.source], o.dims.get_values())
            elif isinstance(o, tl.ConvertOp):
                new = pallas.ConvertOp(values[o.source], o.result.type)  # type: ignore[arg-type]
            elif isinstance(o, tl.CompareOp):
                new = pallas.CompareOp(o.predicate.data, values[o.lhs], values[o.rhs])
            elif isinstance(o, tl.SelectOp):
                new = pallas.SelectOp(
                    values[o.cond], values[o.true_value], values[o.false_value]
                )
            elif o.dialect_name() in ELEMENTWISE_DIALECTS:
                for operand in o.operands:
                    if operand not in values:
                        raise PassError(
                            o, "tl-to-pallas: tile compute may use only tile values"
                        )
                new = o.clone(value_mapper=dict(values))
            else:
                raise PassError(o, f"tl-to-pallas: no Pallas form for '{o.name}'")
            new.location = o.location
            block.add_op(new)
            for old_r, new_r in zip(o.results, new.results):
                new_r.name_hint = old_r.name_hint
                values[old_r] = new_r
        _hoist_program_ids(body)
        call = pallas.CallOp(
            kernel.sym_name.data,
            operands,
            result_types,
            grid.extents,
            in_specs,
            out_specs,
            scatter_semantics(
                conv, scatters, [_SEMANTICS[s.data] for s in grid.semantics.data]
            ),
            num_scalar_prefetch=n_pre,
            scratch_shapes=scratch,
            input_output_aliases=aliases,
            body=Region(body),
        )
        host.add(call)
        cost = call_cost(call)
        flops, transcendentals = grid_compute(grid)
        call.properties["cost_estimate"] = pallas.CostEstimateAttr(
            flops, transcendentals, cost.modelled
        )
        chip = CHIPS[self.chip]
        if cost.vmem_bytes > chip.vmem_bytes:
            raise PassError(
                launch,
                f"tl-to-pallas: @{kernel.sym_name.data} needs {cost.vmem_bytes} B of VMEM "
                f"(double-buffered blocks, scratch and relayout values, in whole tiles), over the "
                f"{chip.vmem_bytes} B of a {chip.name}: tile it smaller",
            )
        if (limit := vmem_limit(cost.vmem_bytes, chip)) is not None:
            call.properties["vmem_limit_bytes"] = IntegerAttr(limit, i64)
        for s, r in zip(stores, call.outs):
            host.write(launch.args[s.buffer.index], r)  # type: ignore[attr-defined]
        for sc, r in zip(scatters, call.outs[len(stores) :]):
            host.write(launch.args[sc.dest.index], r)  # type: ignore[attr-defined]
        return call


def _overwritten_arguments(
    forward: func.FuncOp, kernels: dict[str, tl.KernelOp | ta.KernelOp], host: Host
) -> set[int]:
    """The arguments of @forward a launch takes `inout` (through views: `host.root`):
    the kernel reads and writes the argument's own array (aliased, or an XLA update),
    so the caller donates it."""
    args = forward.body.block.args
    found: set[int] = set()
    for launch in forward.body.block.ops:
        if not isinstance(launch, ta.LaunchOp):
            continue
        kernel = kernels[launch.callee.string_value()]
        for a, operand in zip(kernel.body.block.args, launch.args, strict=True):
            root = host.root[operand]
            if kernel.role_of(a) == ArgRole.INOUT and root in args:
                found.add(args.index(root))
    return found


def _hoist_program_ids(body: Block) -> None:
    """Move each `pallas.program_id` inside a `pallas.when` (a `tl.when` body's, or
    its accumulators') out before the top-level op that holds it, one per axis there:
    interpret mode has no `program_id` inside a `pl.when` (a `cond` branch)."""
    hoisted: dict[tuple[Operation, int], SSAValue] = {}
    for pid in [o for o in body.walk() if isinstance(o, pallas.ProgramIdOp)]:
        top: Operation = pid
        while top.parent_block() is not body:
            top = top.parent_op()  # type: ignore[assignment]
        if top is pid:
            continue
        key = (top, pid.axis.value.data)
        if key in hoisted:
            pid.result.replace_all_uses_with(hoisted[key])
            pid.detach()
            pid.erase()
            continue
        pid.detach()
        body.insert_op_before(pid, top)
        hoisted[key] = pid.result
