"""Modelled HBM traffic of every example, against the least it could be.

    python benchmarks/traffic.py [--chip v5e|v6e] [--filter REGEX]
                                 [--pass-inputs | --frontend]

Cases: every `examples/ta/*.mlir` (lowered with the pipeline of
tests/test_lowering_pipeline.py: `split-kernel-loops,stride-to-reshape,
canonicalize-permutation,indirect-load-to-scalar-prefetch,tile{chip=C},
tl-to-pallas{chip=C}`), every
`examples/tl/*.mlir` (lowered with `tl-to-pallas{chip=C}`) and every
`examples/pallas/*.mlir` (as written). For each, one row: modelled bytes (kernels plus
wrapper copies), minimum bytes, their ratio, the VMEM footprint of its largest call,
and `bound` when the count is an upper bound (index maps that read prefetched data,
modelled without index data). Every ratio above 1.05 gets a line saying why, derived
from the cost report and the IR it was computed from. Then the median and the maximum
ratio. A case that does not parse, verify or lower prints its error; the exit code is 1
if any did.

`--pass-inputs` measures instead every single-kernel input of the pass tests
(`tests/filecheck/passes`), launched by a synthetic @forward whose host buffers take the
N-D shape the kernel views them as (`lower_on_host_storage` in
`tests/support/pass_inputs.py`, as a frontend holds torch tensors). Accesses that no Pallas idiom covers run on XLA there;
their rows say so.

`--frontend` measures PyTorch programs compiled by `pallas_ir.compile` (softmax,
norms, var_mean, cross-entropy, a GELU chain, linear + bias + GELU), each row with its
number of launches (`pallas_call`s and XLA calls) beside the bytes.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation

import pallas_ir
from pallas_ir.affine_analysis import linearize
from pallas_ir.analysis.cost_model import used_elements
from pallas_ir.dialects import pallas, xla
from pallas_ir.dtypes import numpy_dtype
from pallas_ir.registry import default_pipeline

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.pass_inputs import lower_on_host_storage, pass_test_programs

EXAMPLES = ROOT / "examples"
THRESHOLD = 1.05


def pipelines(chip: str) -> dict[str, str | None]:
    """Per example folder, the pipeline that lowers it to `pallas` (None: as is)."""
    return {
        "ta": default_pipeline(chip),
        "tl": f"tl-to-pallas{{chip={chip}}}",
        "pallas": None,
    }


@dataclass
class Row:
    name: str
    launches: int | None = None
    kernels: int = 0
    wrapper: int = 0
    minimum: int = 0
    vmem: int = 0
    bound: bool = False
    why: list[str] = field(default_factory=list[str])
    notes: list[str] = field(default_factory=list[str])
    error: str | None = None

    @property
    def modelled(self) -> int:
        return self.kernels + self.wrapper

    @property
    def ratio(self) -> float:
        return self.modelled / self.minimum if self.minimum else 1.0


def _shape(t) -> str:
    return "x".join(map(str, t.get_shape()))


def _nbytes(t) -> int:
    n = 1
    for d in t.get_shape():
        n *= d
    return n * (t.element_type.bitwidth // 8)


def _window(op: pallas.LoadOp | pallas.StoreOp, ref_shape) -> list:
    """The indexers of what the kernel uses of a ref: a load's, narrowed by the slices of
    the loaded value (a load `pallas-legalize-mosaic` widened reads as the window it
    uses), each dim's used positions as `ds(start, size, stride)`."""
    indexers = list(op.indexers.data)
    used = used_elements(op.result) if isinstance(op, pallas.LoadOp) else True
    if isinstance(used, bool):
        return indexers
    window, d = [], 0
    for ix in indexers or [pallas.SliceAttr(0, n) for n in ref_shape]:
        if not isinstance(ix, pallas.SliceAttr):
            window.append(ix)
            continue
        others = tuple(a for a in range(used.ndim) if a != d)
        d += 1
        pos = np.flatnonzero(used.any(axis=others))
        step = int(pos[1] - pos[0]) if len(pos) > 1 else 1
        if not len(pos) or np.any(np.diff(pos) != step):
            window.append(ix)  # not one progression: the load's own indexer
            continue
        start, stride = ix.start.data + int(pos[0]) * ix.stride.data, ix.stride.data
        window.append(pallas.SliceAttr(start, len(pos), stride * step))
    return window


