//===- PipelineConfig.h - one configuration of a target pipeline -*- C++ -*-===//
//
// The option registry of the compiler and the configurations it describes. The rows of
// `PipelineOptions.def` are the single declaration of each option; this header turns them into
//   - `PipelineConfig`, a plain struct with one typed field per option (the runtime's `la::CompileOptions`
//     derives from it), with a canonical text form `chunk-size=16,fuse=true,...` (every option of a target
//     in registry order, `name=value`, joined by commas) and its parser;
//   - `getOptionRegistry()`, the rows as data: name, type, default, description, and for a tunable option
//     its domain and bound, which `la-opt`, `lac` and the autotuner read.
// Nothing here depends on MLIR, so host programs can include it through la/runtime/Runtime.h.
//
//===----------------------------------------------------------------------===//
#ifndef LA_PIPELINES_PIPELINECONFIG_H
#define LA_PIPELINES_PIPELINECONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::la {

/// A compilation target of the pipeline. `Common` marks the options of the target-neutral stages.
enum class PipelineTarget { Common, CPU, CUDA };

/// "common", "cpu", "cuda".
llvm::StringRef getTargetName(PipelineTarget target);

/// The C++ type of an option's field.
enum class OptionType { Bool, Int, String };

/// The values an autotuner may try for an option.
struct TuningDomain {
  enum class Kind {
    Fixed,       ///< not tunable
    Bool,        ///< false, true
    PowersOfTwo, ///< min, 2·min, ..., max
    Range,       ///< min, min+1, ..., max
    Divisors,    ///< the divisors of the problem size `bound`
    Enum         ///< the values listed in `choices`
  };
  Kind kind = Kind::Fixed;
  int64_t min = 0, max = 0;
  /// A problem size (e.g. "N", the sequence length) the value may not exceed, or that it must divide
  /// (Divisors); empty for none.
  llvm::StringRef bound;
  /// Why a tuner would pick a value other than the default, with the measurement behind it.
  llvm::StringRef reason;
  /// Enum: the values, separated by commas.
  llvm::StringRef choices;

  bool isTunable() const { return kind != Kind::Fixed; }
};

/// One row of PipelineOptions.def.
struct OptionInfo {
  PipelineTarget target;
  /// Kebab-case: the `la-opt` pipeline option, the `lac` flag and the key of the canonical text.
  llvm::StringRef name;
  OptionType type;
  /// The default in canonical text form ("16", "true", "host").
  std::string defaultValue;
  TuningDomain domain;
  llvm::StringRef description;
};

/// Every option of every target, in declaration order.
llvm::ArrayRef<OptionInfo> getOptionRegistry();
/// The options a pipeline for `target` reads: the Common rows, then the target's.
llvm::SmallVector<const OptionInfo *> getOptionsOf(PipelineTarget target);
/// The row called `name`, or null.
const OptionInfo *lookupOption(llvm::StringRef name);

/// The values of `option`'s tuning domain that satisfy its bound for these problem sizes (e.g. {"N": 4096}),
/// in canonical text form. Empty for a fixed option; an error when the domain needs a size not given.
llvm::Expected<llvm::SmallVector<std::string>> enumerateDomain(const OptionInfo &option,
                                                               const llvm::StringMap<int64_t> &sizes);

/// One value for every option of the registry: what a compilation reads.
struct PipelineConfig {
#define LA_FIXED
#define LA_TUNE_BOOL(...)
#define LA_TUNE_POW2(...)
#define LA_TUNE_RANGE(...)
#define LA_TUNE_DIVISORS(...)
#define LA_TUNE_ENUM(...)
#define LA_OPTION(TARGET, FIELD, NAME, TYPE, DEFAULT, DOMAIN, DESCRIPTION) TYPE FIELD = DEFAULT;
#include "Pipelines/PipelineOptions.def"
#undef LA_FIXED
#undef LA_TUNE_BOOL
#undef LA_TUNE_POW2
#undef LA_TUNE_RANGE
#undef LA_TUNE_DIVISORS
#undef LA_TUNE_ENUM

  /// The value of option `name` in canonical text form; empty when there is no such option.
  std::string get(llvm::StringRef name) const;
  /// Sets option `name` from its text form ("16", "true"/"false"/"1"/"0", any string). The error names the
  /// option and the value.
  llvm::Error set(llvm::StringRef name, llvm::StringRef value);

  /// The canonical text: every option of `target` (Common rows, then the target's), in registry order,
  /// `name=value`, joined by commas. A value with a comma, quote, backslash or space is double-quoted with
  /// backslash escapes. Equal configurations have equal text; `parse` reads it back.
  std::string str(PipelineTarget target = PipelineTarget::CPU) const;
  /// Starts from the defaults and applies `name=value` items separated by commas (any subset, any order,
  /// the canonical text included). The error names the item at fault.
  static llvm::Expected<PipelineConfig> parse(llvm::StringRef text);

  bool operator==(const PipelineConfig &other) const { return str() == other.str(); }
};

} // namespace mlir::la

#endif // LA_PIPELINES_PIPELINECONFIG_H
