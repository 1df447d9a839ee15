"""tl-to-pallas: tiled kernels and their host function become `pallas.call`s.

Each `ta.launch` of a `tl.kernel` in `func.func @forward` becomes one `pallas.call`:

* the `tl.grid` gives the grid; `parallel` dims stay parallel, `sequential` dims become
  `arbitrary`;
* every `tl.load` becomes an input block spec and a `pallas.load` of its ref, every
  `tl.store` an output block spec and a `pallas.store`; the tile's element offsets
  become block indices (offset / block size). A strided tile reads a block `stride`
  times taller and picks its rows in the kernel with `pl.ds(start, n, stride=k)`;
* prefetch buffers read by `tl.scalar_load` become scalar-prefetch operands, and the
  symbols they feed become `sK = prefetchP[map]` bindings of the block specs;
* tile compute is copied: `arith`/`math` as they are, `tl.transpose/broadcast/reduce`
  as their `pallas` forms;
* an `inout` buffer is passed in and aliased to its output, so what the kernel does
  not write keeps its value;
* a `tl.scatter` keeps its `inout` dest in HBM (`any` in, aliased to an `any` output)
  and writes the tile's rows there one by one by row DMA, at prefetched positions;
* a `tl.when` body becomes a `pl.when(<condition on the program ids> >= 0)` body (its
  accumulators' init and combination nested inside), and its results read the
  accumulators' VMEM scratch after it. (Program ids are read outside every
  `pl.when`: interpret mode has none inside one.)

On the host, buffers (memrefs, written in place) become SSA tensors: a launch reads
the current value of each buffer and defines a new value for each one it writes;
`ta.reshape` views become `pallas.reshape`s of the buffer they view.

Offsets that are not multiples of their block size cannot be Pallas blocks: they are
rejected with a located error rather than mis-tiled.

Kernels come out in their plain form (an `arith` op on i8 tiles, a `math.expm1`, a
lane-strided `pallas.load`): valid pallas, which `pallas-legalize-mosaic` then rewrites
into what Mosaic accepts.

The package: `convert` (the pass and the kernel conversion), `access` (block and
offset math), `host` (`@forward`'s buffers as SSA tensors), `gathers` (row DMAs and
packed rows), `scatters` (row DMA writes) and `accumulate` (accumulating stores across
`sequential` grid dims).
"""

from pallas_ir.lowering.tl_to_pallas.convert import TlToPallasPass

__all__ = ["TlToPallasPass"]