def _indexers(window: list, shape) -> str:
    parts = []
    for ix, n in zip(window, shape):
        if isinstance(ix, pallas.SliceAttr):
            s, z, k = ix.start.data, ix.size.data, ix.stride.data
            if (s, z, k) == (0, n, 1):
                parts.append(":")
            else:
                parts.append(f"ds({s}, {z}" + (f", stride={k})" if k != 1 else ")"))
        else:
            parts.append(str(ix.data))
    return "[" + ", ".join(parts) + "]"


def _dim_kind(k: int, rank: int) -> str:
    if k == rank - 1:
        return "lane"
    if k == rank - 2:
        return "sublane"
    return "leading"


def _floor(kinds: set[str]) -> str:
    """What bounds a wide read from below, by the kind of in-block selection."""
    if any(k.startswith("lane") for k in kinds):
        return (
            "; a block's lane dim is whole 128-lane groups or the whole dim, so "
            "unused lanes move with the used ones: this read is the floor"
        )
    if any(k.startswith("sublane stride") for k in kinds):
        return (
            "; a strided pl.ds load reads every row of its block, "
            "only per-row DMAs would move just the used rows"
        )
    if any(k.startswith("sublane slice") for k in kinds):
        return (
            "; blocks are whole 8-row groups or the whole dim, so the rows around "
            "the slice move too"
        )
    return ""


def _axes(at) -> list[int]:
    """The domain axis of each dim of an `xla.flat_index` (its iota's)."""
    return [d.owner.axis.value.data for d in at.dims]


def _symbol_dims(value) -> set[int]:
    """The domain axes a gather symbol depends on: those of the index takes (and loop
    indices) it is computed from."""
    owner = value.owner
    if isinstance(owner, xla.IotaOp):  # a loop index
        return {owner.axis.value.data}
    if not isinstance(owner, Operation):  # a function argument
        return set()
    if isinstance(owner, xla.TakeOp):
        at = owner.index.owner
        axes = _axes(at)
        found = {axes[p] for p in at.map.data.used_dims()}
        for s in at.symbols:
            found |= _symbol_dims(s)
        return found
    found: set[int] = set()
    for operand in owner.operands:
        found |= _symbol_dims(operand)
    return found


def _gathered_bits(function) -> int | None:
    """The element width of what an XLA gather function stores (the gathered data)."""
    for op in function.body.block.ops:
        if isinstance(op, xla.ScatterOp):
            return 8 * numpy_dtype(op.value.type.element_type).itemsize
    return None


def _gathered_lanes(function) -> int | None:
    """The fewest contiguous lanes one lookup of an XLA gather function reads: the
    extent of the domain axis walking the table's last dim that the index does not
    depend on (0 when the index picks the lane itself, -1 for rows of a 1-D table that
    start off its 128-element tiles); None without a gather."""
    lanes = None
    for op in function.body.block.ops:
        if not isinstance(op, xla.TakeOp) or any(
            isinstance(u.operation, xla.ConvertOp)
            and isinstance(u.operation.result.type.element_type, IndexType)
            for u in op.result.uses  # an index read, not the gathered data
        ):
            continue
        at = op.index.owner
        axes = _axes(at)
        extents = list(at.result.type.get_shape())
        by_data: set[int] = set()
        for s in at.symbols:
            by_data |= _symbol_dims(s)
        lin = linearize(at.map.data.results[-1])
        if lin is None or 1 in lin.symbols.values():
            run = 0  # the index picks the lane itself
        elif len(at.map.data.results) == 1 and any(c % 128 for c in lin.symbols.values()):
            run = -1  # rows of a 1-D table that start off its 128-element tiles
        else:
            # A lookup's lanes: the axis that walks the last dim one by one (the
            # table row) without the index depending on it.
            unit = [
                axes[p] for p, c in lin.dims.items() if c == 1 and axes[p] not in by_data
            ]
            run = extents[unit[0]] if unit else 1
        lanes = run if lanes is None else min(lanes, run)
    return lanes


