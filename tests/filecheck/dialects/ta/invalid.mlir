// RUN: pallas-opt %s --split-input-file --verify-diagnostics

// Malformed ta IR: each chunk must produce exactly the expected error.

// The map takes two dims but the load passes one loop variable.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{load map has 2 dims but 1 dim operands}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i) : memref<8192xf32>
  }
}

// -----

// The map has a symbol but no symbol operand is given.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{load map has 1 symbols but 0 symbol operands}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (d0 * 128 + d1 + s0)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// Two indices for a rank-1 buffer.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{load map has 2 results but the buffer needs 1}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// The last point of the loop reads element 8192 of an 8192-element buffer.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{load index #0 ranges over [1, 8192] but the buffer dim is 8192: the access leaves its buffer}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1 + 1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// The first point of the loop reads element -1.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [8192] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<8192xf32>
    // expected-error@+1 {{store index #0 ranges over [-1, 8190] but the buffer dim is 8192}}
    ta.store %v, %o[affine_map<(d0) -> (d0 - 1)>](%i) : memref<8192xf32>
  }
}

// -----

// A dim operand must be a loop variable; a data-dependent index is a symbol.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %c = arith.constant 0 : index
    // expected-error@+1 {{load dim operand #0 must be a variable of an enclosing ta.loop}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%c, %j) : memref<8192xf32>
  }
}

// -----

// A store to an input buffer.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    // expected-error@+1 {{stored buffer is kernel argument #0 with role 'in'; expected 'inout' or 'out'}}
    ta.store %v, %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// A load from an output buffer.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{loaded buffer is kernel argument #1 with role 'out'; expected 'in' or 'inout' or 'prefetch'}}
    %v = ta.load %o[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
  }
}

// -----

// In generic form, a load result that is not the buffer's element type (the type
// constraint the declarative syntax infers the result type from).
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{'ta.load' op result 'result' at position 0 does not verify:}}
    %v = "ta.load"(%x, %i, %j) <{map = affine_map<(d0, d1) -> (d0 * 128 + d1)>, operandSegmentSizes = array<i32: 1, 2, 0>}> : (memref<8192xf32>, index, index) -> i32
  }
}

// -----

// A load outside any loop.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  // expected-error@+1 {{'ta.load' expects ancestor op to be one of 'ta.loop', 'ta.attention'}}
  %v = ta.load %x[affine_map<() -> (0)>]() : memref<8192xf32>
}

// -----

// A reduction in a loop without reduce dims has nothing to reduce over.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    // expected-error@+1 {{ta.reduce needs an enclosing ta.loop with reduce dims}}
    %s = ta.reduce <sum> %v : f32
  }
}

// -----

// argmax gives an i32 position, so `-> f32` is rejected while parsing.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xi32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    // expected-error@+1 {{ta.reduce <argmax> gives i32, not f32}}
    %s = ta.reduce <argmax> %v : f32 -> f32
  }
}

// -----

// The same in generic form is caught by the verifier.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xi32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    // expected-error@+1 {{<argmax> result must be i32, got f32}}
    %s = "ta.reduce"(%v) <{kind = #ta<reduction_kind argmax>}> : (f32) -> f32
  }
}

// -----

// An unknown reduction kind in generic form (a `#ta<reduction_kind ...>`) is a parse
// error.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    // expected-error@+1 {{Expected `sum`, `prod`, `max`, `min`, `argmax`, or `argmin`.}}
    %s = "ta.reduce"(%v) <{kind = #ta<reduction_kind mean>}> : (f32) -> f32
  }
}

// -----

// An unknown reduction kind in custom form is a parse error.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  ta.loop [64] reduce [128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : memref<8192xf32>
    // expected-error@+1 {{Expected `sum`, `prod`, `max`, `min`, `argmax`, or `argmin`.}}
    %s = ta.reduce <average> %v : f32
  }
}

// -----

// A reshape keeps the element count.
func.func @forward(%x: memref<8192xf32>) {
  // expected-error@+1 {{reshape from 8192 to 4096 elements}}
  %r = ta.reshape %x : memref<8192xf32> to memref<64x64xf32>
  func.return
}

// -----

// A reshape keeps the element type.
func.func @forward(%x: memref<8192xf32>) {
  // expected-error@+1 {{reshape changes the element type from f32 to i32}}
  %r = ta.reshape %x : memref<8192xf32> to memref<64x128xi32>
  func.return
}

// -----

// Buffers are allocated on the host, not in kernels.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  // expected-error@+1 {{ta.alloc is host-side: it cannot be in a kernel}}
  %t = ta.alloc : memref<64xf32>
}

// -----

// Only a ta.kernel can be launched.
func.func @forward(%x: memref<8192xf32>) {
  // expected-error@+1 {{'forward' is not a kernel (ta.kernel or tl.kernel)}}
  ta.launch @forward(%x) : memref<8192xf32>
  func.return
}

// -----

