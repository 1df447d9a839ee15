// RUN: pallas-opt %s --split-input-file --verify-diagnostics

// Malformed tl IR: each chunk must produce exactly the expected error.

// A (256, 512) tile is taller than the 128-row buffer.
tl.kernel @k(%x: memref<128x1024xf32> {role = "in"}, %o: memref<128x1024xf32> {role = "out"}) {
  tl.grid [1, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{the tile does not tile its buffer: dim 0 spans 256 elements (tile 256, stride 1) of a buffer dim of 128}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 256, d1 * 512)>](%i, %j) : memref<128x1024xf32> -> tensor<256x512xf32>
  }
}

// -----

// Grid point i = 4 starts a tile at row 512 of a 512-row buffer.
tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  tl.grid [5, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{the tile does not tile its buffer: dim 0 starts in [0, 512] but the buffer dim is 512}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j) : memref<512x1024xf32> -> tensor<128x512xf32>
  }
}

// -----

// Strides stretch a tile: 8 rows every 32 rows span 225 rows.
tl.kernel @k(%x: memref<128x1024xf32> {role = "in"}, %o: memref<128x1024xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{dim 0 spans 225 elements (tile 8, stride 32) of a buffer dim of 128}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 16, d1 * 512)>](%i, %j) strides [32, 1] : memref<128x1024xf32> -> tensor<8x512xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x1024xf32> {role = "in"}, %o: memref<128x1024xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{strides must be positive, one per buffer dim}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 16, d1 * 512)>](%i, %j) strides [2] : memref<128x1024xf32> -> tensor<8x512xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x1024xf32> {role = "in"}, %o: memref<128x1024xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{strides must be positive, one per buffer dim}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 16, d1 * 512)>](%i, %j) strides [0, 1] : memref<128x1024xf32> -> tensor<8x512xf32>
  }
}

// -----

tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{tile element type f16 differs from the buffer's f32}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j) : memref<512x1024xf32> -> tensor<128x512xf16>
  }
}

// -----

tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  tl.grid [4, 2] (parallel, parallel) (%i, %j) {
    // expected-error@+1 {{tile rank 1 differs from the buffer rank 2}}
    %t = tl.load %x[affine_map<(d0, d1) -> (d0 * 128, d1 * 512)>](%i, %j) : memref<512x1024xf32> -> tensor<65536xf32>
  }
}

// -----

// Offsets come from grid indices; other index values are symbols.
tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %c = arith.constant 0 : index
    // expected-error@+1 {{load dim operand #0 must be an index of the enclosing tl.grid}}
    %t = tl.load %x[affine_map<(d0) -> (d0, 0)>](%c) : memref<128x128xf32> -> tensor<8x128xf32>
  }
}

// -----

// expected-error@+1 {{a tl.kernel holds exactly one tl.grid, found 0 and tl.load}}
tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  // expected-error@+1 {{'tl.load' expects ancestor op 'tl.grid'}}
  %t = tl.load %x[affine_map<() -> (0, 0)>]() : memref<128x128xf32> -> tensor<8x128xf32>
}

// -----

// expected-error@+1 {{a tl.kernel holds exactly one tl.grid, found 2}}
tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
  }
  tl.grid [1] (parallel) (%i) {
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{stored buffer is kernel argument #0 with role 'in'; expected 'inout' or 'out'}}
    tl.store %t, %x[affine_map<(d0) -> (0, 0)>](%i) : tensor<8x128xf32>, memref<128x128xf32>
  }
}

// -----

// One semantics per grid dim.
tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  // expected-error@+1 {{grid has 2 dims but 1 semantics}}
  tl.grid [4, 2] (parallel) (%i, %j) {
  }
}

// -----

tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  // expected-error@+1 {{grid extents must be positive}}
  tl.grid [4, 0] (parallel, parallel) (%i, %j) {
  }
}

// -----

tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  // expected-error@+1 {{grid has 2 dims but 1 indices}}
  tl.grid [4, 2] (parallel, parallel) (%i) {
  }
}

// -----

func.func @f() {
  // expected-error@+1 {{'tl.grid' expects parent op 'tl.kernel'}}
  tl.grid [1] (parallel) (%i) {
  }
  func.return
}

