"""split-kernel-loops: a `ta.kernel` with several `ta.loop`s becomes one kernel per loop,
launched in the same order (loop fission at kernel granularity).

The loops of a kernel run one after the other, and every value one loop passes to the
next goes through a buffer, so launching them as separate kernels on the same buffers
computes the same thing. Each new kernel `@NAME_K` takes only the buffers its loop
touches, with the role that loop needs:

- read only: `in` (`prefetch` stays `prefetch`); an accumulating store reads too;
- written and not read: `out` when one store of the loop provably writes every element
  (its flat offset is a mixed-radix numbering of the whole buffer), or when the original
  role is `out` and no earlier loop wrote the buffer (what is left unwritten was
  undefined anyway);
- otherwise `inout`, so what the kernel received or earlier loops wrote is kept.

Splitting is what lets the later passes see each loop alone: a buffer that one loop
writes and a later one reads as gather indices is read-only in the second kernel, so
indirect-load-to-scalar-prefetch can make it a prefetch argument there; and the tiler
handles one loop per kernel. Kernel-level values the loops share (views, constants) are
cloned into each kernel that uses them. Every `ta.launch` of the kernel becomes one
launch per part.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

from pallas_ir.diagnostics import count, emit_remark
from pallas_ir.dialects.tensor_access import KernelOp
from pallas_ir.passes.kernel_fission import split_kernel
from pallas_ir.passes.options import CheckedOptionsPass


@dataclass(frozen=True)
class SplitKernelLoopsPass(CheckedOptionsPass):
    """Split every `ta.kernel` with more than one `ta.loop` into one kernel per loop.

    Each split kernel gets one remark naming the parts, and counts under `kernels split`
    in `--pass-statistics`. Kernels with one loop are left as they are. Idempotent.

    Options: none. Fission never changes what the program computes (each loop already
    finishes before the next starts); whether two loops should rather be fused is a
    question for a scheduler, not for this rewrite.
    """

    name = "split-kernel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.ops if isinstance(k, KernelOp)]:
            name = kernel.sym_name.data
            parts = split_kernel(op, kernel)
            if len(parts) < 2:
                continue
            emit_remark(
                kernel,
                f"{self.name}: split @{name} into {len(parts)} kernels, "
                f"one per loop: {', '.join('@' + p.sym_name.data for p in parts)}",
            )
            count(self.name, "kernels split")
            Rewriter.erase_op(kernel)
