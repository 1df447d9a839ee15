// out[i] = table[idx[i]] for a (1000, 1, 256) f32 table and 64 int32 indices.
// The indices are a scalar-prefetch operand (SMEM); the table's block index map reads
// them, so grid step i DMAs exactly row idx[i]. The (V, 1, D) layout keeps the gathered
// dim leading, where a squeezed block dim is legal.
func.func @forward(%idx: tensor<64xi32>, %table: tensor<1000x1x256xf32>) -> tensor<64x1x256xf32> {
  %out = pallas.call @embedding(%idx, %table) grid [64] prefetch 1
      in [#pallas.block_spec<[squeezed, 1, 256], (d0)[s0] -> (s0, 0, 0), s0 = prefetch0[(d0) -> (d0)]>]
      out [#pallas.block_spec<[squeezed, 1, 256], (d0) -> (d0, 0, 0)>]
      semantics [arbitrary]
      attributes {cost_estimate = #pallas.cost_estimate<flops = 0, transcendentals = 0, bytes_accessed = 131328>}
      : (tensor<64xi32>, tensor<1000x1x256xf32>) -> tensor<64x1x256xf32>
      kernel(%idx_ref: !pallas.ref<64xi32, smem>, %t_ref: !pallas.ref<1x256xf32, vmem>, %o_ref: !pallas.ref<1x256xf32, vmem>) {
    %row = pallas.load %t_ref[...] : !pallas.ref<1x256xf32, vmem> -> tensor<1x256xf32>
    pallas.store %row, %o_ref[...] : tensor<1x256xf32>, !pallas.ref<1x256xf32, vmem>
  }
  func.return %out : tensor<64x1x256xf32>
}
