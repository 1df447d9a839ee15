// RUN: PALLAS_ROUNDTRIP
// RUN: PALLAS_GENERIC_ROUNDTRIP
// RUN: pallas-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=CHECK-GENERIC

// Every tl op and attribute, in realistic kernels. Note: xDSL prints each affine result
// in parentheses, so `(d0 * 128, d1 * 512)` comes back as `((d0 * 128), (d1 * 512))`;
// the CHECK lines spell that normalised form, which has the same meaning.

// A tiled elementwise add: (128, 512) tiles at element offsets (128 i, 512 j).
tl.kernel @add(%x: memref<512x1024xf32> {role = "in"}, %y: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    %a = tl.load %x[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j) : memref<512x1024xf32> -> tensor<128x512xf32>
    %b = tl.load %y[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j) : memref<512x1024xf32> -> tensor<128x512xf32>
    %c = arith.addf %a, %b : tensor<128x512xf32>
    tl.store %c, %o[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j) : tensor<128x512xf32>, memref<512x1024xf32>
  }
}

// CHECK-LABEL: tl.kernel @add(%x: memref<512x1024xf32> {role = "in"}, %y: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
// CHECK-NEXT:    tl.grid [4, 2] (parallel, parallel) (%i, %j) {
// CHECK-NEXT:      %a = tl.load %x[affine_map<(d0, d1) -> ((d0 * 128), (d1 * 512))>](%i, %j) : memref<512x1024xf32> -> tensor<128x512xf32>
// CHECK-NEXT:      %b = tl.load %y[affine_map<(d0, d1) -> ((d0 * 128), (d1 * 512))>](%i, %j) : memref<512x1024xf32> -> tensor<128x512xf32>
// CHECK-NEXT:      %c = arith.addf %a, %b : tensor<128x512xf32>
// CHECK-NEXT:      tl.store %c, %o[affine_map<(d0, d1) -> ((d0 * 128), (d1 * 512))>](%i, %j) : tensor<128x512xf32>, memref<512x1024xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "add", roles = [#tl<arg_role in>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:         "tl.grid"() <{shape = array<i64: 4, 2>, semantics = [#tl<grid_semantics parallel>, #tl<grid_semantics parallel>]}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%i: index, %j: index):
// CHECK-GENERIC-NEXT:      %a = "tl.load"(%x, %i, %j) <{map = affine_map<(d0, d1) -> ((d0 * 128), (d1 * 512))>, operandSegmentSizes = array<i32: 1, 2, 0>}> : (memref<512x1024xf32>, index, index) -> tensor<128x512xf32>
// CHECK-GENERIC:           "tl.store"(%c, %o, %i, %j) <{map = affine_map<(d0, d1) -> ((d0 * 128), (d1 * 512))>, operandSegmentSizes = array<i32: 1, 1, 2, 0>}> : (tensor<128x512xf32>, memref<512x1024xf32>, index, index) -> ()

// -----

// A row softmax-like kernel with a sequential grid dim: strided loads (every other row),
// every reduction kind, a broadcast, math on tiles, a transposed store, an inout buffer,
// explicit unit strides on a store, and `attributes` on the kernel and the grid.
tl.kernel @softmax_t(%x: memref<128x1024xf32> {role = "in"}, %o: memref<1024x64xf32> {role = "out"}, %stats: memref<64x8xf32> {role = "inout"}, %pos: memref<64x4xi32> {role = "out"}) attributes {fused = 3 : i64} {
  tl.grid [8, 4] (parallel, sequential) (%i, %j) attributes {note = "rows"} {
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 16, d1 * 256)>](%i, %j) strides [2, 1] : memref<128x1024xf32> -> tensor<8x256xf32>
    %m = tl.reduce <max> %t [1] : tensor<8x256xf32> -> tensor<8x1xf32>
    %mb = tl.broadcast %m : tensor<8x1xf32> to tensor<8x256xf32>
    %d = arith.subf %t, %mb : tensor<8x256xf32>
    %e = math.exp %d : tensor<8x256xf32>
    %s = tl.reduce <sum> %e [1] : tensor<8x256xf32> -> tensor<8x1xf32>
    %p = tl.reduce <prod> %e [0, 1] : tensor<8x256xf32> -> tensor<1x1xf32>
    %mn = tl.reduce <min> %e [1] : tensor<8x256xf32> -> tensor<8x1xf32>
    %am = tl.reduce <argmax> %t [1] : tensor<8x256xf32> -> tensor<8x1xi32>
    %an = tl.reduce <argmin> %t [1] {tie = "first"} : tensor<8x256xf32> -> tensor<8x1xi32>
    %et = tl.transpose %e [1, 0] : tensor<8x256xf32> -> tensor<256x8xf32>
    tl.store %et, %o[affine_map<(d0, d1) -> (d1 * 256, d0 * 8)>](%i, %j) : tensor<256x8xf32>, memref<1024x64xf32>
    tl.store %s, %stats[affine_map<(d0, d1) -> (d0 * 8, d1)>](%i, %j) strides [1, 1] : tensor<8x1xf32>, memref<64x8xf32>
    tl.store %mn, %stats[affine_map<(d0, d1) -> (d0 * 8, d1 + 4)>](%i, %j) : tensor<8x1xf32>, memref<64x8xf32>
    tl.store %am, %pos[affine_map<(d0, d1) -> (d0 * 8, d1)>](%i, %j) : tensor<8x1xi32>, memref<64x4xi32>
  }
}