// -----

// Prefetched buffers are read with tl.scalar_load, not loaded as tiles.
tl.kernel @k(%idx: memref<64x256xi32> {role = "prefetch"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    // expected-error@+1 {{loaded buffer is kernel argument #0 with role 'prefetch'; expected 'in' or 'inout'}}
    %t = tl.load %idx[affine_map<(d0) -> (d0, 0)>](%i) : memref<64x256xi32> -> tensor<1x256xi32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "in"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    // expected-error@+1 {{scalar_load buffer is kernel argument #0 with role 'in'; expected 'prefetch'}}
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xf32> {role = "in"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    // expected-error@+1 {{tl.scalar_load reads an integer buffer}}
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

// The last grid point reads index 64 of a 64-entry prefetch buffer.
tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    // expected-error@+1 {{scalar_load index #0 ranges over [1, 64] but the buffer dim is 64}}
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0 + 1)>](%i) : memref<64xi32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    %c = arith.constant 0 : index
    // expected-error@+1 {{scalar_load dim operand #0 must be an index of the enclosing tl.grid}}
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%c) : memref<64xi32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    // expected-error@+1 {{scalar_load map has 2 results but the buffer needs 1}}
    %row = tl.scalar_load %idx[affine_map<(d0) -> (d0, 0)>](%i) : memref<64xi32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{[0, 0] is not a permutation of 2 dims}}
    %tt = tl.transpose %t [0, 0] : tensor<8x128xf32> -> tensor<8x8xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{transposing tensor<8x128xf32> by [1, 0] gives tensor<128x8xf32>, not tensor<8x128xf32>}}
    %tt = tl.transpose %t [1, 0] : tensor<8x128xf32> -> tensor<8x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<2x128xf32>
    // expected-error@+1 {{dim 0 of size 2 cannot be broadcast to 8 (only size-1 dims can)}}
    %b = tl.broadcast %t : tensor<2x128xf32> to tensor<8x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<1x128xf32>
    // expected-error@+1 {{broadcast keeps the rank: 2 vs 3}}
    %b = tl.broadcast %t : tensor<1x128xf32> to tensor<4x8x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<1x128xf32>
    // expected-error@+1 {{broadcast cannot change the element type}}
    %b = tl.broadcast %t : tensor<1x128xf32> to tensor<8x128xf16>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{reduction dims [2] must be distinct dims of a rank-2 tensor}}
    %s = tl.reduce <sum> %t [2] : tensor<8x128xf32> -> tensor<8x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{reduction dims [] must be distinct dims of a rank-2 tensor}}
    %s = tl.reduce <sum> %t [] : tensor<8x128xf32> -> tensor<8x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{reduction dims [1, 1] must be distinct dims of a rank-2 tensor}}
    %s = "tl.reduce"(%t) <{kind = #tl<reduction_kind sum>, dims = array<i64: 1, 1>}> : (tensor<8x128xf32>) -> tensor<8x1xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{<argmax> reduces exactly one dim}}
    %s = tl.reduce <argmax> %t [0, 1] : tensor<8x128xf32> -> tensor<1x1xi32>
  }
}

// -----

// Reduced dims are kept with size 1: caught while parsing ...
tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{reducing tensor<8x128xf32> over [1] gives tensor<8x1xf32>, not tensor<8xf32>}}
    %s = tl.reduce <sum> %t [1] : tensor<8x128xf32> -> tensor<8xf32>
  }
}

// -----

// ... and by the verifier in generic form.
tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{result must be tensor<8x1xf32>, got tensor<8xf32>}}
    %s = "tl.reduce"(%t) <{kind = #tl<reduction_kind sum>, dims = array<i64: 1>}> : (tensor<8x128xf32>) -> tensor<8xf32>
  }
}

// -----

