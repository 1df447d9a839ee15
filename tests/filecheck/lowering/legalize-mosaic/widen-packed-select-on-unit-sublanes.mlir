// RUN: pallas-opt %s -p pallas-legalize-mosaic | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p pallas-legalize-mosaic -o /dev/null

// A bfloat16 select of shape (16, 1, 384) on a mask that varies along lanes (the ragged
// last k part of a product, columns past 1000 set to 0): Mosaic fails with "Not
// implemented: Sublane broadcast", so the select runs on f32 and is narrowed back,
// which is exact. A (16, 384) select of the same values is left as it is.
func.func @forward(%x: tensor<16x1000xbf16>) -> tensor<16x1000xbf16> {
  %o = pallas.call @mask(%x) grid [3]
      in [#pallas.block_spec<[16, 384], (d0) -> (0, d0)>]
      out [#pallas.block_spec<[16, 384], (d0) -> (0, d0)>]
      semantics [parallel]
      : (tensor<16x1000xbf16>) -> tensor<16x1000xbf16>
      kernel(%x_ref: !pallas.ref<16x384xbf16, vmem>, %o_ref: !pallas.ref<16x384xbf16, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<16x384xbf16, vmem> -> tensor<16x384xbf16>
    %a3 = pallas.reshape %a : tensor<16x384xbf16> to tensor<16x1x384xbf16>
    %step = pallas.program_id 0 : i32
    %part = arith.constant 384 : i32
    %start = arith.muli %step, %part : i32
    %k = pallas.iota %start dim 2 : i32 -> tensor<1x1x384xi32>
    %end = arith.constant dense<1000> : tensor<1x1x384xi32>
    %inside = pallas.compare <slt> %k, %end : tensor<1x1x384xi32>
    %mask = pallas.broadcast %inside : tensor<1x1x384xi1> to tensor<16x1x384xi1>
    %zero = arith.constant dense<0.000000e+00> : tensor<16x1x384xbf16>
    %kept = pallas.select %mask, %a3, %zero : tensor<16x1x384xi1>, tensor<16x1x384xbf16>
    %k2 = pallas.iota %start dim 1 : i32 -> tensor<1x384xi32>
    %end2 = arith.constant dense<1000> : tensor<1x384xi32>
    %inside2 = pallas.compare <slt> %k2, %end2 : tensor<1x384xi32>
    %m2 = pallas.broadcast %inside2 : tensor<1x384xi1> to tensor<16x384xi1>
    %zero2 = arith.constant dense<0.000000e+00> : tensor<16x384xbf16>
    %kept2 = pallas.select %m2, %a, %zero2 : tensor<16x384xi1>, tensor<16x384xbf16>
    %b = pallas.reshape %kept : tensor<16x1x384xbf16> to tensor<16x384xbf16>
    %s = arith.addf %b, %kept2 : tensor<16x384xbf16>
    pallas.store %s, %o_ref[...] : tensor<16x384xbf16>, !pallas.ref<16x384xbf16, vmem>
  }
  func.return %o : tensor<16x1000xbf16>
}

// CHECK:       %[[A:.*]] = pallas.convert %a3 : tensor<16x1x384xbf16> to tensor<16x1x384xf32>
// CHECK-NEXT:  %[[Z:.*]] = pallas.convert %zero : tensor<16x1x384xbf16> to tensor<16x1x384xf32>
// CHECK-NEXT:  %[[K:.*]] = pallas.select %mask, %[[A]], %[[Z]] : tensor<16x1x384xi1>, tensor<16x1x384xf32>
// CHECK-NEXT:  %kept = pallas.convert %[[K]] : tensor<16x1x384xf32> to tensor<16x1x384xbf16>
// CHECK:       %kept2 = pallas.select %m2, %a, %zero2 : tensor<16x384xi1>, tensor<16x384xbf16>
