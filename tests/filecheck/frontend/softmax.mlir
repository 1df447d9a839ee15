// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:softmax --shapes 'f32[64,512]' | filecheck %s
// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:softmax --shapes 'f32[64,512]' | pallas-opt --verify-semantics -p tile,tl-to-pallas,pallas-legalize-mosaic -t python | filecheck %s --check-prefix=PY

// softmax over the rows is one kernel: its loop reduces over the row, the max and the
// sum of exp(x - max) are computed in it (fused reductions), and the normalised value
// is stored at every point of the row. The row is read once.

// CHECK:      ta.kernel @[[SOFTMAX:\w+]](%[[X:\w+]]: memref<32768xf32> {role = "in"}, %[[OUT:\w+]]: memref<32768xf32> {role = "out"}) {
// CHECK-NEXT:   ta.loop [64] reduce [512] (%[[I:\w+]], %[[J:\w+]]) {
// CHECK-NEXT:     %[[V:\w+]] = ta.load %[[X]][affine_map<(d0, d1) -> (((d0 * 512) + d1))>](%[[I]], %[[J]])
// CHECK-NEXT:     %[[M:\w+]] = ta.reduce <max> %[[V]] : f32
// CHECK-NEXT:     %[[C:\w+]] = arith.subf %[[V]], %[[M]] : f32
// CHECK-NEXT:     %[[E:\w+]] = math.exp %[[C]] : f32
// CHECK-NEXT:     %[[S:\w+]] = ta.reduce <sum> %[[E]] : f32
// CHECK-NEXT:     %[[Q:\w+]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT:     ta.store %[[Q]], %[[OUT]][affine_map<(d0, d1) -> (((d0 * 512) + d1))>](%[[I]], %[[J]])
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      func.func @forward
// CHECK:        ta.launch @[[SOFTMAX]](
// CHECK-NOT:    ta.launch

// One pallas_call: whole rows in a block, both statistics reduced in registers.
// PY:         def [[K:\w+]]_kernel(
// PY:           jnp.max({{.*}}, axis=(1,), keepdims=True)
// PY:           jnp.sum({{.*}}, axis=(1,), keepdims=True)
// PY-COUNT-1:   pl.pallas_call(
// PY-NOT:       pl.pallas_call(
// PY:         def forward(
// PY-NOT:       pl.pallas_call(