// The launch's buffers must have the kernel's argument types.
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
}
func.func @forward(%x: memref<8192xf32>, %o: memref<128xf32>) {
  // expected-error@+1 {{argument types memref<8192xf32>, memref<128xf32> do not match kernel @k's memref<8192xf32>, memref<64xf32>}}
  ta.launch @k(%x, %o) : memref<8192xf32>, memref<128xf32>
  func.return
}

// -----

// Launches are host-side.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
}
ta.kernel @k2(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) {
  // expected-error@+1 {{ta.launch is host-side: it cannot be in a kernel}}
  ta.launch @k(%x, %o) : memref<64xf32>, memref<64xf32>
}

// -----

// A kernel that writes nothing.
// expected-error@+1 {{ta.kernel has no output argument (role 'out' or 'inout')}}
ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %y: memref<8192xf32> {role = "in"}) {
}

// -----

// expected-error@+1 {{argument #0 has role 'input'; expected one of in, inout, out, prefetch}}
ta.kernel @k(%x: memref<8192xf32> {role = "input"}, %o: memref<64xf32> {role = "out"}) {
}

// -----

// Prefetched buffers hold block indices: integers.
// expected-error@+1 {{prefetch argument #0 must hold integers, got f32}}
ta.kernel @k(%idx: memref<64xf32> {role = "prefetch"}, %o: memref<64xf32> {role = "out"}) {
}

// -----

// expected-error@+1 {{argument #0 must be a memref buffer, got tensor<8192xf32>}}
ta.kernel @k(%x: tensor<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
}

// -----

// expected-error@+2 {{ta.kernel has 2 arguments but 1 roles}}
// The roles property must have one entry per argument (generic form).
"ta.kernel"() <{sym_name = "k", roles = [#ta<arg_role in>]}> ({
^bb0(%x: memref<8192xf32>, %o: memref<8192xf32>):
}) : () -> ()

// -----

ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  // expected-error@+1 {{loop extents must be positive, got 0}}
  ta.loop [0, 128] (%i, %j) {
  }
}

// -----

ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  // expected-error@+1 {{loop has 2 dims but 1 loop variables}}
  ta.loop [64, 128] (%i) {
  }
}

// -----

func.func @forward(%x: memref<8192xf32>) {
  // expected-error@+1 {{'ta.loop' expects parent op 'ta.kernel'}}
  ta.loop [64] (%i) {
  }
  func.return
}

// -----

// Parse errors: a kernel argument without a role.
// expected-error@+1 {{kernel argument needs a role: {role = "in" | "out" | "inout" | "prefetch"}}}
ta.kernel @k(%x: memref<8192xf32>, %o: memref<8192xf32> {role = "out"}) {
}

// -----

// expected-error@+1 {{kernel arguments take only a role attribute}}
ta.kernel @k(%x: memref<8192xf32> {role = "in", extra = 1}, %o: memref<8192xf32> {role = "out"}) {
}

// -----

ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  // expected-error@+1 {{'(' expected}}
  ta.loop [64, 128] %i, %j {
  }
}

// -----

ta.kernel @k(%x: memref<8192xf32> {role = "in"}, %o: memref<8192xf32> {role = "out"}) {
  ta.loop [64, 128] (%i, %j) {
    // expected-error@+1 {{tensor<8192xf32> should be of base attribute memref}}
    %v = ta.load %x[affine_map<(d0, d1) -> (d0 * 128 + d1)>](%i, %j) : tensor<8192xf32>
  }
}

// -----

// The kernel target is a typed contract: a string is not silently "no target".
// expected-error@+1 {{'target' must be a #ta<target ...>, got "xla"}}
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) attributes {target = "xla"} {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    ta.store %v, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

// xla_access only marks an XLA kernel.
// expected-error@+1 {{'xla_access' must be a #ta<xla_access ...> on a kernel with target = #ta<target xla>, got #ta<xla_access gather>}}
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}) attributes {xla_access = #ta<xla_access gather>} {
  ta.loop [64] (%i) {
    %v = ta.load %x[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
    ta.store %v, %o[affine_map<(d0) -> (d0)>](%i) : memref<64xf32>
  }
}

// -----

ta.kernel @k(%idx: memref<8xi32> {role = "in"}, %x: memref<64x128xf32> {role = "in"}, %o: memref<8x128xf32> {role = "out"}) {
  ta.loop [8, 128] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<8xi32>
    %s = arith.index_cast %r : i32 to index
    // expected-error@+1 {{'gather' must be a #ta<gather_strategy ...>, got "dma"}}
    %v = ta.load %x[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] {gather = "dma"} : memref<64x128xf32>
    ta.store %v, %o[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x128xf32>
  }
}

// -----

// An accumulating store reads what is there: its buffer must be inout.
ta.kernel @k(%idx: memref<8xi32> {role = "in"}, %x: memref<8x128xf32> {role = "in"}, %o: memref<64x128xf32> {role = "out"}) {
  ta.loop [8, 128] (%i, %j) {
    %r = ta.load %idx[affine_map<(d0) -> (d0)>](%i) : memref<8xi32>
    %s = arith.index_cast %r : i32 to index
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x128xf32>
    // expected-error@+1 {{accumulated buffer is kernel argument #2 with role 'out'; expected 'inout'}}
    ta.store %v, %o[affine_map<(d0, d1)[s0] -> (s0, d1)>](%i, %j)[%s] accumulate <sum> : memref<64x128xf32>
  }
}

// -----

// A store combines values; it cannot accumulate positions.
ta.kernel @k(%x: memref<8x128xf32> {role = "in"}, %o: memref<8x128xf32> {role = "inout"}) {
  ta.loop [8, 128] (%i, %j) {
    %v = ta.load %x[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) : memref<8x128xf32>
    // expected-error@+1 {{a store cannot accumulate with <argmax>}}
    ta.store %v, %o[affine_map<(d0, d1) -> (d0, d1)>](%i, %j) accumulate <argmax> : memref<8x128xf32>
  }
}

// -----

// A library call runs on XLA: its kernel must say so.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}, %i: memref<64xi32> {role = "out"}) {
  // expected-error@+1 {{ta.library_call runs on XLA: its kernel needs target = #ta<target xla>}}
  ta.library_call sort(%x) -> (%o, %i) shapes [array<i64: 64>, array<i64: 64>, array<i64: 64>] params {descending = false, dim = 0 : i64, stable = false} : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)
}

