// RUN: pallas-opt %s -p share-identical-kernels --verify-semantics | filecheck %s
// RUN: pallas-opt %s -p share-identical-kernels --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: pallas-opt %s -p share-identical-kernels,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic --verify-semantics | filecheck %s --check-prefix=PALLAS
// RUN: pallas-opt %s -p share-identical-kernels,tile-policy,xla-outline,tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PYTHON

// relu(2 x) four times: @k1 and @k2 are two layers of one model (the same body, on
// buffers held alike), so @k2's launch becomes a launch of @k1. @k3 has the same body
// but reads a buffer the host holds as a matrix (its tiles may differ), and @k4 scales
// by 3: both keep their own kernels.

// CHECK:       ta.kernel @k1(
// CHECK-NOT:   ta.kernel @k2(
// CHECK:       ta.kernel @k3(
// CHECK:       ta.kernel @k4(
// CHECK:       func.func @forward
// CHECK-NEXT:    %a = ta.alloc : memref<4096xf32>
// CHECK-NEXT:    ta.launch @k1(%x, %a)
// CHECK-NEXT:    %b = ta.alloc : memref<4096xf32>
// CHECK-NEXT:    ta.launch @k1(%a, %b)
// CHECK:         ta.launch @k3(
// CHECK:         ta.launch @k4(

// REMARK:      remark: share-identical-kernels: @k2 computes what @k1 does on buffers held alike: launched as @k1
// REMARK-NOT:  remark: share-identical-kernels

// PALLAS-COUNT-2: pallas.call @k1(
// PALLAS:         pallas.call @k3(
// PALLAS:         pallas.call @k4(

// One kernel function and one jitted pallas_call for both launches of @k1.
// PYTHON:          def k1_kernel(
// PYTHON:          def k1_call(x0, interpret=False):
// PYTHON-NOT:      def k1
// PYTHON:          def forward(
// PYTHON-COUNT-2:  = k1_call(
builtin.module {
  ta.kernel @k1(%in: memref<4096xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
    ta.loop [4096] (%i) {
      %v = ta.load %in[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
      %c = arith.constant 2.000000e+00 : f32
      %s = arith.mulf %v, %c : f32
      %z = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %s, %z : f32
      ta.store %r, %out[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    }
  }
  ta.kernel @k2(%in: memref<4096xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
    ta.loop [4096] (%i) {
      %v = ta.load %in[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
      %c = arith.constant 2.000000e+00 : f32
      %s = arith.mulf %v, %c : f32
      %z = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %s, %z : f32
      ta.store %r, %out[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    }
  }
  ta.kernel @k3(%in: memref<4096xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
    ta.loop [4096] (%i) {
      %v = ta.load %in[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
      %c = arith.constant 2.000000e+00 : f32
      %s = arith.mulf %v, %c : f32
      %z = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %s, %z : f32
      ta.store %r, %out[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    }
  }
  ta.kernel @k4(%in: memref<4096xf32> {role = "in"}, %out: memref<4096xf32> {role = "out"}) {
    ta.loop [4096] (%i) {
      %v = ta.load %in[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
      %c = arith.constant 3.000000e+00 : f32
      %s = arith.mulf %v, %c : f32
      %z = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %s, %z : f32
      ta.store %r, %out[affine_map<(d0) -> (d0)>](%i) : memref<4096xf32>
    }
  }
  func.func @forward(%x: memref<4096xf32>, %m: memref<32x128xf32>) -> (memref<4096xf32>, memref<4096xf32>) {
    %a = ta.alloc : memref<4096xf32>
    ta.launch @k1(%x, %a) : memref<4096xf32>, memref<4096xf32>
    %b = ta.alloc : memref<4096xf32>
    ta.launch @k2(%a, %b) : memref<4096xf32>, memref<4096xf32>
    %m_flat = ta.reshape %m : memref<32x128xf32> to memref<4096xf32>
    %c = ta.alloc : memref<4096xf32>
    ta.launch @k3(%m_flat, %c) : memref<4096xf32>, memref<4096xf32>
    %d = ta.alloc : memref<4096xf32>
    ta.launch @k4(%b, %d) : memref<4096xf32>, memref<4096xf32>
    func.return %c, %d : memref<4096xf32>, memref<4096xf32>
  }
}
