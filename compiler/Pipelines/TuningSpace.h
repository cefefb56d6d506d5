//===- TuningSpace.h - the configurations an autotuner may try -*- C++ -*-===//
//
// The tunable space of a target for one problem: the cross product of the tuning domains of the target's
// tunable options (PipelineOptions.def), each domain cut to the problem's sizes (a chunk no longer than N),
// then pruned by the target's constraints (a register block that fits the vector registers, a block that fits
// an SM). Every value and configuration left out is kept with the reason, so a tuner can log it.
//
// The space is static: nothing here compiles or runs a kernel. Configurations that a constraint cannot tell
// apart but that compile to the same code are the tuner's to find (la/runtime/Tuner.h compares object code).
//
//===----------------------------------------------------------------------===//
#ifndef LA_PIPELINES_TUNINGSPACE_H
#define LA_PIPELINES_TUNINGSPACE_H

#include "Pipelines/PipelineConfig.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::la {

/// A configuration (or a value of one option) left out of the space, and why.
struct PrunedConfig {
  /// The canonical text of the configuration, or `name=value` for a value cut from an option's domain.
  std::string config;
  std::string reason;
};

class TuningSpace {
public:
  /// A caller's own constraint: why `config` is not worth compiling, or nothing. Applied after the target's.
  using Constraint = std::function<std::optional<std::string>(const PipelineConfig &config)>;

  /// The space around `base` for `target`: every tunable option of the target takes the values of its
  /// domain for `sizes` (problem sizes by name: "N", "D", ...); the options named in `pinned` keep their
  /// value from `base`, as do the fixed ones. `base` itself is the first candidate: the default a tuner
  /// measures every candidate against. Errors name an option whose domain needs a size not given.
  static llvm::Expected<TuningSpace> build(const PipelineConfig &base, PipelineTarget target,
                                           const llvm::StringMap<int64_t> &sizes,
                                           llvm::ArrayRef<std::string> pinned = {},
                                           const Constraint &constraint = nullptr);
  /// A space of the caller's choosing (a Triton-style config list, as a product): each named option of
  /// `target` takes the values listed, in that order, every other option keeps its value from `base`, and
  /// `base` is again the first candidate. The target's constraints and `constraint` prune it as in `build`.
  /// Errors name an option the target does not have, one listed twice or with no values, or a value that
  /// does not parse.
  static llvm::Expected<TuningSpace> fromValues(const PipelineConfig &base, PipelineTarget target,
                                                llvm::ArrayRef<std::pair<std::string, std::vector<std::string>>> values,
                                                const Constraint &constraint = nullptr);

  /// The target whose options the space varies.
  PipelineTarget target() const { return spaceTarget; }
  /// The options that vary, in registry order.
  llvm::ArrayRef<const OptionInfo *> tunables() const { return tunableOptions; }
  /// The values each tunable takes, in domain order (parallel to `tunables()`).
  llvm::ArrayRef<std::vector<std::string>> values() const { return domainValues; }
  /// The configurations that passed every constraint: `base` first, then in enumeration order (the last
  /// tunable varying fastest).
  llvm::ArrayRef<PipelineConfig> candidates() const { return configs; }
  /// For each candidate, the index of its value in each tunable's `values()`.
  llvm::ArrayRef<std::vector<unsigned>> coordinates() const { return coords; }
  /// Values cut from a domain, then configurations pruned by a constraint, in that order.
  llvm::ArrayRef<PrunedConfig> pruned() const { return prunedConfigs; }
  /// Configurations before the constraints (the product of the domains' sizes).
  uint64_t unprunedSize() const { return productSize; }
  /// The candidate whose coordinates are `point`, if it survived the constraints.
  std::optional<size_t> find(llvm::ArrayRef<unsigned> point) const;

private:
  /// The product of `domainValues` around `base`, pruned: fills configs, coords, indexOf, productSize.
  llvm::Error enumerate(const PipelineConfig &base, const Constraint &constraint);

  PipelineTarget spaceTarget = PipelineTarget::CPU;
  std::vector<const OptionInfo *> tunableOptions;
  std::vector<std::vector<std::string>> domainValues;
  std::vector<PipelineConfig> configs;
  std::vector<std::vector<unsigned>> coords;
  std::map<std::vector<unsigned>, size_t> indexOf;
  std::vector<PrunedConfig> prunedConfigs;
  uint64_t productSize = 0;
};

/// Why `config` is not worth compiling for `target` (a register block that does not fit, a thread block
/// no SM can hold, an option that has no effect with the others), or nothing when it is. `base` is the
/// configuration the space varies around.
std::optional<std::string> checkTuningConstraints(const PipelineConfig &config, const PipelineConfig &base,
                                                  PipelineTarget target);

} // namespace mlir::la

#endif // LA_PIPELINES_TUNINGSPACE_H
