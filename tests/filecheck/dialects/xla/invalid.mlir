// RUN: pallas-opt %s --split-input-file --verify-diagnostics

// Malformed xla IR: each chunk must produce exactly the expected error.

// The block's arguments are the function's inputs.
// expected-error@+1 {{xla.func: the block's arguments must have the function's input types}}
"xla.func"() <{sym_name = "f", function_type = (tensor<8xf32>) -> (), part = #xla<part kernel>}> ({
^bb0(%x: tensor<4xf32>):
  "xla.return"() : () -> ()
}) : () -> ()

// -----

// A function takes tensors.
// expected-error@+1 {{xla.func takes and gives tensors, not memref<8xf32>}}
xla.func @f(%x: memref<8xf32>) {
  xla.return
}

// -----

// xla.return gives one value per function result.
xla.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{xla.return gives 0 values, @f returns 1}}
  xla.return
}

// -----

// A returned buffer holds the result's elements.
xla.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = xla.zeros : tensor<4xf32>
  // expected-error@+1 {{xla.return value #0 must hold the 8 f32 elements of tensor<8xf32>, got tensor<4xf32>}}
  xla.return %o : tensor<4xf32>
}

// -----

// xla.buffer keeps the elements.
xla.func @f(%x: tensor<8xf32>) {
  // expected-error@+1 {{xla.buffer must hold the 8 i32 elements of tensor<8xi32>, got tensor<8xf32>}}
  %b = "xla.buffer"(%x) : (tensor<8xf32>) -> tensor<8xi32>
  xla.return
}

// -----

// An iota's axis is a dim of its tensor.
xla.func @f() {
  // expected-error@+1 {{xla.iota axis 2 is not a dim of tensor<4x8xindex>}}
  %i = xla.iota 2 : tensor<4x8xindex>
  xla.return
}

// -----

// An iota gives integers.
xla.func @f() {
  // expected-error@+1 {{xla.iota gives integers, not f32}}
  %i = xla.iota 0 : tensor<4xf32>
  xla.return
}

// -----

// A constant's elements have its value's type.
xla.func @f() {
  // expected-error@+1 {{xla.constant: a f32 value gives f32 elements, not f16}}
  %c = xla.constant 1.0 : f32 : tensor<4xf16>
  xla.return
}

// -----

// The map takes one dim operand per dim.
xla.func @f() {
  %i = xla.iota 0 : tensor<4x8xindex>
  // expected-error@+1 {{xla.flat_index: the map takes 2 dims and 0 symbols, got 1 and 0}}
  %at = xla.flat_index affine_map<(d0, d1) -> (d0, d1)> (%i) [] in [4, 8] : tensor<4x8xindex>
  xla.return
}

// -----

// The map gives one index per dim of the view.
xla.func @f() {
  %i = xla.iota 0 : tensor<4xindex>
  // expected-error@+1 {{xla.flat_index: the map gives 1 indices for a view of rank 2}}
  %at = xla.flat_index affine_map<(d0) -> (d0)> (%i) [] in [4, 8] : tensor<4xindex>
  xla.return
}

// -----

// Positions are index tensors.
xla.func @f() {
  %i = xla.iota 0 : tensor<4xi32>
  // expected-error@+1 {{xla.flat_index gives index tensors}}
  %at = xla.flat_index affine_map<(d0) -> (d0)> (%i) [] in [4] : tensor<4xi32>
  xla.return
}

// -----

// A take gives the buffer's elements shaped like the positions.
xla.func @f(%x: tensor<8xf32>) {
  %b = xla.buffer %x : tensor<8xf32> to tensor<8xf32>
  %i = xla.iota 0 : tensor<4xindex>
  %at = xla.flat_index affine_map<(d0) -> (d0)> (%i) [] in [8] : tensor<4xindex>
  // expected-error@+1 {{xla.take gives f32 elements shaped like the positions (tensor<4xindex>), not tensor<8xf32>}}
  %v = xla.take %b[%at] : tensor<8xf32>, tensor<4xindex> -> tensor<8xf32>
  xla.return
}

// -----

// A scatter stores a value shaped like the positions.
xla.func @f(%x: tensor<8xf32>) {
  %b = xla.buffer %x : tensor<8xf32> to tensor<8xf32>
  %i = xla.iota 0 : tensor<4xindex>
  %at = xla.flat_index affine_map<(d0) -> (d0)> (%i) [] in [8] : tensor<4xindex>
  // expected-error@+1 {{xla.scatter stores f32 values shaped like the positions (tensor<4xindex>), got tensor<8xf32>}}
  %b2 = xla.scatter %b, %b[%at] : tensor<8xf32>, tensor<8xf32>, tensor<4xindex>
  xla.return
}