// Parse errors: an unknown grid semantics, a symbol list on scalar_load, swapped store types.
tl.kernel @k(%x: memref<512x1024xf32> {role = "in"}, %o: memref<512x1024xf32> {role = "out"}) {
  // expected-error@+1 {{Expected `parallel`, or `sequential`.}}
  tl.grid [4, 2] (parallel, arbitrary) (%i, %j) {
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %o: memref<64x256xi32> {role = "out"}) {
  tl.grid [64] (parallel) (%i) {
    // tl.scalar_load takes no symbols.
    // expected-error@+1 {{Expected ':'}}
    %row = tl.scalar_load %idx[affine_map<(d0)[s0] -> (d0)>](%i)[%i] : memref<64xi32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{memref<128x128xf32> should be of base attribute tensor}}
    tl.store %t, %o[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32>, tensor<8x128xf32>
  }
}

// -----

// tl.convert, tl.compare and tl.select (the checks shared with pallas).
func.func @f(%a: tensor<8x128xi8>) {
  // expected-error@+1 {{convert keeps the shape: 8x128 vs 16x128}}
  %w = tl.convert %a : tensor<8x128xi8> to tensor<16x128xi32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>) {
  // expected-error@+1 {{convert to the same element type f32; use the value}}
  %w = tl.convert %a : tensor<8x128xf32> to tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xcomplex<f32>>) {
  // expected-error@+1 {{convert takes integer, index or float elements, not complex<f32>}}
  %w = tl.convert %a : tensor<8x128xcomplex<f32>> to tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xi32>) {
  // expected-error@+1 {{'olt' is not an integer predicate; expected one of eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge}}
  %c = tl.compare <olt> %a, %a : tensor<8x128xi32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>) {
  // expected-error@+1 {{'sgt' is not a float predicate; expected one of oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno}}
  %c = tl.compare <sgt> %a, %a : tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>) {
  // expected-error@+1 {{compare gives tensor<8x128xi1>, not tensor<8x128xi32>}}
  %c = "tl.compare"(%a, %a) <{predicate = #tl<compare_predicate olt>}> : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xi32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xf32>, %b: tensor<8x128xf16>) {
  // expected-error@+1 {{operand 'rhs' at position 1 does not verify}}
  %c = "tl.compare"(%a, %b) <{predicate = #tl<compare_predicate olt>}> : (tensor<8x128xf32>, tensor<8x128xf16>) -> tensor<8x128xi1>
  func.return
}

// -----

func.func @f(%c: tensor<8x128xi32>, %a: tensor<8x128xf32>) {
  // expected-error@+1 {{select condition must be an i1 tile, got i32 elements}}
  %r = tl.select %c, %a, %a : tensor<8x128xi32>, tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%c: tensor<8x1xi1>, %a: tensor<8x128xf32>) {
  // expected-error@+1 {{select condition shape 8x1 differs from the value shape 8x128}}
  %r = tl.select %c, %a, %a : tensor<8x1xi1>, tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%c: tensor<8x128xi1>, %a: tensor<8x128xf32>, %b: tensor<8x128xbf16>) {
  // expected-error@+1 {{operand 'false_value' at position 2 does not verify}}
  %r = "tl.select"(%c, %a, %b) : (tensor<8x128xi1>, tensor<8x128xf32>, tensor<8x128xbf16>) -> tensor<8x128xf32>
  func.return
}

// -----

// tl.dot (the checks shared with pallas): rank-2 tiles, equal contracted dims, one
// operand element type, an f32 (i32 for integers) result of shape M x N.
func.func @f(%a: tensor<8x128x2xbf16>, %b: tensor<128x256xbf16>) {
  // expected-error@+1 {{dot multiplies two rank-2 tiles, or two rank-3 tiles with a batch dim}}
  %c = "tl.dot"(%a, %b) : (tensor<8x128x2xbf16>, tensor<128x256xbf16>) -> tensor<8x256xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xbf16>, %b: tensor<256x128xbf16>) {
  // expected-error@+1 {{dot of 8x128 by 256x128: the contracted dims differ}}
  %c = tl.dot %a, %b : tensor<8x128xbf16>, tensor<256x128xbf16> -> tensor<8x128xf32>
  func.return
}

// -----

func.func @f(%a: tensor<4x8x128xf32>, %b: tensor<2x128x256xf32>) {
  // expected-error@+1 {{dot of 4x8x128 by 2x128x256: the batch dims differ}}
  %c = tl.dot %a, %b : tensor<4x8x128xf32>, tensor<2x128x256xf32> -> tensor<4x8x256xf32>
  func.return
}

// -----

func.func @f(%a: tensor<8x128xbf16>, %b: tensor<128x256xf32>) {
  // expected-error@+1 {{dot operands have one element type}}
  %c = tl.dot %a, %b : tensor<8x128xbf16>, tensor<128x256xf32> -> tensor<8x256xf32>
  func.return
}

// -----

// bf16 operands accumulate in f32, not bf16.
func.func @f(%a: tensor<8x128xbf16>, %b: tensor<128x256xbf16>) {
  // expected-error@+1 {{dot gives tensor<8x256xf32>, not tensor<8x256xbf16>}}
  %c = tl.dot %a, %b : tensor<8x128xbf16>, tensor<128x256xbf16> -> tensor<8x256xbf16>
  func.return
}

// -----

// i8 operands accumulate in i32; the result shape is M x N.
func.func @f(%a: tensor<32x128xi8>, %b: tensor<128x256xi8>) {
  // expected-error@+1 {{dot gives tensor<32x256xi32>, not tensor<32x128xi32>}}
  %c = tl.dot %a, %b : tensor<32x128xi8>, tensor<128x256xi8> -> tensor<32x128xi32>
  func.return
}

// -----

// tl.reshape keeps the element type and the element count.
func.func @f(%a: tensor<8x1x128xf32>) {
  // expected-error@+1 {{reshape changes the element type from f32 to bf16}}
  %r = tl.reshape %a : tensor<8x1x128xf32> to tensor<8x128xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<8x512xf32>) {
  // expected-error@+1 {{reshape from 4096 to 2048 elements}}
  %r = tl.reshape %a : tensor<8x512xf32> to tensor<8x2x128xf32>
  func.return
}

// -----

// tl.gather: the index buffer holds integers (read flat: an 8x8 buffer is 64 indices).
tl.kernel @k(%idx: memref<8x8xf32> {role = "in"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{tl.gather reads an integer index buffer}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<8x8xf32> -> tensor<8x256xf32>
  }
}

// -----

// The map gives one element offset into the index buffer.
tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{gather map has 2 results but the buffer needs 1}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %c = arith.constant 0 : index
    // expected-error@+1 {{gather dim operand #0 must be an index of the enclosing tl.grid}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%c) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  }
}

// -----

// A gather moves whole rows: the tile's trailing dims are the table's.
tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{a gather of whole rows of memref<1000x256xf32> cannot be tensor<8x128xf32>}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x128xf32>
  }
}

