// RUN: xdsl-opt %s -t python | filecheck %s
// RUN: xdsl-opt %s -p cse | filecheck %s --check-prefix=IR

// Plain xdsl-opt knows the pallas-ir dialects and the `python` target through the
// `xdsl.universe` entry point of the installed package.

// CHECK: def copy_kernel(x_ref, o_ref):
// CHECK: def forward(x, interpret=False):
// IR: pallas.call @copy(%x) grid [2]
func.func @forward(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %o = pallas.call @copy(%x) grid [2]
      in [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<16x128xf32>) -> tensor<16x128xf32>
      kernel(%x_ref: !pallas.ref<8x128xf32, vmem>, %o_ref: !pallas.ref<8x128xf32, vmem>) {
    %v = pallas.load %x_ref[...] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
    pallas.store %v, %o_ref[...] : tensor<8x128xf32>, !pallas.ref<8x128xf32, vmem>
  }
  func.return %o : tensor<16x128xf32>
}
