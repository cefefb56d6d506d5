//===- la-opt.cpp - mlir-opt with the `la` dialect --------------------------===//
//
// Registration only: every upstream dialect, pass and extension, plus the `la` and `la_gpu` dialects and
// its passes. Option parsing, diagnostics and exit codes come from MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "Conversion/Passes.h"
#include "LA/IR/LADialect.h"
#include "Target/CPU/CPUTarget.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CUDA/IR/LAGPUDialect.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/NVVM/NVVMLowering.h"
#include "Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  mlir::la::registerLAPasses();
  mlir::la::registerLACPUPasses();
  mlir::la::registerLACUDAPasses();
  mlir::la::registerLAConversionPasses();
  mlir::la::registerCPUPipelines();
  mlir::la::registerNVVMPipelines();
  registry.insert<mlir::la::LADialect, mlir::lagpu::LAGPUDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "la optimizer driver\n", registry));
}