// -----

// Two index buffers pick the first two dims: the tile is (rows, 256), not (rows, 50, 256).
tl.kernel @k(%i0: memref<64xi32> {role = "prefetch"}, %i1: memref<64xi32> {role = "prefetch"}, %x: memref<100x50x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{a gather of whole rows of memref<100x50x256xf32> by 2 index buffers cannot be tensor<8x50x256xf32>}}
    %rows = tl.gather %x, %i0, %i1[affine_map<(d0) -> (d0 * 8)>](%i) : memref<100x50x256xf32>, memref<64xi32>, memref<64xi32> -> tensor<8x50x256xf32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{a gather keeps the table's element type}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xbf16>
  }
}

// -----

// The last grid point starts at index position 64 of a 64-entry index buffer (a ragged
// last step may run past the end, its positions clamped, but must start inside).
tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<72x256xf32> {role = "out"}) {
  tl.grid [9] (parallel) (%i) {
    // expected-error@+1 {{the gather's first index positions [0, 64] leave the 64 indices}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  }
}

// -----

// The indices are scalar-prefetched or streamed in (`in`), never written; the table
// is a readable tile buffer.
tl.kernel @k(%idx: memref<64xi32> {role = "inout"}, %table: memref<1000x256xf32> {role = "in"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{gather index buffer is kernel argument #0 with role 'inout'; expected 'in' or 'prefetch'}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %table: memref<1000x256xf32> {role = "out"}, %out: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    // expected-error@+1 {{gathered buffer is kernel argument #1 with role 'out'; expected 'in' or 'inout'}}
    %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  }
}

// -----

func.func @f(%table: memref<1000x256xf32>, %idx: memref<64xi32>, %i: index) {
  // expected-error@+1 {{'tl.gather' expects ancestor op 'tl.grid'}}
  %rows = tl.gather %table, %idx[affine_map<(d0) -> (d0 * 8)>](%i) : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  func.return
}

// -----

// tl.store ... accumulate: argmax/argmin positions cannot be combined across steps.
tl.kernel @k(%x: memref<64x4096xf32> {role = "in"}, %pos: memref<64x1xi32> {role = "out"}) {
  tl.grid [8, 8] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %am = tl.reduce <argmax> %v [1] : tensor<8x512xf32> -> tensor<8x1xi32>
    // expected-error@+1 {{a store cannot accumulate with <argmax>}}
    tl.store %am, %pos[affine_map<(d0, d1) -> (d0 * 8, 0)>](%i, %k) accumulate <argmax> : tensor<8x1xi32>, memref<64x1xi32>
  }
}

// -----

// An accumulating store needs a sequential grid dim to accumulate over.
tl.kernel @k(%x: memref<64x4096xf32> {role = "in"}, %s: memref<64x1xf32> {role = "out"}) {
  tl.grid [8, 8] (parallel, parallel) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %p = tl.reduce <sum> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    // expected-error@+1 {{an accumulating store needs the grid's sequential dims, and they must be its last dims}}
    tl.store %p, %s[affine_map<(d0, d1) -> (d0 * 8, 0)>](%i, %k) accumulate <sum> : tensor<8x1xf32>, memref<64x1xf32>
  }
}

