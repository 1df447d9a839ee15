// RUN: pallas-opt %s -t python | filecheck %s
// RUN: pallas-opt %s -t python > %t.py
// RUN: python -m py_compile %t.py

// The Python spelling of pallas.convert (`astype`: float → int truncates toward zero),
// pallas.compare (operators; `u*` float predicates are true where either side is NaN,
// unsigned integer predicates compare `uintN` bits) and pallas.select (`jnp.where`).
func.func @forward(%x: tensor<64x256xi8>, %y: tensor<64x256xf32>) -> tensor<64x256xbf16> {
  %out = pallas.call @casts(%x, %y) grid [2]
      in [#pallas.block_spec<[32, 256], (d0) -> (d0, 0)>, #pallas.block_spec<[32, 256], (d0) -> (d0, 0)>]
      out [#pallas.block_spec<[32, 256], (d0) -> (d0, 0)>]
      semantics [parallel]
      : (tensor<64x256xi8>, tensor<64x256xf32>) -> tensor<64x256xbf16>
      kernel(%x_ref: !pallas.ref<32x256xi8, vmem>, %y_ref: !pallas.ref<32x256xf32, vmem>, %o_ref: !pallas.ref<32x256xbf16, vmem>) {
    %a = pallas.load %x_ref[...] : !pallas.ref<32x256xi8, vmem> -> tensor<32x256xi8>
    %b = pallas.load %y_ref[...] : !pallas.ref<32x256xf32, vmem> -> tensor<32x256xf32>
    %w = pallas.convert %a : tensor<32x256xi8> to tensor<32x256xi32>
    %t = pallas.convert %b : tensor<32x256xf32> to tensor<32x256xi32>
    %u = pallas.convert %w : tensor<32x256xi32> to tensor<32x256xui32>
    %z = arith.constant dense<0> : tensor<32x256xi32>
    %slt = pallas.compare <slt> %w, %z : tensor<32x256xi32>
    %ult = pallas.compare <ult> %w, %t : tensor<32x256xi32>
    %eq = pallas.compare <eq> %w, %t : tensor<32x256xi32>
    %m = pallas.select %slt, %t, %w : tensor<32x256xi1>, tensor<32x256xi32>
    %f = pallas.convert %m : tensor<32x256xi32> to tensor<32x256xf32>
    %ogt = pallas.compare <ogt> %b, %f : tensor<32x256xf32>
    %fult = pallas.compare <ult> %b, %f : tensor<32x256xf32>
    %one = pallas.compare <one> %b, %f : tensor<32x256xf32>
    %uno = pallas.compare <uno> %b, %f : tensor<32x256xf32>
    %r = pallas.select %ogt, %b, %f : tensor<32x256xi1>, tensor<32x256xf32>
    %h = pallas.convert %r : tensor<32x256xf32> to tensor<32x256xbf16>
    pallas.store %h, %o_ref[...] : tensor<32x256xbf16>, !pallas.ref<32x256xbf16, vmem>
  }
  func.return %out : tensor<64x256xbf16>
}

// CHECK-LABEL: def casts_kernel(x_ref, y_ref, o_ref):
// CHECK-NEXT:      a = x_ref[...]
// CHECK-NEXT:      b = y_ref[...]
// CHECK-NEXT:      w = a.astype(jnp.int32)
// CHECK-NEXT:      t = b.astype(jnp.int32)
// CHECK-NEXT:      u = w.astype(jnp.uint32)
// CHECK-NEXT:      z = jnp.full((32, 256), 0, jnp.int32)
// CHECK-NEXT:      slt = w < z
// CHECK-NEXT:      ult = w.astype(jnp.uint32) < t.astype(jnp.uint32)
// CHECK-NEXT:      eq = w == t
// CHECK-NEXT:      m = jnp.where(slt, t, w)
// CHECK-NEXT:      f = m.astype(jnp.float32)
// CHECK-NEXT:      ogt = b > f
// CHECK-NEXT:      fult = ~(b >= f)
// CHECK-NEXT:      one = (b < f) | (b > f)
// CHECK-NEXT:      uno = jnp.isnan(b) | jnp.isnan(f)
// CHECK-NEXT:      r = jnp.where(ogt, b, f)
// CHECK-NEXT:      h = r.astype(jnp.bfloat16)
// CHECK-NEXT:      o_ref[...] = h