// CHECK-LABEL: tl.kernel @softmax_t(%x: memref<128x1024xf32> {role = "in"}, %o: memref<1024x64xf32> {role = "out"}, %stats: memref<64x8xf32> {role = "inout"}, %pos: memref<64x4xi32> {role = "out"}) attributes {fused = 3 : i64} {
// CHECK-NEXT:    tl.grid [8, 4] (parallel, sequential) (%i, %j) attributes {note = "rows"} {
// CHECK-NEXT:      %t = tl.load %x[affine_map<(d0, d1) -> ((d0 * 16), (d1 * 256))>](%i, %j) strides [2, 1] : memref<128x1024xf32> -> tensor<8x256xf32>
// CHECK-NEXT:      %m = tl.reduce <max> %t [1] : tensor<8x256xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %mb = tl.broadcast %m : tensor<8x1xf32> to tensor<8x256xf32>
// CHECK-NEXT:      %d = arith.subf %t, %mb : tensor<8x256xf32>
// CHECK-NEXT:      %e = math.exp %d : tensor<8x256xf32>
// CHECK-NEXT:      %s = tl.reduce <sum> %e [1] : tensor<8x256xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %p = tl.reduce <prod> %e [0, 1] : tensor<8x256xf32> -> tensor<1x1xf32>
// CHECK-NEXT:      %mn = tl.reduce <min> %e [1] : tensor<8x256xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %am = tl.reduce <argmax> %t [1] : tensor<8x256xf32> -> tensor<8x1xi32>
// CHECK-NEXT:      %an = tl.reduce <argmin> %t [1] {tie = "first"} : tensor<8x256xf32> -> tensor<8x1xi32>
// CHECK-NEXT:      %et = tl.transpose %e [1, 0] : tensor<8x256xf32> -> tensor<256x8xf32>
// CHECK-NEXT:      tl.store %et, %o[affine_map<(d0, d1) -> ((d1 * 256), (d0 * 8))>](%i, %j) : tensor<256x8xf32>, memref<1024x64xf32>
// CHECK-NEXT:      tl.store %s, %stats[affine_map<(d0, d1) -> ((d0 * 8), d1)>](%i, %j) strides [1, 1] : tensor<8x1xf32>, memref<64x8xf32>
// CHECK-NEXT:      tl.store %mn, %stats[affine_map<(d0, d1) -> ((d0 * 8), (d1 + 4))>](%i, %j) : tensor<8x1xf32>, memref<64x8xf32>
// CHECK-NEXT:      tl.store %am, %pos[affine_map<(d0, d1) -> ((d0 * 8), d1)>](%i, %j) : tensor<8x1xi32>, memref<64x4xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "softmax_t", roles = [#tl<arg_role in>, #tl<arg_role out>, #tl<arg_role inout>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:         "tl.grid"() <{shape = array<i64: 8, 4>, semantics = [#tl<grid_semantics parallel>, #tl<grid_semantics sequential>]}> ({
// CHECK-GENERIC:           %t = "tl.load"(%x, %i, %j) <{map = affine_map<(d0, d1) -> ((d0 * 16), (d1 * 256))>, strides = array<i64: 2, 1>, operandSegmentSizes = array<i32: 1, 2, 0>}>
// CHECK-GENERIC-NEXT:      %m = "tl.reduce"(%t) <{kind = #tl<reduction_kind max>, dims = array<i64: 1>}> : (tensor<8x256xf32>) -> tensor<8x1xf32>
// CHECK-GENERIC-NEXT:      %mb = "tl.broadcast"(%m) : (tensor<8x1xf32>) -> tensor<8x256xf32>
// CHECK-GENERIC:           %p = "tl.reduce"(%e) <{kind = #tl<reduction_kind prod>, dims = array<i64: 0, 1>}> : (tensor<8x256xf32>) -> tensor<1x1xf32>
// CHECK-GENERIC:           %an = "tl.reduce"(%t) <{kind = #tl<reduction_kind argmin>, dims = array<i64: 1>}> {tie = "first"} : (tensor<8x256xf32>) -> tensor<8x1xi32>
// CHECK-GENERIC-NEXT:      %et = "tl.transpose"(%e) <{permutation = array<i64: 1, 0>}> : (tensor<8x256xf32>) -> tensor<256x8xf32>
// CHECK-GENERIC:           "tl.store"(%s, %stats, %i, %j) <{map = affine_map<(d0, d1) -> ((d0 * 8), d1)>, strides = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 0>}>
// CHECK-GENERIC:         }) {note = "rows"} : () -> ()
// CHECK-GENERIC-NEXT:  }) {fused = 3 : i64} : () -> ()

// -----

// An embedding gather: a prefetched index, read by tl.scalar_load, offsets the table
// tile through the symbol s0.
tl.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [64] (sequential) (%i) {
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %t = tl.load %table[affine_map<(d0)[s0] -> (s0, 0)>](%i)[%row] : memref<1000x256xf32> -> tensor<1x256xf32>
    tl.store %t, %out[affine_map<(d0) -> (d0, 0)>](%i) : tensor<1x256xf32>, memref<64x256xf32>
  }
}