def explain(module, report) -> list[str]:
    """Why a case moves more than its minimum: one short line per cause."""
    why: list[str] = []
    forward = next(
        o
        for o in module.ops
        if getattr(o, "sym_name", None) and o.sym_name.data == "forward"
    )
    host_ops = list(forward.body.block.ops)
    relayouts = [o for o in host_ops if isinstance(o, pallas.ReshapeOp) and o.is_relayout]
    convert = getattr(pallas, "ConvertOp", None)  # host dtype conversions (XLA converts)
    converts = [o for o in host_ops if convert is not None and isinstance(o, convert)]
    if report.wrapper_copy_bytes:
        what = [
            f"reshape {_shape(o.source.type)}->{_shape(o.result.type)} (relayout)"
            for o in relayouts
        ]
        what += [
            f"convert {o.source.type.element_type}->{o.result.type.element_type} "
            f"of {_shape(o.source.type)}"
            for o in converts
        ]
        why.append(
            f"wrapper copies {report.wrapper_copy_bytes} B, each a full HBM read and "
            f"write: {', '.join(what) or 'host ops'}"
        )
    for x in report.xla_calls:
        if x.kind == "kernel":
            if x.modelled > x.minimum:
                why.append(
                    f"@{x.kernel} runs on XLA as one fusion: {x.modelled} B for "
                    f"{x.minimum} B: HBM moves a row's lanes in whole 128-lane groups "
                    "(or the whole row when shorter), so the unused lanes around its "
                    "lane-dim accesses move too: this is the floor"
                )
            continue
        kernel = next(
            o
            for o in module.ops
            if isinstance(o, xla.FuncOp) and o.sym_name.data == x.kernel
        )
        lanes = _gathered_lanes(kernel) if x.kind == "gather" else None
        if x.kind == "gather" and _gathered_bits(kernel) == 8:
            why.append(
                f"@{x.kernel} runs on XLA (a gather of 8-bit rows, which pack four to a "
                "32-bit sublane: a row DMA per lookup would move 4x, the XLA gather's "
                f"extra pass 3x): {x.modelled} B, an extra pass through HBM: the floor "
                "for 8-bit rows"
            )
            continue
        if lanes == -1:
            why.append(
                f"@{x.kernel} runs on XLA (a gather of rows that start off the 128-lane "
                "tiles of a 1-D table: the TPU compiler DMAs a 1-D slice only from a "
                f"tile boundary, so XLA gathers them to a dense buffer): {x.modelled} "
                "B, an extra pass through HBM: the floor for lane-unaligned rows"
            )
            continue
        if lanes is not None and lanes < 128:
            row = "single elements" if lanes <= 1 else f"rows of {lanes} lanes"
            why.append(
                f"@{x.kernel} runs on XLA (a gather of {row}, fewer than 128 lanes: no "
                "block or row DMA moves them without their neighbours, so XLA gathers "
                f"them to a dense buffer): {x.modelled} B, an extra pass through HBM: "
                "the floor for short-row gathers"
            )
            continue
        what = {
            "gather": "an access no Pallas idiom covers, gathered to a dense buffer",
            "scatter": "a store no Pallas idiom covers, scattered into place",
            "index": "the row indices of a gather, computed",
        }[x.kind]
        why.append(
            f"@{x.kernel} runs on XLA ({what}): {x.modelled} B, an extra pass through HBM"
        )
    calls = [o for o in forward.body.block.ops if isinstance(o, pallas.CallOp)]
    for call, cost in zip(calls, report.calls, strict=True):
        refs = list(call.body.block.args)
        values = [*call.prefetch_args, *call.block_args, *call.outs]
        for k, traffic in enumerate(cost.operands):
            if traffic.bytes <= traffic.minimum:
                continue
            ref, value = refs[k], values[k]
            name = f"@{cost.kernel} {traffic.role} {traffic.name}"
            causes = []
            if traffic.bound:
                causes.append(
                    f"upper bound: a block each grid step ({traffic.fetches} DMAs), "
                    "no index data given"
                )
            sliced = [
                u.operation
                for u in ref.uses
                if isinstance(u.operation, pallas.LoadOp | pallas.StoreOp)
                and u.operation.indexers.data
            ]
            if sliced:
                ref_shape = ref.type.get_shape()
                kinds: set[str] = set()
                for op in sliced:
                    for d, (ix, n) in enumerate(zip(_window(op, ref_shape), ref_shape)):
                        kind = _dim_kind(d, len(ref_shape))
                        if not isinstance(ix, pallas.SliceAttr):
                            kinds.add(f"{kind} index")
                        elif ix.stride.data > 1:
                            kinds.add(f"{kind} stride {ix.stride.data}")
                        elif (ix.start.data, ix.size.data) != (0, n):
                            kinds.add(f"{kind} slice {ix.size.data} of {n}")
                idx = ", ".join(
                    sorted(
                        {_indexers(_window(op, ref_shape), ref_shape) for op in sliced}
                    )
                )
                causes.append(
                    f"blocks of {_shape(ref.type)} read wider than the kernel's "
                    f"{idx} needs ({', '.join(sorted(kinds))}){_floor(kinds)}"
                )
            if not traffic.bound and traffic.bytes > _nbytes(value.type):
                causes.append(
                    f"refetches: {traffic.fetches} DMAs move {traffic.bytes} B "
                    f"of a {_nbytes(value.type)} B array"
                )
            packed = [
                u.operation.row_count
                for u in ref.uses
                if isinstance(u.operation, pallas.DmaStartOp)
                and u.operation.row_count > 1
            ]
            if not causes and packed:
                causes.append(
                    f"rows of {16 if packed[0] == 2 else 8}-bit data pack {packed[0]} to "
                    "a 32-bit sublane, which a DMA cannot split: each lookup copies the "
                    f"{packed[0]} rows of its row's sublane and keeps one: the floor for "
                    "packed rows"
                )
            if not causes and getattr(ref.type, "space", None) == pallas.MemorySpace.ANY:
                causes.append(
                    "whole rows come by row DMA and the kernel keeps only some of their "
                    "lanes (a lane step, compacted in registers): this read is the floor"
                )
            if not causes:
                causes.append("blocks cover elements the kernel never uses")
            why.append(
                f"{name}: {traffic.bytes} B for {traffic.minimum} B: " + "; ".join(causes)
            )
    return why