// -----

// The sequential dim comes first: the accumulated tile would leave VMEM between steps.
tl.kernel @k(%x: memref<64x4096xf32> {role = "in"}, %s: memref<64x1xf32> {role = "out"}) {
  tl.grid [8, 8] (sequential, parallel) (%k, %i) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d1 * 8, d0 * 512)>](%k, %i) : memref<64x4096xf32> -> tensor<8x512xf32>
    %p = tl.reduce <sum> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    // expected-error@+1 {{an accumulating store needs the grid's sequential dims, and they must be its last dims}}
    tl.store %p, %s[affine_map<(d0, d1) -> (d1 * 8, 0)>](%k, %i) accumulate <sum> : tensor<8x1xf32>, memref<64x1xf32>
  }
}

// -----

// Each step along k would accumulate into a different tile.
tl.kernel @k(%x: memref<64x4096xf32> {role = "in"}, %s: memref<64x8xf32> {role = "out"}) {
  tl.grid [8, 8] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %p = tl.reduce <sum> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    // expected-error@+1 {{an accumulating store's offsets may not use a sequential grid dim}}
    tl.store %p, %s[affine_map<(d0, d1) -> (d0 * 8, d1)>](%i, %k) accumulate <sum> : tensor<8x1xf32>, memref<64x8xf32>
  }
}

// -----

// A reduction kind of another level is a mix-up of dialects.
tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{tl.reduce needs a reduction kind of its own dialect, got #pallas<reduction_kind sum>}}
    %s = "tl.reduce"(%t) <{kind = #pallas<reduction_kind sum>, dims = array<i64: 1>}> : (tensor<8x128xf32>) -> tensor<8x1xf32>
  }
}

// -----

// A kernel role of another dialect.
// expected-error@+1 {{tl.kernel needs a role of its own dialect, got #ta<arg_role out>}}
"tl.kernel"() <{sym_name = "k", roles = [#ta<arg_role out>]}> ({
^bb0(%o: memref<8x128xf32>):
  "tl.grid"() <{shape = array<i64: 1>, semantics = [#tl<grid_semantics parallel>]}> ({
  ^bb1(%i: index):
  }) : () -> ()
}) : () -> ()

// -----

// The generic form spells the kind as a `#tl<reduction_kind ...>`; it must be a
// reduction kind.
tl.kernel @k(%x: memref<64x4096xf32> {role = "in"}, %s: memref<64x1xf32> {role = "out"}) {
  tl.grid [8, 8] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %p = tl.reduce <sum> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    // expected-error@+1 {{Expected `sum`, `prod`, `max`, `min`, `argmax`, or `argmin`.}}
    "tl.store"(%p, %s, %i, %k) <{map = affine_map<(d0, d1) -> (d0 * 8, 0)>, accumulate = #tl<reduction_kind mean>, operandSegmentSizes = array<i32: 1, 1, 2, 0>}> : (tensor<8x1xf32>, memref<64x1xf32>, index, index) -> ()
  }
}

