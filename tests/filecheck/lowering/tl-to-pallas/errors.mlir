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
