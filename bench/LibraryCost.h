//===- LibraryCost.h - Roofline cost model of the AFT, GAU/FLASH and decay kernels -*- C++ -*-===//
//
// The compulsory bytes and minimal flops of each library kernel (LibraryKernels.h), counted for the least
// work any implementation of the SPEC formula needs, so that `max(bytes / bandwidth, flops / peak)` is a
// lower bound on this machine (Roofline.h). What is counted is written beside each formula in
// LibraryCost.cpp.
//
// No MLIR or LLVM dependency: this file is part of the `LABenchSupport` library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_LIBRARYCOST_H
#define LA_BENCH_LIBRARYCOST_H

#include "LibraryKernels.h"
#include "Roofline.h"

namespace la::bench {

/// The cost model of `kernel` at `shape`.
KernelCost libraryCost(LibraryKernel kernel, const LibraryShape &shape);

} // namespace la::bench

#endif // LA_BENCH_LIBRARYCOST_H