// -----

// The custom form names the kind in angle brackets.
tl.kernel @k(%x: memref<64x4096xf32> {role = "in"}, %s: memref<64x1xf32> {role = "out"}) {
  tl.grid [8, 8] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 8, d1 * 512)>](%i, %k) : memref<64x4096xf32> -> tensor<8x512xf32>
    %p = tl.reduce <sum> %v [1] : tensor<8x512xf32> -> tensor<8x1xf32>
    // expected-error@+1 {{Expected `sum`, `prod`, `max`, `min`, `argmax`, or `argmin`.}}
    tl.store %p, %s[affine_map<(d0, d1) -> (d0 * 8, 0)>](%i, %k) accumulate <mean> : tensor<8x1xf32>, memref<64x1xf32>
  }
}

// -----

// An accumulating store may not be offset by data: the accumulator must stay put while
// the sequential dims run.
tl.kernel @k(%idx: memref<4xi32> {role = "prefetch"}, %x: memref<64x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    %r = tl.scalar_load %idx[affine_map<(d0, d1) -> (d1)>](%i, %k) : memref<4xi32>
    %v = tl.load %x[affine_map<(d0, d1) -> (d0 * 32, 0)>](%i, %k) : memref<64x128xf32> -> tensor<32x128xf32>
    // expected-error@+1 {{an accumulating store's offsets may not use symbols}}
    tl.store %v, %o[affine_map<(d0, d1)[s0] -> (s0, 0)>](%i, %k)[%r] accumulate <sum> : tensor<32x128xf32>, memref<64x128xf32>
  }
}

// -----

tl.kernel @k(%idx: memref<64xi32> {role = "prefetch"}, %t: memref<1000x256xf32> {role = "in"}, %o: memref<64x256xf32> {role = "out"}) {
  tl.grid [8] (parallel) (%i) {
    %s = tl.scalar_load %idx[affine_map<(d0) -> (d0)>](%i) : memref<64xi32>
    // expected-error@+1 {{tl.gather takes no symbols: its index is the map's offset}}
    %rows = tl.gather %t, %idx[affine_map<(d0)[s0] -> (d0 * 8)>](%i)[%s] : memref<1000x256xf32>, memref<64xi32> -> tensor<8x256xf32>
  }
}

// -----

tl.kernel @iota(%o: memref<64x256xf32> {role = "out"}) {
  tl.grid [8, 2] (parallel, parallel) (%i, %jj) {
    // expected-error@+1 {{tl.iota gives i32 values}}
    %j = tl.iota dim 1 offset affine_map<(d0, d1) -> (d1 * 128)> (%i, %jj) : tensor<8x128xf32>
  }
}

// -----

