//===- CostModel.cpp - predicted cost of a CPU configuration --------------===//

#include "la/runtime/CostModel.h"

#include "ParsedProgram.h"

#include "Pipelines/Pipelines.h"
#include "Target/CPU/RegisterTilePipeline.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <unistd.h>

#define DEBUG_TYPE "la-cost-model"

namespace la {

CostModel::~CostModel() = default;

namespace {

using namespace mlir;

/// A fused linalg op and how often the loops around it run it.
struct ModelledOp {
  linalg::GenericOp op;
  double repeats = 1;
  /// Arithmetic operations in the body, at least 1.
  double bodyOps = 1;
};

/// The fused linalg of one chunk length.
struct LoweredProgram {
  std::unique_ptr<ParsedProgram> program;
  std::vector<ModelledOp> ops;
  bool failed = false;
};

/// The product of the static trip counts of the scf.for loops around `op` (1 for a loop of unknown count).
double enclosingTrips(Operation *op) {
  double trips = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop; loop = loop->getParentOfType<scf::ForOp>()) {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                           upper = getConstantIntValue(loop.getUpperBound()),
                           step = getConstantIntValue(loop.getStep());
    if (lower && upper && step && *step > 0)
      trips *= double(std::max<int64_t>(0, llvm::divideCeil(*upper - *lower, *step)));
  }
  return trips;
}

/// A data cache's size in bytes from sysconf, or `fallback` where the system does not say.
double cacheBytes(int name, double fallback) {
  long size = ::sysconf(name);
  return size > 0 ? double(size) : fallback;
}

class CPUCostModel : public CostModel {
public:
  CPUCostModel(std::string source, std::string bufferName, std::string entry, std::vector<TensorSpec> arguments,
               SliceLayout slicing, CompileOptions base)
      : source(std::move(source)), bufferName(std::move(bufferName)), entry(std::move(entry)),
        arguments(std::move(arguments)), slicing(std::move(slicing)), base(std::move(base)) {
    // The register-tiling strategy's own limits (RegisterTilePipeline.h), which the registry does not expose.
    mlir::la::RegisterTileOptions tiling;
    vectorWidth = tiling.vectorWidth;
    registerBudget = tiling.registerBudget;
    l1Bytes = cacheBytes(_SC_LEVEL1_DCACHE_SIZE, 32 * 1024);
    l2Bytes = cacheBytes(_SC_LEVEL2_CACHE_SIZE, 1024 * 1024);
  }

  double predict(const mlir::la::PipelineConfig &config) override {
    LoweredProgram &lowered = lowerFor(config.chunkSize);
    if (lowered.failed)
      return std::numeric_limits<double>::infinity();
    mlir::la::RegisterBlockLimits limits{config.vectorTile, vectorWidth, registerBudget, config.maxRows,
                                         config.reductionPanel};
    double cycles = 0;
    for (const ModelledOp &modelled : lowered.ops)
      cycles += modelled.repeats * opCycles(modelled, limits, config.registerTile);
    // Equal predictions: the configuration closer to the default first.
    return cycles * (1 + 1e-9 * double(optionsChanged(config)));
  }

private:
  /// How many options of `config` differ from the default's.
  unsigned optionsChanged(const mlir::la::PipelineConfig &config) const {
    llvm::SmallVector<llvm::StringRef> mine, theirs;
    std::string text = config.str(), baseText = base.str();
    llvm::StringRef(text).split(mine, ',');
    llvm::StringRef(baseText).split(theirs, ',');
    return unsigned(llvm::count_if(mine, [&](llvm::StringRef item) { return !llvm::is_contained(theirs, item); }));
  }

  /// The fused linalg of `entry` with chunk length `chunkSize`, lowered once.
  LoweredProgram &lowerFor(int64_t chunkSize) {
    auto [it, fresh] = byChunk.try_emplace(chunkSize);
    LoweredProgram &lowered = it->second;
    if (!fresh)
      return lowered;
    auto parsed = parseProgram(source, bufferName);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      lowered.failed = true;
      return lowered;
    }
    lowered.program = std::move(*parsed);
    mlir::la::PipelineConfig config = base;
    config.chunkSize = chunkSize;
    mlir::la::Specialization specialization;
    specialization.entry = entry;
    for (const TensorSpec &spec : arguments)
      specialization.argTypes.push_back(toMLIRTypeString(spec));
    specialization.slicedDims = slicing.dims;
    for (auto [i, shared] : llvm::enumerate(slicing.sharedArguments))
      if (shared)
        specialization.sharedArguments.push_back(static_cast<unsigned>(i));
    PassManager pm(lowered.program->context.get(), ModuleOp::getOperationName());
    mlir::la::buildLAOptimizationPipeline(pm, config, specialization, mlir::la::PipelineTarget::CPU);
    mlir::la::buildLAToLinalgPipeline(pm, config, mlir::la::PipelineTarget::CPU);
    if (failed(pm.run(*lowered.program->module))) {
      lowered.failed = true;
      return lowered;
    }
    lowered.program->module->walk([&](linalg::GenericOp op) {
      ModelledOp modelled{op, enclosingTrips(op), 0};
      for (Operation &inner : op.getBody()->without_terminator())
        if (!isa<linalg::IndexOp>(inner))
          modelled.bodyOps += 1;
      modelled.bodyOps = std::max(1.0, modelled.bodyOps);
      lowered.ops.push_back(modelled);
    });
    LLVM_DEBUG(llvm::dbgs() << "la-cost-model: chunk-size=" << chunkSize << ": " << lowered.ops.size()
                            << " linalg ops\n");
    return lowered;
  }

