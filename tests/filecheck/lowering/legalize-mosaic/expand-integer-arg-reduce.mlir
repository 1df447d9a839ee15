// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// Mosaic's argmax takes float32 only: of i32 values it becomes the max along the
// axis, then the smallest position holding it (the first, as torch's argmax).
func.func @forward(%x: tensor<8x128xi32>) -> tensor<8x1xi32> {
  %o = pallas.call @argmax(%x) grid [1]
      in [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]
      out [#pallas.block_spec<[8, 1], (d0) -> (0, 0)>]
      semantics [parallel]
      : (tensor<8x128xi32>) -> tensor<8x1xi32>
      kernel(%x_ref: !pallas.ref<8x128xi32, vmem>, %o_ref: !pallas.ref<8x1xi32, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<8x128xi32, vmem> -> tensor<8x128xi32>
    %i = pallas.reduce <argmax> %a [1] : tensor<8x128xi32> -> tensor<8x1xi32>
    pallas.store %i, %o_ref[...] : tensor<8x1xi32>, !pallas.ref<8x1xi32, vmem>
  }
  func.return %o : tensor<8x1xi32>
}

// CHECK:       %i_best = pallas.reduce <max> %a [1] : tensor<8x128xi32> -> tensor<8x1xi32>
// CHECK-NEXT:  %i_best_b = pallas.broadcast %i_best : tensor<8x1xi32> to tensor<8x128xi32>
// CHECK-NEXT:  %i_holds = arith.cmpi eq, %a, %i_best_b : tensor<8x128xi32>
// CHECK:       %i_pos = pallas.iota %i_zero dim 1 : i32 -> tensor<8x128xi32>
// CHECK-NEXT:  %i_beyond = arith.constant dense<128> : tensor<8x128xi32>
// CHECK-NEXT:  %i_candidate = arith.select %i_holds, %i_pos, %i_beyond : tensor<8x128xi32>
// CHECK-NEXT:  %i = pallas.reduce <min> %i_candidate [1] : tensor<8x128xi32> -> tensor<8x1xi32>
// CHECK-NOT:   <argmax>