// tl.scatter: rows that go to one place are written in order, so the grid dims its
// index map uses must be sequential.
tl.kernel @k(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{the grid dims a scatter's index map uses must be sequential: rows that go to one place are written in order}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}

// -----

// The index buffer is scalar-prefetched (read a scalar at a time from SMEM).
tl.kernel @k(%pos: memref<16xi32> {role = "in"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{scatter index buffer is kernel argument #0 with role 'in'; expected 'prefetch'}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}

// -----

// The dest keeps what no row reaches: it is inout, not out.
tl.kernel @k(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "out"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{scattered buffer is kernel argument #2 with role 'out'; expected 'inout'}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}

// -----

// A scatter writes whole rows: the tile is as wide as the dest's last dim.
tl.kernel @k(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<64x256xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{rows of tensor<8x128xf32> are not whole rows of memref<64x256xf32>}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<64x256xf32>, memref<16xi32>
  }
}

// -----

// One leading index per dest dim before the scattered one.
tl.kernel @k(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<4x64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{scatter lead map has 0 results but the buffer needs 1}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<4x64x128xf32>, memref<16xi32>
  }
}

// -----

tl.kernel @k(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<16x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{a scatter accumulates with <sum> only}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) accumulate <max> : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}

// -----

// An integer product is exact: a precision on it says nothing true.
func.func @f(%a: tensor<32x128xi8>, %b: tensor<128x256xi8>) {
  // expected-error@+1 {{an integer dot is exact: it takes no precision}}
  %c = tl.dot %a, %b precision <highest> : tensor<32x128xi8>, tensor<128x256xi8> -> tensor<32x256xi32>
  func.return
}

// -----

// A running total lives in VMEM between grid steps, in 32 bits.
tl.kernel @k(%x: memref<64x256xbf16> {role = "in"}, %o: memref<64x128xbf16> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xbf16> -> tensor<64x128xbf16>
    // expected-error@+1 {{tl.accumulate holds 32-bit totals, not bf16}}
    %t = tl.accumulate <sum> %v : tensor<64x128xbf16>
  }
}

// -----

tl.kernel @k(%x: memref<64x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<64x128xf32> -> tensor<64x128xf32>
    // expected-error@+1 {{tl.accumulate needs the grid's sequential dims, and they must be its last dims}}
    %t = tl.accumulate <sum> %v : tensor<64x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 1] (sequential, parallel) (%k, %i) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d0 * 128)>](%k, %i) : memref<64x256xf32> -> tensor<64x128xf32>
    // expected-error@+1 {{tl.on_last_step needs the grid's sequential dims, and they must be its last dims}}
    tl.on_last_step {
      tl.store %v, %o[affine_map<(d0, d1) -> (0, 0)>](%k, %i) : tensor<64x128xf32>, memref<64x128xf32>
    }
  }
}

// -----

tl.kernel @k(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xf32> -> tensor<64x128xf32>
    // expected-error@+1 {{'tl.accumulate' cannot be inside tl.on_last_step}}
    tl.on_last_step {
      %t = tl.accumulate <max> %v : tensor<64x128xf32>
    }
  }
}

// -----

tl.kernel @k(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x1xi32> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xf32> -> tensor<64x128xf32>
    // expected-error@+1 {{tl.accumulate cannot combine with <argmax>}}
    %t = tl.accumulate <argmax> %v : tensor<64x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xf32> -> tensor<64x128xf32>
    // expected-error@+1 {{only a <sum> tl.accumulate can be rescaled, not <max>}}
    %t = tl.accumulate <max> %v rescaled %v : tensor<64x128xf32>
  }
}

// -----

// The factor's type must be the partial's (generic form: the custom form cannot spell
// two types).
tl.kernel @k(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xf32> -> tensor<64x128xf32>
    %r = tl.reduce <sum> %v [1] : tensor<64x128xf32> -> tensor<64x1xf32>
    // expected-error@+1 {{operand 'rescale' at position 1 does not verify}}
    %t = "tl.accumulate"(%v, %r) <{kind = #tl<reduction_kind sum>}> : (tensor<64x128xf32>, tensor<64x1xf32>) -> tensor<64x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<64x256xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [1, 2] (parallel, sequential) (%i, %k) {
    %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x256xf32> -> tensor<64x128xf32>
    %r = tl.reduce <max> %v [1] : tensor<64x128xf32> -> tensor<64x1xf32>
    // expected-error@+1 {{tl.previous reads the result of a tl.accumulate, not of 'tl.reduce'}}
    %p = tl.previous %r : tensor<64x1xf32>
  }
}


// -----

// tl.when: the body must run at the first key step, where its accumulators start; at
// k = 0 the condition `k - 1` is -1.
tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{a tl.when holding a tl.accumulate must run at the first step of the grid's sequential dims, where its accumulators start, but its condition (d1 + -1) is -1 < 0 at grid point (0, 0)}}
    %t = tl.when affine_map<(d0, d1) -> (d1 - 1)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      %s = tl.accumulate <sum> %v : tensor<64x128xf32>
      tl.yield %s : tensor<64x128xf32>
    } : tensor<64x128xf32>
  }
}

// -----

