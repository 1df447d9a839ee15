// RUN: PALLAS_ROUNDTRIP
// RUN: PALLAS_GENERIC_ROUNDTRIP
// RUN: pallas-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC

// Every xla op in the functions ta-to-xla makes: each prints, parses and prints again
// the same, in the custom and the generic syntax.

// A gather at a computed row, as tl-to-pallas makes it of an XLA gather kernel: the
// argument taken in as the kernel's buffer, an `out` buffer of zeros, the loop's
// variables as iotas over its domain, the index read, converted and used as a symbol
// of the table's flat index, the rows stored.
// CHECK-LABEL: xla.func @gather(%idx: tensor<64xi64>, %emb: tensor<1000x256xf32>) -> tensor<64x256xf32> attributes {part = #xla<part gather>} {
// CHECK-NEXT:    %idx_1 = xla.buffer %idx : tensor<64xi64> to tensor<64xi64>
// CHECK-NEXT:    %emb_1 = xla.buffer %emb : tensor<1000x256xf32> to tensor<256000xf32>
// CHECK-NEXT:    %out = xla.zeros : tensor<64x256xf32>
// CHECK-NEXT:    %i = xla.iota 0 : tensor<64x256xindex>
// CHECK-NEXT:    %j = xla.iota 1 : tensor<64x256xindex>
// CHECK-NEXT:    %0 = xla.flat_index affine_map<(d0, d1) -> (d0)>(%i, %j) [] in [64] : tensor<64x256xindex>
// CHECK-NEXT:    %iv = xla.take %idx_1[%0] : tensor<64xi64>, tensor<64x256xindex> -> tensor<64x256xi64>
// CHECK-NEXT:    %s = xla.convert %iv : tensor<64x256xi64> to tensor<64x256xindex>
// CHECK-NEXT:    %1 = xla.flat_index affine_map<(d0, d1)[s0] -> (s0, d1)>(%i, %j) [%s] in [1000, 256] : tensor<64x256xindex>
// CHECK-NEXT:    %v = xla.take %emb_1[%1] : tensor<256000xf32>, tensor<64x256xindex> -> tensor<64x256xf32>
// CHECK-NEXT:    %2 = xla.flat_index affine_map<(d0, d1) -> (d0, d1)>(%i, %j) [] in [64, 256] : tensor<64x256xindex>
// CHECK-NEXT:    %out_1 = xla.scatter %v, %out[%2] : tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xindex>
// CHECK-NEXT:    xla.return %out_1 : tensor<64x256xf32>
// CHECK-NEXT:  }
// CHECK-GENERIC: "xla.func"() <{sym_name = "gather", function_type = (tensor<64xi64>, tensor<1000x256xf32>) -> tensor<64x256xf32>, part = #xla<part gather>}> ({
// CHECK-GENERIC:   "xla.flat_index"(%i, %j, %s) <{map = affine_map<(d0, d1)[s0] -> (s0, d1)>, shape = array<i64: 1000, 256>, operandSegmentSizes = array<i32: 2, 1>}> : (tensor<64x256xindex>, tensor<64x256xindex>, tensor<64x256xindex>) -> tensor<64x256xindex>
// CHECK-GENERIC:   "xla.take"(%emb_1, %1) : (tensor<256000xf32>, tensor<64x256xindex>) -> tensor<64x256xf32>
xla.func @gather(%idx: tensor<64xi64>, %emb: tensor<1000x256xf32>) -> tensor<64x256xf32> attributes {part = #xla<part gather>} {
  %idx_1 = xla.buffer %idx : tensor<64xi64> to tensor<64xi64>
  %emb_1 = xla.buffer %emb : tensor<1000x256xf32> to tensor<256000xf32>
  %out = xla.zeros : tensor<64x256xf32>
  %i = xla.iota 0 : tensor<64x256xindex>
  %j = xla.iota 1 : tensor<64x256xindex>
  %0 = xla.flat_index affine_map<(d0, d1) -> (d0)> (%i, %j) [] in [64] : tensor<64x256xindex>
  %iv = xla.take %idx_1[%0] : tensor<64xi64>, tensor<64x256xindex> -> tensor<64x256xi64>
  %s = xla.convert %iv : tensor<64x256xi64> to tensor<64x256xindex>
  %1 = xla.flat_index affine_map<(d0, d1)[s0] -> (s0, d1)> (%i, %j) [%s] in [1000, 256] : tensor<64x256xindex>
  %v = xla.take %emb_1[%1] : tensor<256000xf32>, tensor<64x256xindex> -> tensor<64x256xf32>
  %2 = xla.flat_index affine_map<(d0, d1) -> (d0, d1)> (%i, %j) [] in [64, 256] : tensor<64x256xindex>
  %out_1 = xla.scatter %v, %out[%2] : tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xindex>
  xla.return %out_1 : tensor<64x256xf32>
}

// -----