def run_case(path: Path, pipeline: str | None) -> Row:
    name = f"{path.parent.name}/{path.stem}"
    row = Row(name)
    try:
        module = pallas_ir.parse(path.read_text(), str(path.relative_to(ROOT)))
        pallas_ir.verify(module)
        if pipeline:
            pallas_ir.run_passes(module, pipeline)
        report = pallas_ir.cost_report(module)
    except Exception as e:  # noqa: BLE001  (every failure is a row, not a traceback)
        row.error = _error(e)
        return row
    return fill(row, module, report)


def fill(row: Row, module, report) -> Row:
    row.kernels = report.modelled - report.wrapper_copy_bytes  # Pallas and XLA calls
    row.wrapper = report.wrapper_copy_bytes
    row.minimum = report.minimum
    row.vmem = max((c.vmem_bytes for c in report.calls), default=0)
    row.bound = any(c.bound for c in report.calls)
    if row.ratio > THRESHOLD:
        row.why = explain(module, report)
    row.notes = bound_notes(report)
    return row


def run_pass_input(name: str, text: str, chip: str) -> Row:
    row = Row(name)
    try:
        module = lower_on_host_storage(pallas_ir.parse(text, name), chip)
        report = pallas_ir.cost_report(module)
    except Exception as e:  # noqa: BLE001  (every failure is a row, not a traceback)
        row.error = _error(e)
        return row
    return fill(row, module, report)