// A scatter: the prefetched index offsets the stored tile.
tl.kernel @scatter(%idx: memref<64xi32> {role = "prefetch"}, %src: memref<64x256xf32> {role = "in"}, %dst: memref<1000x256xf32> {role = "inout"}) {
  tl.grid [64] (sequential) (%i) {
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    %t = tl.load %src[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x256xf32> -> tensor<1x256xf32>
    tl.store %t, %dst[affine_map<(d0)[s0] -> (s0, 0)>](%i)[%row] : tensor<1x256xf32>, memref<1000x256xf32>
  }
}

// CHECK-LABEL: tl.kernel @embedding(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
// CHECK-NEXT:    tl.grid [64] (sequential) (%i) {
// CHECK-NEXT:      %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
// CHECK-NEXT:      %t = tl.load %table[affine_map<(d0)[s0] -> (s0, 0)>](%i)[%row] : memref<1000x256xf32> -> tensor<1x256xf32>
// CHECK-NEXT:      tl.store %t, %out[affine_map<(d0) -> (d0, 0)>](%i) : tensor<1x256xf32>, memref<64x256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "embedding", roles = [#tl<arg_role prefetch>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:         "tl.grid"() <{shape = array<i64: 64>, semantics = [#tl<grid_semantics sequential>]}> ({
// CHECK-GENERIC:           %row = "tl.scalar_load"(%idx, %i) <{map = affine_map<(d0) -> (d0)>}> : (memref<64xi32>, index) -> index
// CHECK-GENERIC-NEXT:      %t = "tl.load"(%table, %i, %row) <{map = affine_map<(d0)[s0] -> (s0, 0)>, operandSegmentSizes = array<i32: 1, 1, 1>}> : (memref<1000x256xf32>, index, index) -> tensor<1x256xf32>

// CHECK-LABEL: tl.kernel @scatter(%idx: memref<64xi32> {role = "prefetch"}, %src: memref<64x256xf32> {role = "in"}, %dst: memref<1000x256xf32> {role = "inout"}) {
// CHECK-NEXT:    tl.grid [64] (sequential) (%i) {
// CHECK-NEXT:      %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
// CHECK-NEXT:      %t = tl.load %src[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x256xf32> -> tensor<1x256xf32>
// CHECK-NEXT:      tl.store %t, %dst[affine_map<(d0)[s0] -> (s0, 0)>](%i)[%row] : tensor<1x256xf32>, memref<1000x256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "scatter", roles = [#tl<arg_role prefetch>, #tl<arg_role in>, #tl<arg_role inout>]}> ({
// CHECK-GENERIC:         "tl.store"(%t, %dst, %i, %row) <{map = affine_map<(d0)[s0] -> (s0, 0)>, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (tensor<1x256xf32>, memref<1000x256xf32>, index, index) -> ()

// -----

// Casts, comparisons and selects on tiles (arith's integer casts, cmpf/cmpi and select
// take scalars only): an i8 tile widened to i32, compared, chosen, converted to f32.
tl.kernel @casts(%x: memref<64x256xi8> {role = "in"}, %y: memref<64x256xf32> {role = "in"}, %o: memref<64x256xf32> {role = "out"}) {
  tl.grid [2] (parallel) (%i) {
    %a = tl.load %x[affine_map<(d0) -> (d0 * 32, 0)>](%i) : memref<64x256xi8> -> tensor<32x256xi8>
    %b = tl.load %y[affine_map<(d0) -> (d0 * 32, 0)>](%i) : memref<64x256xf32> -> tensor<32x256xf32>
    %w = tl.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
    %z = arith.constant dense<0> : tensor<32x256xi32>
    %neg = tl.compare <slt> %w, %z : tensor<32x256xi32>
    %big = tl.compare <ult> %w, %z {note = "unsigned"} : tensor<32x256xi32>
    %abs = arith.subi %z, %w : tensor<32x256xi32>
    %m = tl.select %neg, %abs, %w : tensor<32x256xi1>, tensor<32x256xi32>
    %f = tl.convert %m : tensor<32x256xi32> to tensor<32x256xf32>
    %pos = tl.compare <ugt> %b, %f : tensor<32x256xf32>
    %r = tl.select %pos, %b, %f {note = "max"} : tensor<32x256xi1>, tensor<32x256xf32>
    %h = tl.convert %r : tensor<32x256xf32> to tensor<32x256xbf16>
    %u = tl.convert %w : tensor<32x256xi32> to tensor<32x256xui32>
    tl.store %r, %o[affine_map<(d0) -> (d0 * 32, 0)>](%i) : tensor<32x256xf32>, memref<64x256xf32>
  }
}

// CHECK-LABEL: tl.kernel @casts(
// CHECK:           %w = tl.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
// CHECK-NEXT:      %z = arith.constant dense<0> : tensor<32x256xi32>
// CHECK-NEXT:      %neg = tl.compare <slt> %w, %z : tensor<32x256xi32>
// CHECK-NEXT:      %big = tl.compare <ult> %w, %z {note = "unsigned"} : tensor<32x256xi32>
// CHECK-NEXT:      %abs = arith.subi %z, %w : tensor<32x256xi32>
// CHECK-NEXT:      %m = tl.select %neg, %abs, %w : tensor<32x256xi1>, tensor<32x256xi32>
// CHECK-NEXT:      %f = tl.convert %m : tensor<32x256xi32> to tensor<32x256xf32>
// CHECK-NEXT:      %pos = tl.compare <ugt> %b, %f : tensor<32x256xf32>
// CHECK-NEXT:      %r = tl.select %pos, %b, %f {note = "max"} : tensor<32x256xi1>, tensor<32x256xf32>
// CHECK-NEXT:      %h = tl.convert %r : tensor<32x256xf32> to tensor<32x256xbf16>
// CHECK-NEXT:      %u = tl.convert %w : tensor<32x256xi32> to tensor<32x256xui32>

// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "casts", roles = [#tl<arg_role in>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:           %w = "tl.convert"(%a) : (tensor<32x256xi8>) -> tensor<32x256xi32>
// CHECK-GENERIC:           %neg = "tl.compare"(%w, %z) <{predicate = #tl<compare_predicate slt>}> : (tensor<32x256xi32>, tensor<32x256xi32>) -> tensor<32x256xi1>
// CHECK-GENERIC:           %m = "tl.select"(%neg, %abs, %w) : (tensor<32x256xi1>, tensor<32x256xi32>, tensor<32x256xi32>) -> tensor<32x256xi32>
// CHECK-GENERIC:           %r = "tl.select"(%pos, %b, %f) {note = "max"} : (tensor<32x256xi1>, tensor<32x256xf32>, tensor<32x256xf32>) -> tensor<32x256xf32>

// -----

// A bf16 matmul with the contraction split over the last, sequential grid dim: tl.dot
// accumulates each (128, 128) product in f32 and `accumulate <sum>` adds the partial
// products over k into the output tile, whose offsets do not use k. Integer operands
// accumulate in i32 (a dot with a discardable attribute).
tl.kernel @matmul(%x: memref<256x512xbf16> {role = "in"}, %w: memref<512x256xbf16> {role = "in"}, %o: memref<256x256xf32> {role = "out"}) {
  tl.grid [2, 2, 4] (parallel, parallel, sequential) (%i, %j, %k) {
    %a = tl.load %x[affine_map<(d0, d1, d2) -> (d0 * 128, d2 * 128)>](%i, %j, %k) : memref<256x512xbf16> -> tensor<128x128xbf16>
    %b = tl.load %w[affine_map<(d0, d1, d2) -> (d2 * 128, d1 * 128)>](%i, %j, %k) : memref<512x256xbf16> -> tensor<128x128xbf16>
    %c = tl.dot %a, %b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    tl.store %c, %o[affine_map<(d0, d1, d2) -> (d0 * 128, d1 * 128)>](%i, %j, %k) accumulate <sum> : tensor<128x128xf32>, memref<256x256xf32>
  }
}

tl.kernel @matmul_i8(%x: memref<64x256xi8> {role = "in"}, %w: memref<256x128xi8> {role = "in"}, %o: memref<64x128xi32> {role = "out"}) {
  tl.grid [2] (parallel) (%i) {
    %a = tl.load %x[affine_map<(d0) -> (d0 * 32, 0)>](%i) : memref<64x256xi8> -> tensor<32x256xi8>
    %b = tl.load %w[affine_map<(d0) -> (0, 0)>](%i) : memref<256x128xi8> -> tensor<256x128xi8>
    %c = tl.dot %a, %b {note = "int8 MXU"} : tensor<32x256xi8>, tensor<256x128xi8> -> tensor<32x128xi32>
    tl.store %c, %o[affine_map<(d0) -> (d0 * 32, 0)>](%i) : tensor<32x128xi32>, memref<64x128xi32>
  }
}

// A batched dot (attention's probabilities by values, 8 heads a step): one product
// per leading index.
tl.kernel @heads(%p: memref<8x512x512xf32> {role = "in"}, %v: memref<8x512x64xf32> {role = "in"}, %o: memref<8x512x64xf32> {role = "out"}) {
  tl.grid [4] (parallel) (%i) {
    %a = tl.load %p[affine_map<(d0) -> (0, d0 * 128, 0)>](%i) : memref<8x512x512xf32> -> tensor<8x128x512xf32>
    %b = tl.load %v[affine_map<(d0) -> (0, 0, 0)>](%i) : memref<8x512x64xf32> -> tensor<8x512x64xf32>
    %c = tl.dot %a, %b precision <highest> : tensor<8x128x512xf32>, tensor<8x512x64xf32> -> tensor<8x128x64xf32>
    tl.store %c, %o[affine_map<(d0) -> (0, d0 * 128, 0)>](%i) : tensor<8x128x64xf32>, memref<8x512x64xf32>
  }
}

// CHECK-LABEL: tl.kernel @matmul(%x: memref<256x512xbf16> {role = "in"}, %w: memref<512x256xbf16> {role = "in"}, %o: memref<256x256xf32> {role = "out"}) {
// CHECK-NEXT:    tl.grid [2, 2, 4] (parallel, parallel, sequential) (%i, %j, %k) {
// CHECK-NEXT:      %a = tl.load %x[affine_map<(d0, d1, d2) -> ((d0 * 128), (d2 * 128))>](%i, %j, %k) : memref<256x512xbf16> -> tensor<128x128xbf16>
// CHECK-NEXT:      %b = tl.load %w[affine_map<(d0, d1, d2) -> ((d2 * 128), (d1 * 128))>](%i, %j, %k) : memref<512x256xbf16> -> tensor<128x128xbf16>
// CHECK-NEXT:      %c = tl.dot %a, %b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
// CHECK-NEXT:      tl.store %c, %o[affine_map<(d0, d1, d2) -> ((d0 * 128), (d1 * 128))>](%i, %j, %k) accumulate <sum> : tensor<128x128xf32>, memref<256x256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-LABEL: tl.kernel @matmul_i8(%x: memref<64x256xi8> {role = "in"}, %w: memref<256x128xi8> {role = "in"}, %o: memref<64x128xi32> {role = "out"}) {
// CHECK-NEXT:    tl.grid [2] (parallel) (%i) {
// CHECK-NEXT:      %a = tl.load %x[affine_map<(d0) -> ((d0 * 32), 0)>](%i) : memref<64x256xi8> -> tensor<32x256xi8>
// CHECK-NEXT:      %b = tl.load %w[affine_map<(d0) -> (0, 0)>](%i) : memref<256x128xi8> -> tensor<256x128xi8>
// CHECK-NEXT:      %c = tl.dot %a, %b {note = "int8 MXU"} : tensor<32x256xi8>, tensor<256x128xi8> -> tensor<32x128xi32>
// CHECK-NEXT:      tl.store %c, %o[affine_map<(d0) -> ((d0 * 32), 0)>](%i) : tensor<32x128xi32>, memref<64x128xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-LABEL: tl.kernel @heads(
// CHECK:           %c = tl.dot %a, %b precision <highest> : tensor<8x128x512xf32>, tensor<8x512x64xf32> -> tensor<8x128x64xf32>

// The accumulation kind is a string property; a store without it has none.
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "matmul", roles = [#tl<arg_role in>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:         "tl.grid"() <{shape = array<i64: 2, 2, 4>, semantics = [#tl<grid_semantics parallel>, #tl<grid_semantics parallel>, #tl<grid_semantics sequential>]}> ({
// CHECK-GENERIC:           %c = "tl.dot"(%a, %b) : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xf32>
// CHECK-GENERIC-NEXT:      "tl.store"(%c, %o, %i, %j, %k) <{map = affine_map<(d0, d1, d2) -> ((d0 * 128), (d1 * 128))>, accumulate = #tl<reduction_kind sum>, operandSegmentSizes = array<i32: 1, 1, 3, 0>}> : (tensor<128x128xf32>, memref<256x256xf32>, index, index, index) -> ()
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "matmul_i8", roles = [#tl<arg_role in>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:           %c = "tl.dot"(%a, %b) {note = "int8 MXU"} : (tensor<32x256xi8>, tensor<256x128xi8>) -> tensor<32x128xi32>
// CHECK-GENERIC-NEXT:      "tl.store"(%c, %o, %i) <{map = affine_map<(d0) -> ((d0 * 32), 0)>, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<32x128xi32>, memref<64x128xi32>, index) -> ()

// -----

// Lane-wise row maxima over a sequential grid dim: tl.reshape splits each (8, 512)
// tile into four 128-lane groups and drops the reduced unit dim again; `accumulate
// <max>` keeps the running maximum across the 8 steps along k.
tl.kernel @lane_max(%x: memref<64x4096xf32> {role = "in"}, %m: memref<64x128xf32> {role = "out"}) {
  tl.grid [8, 8] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %g = tl.reshape %v : tensor<8x512xf32> to tensor<8x4x128xf32>
    %r = tl.reduce <max> %g [1] : tensor<8x4x128xf32> -> tensor<8x1x128xf32>
    %p = tl.reshape %r {note = "drop unit dim"} : tensor<8x1x128xf32> to tensor<8x128xf32>
    tl.store %p, %m[affine_map<(d0, d1) -> (d0 * 8, 0)>](%i, %k) accumulate <max> {note = "running max"} : tensor<8x128xf32>, memref<64x128xf32>
  }
}

// CHECK-LABEL: tl.kernel @lane_max(%x: memref<64x4096xf32> {role = "in"}, %m: memref<64x128xf32> {role = "out"}) {
// CHECK-NEXT:    tl.grid [8, 8] (parallel, sequential) (%i, %k) {
// CHECK-NEXT:      %v = tl.load %x[affine_map<(d0, d1) -> ((d0 * 8), (d1 * 512))>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
// CHECK-NEXT:      %g = tl.reshape %v : tensor<8x512xf32> to tensor<8x4x128xf32>
// CHECK-NEXT:      %r = tl.reduce <max> %g [1] : tensor<8x4x128xf32> -> tensor<8x1x128xf32>
// CHECK-NEXT:      %p = tl.reshape %r {note = "drop unit dim"} : tensor<8x1x128xf32> to tensor<8x128xf32>
// CHECK-NEXT:      tl.store %p, %m[affine_map<(d0, d1) -> ((d0 * 8), 0)>](%i, %k) accumulate <max> {note = "running max"} : tensor<8x128xf32>, memref<64x128xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "lane_max", roles = [#tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:           %g = "tl.reshape"(%v) : (tensor<8x512xf32>) -> tensor<8x4x128xf32>
// CHECK-GENERIC-NEXT:      %r = "tl.reduce"(%g) <{kind = #tl<reduction_kind max>, dims = array<i64: 1>}> : (tensor<8x4x128xf32>) -> tensor<8x1x128xf32>
// CHECK-GENERIC-NEXT:      %p = "tl.reshape"(%r) {note = "drop unit dim"} : (tensor<8x1x128xf32>) -> tensor<8x128xf32>
// CHECK-GENERIC-NEXT:      "tl.store"(%p, %m, %i, %k) <{map = affine_map<(d0, d1) -> ((d0 * 8), 0)>, accumulate = #tl<reduction_kind max>, operandSegmentSizes = array<i32: 1, 1, 2, 0>}> {note = "running max"} : (tensor<8x128xf32>, memref<64x128xf32>, index, index) -> ()

// -----

// The row-DMA embedding of examples/tl/embedding_dma.mlir: tl.gather reads 8
// prefetched indices at element offset 8 i of %idx and gathers those whole rows of
// the table. A map with one result prints it in parentheses too: `(d0 * 8)` comes
// back as `((d0 * 8))`; the splat `2.0` comes back as `2.000000e+00`.
tl.kernel @embedding_rows(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
    %two = arith.constant dense<2.0> : tensor<8x256xf32>
    %m = arith.mulf %rows, %two : tensor<8x256xf32>
    tl.store %m, %out[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x256xf32>, memref<64x256xf32>
  }
}

// A (V, 1, D) table gathered 4 rows at a time over a 2-d grid, with an attribute.
tl.kernel @embedding_rows3(%idx: memref<32xi32> {role = "prefetch"}, %table: memref<500x1x128xbf16> {role = "in"}, %out: memref<32x1x128xbf16> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    %rows = tl.gather %table, %idx[affine_map<(d0, d1) -> (d0 * 8 + d1 * 4)>](%i, %j) {note = "half"} : memref<500x1x128xbf16>, memref<32xi32> -> tensor<4x1x128xbf16>
    tl.store %rows, %out[affine_map<(d0, d1) -> (d0 * 8 + d1 * 4, 0, 0)>](%i, %j) : tensor<4x1x128xbf16>, memref<32x1x128xbf16>
  }
}

// CHECK-LABEL: tl.kernel @embedding_rows(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
// CHECK-NEXT:    tl.grid [8] (parallel) (%i) {
// CHECK-NEXT:      %rows = tl.gather %table, %idx[affine_map<(d0) -> ((d0 * 8))>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
// CHECK-NEXT:      %two = arith.constant dense<2.000000e+00> : tensor<8x256xf32>
// CHECK-NEXT:      %m = arith.mulf %rows, %two : tensor<8x256xf32>
// CHECK-NEXT:      tl.store %m, %out[affine_map<(d0) -> ((d0 * 8), 0)>](%i) : tensor<8x256xf32>, memref<64x256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-LABEL: tl.kernel @embedding_rows3(%idx: memref<32xi32> {role = "prefetch"}, %table: memref<500x1x128xbf16> {role = "in"}, %out: memref<32x1x128xbf16> {role = "out"}) {
// CHECK-NEXT:    tl.grid [4, 2] (parallel, parallel) (%i, %j) {
// CHECK-NEXT:      %rows = tl.gather %table, %idx[affine_map<(d0, d1) -> (((d0 * 8) + (d1 * 4)))>](%i, %j) {note = "half"} : memref<500x1x128xbf16>, memref<32xi32> -> tensor<4x1x128xbf16>
// CHECK-NEXT:      tl.store %rows, %out[affine_map<(d0, d1) -> (((d0 * 8) + (d1 * 4)), 0, 0)>](%i, %j) : tensor<4x1x128xbf16>, memref<32x1x128xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// The generic gather: operands table, index buffer, then the dim operands.
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "embedding_rows", roles = [#tl<arg_role prefetch>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:           %rows = "tl.gather"(%table, %idx, %i) <{map = affine_map<(d0) -> ((d0 * 8))>, operandSegmentSizes = array<i32: 1, 1, 1>}> : (memref<1000x256xf32>, memref<64xi32>, index) -> tensor<8x256xf32>
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "embedding_rows3", roles = [#tl<arg_role prefetch>, #tl<arg_role in>, #tl<arg_role out>]}> ({
// CHECK-GENERIC:           %rows = "tl.gather"(%table, %idx, %i, %j) <{map = affine_map<(d0, d1) -> (((d0 * 8) + (d1 * 4)))>, operandSegmentSizes = array<i32: 1, 1, 2>}> {note = "half"} : (memref<500x1x128xbf16>, memref<32xi32>, index, index) -> tensor<4x1x128xbf16>

// -----

// x[i0, i1] for x: f32[100, 50, 256]: two index buffers, each picking one leading dim
// of the table, both read at the map's positions; the tile keeps the remaining dim.
tl.kernel @two_index_rows(%i0: memref<64xi32> {role = "prefetch"}, %i1: memref<64xi32> {role = "prefetch"}, %x: memref<100x50x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %rows = tl.gather %x, %i0, %i1[affine_map<(d0) -> (d0 * 8)>](%i) : memref<100x50x256xf32>, memref<64xi32>, memref<64xi32> -> tensor<8x256xf32>
    tl.store %rows, %out[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x256xf32>, memref<64x256xf32>
  }
}

// CHECK-LABEL: tl.kernel @two_index_rows
// CHECK-NEXT:    tl.grid [8] (parallel) (%i) {
// CHECK-NEXT:      %rows = tl.gather %x, %i0, %i1[affine_map<(d0) -> ((d0 * 8))>](%i) : memref<100x50x256xf32>, memref<64xi32>, memref<64xi32> -> tensor<8x256xf32>
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "two_index_rows"
// CHECK-GENERIC:           %rows = "tl.gather"(%x, %i0, %i1, %i) <{map = affine_map<(d0) -> ((d0 * 8))>, operandSegmentSizes = array<i32: 1, 2, 1>}> : (memref<100x50x256xf32>, memref<64xi32>, memref<64xi32>, index) -> tensor<8x256xf32>

// -----

// tl.iota: the loop indices a tile covers, as i32 values (grid index * tile + arange).
// CHECK-LABEL: tl.kernel @iota
// CHECK:         %j = tl.iota dim 1 offset affine_map<(d0, d1) -> ((d1 * 128))>(%i, %jj) : tensor<8x128xi32>
// CHECK-GENERIC: "tl.iota"(%i, %jj) <{dim = 1 : i64, map = affine_map<(d0, d1) -> ((d1 * 128))>}> : (index, index) -> tensor<8x128xi32>
tl.kernel @iota(%o: memref<64x256xi32> {role = "out"}) {
  tl.grid [8, 2] (parallel, parallel) (%i, %jj) {
    %j = tl.iota dim 1 offset affine_map<(d0, d1) -> (d1 * 128)> (%i, %jj) : tensor<8x128xi32>
    tl.store %j, %o[affine_map<(d0, d1) -> (d0 * 8, d1 * 128)>](%i, %jj) : tensor<8x128xi32>, memref<64x256xi32>
  }
}

// -----

// tl.scatter, the KV-cache update: row r of the (8, 128) tile goes to row pos[8 k + r]
// of cache[b, h] (the lead map gives the leading indices, the index map the offset into
// %pos); the dims the index map uses are sequential, so rows are written in order.
// With `accumulate <sum>` the rows add to what is there (the dest is inout).
tl.kernel @kv_update(%pos: memref<16xi32> {role = "prefetch"}, %k: memref<2x4x16x128xf32> {role = "in"}, %cache: memref<2x4x64x128xf32> {role = "inout"}) {
  tl.grid [2, 4, 2] (parallel, parallel, sequential) (%b, %h, %s) {
    %t = tl.load %k[affine_map<(d0, d1, d2) -> (d0, d1, d2 * 8, 0)>](%b, %h, %s) : memref<2x4x16x128xf32> -> tensor<1x1x8x128xf32>
    %rows = tl.reshape %t : tensor<1x1x8x128xf32> to tensor<8x128xf32>
    tl.scatter %rows, %cache[affine_map<(d0, d1, d2) -> (d0, d1)>], %pos[affine_map<(d0, d1, d2) -> (d2 * 8)>](%b, %h, %s) : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<16xi32>
  }
}

tl.kernel @index_add(%pos: memref<12xi32> {role = "prefetch"}, %x: memref<12x128xf32> {role = "in"}, %table: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<12x128xf32> -> tensor<8x128xf32>
    tl.scatter %v, %table[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) accumulate <sum> {note = "sum"} : tensor<8x128xf32>, memref<64x128xf32>, memref<12xi32>
  }
}

// CHECK-LABEL: tl.kernel @kv_update
// CHECK:         tl.scatter %rows, %cache[affine_map<(d0, d1, d2) -> (d0, d1)>], %pos[affine_map<(d0, d1, d2) -> ((d2 * 8))>](%b, %h, %s) : tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<16xi32>
// CHECK-LABEL: tl.kernel @index_add
// CHECK:         tl.scatter %v, %table[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> ((d0 * 8))>](%i) accumulate <sum> {note = "sum"} : tensor<8x128xf32>, memref<64x128xf32>, memref<12xi32>

// The generic scatter: operands tile, dest, index buffer, then the dim operands.
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "kv_update"
// CHECK-GENERIC:           "tl.scatter"(%rows, %cache, %pos, %b, %h, %s) <{lead_map = affine_map<(d0, d1, d2) -> (d0, d1)>, index_map = affine_map<(d0, d1, d2) -> ((d2 * 8))>}> : (tensor<8x128xf32>, memref<2x4x64x128xf32>, memref<16xi32>, index, index, index) -> ()
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "index_add"
// CHECK-GENERIC:           "tl.scatter"(%v, %table, %pos, %i) <{lead_map = affine_map<(d0) -> ()>, index_map = affine_map<(d0) -> ((d0 * 8))>, accumulate = #tl<reduction_kind sum>}> {note = "sum"} : (tensor<8x128xf32>, memref<64x128xf32>, memref<12xi32>, index) -> ()

// -----

// A split sum with an epilogue: the running total of the dot, and a body run once, at
// the last k step.
tl.kernel @linear_cast(%x: memref<64x256xbf16> {role = "in"}, %w: memref<256x128xbf16> {role = "in"}, %o: memref<64x128xbf16> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %a = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xbf16> -> tensor<64x128xbf16>
    %b = tl.load %w[affine_map<(d0, d1) -> (d1 * 128, 0)>](%i, %k) : memref<256x128xbf16> -> tensor<128x128xbf16>
    %p = tl.dot %a, %b : tensor<64x128xbf16>, tensor<128x128xbf16> -> tensor<64x128xf32>
    %t = tl.accumulate <sum> %p : tensor<64x128xf32>
    tl.on_last_step {
      %y = arith.truncf %t : tensor<64x128xf32> to tensor<64x128xbf16>
      tl.store %y, %o[affine_map<(d0, d1) -> (0, 0)>](%i, %k) : tensor<64x128xbf16>, memref<64x128xbf16>
    }
  }
}

// CHECK-LABEL: tl.kernel @linear_cast
// CHECK:         %t = tl.accumulate <sum> %p : tensor<64x128xf32>
// CHECK-NEXT:    tl.on_last_step {
// CHECK-NEXT:      %y = arith.truncf %t : tensor<64x128xf32> to tensor<64x128xbf16>
// CHECK-NEXT:      tl.store %y, %o
// CHECK-NEXT:    }
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "linear_cast"
// CHECK-GENERIC:           %t = "tl.accumulate"(%p) <{kind = #tl<reduction_kind sum>}> : (tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-GENERIC-NEXT:      "tl.on_last_step"() ({

// -----

// The online softmax (flash attention) over sequential key blocks: the running row
// maximum, the maximum before this step (`tl.previous`: -inf at the first step), and
// the row sums and the products with the values, rescaled by exp(m_prev - m) at each
// later step before this step's partial is added.
tl.kernel @online_softmax(%s: memref<64x512xf32> {role = "in"}, %v: memref<512x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [1, 4] (parallel, sequential) (%i, %k) {
    %x = tl.load %s[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
    %vb = tl.load %v[affine_map<(d0, d1) -> (d1 * 128, 0)>](%i, %k) : memref<512x128xf32> -> tensor<128x128xf32>
    %r = tl.reduce <max> %x [1] : tensor<64x128xf32> -> tensor<64x1xf32>
    %m = tl.accumulate <max> %r : tensor<64x1xf32>
    %mp = tl.previous %m {note = "before this step"} : tensor<64x1xf32>
    %d = arith.subf %mp, %m : tensor<64x1xf32>
    %alpha = math.exp %d : tensor<64x1xf32>
    %mb = tl.broadcast %m : tensor<64x1xf32> to tensor<64x128xf32>
    %xs = arith.subf %x, %mb : tensor<64x128xf32>
    %p = math.exp %xs : tensor<64x128xf32>
    %ps = tl.reduce <sum> %p [1] : tensor<64x128xf32> -> tensor<64x1xf32>
    %l = tl.accumulate <sum> %ps rescaled %alpha : tensor<64x1xf32>
    %pv = tl.dot %p, %vb : tensor<64x128xf32>, tensor<128x128xf32> -> tensor<64x128xf32>
    %ab = tl.broadcast %alpha : tensor<64x1xf32> to tensor<64x128xf32>
    %acc = tl.accumulate <sum> %pv rescaled %ab {note = "flash"} : tensor<64x128xf32>
    tl.on_last_step {
      %lb = tl.broadcast %l : tensor<64x1xf32> to tensor<64x128xf32>
      %y = arith.divf %acc, %lb : tensor<64x128xf32>
      tl.store %y, %o[affine_map<(d0, d1) -> (0, 0)>](%i, %k) : tensor<64x128xf32>, memref<64x128xf32>
    }
  }
}

// CHECK-LABEL: tl.kernel @online_softmax
// CHECK:         %m = tl.accumulate <max> %r : tensor<64x1xf32>
// CHECK-NEXT:    %mp = tl.previous %m {note = "before this step"} : tensor<64x1xf32>
// CHECK:         %l = tl.accumulate <sum> %ps rescaled %alpha : tensor<64x1xf32>
// CHECK:         %acc = tl.accumulate <sum> %pv rescaled %ab {note = "flash"} : tensor<64x128xf32>
// The factor is the accumulate's second operand; tl.previous has no properties.
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "online_softmax"
// CHECK-GENERIC:           %m = "tl.accumulate"(%r) <{kind = #tl<reduction_kind max>}> : (tensor<64x1xf32>) -> tensor<64x1xf32>
// CHECK-GENERIC-NEXT:      %mp = "tl.previous"(%m) {note = "before this step"} : (tensor<64x1xf32>) -> tensor<64x1xf32>
// CHECK-GENERIC:           %l = "tl.accumulate"(%ps, %alpha) <{kind = #tl<reduction_kind sum>}> : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
// CHECK-GENERIC:           %acc = "tl.accumulate"(%pv, %ab) <{kind = #tl<reduction_kind sum>}> {note = "flash"} : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>

// -----

// A causal online softmax: query block i sees key block k only if
// k * 128 <= i * 128 + 127, so the body (dots, exponentials, the accumulates) runs
// only where `i * 128 + 127 - k * 128 >= 0`; its results are the accumulators'
// totals (unchanged where it does not run). A tl.when without results has no types
// after its body.
tl.kernel @causal(%q: memref<2x512x128xf32> {role = "in"}, %kt: memref<2x128x512xf32> {role = "in"}, %v: memref<2x512x128xf32> {role = "in"}, %o: memref<2x512x128xf32> {role = "out"}) {
  tl.grid [2, 4, 4] (parallel, parallel, sequential) (%b, %i, %k) {
    %q3 = tl.load %q[affine_map<(d0, d1, d2) -> (d0, d1 * 128, 0)>](%b, %i, %k) : memref<2x512x128xf32> -> tensor<1x128x128xf32>
    %qb = tl.reshape %q3 : tensor<1x128x128xf32> to tensor<128x128xf32>
    %m, %l, %acc = tl.when affine_map<(d0, d1, d2) -> (d1 * 128 + 127 - d2 * 128)> (%b, %i, %k) {
      %k3 = tl.load %kt[affine_map<(d0, d1, d2) -> (d0, 0, d2 * 128)>](%b, %i, %k) : memref<2x128x512xf32> -> tensor<1x128x128xf32>
      %kb = tl.reshape %k3 : tensor<1x128x128xf32> to tensor<128x128xf32>
      %v3 = tl.load %v[affine_map<(d0, d1, d2) -> (d0, d2 * 128, 0)>](%b, %i, %k) : memref<2x512x128xf32> -> tensor<1x128x128xf32>
      %vb = tl.reshape %v3 : tensor<1x128x128xf32> to tensor<128x128xf32>
      %s = tl.dot %qb, %kb : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
      %r = tl.reduce <max> %s [1] : tensor<128x128xf32> -> tensor<128x1xf32>
      %m1 = tl.accumulate <max> %r : tensor<128x1xf32>
      %mp = tl.previous %m1 : tensor<128x1xf32>
      %d = arith.subf %mp, %m1 : tensor<128x1xf32>
      %alpha = math.exp %d : tensor<128x1xf32>
      %mb = tl.broadcast %m1 : tensor<128x1xf32> to tensor<128x128xf32>
      %xs = arith.subf %s, %mb : tensor<128x128xf32>
      %p = math.exp %xs : tensor<128x128xf32>
      %ps = tl.reduce <sum> %p [1] : tensor<128x128xf32> -> tensor<128x1xf32>
      %l1 = tl.accumulate <sum> %ps rescaled %alpha : tensor<128x1xf32>
      %pv = tl.dot %p, %vb : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
      %ab = tl.broadcast %alpha : tensor<128x1xf32> to tensor<128x128xf32>
      %a1 = tl.accumulate <sum> %pv rescaled %ab : tensor<128x128xf32>
      tl.yield %m1, %l1, %a1 : tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>
    } : tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>
    tl.when affine_map<(d0) -> (3 - d0)> (%k) attributes {note = "no results"} {
      tl.yield
    }
    tl.on_last_step {
      %lb = tl.broadcast %l : tensor<128x1xf32> to tensor<128x128xf32>
      %y = arith.divf %acc, %lb : tensor<128x128xf32>
      %y3 = tl.reshape %y : tensor<128x128xf32> to tensor<1x128x128xf32>
      tl.store %y3, %o[affine_map<(d0, d1, d2) -> (d0, d1 * 128, 0)>](%b, %i, %k) : tensor<1x128x128xf32>, memref<2x512x128xf32>
    }
  }
}

// CHECK-LABEL: tl.kernel @causal
// CHECK:         %m, %l, %acc = tl.when affine_map<(d0, d1, d2) -> ((((d1 * 128) + 127) + (d2 * -128)))>(%b, %i, %k) {
// CHECK:           %m1 = tl.accumulate <max> %r : tensor<128x1xf32>
// CHECK-NEXT:      %mp = tl.previous %m1 : tensor<128x1xf32>
// CHECK:           %a1 = tl.accumulate <sum> %pv rescaled %ab : tensor<128x128xf32>
// CHECK-NEXT:      tl.yield %m1, %l1, %a1 : tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>
// CHECK-NEXT:    } : tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>
// CHECK-NEXT:    tl.when affine_map<(d0) -> (((d0 * -1) + 3))>(%k) attributes {note = "no results"} {
// CHECK-NEXT:      tl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    tl.on_last_step {
// CHECK-NEXT:      %lb = tl.broadcast %l : tensor<128x1xf32> to tensor<128x128xf32>
// CHECK-NEXT:      %y = arith.divf %acc, %lb : tensor<128x128xf32>
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "causal"
// CHECK-GENERIC:           %m, %l, %acc = "tl.when"(%b, %i, %k) <{map = affine_map<(d0, d1, d2) -> ((((d1 * 128) + 127) + (d2 * -128)))>}> ({
// CHECK-GENERIC:             "tl.yield"(%m1, %l1, %a1) : (tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>) -> ()
// CHECK-GENERIC-NEXT:      }) : (index, index, index) -> (tensor<128x1xf32>, tensor<128x1xf32>, tensor<128x128xf32>)
// CHECK-GENERIC-NEXT:      "tl.when"(%k) <{map = affine_map<(d0) -> (((d0 * -1) + 3))>}> ({
// CHECK-GENERIC-NEXT:        "tl.yield"() : () -> ()
// CHECK-GENERIC-NEXT:      }) {note = "no results"} : (index) -> ()

// -----

// torch.roll(x, 3, 1) on (8, 256) tiles: the whole row loaded and rotated in the
// kernel, element j of dim 1 taken from (j - 3) mod 256.
tl.kernel @roll(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<64x256xf32> -> tensor<8x256xf32>
    %r = tl.roll %t by 3 along 1 : tensor<8x256xf32>
    tl.store %r, %o[affine_map<(d0) -> (d0 * 8, 0)>](%i) : tensor<8x256xf32>, memref<64x256xf32>
  }
}

// CHECK-LABEL: tl.kernel @roll
// CHECK:         %r = tl.roll %t by 3 along 1 : tensor<8x256xf32>
// CHECK-GENERIC-LABEL: "tl.kernel"() <{sym_name = "roll"
// CHECK-GENERIC:         %r = "tl.roll"(%t) <{shift = 3 : i64, dim = 1 : i64}> : (tensor<8x256xf32>) -> tensor<8x256xf32>
