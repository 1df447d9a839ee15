// RUN: pallas-opt %s --split-input-file -p tl-to-pallas --verify-diagnostics

// Tiles of 128 rows at offsets 100 * i: not multiples of the block size, so there is no
// block index to give; rejected rather than mis-tiled.
tl.kernel @unaligned(%x: memref<512x128xf32> {role = "in"}, %out: memref<512x128xf32> {role = "out"}) {
  tl.grid [4] (parallel) (%i) {
    // expected-error@+1 {{tl-to-pallas: offset (d0 * 100) of dim 0 is not block-aligned: blocks of dim 0 would hold 128 elements}}
    %v = tl.load %x[affine_map<(d0) -> (d0 * 100, 0)>](%i) : memref<512x128xf32> -> tensor<128x128xf32>
    tl.store %v, %out[affine_map<(d0) -> (d0 * 128, 0)>](%i) : tensor<128x128xf32>, memref<512x128xf32>
  }
}
func.func @forward(%x: memref<512x128xf32>) -> memref<512x128xf32> {
  %out = ta.alloc : memref<512x128xf32>
  ta.launch @unaligned(%x, %out) : memref<512x128xf32>, memref<512x128xf32>
  func.return %out : memref<512x128xf32>
}

// -----

// A store of a 4 x 128 tile into a 16 x 128 buffer at a constant offset: its block must be
// the whole (sub-(8,128)) dim, and writing part of a block would clobber the rest.
tl.kernel @partial(%x: memref<16x128xf32> {role = "in"}, %out: memref<16x128xf32> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<16x128xf32> -> tensor<16x128xf32>
    %w = tl.reshape %v : tensor<16x128xf32> to tensor<16x128xf32>
    %q = tl.load %x[affine_map<(d0) -> (4, 0)>](%i) : memref<16x128xf32> -> tensor<4x128xf32>
    // expected-error@+1 {{tl-to-pallas: the store writes part of a 16-element block along dim 0; masked stores are not supported yet}}
    tl.store %q, %out[affine_map<(d0) -> (4, 0)>](%i) : tensor<4x128xf32>, memref<16x128xf32>
  }
}
func.func @forward(%x: memref<16x128xf32>) -> memref<16x128xf32> {
  %out = ta.alloc : memref<16x128xf32>
  ta.launch @partial(%x, %out) : memref<16x128xf32>, memref<16x128xf32>
  func.return %out : memref<16x128xf32>
}

// -----

// i64 data in a kernel: the TPU has no 64-bit types. Only scalar-prefetch index buffers
// are narrowed (on the host, to i32); data is the program's to narrow.
tl.kernel @wide(%x: memref<8x128xi64> {role = "in"}, %out: memref<8x128xi64> {role = "out"}) {
  tl.grid [1] (parallel) (%i) {
    // expected-error@+1 {{tl-to-pallas: TPU kernels have no 64-bit types and %x holds i64; only scalar-prefetch indices are narrowed (to i32)}}
    %v = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<8x128xi64> -> tensor<8x128xi64>
    tl.store %v, %out[affine_map<(d0) -> (0, 0)>](%i) : tensor<8x128xi64>, memref<8x128xi64>
  }
}
func.func @forward(%x: memref<8x128xi64>) -> memref<8x128xi64> {
  %out = ta.alloc : memref<8x128xi64>
  ta.launch @wide(%x, %out) : memref<8x128xi64>, memref<8x128xi64>
  func.return %out : memref<8x128xi64>
}

// -----

// A scatter writes one row at a time by DMA; a bf16 row shares a 32-bit sublane with its
// neighbour, which a DMA cannot split.
tl.kernel @scatter_bf16(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xbf16> {role = "in"}, %c: memref<64x128xbf16> {role = "inout"}) {
  tl.grid [1] (sequential) (%i) {
    %v = tl.load %x[affine_map<(d0) -> (0, 0)>](%i) : memref<16x128xbf16> -> tensor<16x128xbf16>
    // expected-error@+1 {{tl-to-pallas: a scatter writes rows by DMA, one at a time, and a row of bf16 shares a 32-bit sublane with its neighbours; only 32-bit rows are written so}}
    tl.scatter %v, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 16)>](%i) : tensor<16x128xbf16>, memref<64x128xbf16>, memref<16xi32>
  }
}
func.func @forward(%pos: memref<16xi32>, %x: memref<16x128xbf16>, %c: memref<64x128xbf16>) -> memref<64x128xbf16> {
  ta.launch @scatter_bf16(%pos, %x, %c) : memref<16xi32>, memref<16x128xbf16>, memref<64x128xbf16>
  func.return %c : memref<64x128xbf16>
}

// -----

// A scattered buffer stays in HBM, moved by row DMAs only: no tile of it is loaded in
// the same kernel.
tl.kernel @scatter_and_load(%pos: memref<16xi32> {role = "prefetch"}, %x: memref<16x128xf32> {role = "in"}, %c: memref<64x128xf32> {role = "inout"}) {
  tl.grid [2] (sequential) (%i) {
    // expected-error@+1 {{tl-to-pallas: a scattered buffer stays in HBM, written by row DMAs; 'tl.load' may not use it in the same kernel}}
    %w = tl.load %c[affine_map<(d0) -> (d0 * 8, 0)>](%i) : memref<64x128xf32> -> tensor<8x128xf32>
    tl.scatter %w, %c[affine_map<(d0) -> ()>], %pos[affine_map<(d0) -> (d0 * 8)>](%i) : tensor<8x128xf32>, memref<64x128xf32>, memref<16xi32>
  }
}
func.func @forward(%pos: memref<16xi32>, %x: memref<16x128xf32>, %c: memref<64x128xf32>) -> memref<64x128xf32> {
  ta.launch @scatter_and_load(%pos, %x, %c) : memref<16xi32>, memref<16x128xf32>, memref<64x128xf32>
  func.return %c : memref<64x128xf32>
}
