//===- Parity.h - Same math, same speed: a kernel against its twin -*- C++ -*-===//
//
// Some entries of the kernel library compute what another entry computes, with one more input or output:
// `gla_with_state` is `gla` started from a given state and also returning the last one, and `retention` is
// `simple_gla` with the constant per-head gates log(1 − 2^{−5−h}). Such a pair must run at the same speed
// (issue 19: within 10%); a gap means the compiler lost a rewrite or the runtime a parallel split on one
// side. `measureParity` times both sides of each pair interleaved in one run, so that a slow phase of a
// shared machine hits both, and first checks that the two agree on inputs where they compute the same
// thing (a zero initial state, retention's gates passed to simple_gla), so the pair is the same math.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_PARITY_H
#define LA_BENCH_PARITY_H

#include "LibraryKernels.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace la {
class Program;
class Runtime;
} // namespace la

namespace la::bench {

/// The result of one pair at one size.
struct ParityResult {
  std::string entry; // the kernel under test (`gla_with_state`)
  std::string twin;  // the kernel it must keep up with (`gla`)
  LibraryShape shape;
  /// Interleaved timed calls, one per round each.
  std::vector<double> entryMs, twinMs;
  /// Relative RMS difference of the two outputs on the shared inputs.
  double outputDifference = 0;
  /// Set when either side failed to compile or run, or the outputs disagree.
  std::optional<std::string> error;

  /// median(entry) / median(twin).
  double ratio() const;
  /// The smallest and largest of the per-round ratios entry/twin: how much the ratio moves between rounds.
  std::pair<double, double> roundRatioRange() const;
};

/// The largest `outputDifference` of two sides that compute the same math: they sum in different orders
/// (a chunk loop started from a zero state vs none), so they differ by f32 rounding, 1e-7 to 1e-6 relative
/// RMS on the benchmark's inputs; 1e-4 is the library's f32 tolerance against the fp64 oracle.
constexpr double kParityAgreement = 1e-4;

/// The largest `ratio()` that counts as "same speed" (issue 19).
constexpr double kParityBound = 1.10;

/// Times every pair of retention.mlir at `shape` (`repeat` rounds, each side once per round, alternating
/// which goes first), after one untimed call of each that compiles it and checks the outputs agree.
/// Progress goes to stderr.
std::vector<ParityResult> measureParity(la::Runtime &runtime, const la::Program &decayProgram,
                                        const LibraryShape &shape, unsigned repeat);

} // namespace la::bench

#endif // LA_BENCH_PARITY_H
