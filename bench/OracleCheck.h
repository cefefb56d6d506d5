//===- OracleCheck.h - Generated outputs vs the fp64 oracles -*- C++ -*-===//
//
// Checks a generated output against the fp64 oracles of oracles/ (library LAOracles, written from the SPEC,
// not from the kernels, and the ones the numerics tests use: the benchmark has no oracle of its own). The
// oracles run on a subset that keeps them affordable at T = N = 16K:
//   - flow/linear attention: the first and last (b, h) slice, with the recurrent forms of Oracles.h (the
//     quadratic forms would need three N×N fp64 matrices per slice, 6 GiB at N = 16K);
//   - AFT, GAU/FLASH and decay scans (LibraryOracles.h): the first and last batch (or (b, h) slice); for AFT
//     a spread of channels (channels are independent; for aft_conv a spread of the h·c (head, channel)
//     pairs, each an X×Y image with its head's kernel), for GAU/FLASH a spread of value columns (columns of
//     U and V are independent); for the causal FLASH oracle, whose linear term is quadratic, a prefix of whole
//     chunks (causal outputs depend on earlier positions only). The subset shrinks with T so that each check
//     does about `workBudget` inner-loop steps.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_ORACLECHECK_H
#define LA_BENCH_ORACLECHECK_H

#include "LibraryKernels.h"
#include "Roofline.h"

#include <string>
#include <vector>

namespace la::bench {

struct OracleCheck {
  /// ‖got − oracle‖₂ / ‖oracle‖₂ over the checked values (NaN if any is not finite).
  double relRms = 0;
  /// What was checked, e.g. "b 0,1; 15/512 channels".
  std::string coverage;
};

/// A flow/linear kernel with the SPEC defaults (eps 1e-6, clamp [-1, 1], elu + 1): `q`, `k`, `v` and the
/// generated `out` laid out as `Shape` says.
OracleCheck checkOracle(KernelKind kind, const Shape &shape, const float *q, const float *k, const float *v,
                        const float *out);

/// A library kernel: `args` in the order of libraryArguments(), `out` the generated result.
OracleCheck checkLibraryOracle(LibraryKernel kernel, const LibraryShape &shape, const std::vector<const float *> &args,
                               const float *out, double workBudget = 3e8);

} // namespace la::bench

#endif // LA_BENCH_ORACLECHECK_H
