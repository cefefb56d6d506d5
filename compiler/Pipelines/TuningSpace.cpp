//===- TuningSpace.cpp - the configurations an autotuner may try ----------===//

#include "Pipelines/TuningSpace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir::la {
namespace {

/// Lanes of one AVX-512 register of f32 and the accumulator registers a register block may take: the
/// defaults of la-register-block-strategy (CPUPasses.td), which the registry does not expose.
constexpr int64_t kVectorWidth = 16;
constexpr int64_t kRegisterBudget = 24;

/// The 32-bit registers of one SM of sm_80/sm_90 (CUDA C Programming Guide, "Technical Specifications"). The
/// other per-SM limit the domains could reach, 2048 resident threads, is implied: 64 registers a thread.
constexpr int64_t kRegistersPerSM = 65536;
/// The fewest registers a thread may be left with: the library kernels need 29-233 without spilling
/// (docs/BENCHMARKS.md, the ptxas table), most of them more than 64.
constexpr int64_t kMinRegistersPerThread = 64;
/// Beyond this many configurations the space is too large to enumerate; pin options to cut it.
constexpr uint64_t kMaxSpaceSize = 1'000'000;

std::optional<std::string> checkCPU(const PipelineConfig &config, const PipelineConfig &base) {
  // The strategy caps a block's rows at the budget over the registers a row takes; a max-rows whose next
  // lower power of two already reaches the cap gives the same blocks as that one.
  int64_t registersPerRow = llvm::divideCeil(config.vectorTile, kVectorWidth);
  int64_t rowCap = std::max<int64_t>(1, kRegisterBudget / registersPerRow);
  if (config.maxRows / 2 >= rowCap)
    return llvm::formatv("max-rows={0} gives the register blocks of max-rows={1}: {2} accumulator registers over "
                         "{3} per row of vector-tile={4} allow {5} rows",
                         config.maxRows, config.maxRows / 2, kRegisterBudget, registersPerRow, config.vectorTile,
                         rowCap)
        .str();
  if (!(config.fuse && config.groupSweeps) && config.sweepTile != base.sweepTile)
    return llvm::formatv("sweep-tile={0} has no effect without group-sweeps (and fuse)", config.sweepTile).str();
  return std::nullopt;
}

std::optional<std::string> checkCUDA(const PipelineConfig &config) {
  int64_t residentThreads = config.warpsPerBlock * 32 * config.minBlocksPerSM;
  if (kRegistersPerSM / residentThreads < kMinRegistersPerThread)
    return llvm::formatv("min-blocks-per-sm={0} blocks of {1} threads leave {2} registers a thread, fewer than the "
                         "{3} the kernels need without spilling",
                         config.minBlocksPerSM, config.warpsPerBlock * 32, kRegistersPerSM / residentThreads,
                         kMinRegistersPerThread)
        .str();
  return std::nullopt;
}

} // namespace

std::optional<std::string> checkTuningConstraints(const PipelineConfig &config, const PipelineConfig &base,
                                                  PipelineTarget target) {
  if (target == PipelineTarget::CPU)
    return checkCPU(config, base);
  if (target == PipelineTarget::CUDA)
    return checkCUDA(config);
  return std::nullopt;
}

llvm::Expected<TuningSpace> TuningSpace::build(const PipelineConfig &base, PipelineTarget target,
                                               const llvm::StringMap<int64_t> &sizes,
                                               llvm::ArrayRef<std::string> pinned, const Constraint &constraint) {
  TuningSpace space;
  space.spaceTarget = target;
  for (const OptionInfo *option : getOptionsOf(target)) {
    if (!option->domain.isTunable() || llvm::is_contained(pinned, option->name.str()))
      continue;
    auto values = enumerateDomain(*option, sizes);
    if (!values)
      return values.takeError();
    // The values the problem's bound cut: those of the domain without it.
    if (!option->domain.bound.empty() && option->domain.kind != TuningDomain::Kind::Divisors) {
      llvm::StringMap<int64_t> unbounded = sizes;
      unbounded[option->domain.bound] = std::numeric_limits<int64_t>::max();
      for (const std::string &value : cantFail(enumerateDomain(*option, unbounded)))
        if (!llvm::is_contained(*values, value))
          space.prunedConfigs.push_back(
              {(option->name + "=" + value).str(),
               llvm::formatv("longer than {0}={1}", option->domain.bound, sizes.lookup(option->domain.bound)).str()});
    }
    if (values->empty())
      continue;
    space.tunableOptions.push_back(option);
    space.domainValues.emplace_back(values->begin(), values->end());
  }

  if (llvm::Error err = space.enumerate(base, constraint))
    return std::move(err);
  return space;
}

