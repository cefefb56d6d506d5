//===- LibraryOracleCheck.h - Generated AFT, GAU/FLASH and decay outputs vs fp64 oracles -*- C++ -*-===//
//
// Checks a generated output against the fp64 oracles of oracles/LibraryOracles.h (written from the
// SPEC, not from the kernels), on a subset that keeps the naive O(T²) oracles affordable at T = 16K: the
// first and last batch (or (b, h) slice); for AFT a spread of channels (channels are independent; for
// aft_conv a spread of the h·c (head, channel) pairs, each an X×Y image with its head's kernel), for
// GAU/FLASH a spread of value columns (columns of U and V are independent); for the causal FLASH oracle,
// whose linear term is quadratic, a prefix of whole chunks (causal outputs depend on earlier positions
// only). The subset shrinks with T so that each check does about `workBudget` inner-loop steps.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_LIBRARYORACLECHECK_H
#define LA_BENCH_LIBRARYORACLECHECK_H

#include "LibraryKernels.h"

#include <string>
#include <vector>

namespace la::bench {

struct OracleCheck {
  /// ‖got − oracle‖₂ / ‖oracle‖₂ over the checked values (NaN if any is not finite).
  double relRms = 0;
  /// What was checked, e.g. "b 0,1; 15/512 channels".
  std::string coverage;
};

/// `args` in the order of libraryArguments(), `out` the generated result.
OracleCheck checkLibraryOracle(LibraryKernel kernel, const LibraryShape &shape,
                               const std::vector<const float *> &args, const float *out,
                               double workBudget = 3e8);

} // namespace la::bench

#endif // LA_BENCH_LIBRARYORACLECHECK_H