def bound_notes(report) -> list[str]:
    """Which operands make a count an upper bound, and why."""
    notes = []
    for c in report.calls:
        for o in c.operands:
            if not o.bound:
                continue
            if o.fetches == 1 and o.bytes == o.minimum:
                reason = (
                    "a memory-space-any operand (manual DMA or an aliased inout), "
                    "counted as one whole-array read"
                )
            else:
                reason = "its index map reads prefetched data; no index data given"
            notes.append(f"@{c.kernel} {o.role} {o.name}: {reason}")
    return notes


def _error(e: Exception) -> str:
    op = getattr(e, "op", None)
    where = ""
    while op is not None:
        loc = getattr(op, "location", None)
        if loc is not None and hasattr(loc, "line"):
            where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
            break
        op = op.parent_op()
    text = str(e).strip().splitlines()
    return f"{where}{type(e).__name__}: {text[0] if text else ''}"


def frontend_programs():
    """name → (a PyTorch function, its inputs): the programs issue 15's targets name."""
    import torch
    import torch.nn.functional as F
    from attention_programs import (
        attention,
        causal_attention,
        decode_attention,
        decode_step,
        gqa_attention,
        padded_attention,
    )

    from pallas_ir.frontend.models import LlamaLayer, TransformerBlock

    torch.manual_seed(0)
    rows, width = 4096, 1024
    x = torch.randn(rows, width)
    w = torch.randn(width)
    weight, bias = torch.randn(width, width) / 32, torch.randn(width)
    labels = torch.randint(0, width, (rows,))

    def gelu_chain(h):
        return 0.5 * h * (1 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))

    def rms_norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    return {
        "softmax": (lambda x: torch.softmax(x, -1), [x]),
        "log_softmax": (lambda x: F.log_softmax(x, -1), [x]),
        "layer_norm": (lambda x, w: F.layer_norm(x, (width,), w, w), [x, w]),
        "rms_norm": (rms_norm, [x, w]),
        "var_mean": (lambda x: torch.var_mean(x, -1), [x]),
        "cross_entropy": (lambda x, y: F.cross_entropy(x, y), [x, labels]),
        "gelu_chain": (gelu_chain, [x]),
        "linear_bias_gelu": (
            lambda x, w, b: F.gelu(x @ w + b, approximate="tanh"),
            [x, weight, bias],
        ),
        "attention_t512": (attention, _qkv(512)),
        "attention_t2048": (attention, _qkv(2048)),
        "attention_causal_t512": (causal_attention, _qkv(512)),
        "attention_causal_t2048": (causal_attention, _qkv(2048)),
        "attention_padded_t512": (padded_attention, [*_qkv(512), _lengths(512)]),
        "attention_padded_t2048": (padded_attention, [*_qkv(2048), _lengths(2048)]),
        "attention_gqa_t512": (gqa_attention, _qkv(512, kv_heads=2)),
        "attention_gqa_t2048": (gqa_attention, _qkv(2048, kv_heads=2)),
        "attention_decode_s2048": (decode_attention, [*_qkv(1)[:1], *_qkv(2048)[1:]]),
        "decode_step_s2048": (
            decode_step,
            [*_qkv(2048)[1:], *_qkv(1)[1:], torch.tensor([37]), _qkv(1)[0]],
        ),
        "transformer_block": (
            TransformerBlock(256, 4).eval(),
            [torch.randn(4, 128, 256)],
        ),
        "llama_layer": (LlamaLayer().eval(), [torch.randn(4, 128, 256)]),
        "tiny_gpt": _tiny_gpt(),
    }