llvm::Expected<TuningSpace>
TuningSpace::fromValues(const PipelineConfig &base, PipelineTarget target,
                        llvm::ArrayRef<std::pair<std::string, std::vector<std::string>>> values,
                        const Constraint &constraint) {
  TuningSpace space;
  space.spaceTarget = target;
  llvm::SmallVector<const OptionInfo *> options = getOptionsOf(target);
  for (const auto &[name, choices] : values) {
    auto option = llvm::find_if(options, [&](const OptionInfo *o) { return o->name == name; });
    if (option == options.end())
      return llvm::createStringError(
          llvm::formatv("the {0} target has no option '{1}'", getTargetName(target), name).str());
    if (llvm::is_contained(space.tunableOptions, *option))
      return llvm::createStringError(llvm::formatv("option '{0}' is listed twice", name).str());
    if (choices.empty())
      return llvm::createStringError(llvm::formatv("option '{0}' has no values", name).str());
    std::vector<std::string> canonical;
    for (const std::string &choice : choices) {
      PipelineConfig probe = base;
      if (llvm::Error err = probe.set(name, choice))
        return std::move(err);
      canonical.push_back(probe.get(name));
    }
    space.tunableOptions.push_back(*option);
    space.domainValues.push_back(std::move(canonical));
  }
  if (llvm::Error err = space.enumerate(base, constraint))
    return std::move(err);
  return space;
}

llvm::Error TuningSpace::enumerate(const PipelineConfig &base, const Constraint &constraint) {
  PipelineTarget target = spaceTarget;
  uint64_t size = 1;
  for (const auto &values : domainValues) {
    size *= values.size();
    if (size > kMaxSpaceSize)
      return llvm::createStringError(llvm::formatv("the tuning space of the {0} target has more than {1} "
                                                   "configurations; pin some options to their value",
                                                   getTargetName(target), kMaxSpaceSize)
                                         .str());
  }
  productSize = size;

  // The base first, whether or not its values lie in the domains: it is what every candidate is measured
  // against.
  configs.push_back(base);
  std::vector<unsigned> baseCoordinates;
  for (auto [option, values] : llvm::zip(tunableOptions, domainValues)) {
    auto it = llvm::find(values, base.get(option->name));
    baseCoordinates.push_back(it == values.end() ? ~0u : unsigned(it - values.begin()));
  }
  coords.push_back(baseCoordinates);
  indexOf[baseCoordinates] = 0;

  std::vector<unsigned> point(tunableOptions.size(), 0);
  for (uint64_t index = 0; index < size; ++index) {
    for (int64_t t = int64_t(point.size()) - 1, rest = int64_t(index); t >= 0; --t) {
      point[t] = unsigned(rest % domainValues[t].size());
      rest /= int64_t(domainValues[t].size());
    }
    if (point == baseCoordinates)
      continue;
    PipelineConfig config = base;
    for (auto [t, option] : llvm::enumerate(tunableOptions))
      cantFail(config.set(option->name, domainValues[t][point[t]]));
    std::optional<std::string> reason = checkTuningConstraints(config, base, target);
    if (!reason && constraint)
      reason = constraint(config);
    if (reason) {
      prunedConfigs.push_back({config.str(target), std::move(*reason)});
      continue;
    }
    indexOf[point] = configs.size();
    configs.push_back(std::move(config));
    coords.push_back(point);
  }
  return llvm::Error::success();
}

std::optional<size_t> TuningSpace::find(llvm::ArrayRef<unsigned> point) const {
  auto it = indexOf.find(std::vector<unsigned>(point.begin(), point.end()));
  if (it == indexOf.end())
    return std::nullopt;
  return it->second;
}

} // namespace mlir::la