// -----

// A scatter combines values; it cannot accumulate positions.
xla.func @f(%x: tensor<8xf32>) {
  %b = xla.buffer %x : tensor<8xf32> to tensor<8xf32>
  %i = xla.iota 0 : tensor<8xindex>
  %at = xla.flat_index affine_map<(d0) -> (d0)> (%i) [] in [8] : tensor<8xindex>
  // expected-error@+1 {{xla.scatter cannot accumulate with <argmin>}}
  %b2 = xla.scatter %b, %b[%at] accumulate <argmin> : tensor<8xf32>, tensor<8xf32>, tensor<8xindex>
  xla.return
}

// -----

// A reduction keeps the element type (argmax/argmin give i32).
xla.func @f() {
  %c = xla.constant 1.0 : f32 : tensor<4x8xf32>
  // expected-error@+1 {{xla.reduce <argmax> of tensor<4x8xf32> gives tensor<4x8xi32>, not tensor<4x8xf32>}}
  %s = xla.reduce <argmax> %c axes [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  xla.return
}

// -----

// Reduced axes are dims of the domain.
xla.func @f() {
  %c = xla.constant 1.0 : f32 : tensor<4x8xf32>
  // expected-error@+1 {{xla.reduce: axes [2] are not dims of tensor<4x8xf32>}}
  %s = xla.reduce <sum> %c axes [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  xla.return
}

// -----

// argmax takes one axis.
xla.func @f() {
  %c = xla.constant 1.0 : f32 : tensor<4x8xf32>
  // expected-error@+1 {{xla.reduce <argmax> takes one axis}}
  %s = xla.reduce <argmax> %c axes [0, 1] : tensor<4x8xf32> -> tensor<4x8xi32>
  xla.return
}

// -----

// xla.return ends an xla.func.
func.func @g() {
  // expected-error@+1 {{'xla.return' expects parent op 'xla.func'}}
  xla.return
}

// -----

// A window's index is an axis plus a constant, or a constant: a flip is a gather.
xla.func @f(%x: tensor<64xf32>) {
  %xb = xla.buffer %x : tensor<64xf32> to tensor<64xf32>
  // expected-error@+1 {{xla.window: each index is an axis plus a constant, or a constant, each axis at most once: not (d0) -> (((d0 * -1) + 63))}}
  %v = xla.window %xb affine_map<(d0) -> (63 - d0)> in [64] : tensor<64xf32> -> tensor<64xf32>
  xla.return
}

// -----

// A window stays inside its view.
xla.func @f(%x: tensor<64xf32>) {
  %xb = xla.buffer %x : tensor<64xf32> to tensor<64xf32>
  // expected-error@+1 {{xla.window: the window leaves the view [64] along a dim of 64 (from 8)}}
  %v = xla.window %xb affine_map<(d0) -> (d0 + 8)> in [64] : tensor<64xf32> -> tensor<64xf32>
  xla.return
}

// -----

// An accumulating window combines each point with its own element.
xla.func @f(%x: tensor<64xf32>) {
  %xb = xla.buffer %x : tensor<64xf32> to tensor<64xf32>
  %v = xla.window %xb affine_map<(d0, d1) -> (d0)> in [64] : tensor<64xf32> -> tensor<64x2xf32>
  // expected-error@+1 {{xla.update_window: an accumulating window walks every domain axis over 1}}
  %w = xla.update_window %v, %xb affine_map<(d0, d1) -> (d0)> in [64] accumulate <sum> : tensor<64x2xf32>, tensor<64xf32>
  xla.return
}

// -----

// A window's index is linear: `d0 mod 64` agrees with `d0` at 0 and 1, not along 128.
xla.func @f(%x: tensor<256xf32>) {
  %xb = xla.buffer %x : tensor<256xf32> to tensor<256xf32>
  // expected-error@+1 {{xla.window: each index is an axis plus a constant, or a constant, each axis at most once: not (d0) -> ((d0 mod 64))}}
  %v = xla.window %xb affine_map<(d0) -> (d0 mod 64)> in [256] : tensor<256xf32> -> tensor<128xf32>
  xla.return
}