def _lengths(t: int):
    import torch

    return torch.tensor([t * 3 // 5, t])  # batch 0 padded after 60% of its keys


def _tiny_gpt():
    """The example's GPT (2 layers, D=64 heads), its forward and loss, at T=128."""
    import importlib.util

    import torch

    path = Path(__file__).parent.parent / "examples" / "torch" / "train_tiny_gpt.py"
    spec = importlib.util.spec_from_file_location("train_tiny_gpt", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    model = example.TinyGPT(256, 128, dim=128, heads=2, layers=2).eval()
    idx = torch.randint(0, 256, (4, 128))
    return model, [idx, torch.roll(idx, -1, 1)]


def _qkv(t: int, kv_heads: int = 4):
    import torch

    q = torch.randn(2, 4, t, 64)  # B=2, H=4, T, D=64
    return [q, torch.randn(2, kv_heads, t, 64), torch.randn(2, kv_heads, t, 64)]


def run_frontend(name: str, fn, inputs, chip: str) -> Row:
    row = Row(f"torch/{name}")
    try:
        k = pallas_ir.compile(fn, inputs, chip=chip)
        report = k.cost_report()
    except Exception as e:  # noqa: BLE001  (every failure is a row, not a traceback)
        row.error = _error(e)
        return row
    row.launches = len(report.calls) + len(report.xla_calls)
    return fill(row, k.module, report)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chip", choices=["v5e", "v6e"], default="v5e")
    ap.add_argument("--filter", default="", help="regex on the case name (e.g. 'ta/')")
    ap.add_argument(
        "--pass-inputs",
        action="store_true",
        help="measure the pass tests' inputs instead of the examples",
    )
    ap.add_argument(
        "--frontend",
        action="store_true",
        help="measure PyTorch programs compiled by pallas_ir.compile",
    )
    args = ap.parse_args(argv)
    pattern = re.compile(args.filter)
    rows: list[Row] = []
    if args.frontend:
        for name, (fn, inputs) in frontend_programs().items():
            if pattern.search(f"torch/{name}"):
                rows.append(run_frontend(name, fn, inputs, args.chip))
    elif args.pass_inputs:
        for name, text in pass_test_programs(ROOT / "tests" / "filecheck" / "passes"):
            if pattern.search(name):
                rows.append(run_pass_input(name, text, args.chip))
    else:
        for folder, pipeline in pipelines(args.chip).items():
            for path in sorted((EXAMPLES / folder).glob("*.mlir")):
                if pattern.search(f"{folder}/{path.stem}"):
                    rows.append(run_case(path, pipeline))
    if not rows:
        print(f"no case matches {args.filter!r}")
        return 1
    width = max(len(r.name) for r in rows)
    head = (
        f"{'case':<{width}}  {'kernels B':>10}  {'wrapper B':>10}  {'modelled B':>10}  "
        f"{'minimum B':>10}  {'ratio':>6}  {'VMEM B':>9}  bound"
    )
    print(f"HBM traffic model, chip {args.chip}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if r.error:
            print(f"{r.name:<{width}}  FAILED  {r.error}")
            continue
        print(
            f"{r.name:<{width}}  {r.kernels:>10}  {r.wrapper:>10}  {r.modelled:>10}  "
            f"{r.minimum:>10}  {r.ratio:>6.3f}  {r.vmem:>9}  {'bound' if r.bound else ''}"
            + ("" if r.launches is None else f"  {r.launches} launches")
        )
        for w in r.why:
            print(f"{'':<{width}}    why: {w}")
        for n in r.notes:
            print(f"{'':<{width}}    bound: {n}")
    ok = [r for r in rows if not r.error]
    failed = len(rows) - len(ok)
    print("-" * len(head))
    if ok:
        ratios = [r.ratio for r in ok]
        worst = max(ok, key=lambda r: r.ratio)
        over = sum(x > THRESHOLD for x in ratios)
        print(
            f"{len(ok)} cases: median ratio {statistics.median(ratios):.3f}, "
            f"max ratio {worst.ratio:.3f} ({worst.name}); {over} above {THRESHOLD}"
        )
    if failed:
        print(f"{failed} case(s) failed to lower")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
