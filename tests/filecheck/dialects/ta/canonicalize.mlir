// RUN: pallas-opt %s -p canonicalize | filecheck %s

// ta.reshape canonicalizes: a reshape of a reshape is one reshape (view) of the first
// buffer, and a reshape to the buffer's own type is the buffer.

ta.kernel @acc(%x: memref<64x128xf32> {role = "in"}, %acc: memref<64x128xf32> {role = "inout"}) {
  %x1 = ta.reshape %x : memref<64x128xf32> to memref<8192xf32>
  %x2 = ta.reshape %x1 : memref<8192xf32> to memref<128x64xf32>
  %x3 = ta.reshape %x2 : memref<128x64xf32> to memref<64x128xf32>
  ta.loop [64, 128] (%i, %j) {
    %a = ta.load %x3[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %b = ta.load %acc[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
    %s = arith.addf %a, %b : f32
    ta.store %s, %acc[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>
  }
}

// CHECK-LABEL: ta.kernel @acc
// CHECK-NOT:     ta.reshape
// CHECK:         ta.loop [64, 128] (%i, %j) {
// CHECK-NEXT:      %a = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<64x128xf32>

func.func @forward(%x: memref<16384xf32>) -> memref<64x256xf32> {
  %a = ta.reshape %x : memref<16384xf32> to memref<128x128xf32>
  %b = ta.reshape %a : memref<128x128xf32> to memref<64x256xf32>
  func.return %b : memref<64x256xf32>
}

// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    %b = ta.reshape %x : memref<16384xf32> to memref<64x256xf32>
// CHECK-NEXT:    func.return %b : memref<64x256xf32>
