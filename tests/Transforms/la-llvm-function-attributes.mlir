// RUN: la-opt %s -la-llvm-function-attributes="target-cpu=znver4 target-features=+avx512f,-avx512vl" | FileCheck %s
// RUN: la-opt %s -la-llvm-function-attributes | FileCheck %s --check-prefix=NOTARGET

// The kernel's pointer arguments are noalias, its sizes are not; every definition gets the target.
// CHECK-LABEL: llvm.func @kernel(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64)
// CHECK-SAME:    target_cpu = "znver4"
// CHECK-SAME:    target_features = #llvm.target_features<["+avx512f", "-avx512vl"]>
// NOTARGET-LABEL: llvm.func @kernel(%{{.*}}: !llvm.ptr {llvm.noalias}
// NOTARGET-NOT:  target_cpu
llvm.func @kernel(%in: !llvm.ptr, %out: !llvm.ptr, %n: i64) {
  llvm.return
}

// The wrappers the runtime calls through keep their arguments plain: their pointers are descriptors, which
// point into one another's frames.
// CHECK-LABEL: llvm.func @_mlir_ciface_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME:    target_cpu = "znver4"
llvm.func @_mlir_ciface_kernel(%in: !llvm.ptr, %out: !llvm.ptr) {
  llvm.return
}
// CHECK-LABEL: llvm.func @la_call_kernel(%{{.*}}: !llvm.ptr)
llvm.func @la_call_kernel(%args: !llvm.ptr) {
  llvm.return
}

// Private helpers are not kernels.
// CHECK-LABEL: llvm.func internal @helper(%{{.*}}: !llvm.ptr)
llvm.func internal @helper(%in: !llvm.ptr) {
  llvm.return
}

// Allocators return fresh memory; declarations get no target attributes.
// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
// CHECK-NOT: target_cpu
llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
