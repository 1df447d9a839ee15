// RUN: pallas-opt %s -p tile,tl-to-pallas | filecheck %s
// RUN: pallas-opt %s --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -o /dev/null

// rank[i] = how many x[j] are below x[i]: x is read at two loop dims, i and j, whose
// tiles are both the whole 128. The two loads' blocks are one block of x (same buffer,
// same block spec), so the call takes x once and both loads read its one ref: the block
// is fetched once, and the cost estimate counts it once.
ta.kernel @rank(%x: memref<128xf32> {role = "in"}, %rank: memref<128xi32> {role = "out"}) {
  ta.loop [128] reduce [128] (%i, %j) {
    %xi = ta.load %x[affine_map<(d0, d1) -> (d0)>](%i, %j) : memref<128xf32>
    %xj = ta.load %x[affine_map<(d0, d1) -> (d1)>](%i, %j) : memref<128xf32>
    %below = arith.cmpf olt, %xj, %xi : f32
    %one = arith.extui %below : i1 to i32
    %n = ta.reduce <sum> %one : i32
    ta.store %n, %rank[affine_map<(d0) -> (d0)>](%i) : memref<128xi32>
  }
}
func.func @forward(%x: memref<128xf32>) -> memref<128xi32> {
  %rank = ta.alloc : memref<128xi32>
  ta.launch @rank(%x, %rank) : memref<128xf32>, memref<128xi32>
  func.return %rank : memref<128xi32>
}

// CHECK:      pallas.call @rank(%x) grid [1]
// CHECK-NEXT: in [#pallas.block_spec<[128], (d0) -> (0)>]
// CHECK:      kernel(%x_ref: !pallas.ref<128xf32, vmem>, %rank_out: !pallas.ref<128xi32, vmem>)
// CHECK:      pallas.load %x_ref[...]
// CHECK-NOT:  pallas.call
// CHECK:      pallas.load %x_ref[...]
