// RUN: pallas-opt %s -t python | filecheck %s
// RUN: pallas-opt %s -t python > %t.py
// RUN: python -m py_compile %t.py

// Row DMA writes as Python: `make_async_copy` from a row of the VMEM scratch to the
// row of the `any` output at the leading indices and the read position, `.start()`
// then `.wait()`; the output spec is `pl.BlockSpec(memory_space=pl.ANY)`, aliased to
// the cache input. The cache argument is `{pallas.donated}`: the module names it in
// DONATE_ARGNUMS, after forward, for the caller's `jax.jit(donate_argnums=...)`.
func.func @forward(%pos: tensor<3xi32>, %new: tensor<2x2x2x128xf32>, %cache: tensor<2x64x128xf32> {pallas.donated}) -> tensor<2x64x128xf32> {
  %out = pallas.call @kv(%pos, %new, %cache) grid [2, 2] prefetch 1
      in [#pallas.block_spec<[squeezed, squeezed, 2, 128], (d0, d1) -> (d0, d1, 0, 0)>, #pallas.block_spec<any>]
      out [#pallas.block_spec<any>]
      semantics [parallel, arbitrary] scratch [!pallas.ref<2x128xf32, vmem>, !pallas.ref<i32, semaphore>] aliases [2 -> 0]
      : (tensor<3xi32>, tensor<2x2x2x128xf32>, tensor<2x64x128xf32>) -> tensor<2x64x128xf32>
      kernel(%pos_ref: !pallas.ref<3xi32, smem>, %new_ref: !pallas.ref<2x128xf32, vmem>, %cache_in: !pallas.ref<2x64x128xf32, any>, %cache_hbm: !pallas.ref<2x64x128xf32, any>, %rows: !pallas.ref<2x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
    %v = pallas.load %new_ref[...] : !pallas.ref<2x128xf32, vmem> -> tensor<2x128xf32>
    pallas.store %v, %rows[...] : tensor<2x128xf32>, !pallas.ref<2x128xf32, vmem>
    %b = pallas.program_id 0 : i32
    %s = pallas.program_id 1 : i32
    %two = arith.constant 2 : i32
    %m = arith.muli %s, %two : i32
    %row0 = pallas.read %pos_ref[%m] : !pallas.ref<3xi32, smem> -> i32
    pallas.dma_write_start %rows[0], %cache_hbm at [%b] [%row0], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
    pallas.dma_write_wait %rows[0], %cache_hbm at [%b] [%row0], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
    %one = arith.constant 1 : i32
    %m1 = arith.addi %m, %one : i32
    %three = arith.constant 3 : i32
    %inside = arith.cmpi slt, %m1, %three : i32
    pallas.when %inside {
      %row1 = pallas.read %pos_ref[%m1] : !pallas.ref<3xi32, smem> -> i32
      pallas.dma_write_start %rows[1], %cache_hbm at [%b] [%row1], %sem {note = "last"} : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
      pallas.dma_write_wait %rows[1], %cache_hbm at [%b] [%row1], %sem : !pallas.ref<2x128xf32, vmem>, !pallas.ref<2x64x128xf32, any>, !pallas.ref<i32, semaphore>
    }
  }
  func.return %out : tensor<2x64x128xf32>
}

// CHECK-LABEL: def kv_kernel(pos_ref, new_ref, cache_in, cache_hbm, rows, sem):
// CHECK:           row0 = pos_ref[m]
// CHECK-NEXT:      pltpu.make_async_copy(rows.at[pl.ds(0, 1)], cache_hbm.at[b, pl.ds(row0, 1)], sem).start()
// CHECK-NEXT:      pltpu.make_async_copy(rows.at[pl.ds(0, 1)], cache_hbm.at[b, pl.ds(row0, 1)], sem).wait()
// CHECK:           @pl.when(inside)
// CHECK-NEXT:      def _when():
// CHECK-NEXT:          row1 = pos_ref[m1]
// CHECK-NEXT:          pltpu.make_async_copy(rows.at[pl.ds(1, 1)], cache_hbm.at[b, pl.ds(row1, 1)], sem).start()
// CHECK-NEXT:          pltpu.make_async_copy(rows.at[pl.ds(1, 1)], cache_hbm.at[b, pl.ds(row1, 1)], sem).wait()

// CHECK-LABEL: def kv_call(x0, x1, x2, interpret=False):
// CHECK:               in_specs=[
// CHECK-NEXT:              pl.BlockSpec((None, None, 2, 128), lambda i, j, pos_ref: (i, j, jnp.int32(0), jnp.int32(0))),
// CHECK-NEXT:              pl.BlockSpec(memory_space=pl.ANY),
// CHECK-NEXT:          ],
// CHECK-NEXT:          out_specs=pl.BlockSpec(memory_space=pl.ANY),
// CHECK-NEXT:          scratch_shapes=[pltpu.VMEM((2, 128), jnp.float32), pltpu.SemaphoreType.DMA(())],
// CHECK-NEXT:      ),
// CHECK-NEXT:      input_output_aliases={2: 0},
// CHECK-NEXT:      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),

// CHECK-LABEL: def forward(pos, new, cache, interpret=False):
// CHECK:       DONATE_ARGNUMS = (2,)
