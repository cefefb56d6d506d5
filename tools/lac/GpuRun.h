//===- GpuRun.h - `lac gpu-run`: a gpu.module kernel on the GPU emulator -*- C++ -*-===//
#ifndef LA_TOOLS_LAC_GPURUN_H
#define LA_TOOLS_LAC_GPURUN_H

#include "llvm/Support/CommandLine.h"

namespace lac {

/// The category of gpu-run's options (so `lac gpu-run --help` lists them).
llvm::cl::OptionCategory &gpuRunCategory();
/// Whether the command line chose `gpu-run`.
bool gpuRunSelected();
/// Runs `lac gpu-run`; returns the exit code (0 only for a launch with no finding).
int runGpuRun();

} // namespace lac

#endif // LA_TOOLS_LAC_GPURUN_H