  double opCycles(const ModelledOp &modelled, const mlir::la::RegisterBlockLimits &limits, bool registerTile) const {
    linalg::GenericOp op = modelled.op;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return 0; // the same for every configuration
    double iterations = 1;
    for (int64_t range : ranges)
      iterations *= double(range);
    double lanes = double(vectorWidth);
    if (op.getNumReductionLoops() == 0)
      return iterations * modelled.bodyOps / lanes;
    std::optional<mlir::la::RegisterBlockAttr> plan;
    if (registerTile)
      plan = mlir::la::planRegisterBlock(op, limits);
    // Left to the loop vectoriser: a load, an FMA and a store of the accumulator per vector.
    if (!plan)
      return iterations * 3 * std::max(1.0, modelled.bodyOps / 2) / lanes;

    ArrayRef<int64_t> tiles = plan->getTileSizes();
    int64_t vectorLoop = plan->getVectorLoop();
    std::optional<int64_t> rowLoop = plan->getRowLoop();
    double registersPerRow = std::ceil(double(tiles[vectorLoop]) / lanes);
    double rows = rowLoop ? double(tiles[*rowLoop]) : 1;
    double blocks = 1, reduction = 1;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (auto [loop, range] : llvm::enumerate(ranges)) {
      if (iterators[loop] == utils::IteratorType::reduction)
        reduction *= double(range);
      else
        blocks *= std::ceil(double(range) / double(std::max<int64_t>(1, tiles[loop])));
    }
    // What one row block streams: the other operand's rows over a panel, or over the whole reduction.
    int64_t panel = plan->getPanelLoop() ? plan->getPanelSize() : 0;
    double streamedBytes = (panel ? double(panel) : reduction) * double(ranges[vectorLoop]) * 4;
    double loadCost = streamedBytes <= l1Bytes ? 1 : streamedBytes <= l2Bytes ? 2 : 4;
    double fmas = rows * registersPerRow * std::max(1.0, modelled.bodyOps / 2);
    double loads = (rows + registersPerRow) * loadCost;
    double step = std::max(fmas, loads) / 2 + 1;
    double passes = panel ? std::ceil(reduction / double(panel)) : 1;
    double accumulators = rows * registersPerRow * 2 * passes;
    return blocks * (reduction * step + accumulators);
  }

  std::string source, bufferName, entry;
  std::vector<TensorSpec> arguments;
  SliceLayout slicing;
  CompileOptions base;
  int64_t vectorWidth = 16, registerBudget = 24;
  double l1Bytes = 0, l2Bytes = 0;
  std::map<int64_t, LoweredProgram> byChunk;
};

/// 1-based ranks, ties sharing their mean rank.
std::vector<double> ranks(llvm::ArrayRef<double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> result(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    double mean = (double(i) + double(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k)
      result[order[k]] = mean;
    i = j + 1;
  }
  return result;
}

} // namespace

llvm::Expected<std::unique_ptr<CostModel>> CostModel::forCPU(llvm::StringRef source, llvm::StringRef bufferName,
                                                             llvm::StringRef entry,
                                                             llvm::ArrayRef<TensorSpec> arguments,
                                                             const CompileOptions &base) {
  if (base.target != mlir::la::PipelineTarget::CPU)
    return llvm::createStringError("the cost model knows the CPU target only");
  auto entries = inspectProgram(source, bufferName);
  if (!entries)
    return entries.takeError();
  auto info = llvm::find_if(*entries, [&](const EntryInfo &e) { return e.name == entry; });
  if (info == entries->end())
    return llvm::createStringError(bufferName.str() + ": no public function '" + entry.str() + "'");
  // The runtime compiles one batch×head slice; so does the model.
  SliceLayout slicing = base.sliceBatchHeads ? info->slicing : SliceLayout();
  std::vector<TensorSpec> sliced = sliceArguments(arguments, slicing);
  return std::make_unique<CPUCostModel>(source.str(), bufferName.str(), entry.str(), std::move(sliced),
                                        std::move(slicing), base);
}

double rankCorrelation(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b) {
  if (a.size() != b.size() || a.size() < 2)
    return 0;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = double(a.size()), meanA = (n + 1) / 2, meanB = (n + 1) / 2;
  double covariance = 0, varianceA = 0, varianceB = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    covariance += (ra[i] - meanA) * (rb[i] - meanB);
    varianceA += (ra[i] - meanA) * (ra[i] - meanA);
    varianceB += (rb[i] - meanB) * (rb[i] - meanB);
  }
  if (varianceA == 0 || varianceB == 0)
    return 0;
  return covariance / std::sqrt(varianceA * varianceB);
}

} // namespace la