// A whole kernel on XLA: constants over the domain, arith and math on tensors,
// comparisons and selects, reductions over the reduction axis (their result is the
// same along it), an argmax's i32 positions.
// CHECK-LABEL: xla.func @rows(%x: tensor<16x128xf32>) -> (tensor<16xf32>, tensor<16xi32>) attributes {part = #xla<part kernel>} {
// CHECK:         %c = xla.constant 5.000000e-01 : f32 : tensor<16x128xf32>
// CHECK-NEXT:    %a = math.absf %v : tensor<16x128xf32>
// CHECK-NEXT:    %b = arith.addf %a, %c : tensor<16x128xf32>
// CHECK-NEXT:    %big = xla.compare <ogt> %b, %c : tensor<16x128xf32>
// CHECK-NEXT:    %m = xla.select %big, %b, %c : tensor<16x128xi1>, tensor<16x128xf32>
// CHECK-NEXT:    %p = xla.reduce <prod> %m axes [1] : tensor<16x128xf32> -> tensor<16x128xf32>
// CHECK-NEXT:    %w = xla.reduce <argmax> %m axes [1] : tensor<16x128xf32> -> tensor<16x128xi32>
// CHECK:         %t = xla.constant true : tensor<16x128xi1>
// CHECK:         %n = xla.constant -3 : index : tensor<16x128xindex>
// CHECK:         xla.return %out_1, %arg_1 : tensor<16xf32>, tensor<16xi32>
// CHECK-GENERIC: "xla.constant"() <{value = 5.000000e-01 : f32}> : () -> tensor<16x128xf32>
// CHECK-GENERIC: "xla.reduce"(%m) <{kind = #xla<reduction_kind prod>, axes = array<i64: 1>}> : (tensor<16x128xf32>) -> tensor<16x128xf32>
xla.func @rows(%x: tensor<16x128xf32>) -> (tensor<16xf32>, tensor<16xi32>) {
  %xb = xla.buffer %x : tensor<16x128xf32> to tensor<2048xf32>
  %out = xla.zeros : tensor<16xf32>
  %arg = xla.zeros : tensor<16xi32>
  %l0 = xla.iota 0 : tensor<16x128xindex>
  %l1 = xla.iota 1 : tensor<16x128xindex>
  %0 = xla.flat_index affine_map<(d0, d1) -> (d0 * 128 + d1)> (%l0, %l1) [] in [2048] : tensor<16x128xindex>
  %v = xla.take %xb[%0] : tensor<2048xf32>, tensor<16x128xindex> -> tensor<16x128xf32>
  %c = xla.constant 0.5 : f32 : tensor<16x128xf32>
  %a = math.absf %v : tensor<16x128xf32>
  %b = arith.addf %a, %c : tensor<16x128xf32>
  %big = xla.compare <ogt> %b, %c : tensor<16x128xf32>
  %m = xla.select %big, %b, %c : tensor<16x128xi1>, tensor<16x128xf32>
  %p = xla.reduce <prod> %m axes [1] : tensor<16x128xf32> -> tensor<16x128xf32>
  %w = xla.reduce <argmax> %m axes [1] : tensor<16x128xf32> -> tensor<16x128xi32>
  %t = xla.constant true : tensor<16x128xi1>
  %pt = xla.select %t, %p, %c : tensor<16x128xi1>, tensor<16x128xf32>
  %n = xla.constant -3 : index : tensor<16x128xindex>
  %l0n = arith.addi %l0, %n : tensor<16x128xindex>
  %1 = xla.flat_index affine_map<(d0, d1) -> (d0)> (%l0, %l1) [] in [16] : tensor<16x128xindex>
  %out_1 = xla.scatter %pt, %out[%1] : tensor<16x128xf32>, tensor<16xf32>, tensor<16x128xindex>
  %arg_1 = xla.scatter %w, %arg[%1] : tensor<16x128xi32>, tensor<16xi32>, tensor<16x128xindex>
  xla.return %out_1, %arg_1 : tensor<16xf32>, tensor<16xi32>
}

// -----

