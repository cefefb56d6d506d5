// RUN: la-opt %s -split-input-file -la-emit-call-wrappers -verify-diagnostics | FileCheck %s

// Each C interface gets a packed entry: argument i is loaded from args[i] and passed on, in order.
// CHECK-LABEL: llvm.func @_mlir_ciface_kernel
// CHECK:       llvm.func @la_call_kernel(%[[ARGS:.*]]: !llvm.ptr)
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.call @_mlir_ciface_kernel(%[[A0]], %[[A1]])
// CHECK-NEXT:    llvm.return
// Functions without a C interface get no wrapper.
// CHECK-NOT: @la_call_helper
llvm.func @_mlir_ciface_kernel(%in: !llvm.ptr, %out: !llvm.ptr) {
  llvm.return
}
llvm.func @helper(%in: !llvm.ptr) {
  llvm.return
}

// -----

// A C interface that returns a value is not a kernel the runtime can call.
// expected-error @below {{'_mlir_ciface_returns' takes or returns a non-pointer value}}
llvm.func @_mlir_ciface_returns(%in: !llvm.ptr) -> f32 {
  %c = llvm.mlir.constant(1.0 : f32) : f32
  llvm.return %c : f32
}