// -----

// Each operand's shape must hold its buffer's elements.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "out"}, %i: memref<64xi32> {role = "out"}) attributes {target = #ta<target xla>} {
  // expected-error@+1 {{ta.library_call: shape [4, 8] does not fit memref<64xf32>}}
  ta.library_call sort(%x) -> (%o, %i) shapes [array<i64: 4, 8>, array<i64: 64>, array<i64: 64>] params {descending = false, dim = 0 : i64, stable = false} : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)
}

// -----

// A library call writes arguments its kernel writes.
ta.kernel @k(%x: memref<64xf32> {role = "in"}, %o: memref<64xf32> {role = "in"}, %i: memref<64xi32> {role = "out"}) attributes {target = #ta<target xla>} {
  // expected-error@+1 {{ta.library_call writes arguments the kernel writes}}
  ta.library_call sort(%x) -> (%o, %i) shapes [array<i64: 64>, array<i64: 64>, array<i64: 64>] params {descending = false, dim = 0 : i64, stable = false} : (memref<64xf32>) -> (memref<64xf32>, memref<64xi32>)
}

// -----

  ta.kernel @attn(%q: memref<8x64xf32> {role = "in"}, %k: memref<8x64xf32> {role = "in"}, %v: memref<8x64xf32> {role = "in"}, %o: memref<8x64xf32> {role = "out"}) {
    // expected-error@+1 {{ta.attention q may vary along ['b', 'd', 'i'], not ['j']}}
    ta.attention batch [] sizes [8, 8, 64, 64]
        q %q[affine_map<(i, j, d, e) -> (j, d)>]
        k %k[affine_map<(i, j, d, e) -> (j, d)>]
        v %v[affine_map<(i, j, d, e) -> (j, e)>]
        out %o[affine_map<(i, j, d, e) -> (i, e)>]
        : memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>
        score {
      ^bb0(%i: index, %j: index, %s: f32):
        ta.yield %s : f32
    }
  }

// -----

// `over` lists reduction dims of the loop: dim 0 is a parallel one.
ta.kernel @k(%x: memref<64x128xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64, 128] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<64x128xf32>
    // expected-error@+1 {{'over' lists [0], but the reduction dims of the loop are [1, 2]}}
    %s = ta.reduce <sum> %v over [0] : f32
  }
}

// -----

// `over` lists each dim once, in ascending order.
ta.kernel @k(%x: memref<64x128xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64, 128] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<64x128xf32>
    // expected-error@+1 {{'over' must list reduction dims in ascending order, got [2, 1]}}
    %s = ta.reduce <sum> %v over [2, 1] : f32
  }
}

// -----

// argmax/argmin give a position in the whole reduction domain: no `over`.
ta.kernel @k(%x: memref<64x128xf32> {role = "in"}, %o: memref<64xi32> {role = "out"}) {
  ta.loop [1] reduce [64, 128] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<64x128xf32>
    // expected-error@+1 {{<argmax> reduces over every reduction dim (no 'over')}}
    %s = ta.reduce <argmax> %v over [2] : f32 -> i32
  }
}

// -----

// Every reduction dim is the default: one form for one meaning.
ta.kernel @k(%x: memref<64x128xf32> {role = "in"}, %o: memref<1xf32> {role = "out"}) {
  ta.loop [1] reduce [64, 128] (%p, %r, %c) {
    %v = ta.load %x[affine_map<(d0, d1, d2) -> (d1, d2)>](%p, %r, %c) : memref<64x128xf32>
    // expected-error@+1 {{'over' lists every reduction dim, [1, 2]: leave it out}}
    %s = ta.reduce <sum> %v over [1, 2] : f32
  }
}
