// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:softmax --shapes 'f32[64,512]' | pallas-opt -p split-kernel-loops | filecheck %s
// RUN: python -m pallas_ir.frontend %S/Inputs/programs.py:chain --shapes 'f32[64,256]' 'f32[256]' 'f32[64,1]' | pallas-opt -p split-kernel-loops --verify-semantics | filecheck %s --check-prefix=CHAIN

// The frontend's modules are pallas-opt input: split-kernel-loops takes them (each
// frontend kernel has one loop already, so they come out as they went in).

// CHECK-COUNT-1: ta.kernel
// CHECK:         func.func @forward
// CHECK-COUNT-1:   ta.launch

// CHAIN:         ta.kernel
// CHAIN:           ta.loop [64, 256]
// CHAIN:         func.func @forward