// ... for every point of the parallel dims: at i = 3 (k = 0) `2 - i - k` is -1.
tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [4, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{but its condition (((d0 * -1) + 2) + (d1 * -1)) is -1 < 0 at grid point (3, 0)}}
    %t = tl.when affine_map<(d0, d1) -> (2 - d0 - d1)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      %s = tl.accumulate <sum> %v : tensor<64x128xf32>
      tl.yield %s : tensor<64x128xf32>
    } : tensor<64x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{tl.when's condition ((d0 * 4) + ((d1 floordiv 2) * -1)) must be linear in the grid indices (no floordiv, ceildiv or mod)}}
    %t = tl.when affine_map<(d0, d1) -> (d0 * 4 - d1 floordiv 2)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      %s = tl.accumulate <sum> %v : tensor<64x128xf32>
      tl.yield %s : tensor<64x128xf32>
    } : tensor<64x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    %c = arith.constant 0 : index
    // expected-error@+1 {{tl.when dim operand #1 must be an index of the enclosing tl.grid}}
    tl.when affine_map<(d0, d1) -> (d0 - d1)> (%i, %c) {
      tl.yield
    }
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{tl.when's map has 2 results, not the one of its condition}}
    tl.when affine_map<(d0, d1) -> (d0, d1)> (%i, %k) {
      tl.yield
    }
  }
}

// -----

// The results are tl.accumulate totals: a tile computed in the body is not one.
tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{tl.when yields the results of tl.accumulates directly in its body, and value #1 is not one}}
    %t, %e = tl.when affine_map<(d0, d1) -> (3 - d1)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      %s = tl.accumulate <sum> %v : tensor<64x128xf32>
      %e1 = math.exp %v : tensor<64x128xf32>
      tl.yield %s, %e1 : tensor<64x128xf32>, tensor<64x128xf32>
    } : tensor<64x128xf32>, tensor<64x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{tl.when yields 1 values of types (tensor<64x128xf32>), but its results are (tensor<64x1xf32>)}}
    %t = tl.when affine_map<(d0, d1) -> (3 - d1)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      %s = tl.accumulate <sum> %v : tensor<64x128xf32>
      tl.yield %s : tensor<64x128xf32>
    } : tensor<64x1xf32>
  }
}

// -----

// A tl.when body stores nothing: its totals are stored in tl.on_last_step.
tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x512xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{'tl.store' cannot be inside tl.when: yield tl.accumulate totals and store them in tl.on_last_step}}
    tl.when affine_map<(d0, d1) -> (3 - d1)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      tl.store %v, %o[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : tensor<64x128xf32>, memref<64x512xf32>
      tl.yield
    }
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{'tl.on_last_step' cannot be inside tl.when}}
    tl.when affine_map<(d0, d1) -> (3 - d1)> (%i, %k) {
      %v = tl.load %x[affine_map<(d0, d1) -> (0, d1 * 128)>](%i, %k) : memref<64x512xf32> -> tensor<64x128xf32>
      tl.on_last_step {
        tl.store %v, %o[affine_map<(d0, d1) -> (0, 0)>](%i, %k) : tensor<64x128xf32>, memref<64x128xf32>
      }
      tl.yield
    }
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{'tl.when' cannot be inside tl.when}}
    tl.when affine_map<(d0, d1) -> (3 - d1)> (%i, %k) {
      tl.when affine_map<(d0, d1) -> (2 - d1)> (%i, %k) {
        tl.yield
      }
      tl.yield
    }
  }
}

// -----

tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    // expected-error@+1 {{'tl.when' cannot be inside tl.on_last_step}}
    tl.on_last_step {
      tl.when affine_map<(d0, d1) -> (d0)> (%i, %k) {
        tl.yield
      }
    }
  }
}

// -----

// tl.yield ends a tl.when body only.
tl.kernel @k(%x: memref<64x512xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  tl.grid [2, 4] (parallel, sequential) (%i, %k) {
    tl.on_last_step {
      // expected-error@+1 {{'tl.yield' expects parent op 'tl.when'}}
      tl.yield
    }
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{shift 128 is not in [0, 128), the extent of dim 1}}
    %r = tl.roll %t by 128 along 1 : tensor<8x128xf32>
  }
}

// -----

tl.kernel @k(%x: memref<128x128xf32> {role = "in"}, %o: memref<128x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %t = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<128x128xf32> -> tensor<8x128xf32>
    // expected-error@+1 {{dim 2 is not a dim of tensor<8x128xf32>}}
    %r = tl.roll %t by 1 along 2 : tensor<8x128xf32>
  }
}