// A scatter-add into a buffer taken in: rows picked by data, each point adding its
// value (an embedding's backward).
// CHECK-LABEL: xla.func @scatter_add(%idx: tensor<16xi32>, %g: tensor<16x64xf32>, %acc: tensor<1000x64xf32>) -> tensor<1000x64xf32> attributes {part = #xla<part kernel>} {
// CHECK:         %acc_2 = xla.scatter %v, %acc_1[%2] accumulate <sum> : tensor<16x64xf32>, tensor<1000x64xf32>, tensor<16x64xindex>
// CHECK-NEXT:    xla.return %acc_2 : tensor<1000x64xf32>
// CHECK-GENERIC: "xla.scatter"(%v, %acc_1, %2) <{accumulate = #xla<reduction_kind sum>}> : (tensor<16x64xf32>, tensor<1000x64xf32>, tensor<16x64xindex>) -> tensor<1000x64xf32>
xla.func @scatter_add(%idx: tensor<16xi32>, %g: tensor<16x64xf32>, %acc: tensor<1000x64xf32>) -> tensor<1000x64xf32> {
  %idx_1 = xla.buffer %idx : tensor<16xi32> to tensor<16xi32>
  %g_1 = xla.buffer %g : tensor<16x64xf32> to tensor<16x64xf32>
  %acc_1 = xla.buffer %acc : tensor<1000x64xf32> to tensor<1000x64xf32>
  %i = xla.iota 0 : tensor<16x64xindex>
  %j = xla.iota 1 : tensor<16x64xindex>
  %0 = xla.flat_index affine_map<(d0, d1) -> (d0)> (%i, %j) [] in [16] : tensor<16x64xindex>
  %r = xla.take %idx_1[%0] : tensor<16xi32>, tensor<16x64xindex> -> tensor<16x64xi32>
  %s = xla.convert %r : tensor<16x64xi32> to tensor<16x64xindex>
  %1 = xla.flat_index affine_map<(d0, d1) -> (d0, d1)> (%i, %j) [] in [16, 64] : tensor<16x64xindex>
  %v = xla.take %g_1[%1] : tensor<16x64xf32>, tensor<16x64xindex> -> tensor<16x64xf32>
  %2 = xla.flat_index affine_map<(d0, d1)[s0] -> (s0, d1)> (%i, %j) [%s] in [1000, 64] : tensor<16x64xindex>
  %acc_2 = xla.scatter %v, %acc_1[%2] accumulate <sum> : tensor<16x64xf32>, tensor<1000x64xf32>, tensor<16x64xindex>
  xla.return %acc_2 : tensor<1000x64xf32>
}

// -----

// A function that writes nothing returns nothing; an index argument's buffer.
// CHECK-LABEL: xla.func @nothing(%x: tensor<8xi32>) attributes {part = #xla<part scatter>} {
// CHECK-NEXT:    %xb = xla.buffer %x : tensor<8xi32> to tensor<2x4xi32>
// CHECK-NEXT:    xla.return
xla.func @nothing(%x: tensor<8xi32>) -> () attributes {part = #xla<part scatter>} {
  %xb = xla.buffer %x : tensor<8xi32> to tensor<2x4xi32>
  xla.return
}

// -----

// Windows: a transposed read of rows 2.. of a (66, 4, 32) view at column 0 (a slice
// and a transpose of the buffer, no gather), stored into a (64, 32) view, then added
// into rows 8.. of an accumulator (an accumulating window walks every axis over 1).
// CHECK-LABEL: xla.func @windows(%x: tensor<66x4x32xf32>, %acc: tensor<72x32xf32>) -> (tensor<64x32xf32>, tensor<72x32xf32>) attributes {part = #xla<part kernel>} {
// CHECK:         %v = xla.window %xb affine_map<(d0, d1) -> ((d1 + 2), 0, d0)> in [66, 4, 32] : tensor<8448xf32> -> tensor<32x64xf32>
// CHECK-NEXT:    %out_1 = xla.update_window %v, %out affine_map<(d0, d1) -> (d1, d0)> in [64, 32] : tensor<32x64xf32>, tensor<2048xf32>
// CHECK-NEXT:    %acc_2 = xla.update_window %v, %acc_1 affine_map<(d0, d1) -> ((d1 + 8), d0)> in [72, 32] accumulate <sum> : tensor<32x64xf32>, tensor<2304xf32>
// CHECK-GENERIC: "xla.window"(%xb) <{map = affine_map<(d0, d1) -> ((d1 + 2), 0, d0)>, shape = array<i64: 66, 4, 32>}> : (tensor<8448xf32>) -> tensor<32x64xf32>
// CHECK-GENERIC: "xla.update_window"(%v, %acc_1) <{map = affine_map<(d0, d1) -> ((d1 + 8), d0)>, shape = array<i64: 72, 32>, accumulate = #xla<reduction_kind sum>}> : (tensor<32x64xf32>, tensor<2304xf32>) -> tensor<2304xf32>
xla.func @windows(%x: tensor<66x4x32xf32>, %acc: tensor<72x32xf32>) -> (tensor<64x32xf32>, tensor<72x32xf32>) {
  %xb = xla.buffer %x : tensor<66x4x32xf32> to tensor<8448xf32>
  %acc_1 = xla.buffer %acc : tensor<72x32xf32> to tensor<2304xf32>
  %out = xla.zeros : tensor<2048xf32>
  %v = xla.window %xb affine_map<(d0, d1) -> (d1 + 2, 0, d0)> in [66, 4, 32] : tensor<8448xf32> -> tensor<32x64xf32>
  %out_1 = xla.update_window %v, %out affine_map<(d0, d1) -> (d1, d0)> in [64, 32] : tensor<32x64xf32>, tensor<2048xf32>
  %acc_2 = xla.update_window %v, %acc_1 affine_map<(d0, d1) -> (d1 + 8, d0)> in [72, 32] accumulate <sum> : tensor<32x64xf32>, tensor<2304xf32>
  xla.return %out_1, %acc_2 : tensor<2048xf32>, tensor<2304xf32>
}
