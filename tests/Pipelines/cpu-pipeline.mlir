// RUN: la-opt %s -la-cpu-pipeline | FileCheck %s

// The whole CPU pipeline ends in the LLVM dialect: the result became an out-parameter, every memref
// and the C interface the runtime calls exists.
// CHECK-LABEL: llvm.func @normalize_rows
// CHECK-NOT: llvm.return %{{.*}} : !llvm.struct
// CHECK-LABEL: llvm.func @_mlir_ciface_normalize_rows(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: la.
func.func @normalize_rows(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = la.map sigmoid %x : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = la.normalize sum %s along 1 : tensor<4x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
