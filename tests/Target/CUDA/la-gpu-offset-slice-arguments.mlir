// RUN: la-opt %s -pass-pipeline="builtin.module(gpu.module(la-gpu-offset-slice-arguments))" | FileCheck %s

// Each pointer argument advances by slice × its slice bytes, slice = ctaid.x + nctaid.x · ctaid.y; every use
// reads the advanced pointer, and the attribute goes (a second run must not move them again).
// CHECK-LABEL: llvm.func @k
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr)
// CHECK-NOT: la.slice_bytes
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[Y:.*]] = nvvm.read.ptx.sreg.ctaid.y
// CHECK: %[[W:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[ROW:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK: %[[SLICE:.*]] = llvm.add %{{.*}}, %[[ROW]] : i64
// CHECK: %[[BYTES_A:.*]] = llvm.mlir.constant(256 : i64)
// CHECK: %[[OFF_A:.*]] = llvm.mul %[[SLICE]], %[[BYTES_A]]
// CHECK: %[[PA:.*]] = llvm.getelementptr inbounds %[[A]][%[[OFF_A]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[BYTES_B:.*]] = llvm.mlir.constant(64 : i64)
// CHECK: %[[OFF_B:.*]] = llvm.mul %[[SLICE]], %[[BYTES_B]]
// CHECK: %[[PB:.*]] = llvm.getelementptr inbounds %[[B]][%[[OFF_B]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[V:.*]] = llvm.load %[[PA]] : !llvm.ptr -> f32
// CHECK: llvm.store %[[V]], %[[PB]] : f32, !llvm.ptr
gpu.module @m {
  llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr) attributes {la.slice_bytes = array<i64: 256, 64>} {
    %v = llvm.load %a : !llvm.ptr -> f32
    llvm.store %v, %b : f32, !llvm.ptr
    llvm.return
  }
}
