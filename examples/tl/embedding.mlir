// out = table[idx] by scalar prefetch (the G1 idiom), for a table the host stores as
// (1000, 1, 256) and 64 int32 indices: the gathered dim is leading, so a one-row block
// (squeezed, 1, 256) is legal and no relayout is needed. (A table stored as (1000, 256)
// would need a relayout copy to that shape on every call: prefer row DMAs then, see
// embedding_dma.mlir.)
tl.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x1x256xf32> {role = "in"}, %out: memref<64x1x256xf32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %t = tl.load %table[affine_map<(d0)[s0] -> (s0, 0, 0)>](%i)[%row] : memref<1000x1x256xf32> -> tensor<1x1x256xf32>
    tl.store %t, %out[affine_map<(d0) -> (d0, 0, 0)>](%i) : tensor<1x1x256xf32>, memref<64x1x256xf32>
  }
}
func.func @forward(%idx: memref<64xi32>, %table: memref<1000x1x256xf32>) -> memref<64x1x256xf32> {
  %out = ta.alloc : memref<64x1x256xf32>
  ta.launch @embedding(%idx, %table, %out) : memref<64xi32>, memref<1000x1x256xf32>, memref<64x1x256xf32>
  func.return %out : memref<64x1x256xf32>
}
