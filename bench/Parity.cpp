//===- Parity.cpp - Same math, same speed: a kernel against its twin ------===//

#include "Parity.h"

#include "Reference.h"
#include "Stats.h"

#include "la/runtime/Runtime.h"
#include "la/runtime/Tensor.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace llvm;

namespace la::bench {
namespace {

/// One side of a pair: an entry of retention.mlir, the stateless kernel whose arguments it takes, and
/// whether it also takes an initial state [B, H, K, V] (last argument) and returns the final one.
struct Side {
  const char *entry;
  LibraryKernel arguments;
  bool withState;
};

struct Pair {
  Side entry, twin;
};

/// The pairs issue 19 names: each `_with_state` entry against its stateless twin, and retention against
/// simple GLA.
const Pair kPairs[] = {
    {{"gla_with_state", LibraryKernel::Gla, true}, {"gla", LibraryKernel::Gla, false}},
    {{"simple_gla_with_state", LibraryKernel::SimpleGla, true}, {"simple_gla", LibraryKernel::SimpleGla, false}},
    {{"retention_with_state", LibraryKernel::Retention, true}, {"retention", LibraryKernel::Retention, false}},
    {{"retention", LibraryKernel::Retention, false}, {"simple_gla", LibraryKernel::SimpleGla, false}},
};

/// The buffers of one side's call. Arguments both sides take (q, k, v, and the gates of GLA) get the same
/// seed, so the two sides see the same data; the initial state is zero and simple GLA's per-head gates are
/// retention's, so the two compute the same outputs.
class SideCall {
public:
  SideCall(const Side &side, const LibraryShape &shape) : side(side) {
    std::vector<LibraryArgument> arguments = libraryArguments(side.arguments, shape);
    if (side.withState)
      arguments.push_back({"h0", {shape.b, shape.h, shape.d, shape.e}});
    for (size_t i = 0; i < arguments.size(); ++i) {
      storage.emplace_back(arguments[i].count());
      std::vector<float> &data = storage.back();
      if (arguments[i].name == "h0")
        std::fill(data.begin(), data.end(), 0.0f);
      else if (side.arguments == LibraryKernel::SimpleGla && arguments[i].name == "g")
        fillRetentionGates(data, shape);
      else
        fillLibraryArgument(data.data(), data.size(), arguments[i].fill, 20241124 + i);
      inputs.push_back(makeRef(data, arguments[i].shape));
    }
    outputStorage.emplace_back(size_t(shape.b * shape.h * shape.t * shape.e));
    outputs.push_back(makeRef(outputStorage.back(), {shape.b, shape.h, shape.t, shape.e}));
    if (side.withState) {
      outputStorage.emplace_back(size_t(shape.b * shape.h * shape.d * shape.e));
      outputs.push_back(makeRef(outputStorage.back(), {shape.b, shape.h, shape.d, shape.e}));
    }
  }

  Error call(la::Runtime &runtime, const la::Program &program) {
    return runtime.call(program, side.entry, inputs, outputs);
  }
  const std::vector<float> &output() const { return outputStorage.front(); }

private:
  static la::TensorRef makeRef(std::vector<float> &data, const std::vector<int64_t> &shape) {
    la::TensorRef ref;
    ref.data = data.data();
    ref.spec.dtype = la::DType::F32;
    ref.spec.shape.assign(shape.begin(), shape.end());
    return ref;
  }

  /// log γ_h, γ_h = 1 − 2^{−5−h}: what `@retention_gates` computes, in the [B, H, T] layout simple GLA reads.
  static void fillRetentionGates(std::vector<float> &data, const LibraryShape &shape) {
    for (int64_t b = 0; b < shape.b; ++b)
      for (int64_t h = 0; h < shape.h; ++h)
        std::fill_n(data.begin() + (b * shape.h + h) * shape.t, shape.t,
                    static_cast<float>(std::log1p(-std::exp2(-5.0 - double(h)))));
  }

  const Side &side;
  // The refs point into the inner vectors, whose buffers stay put when the outer vectors grow (a move).
  std::vector<std::vector<float>> storage, outputStorage;
  std::vector<la::TensorRef> inputs, outputs;
};

double timeCall(SideCall &call, la::Runtime &runtime, const la::Program &program, std::optional<std::string> &error) {
  auto start = std::chrono::steady_clock::now();
  if (Error err = call.call(runtime, program))
    error = toString(std::move(err));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

double ParityResult::ratio() const { return median(entryMs) / median(twinMs); }

std::pair<double, double> ParityResult::roundRatioRange() const {
  double low = INFINITY, high = 0;
  for (size_t r = 0; r < entryMs.size(); ++r) {
    low = std::min(low, entryMs[r] / twinMs[r]);
    high = std::max(high, entryMs[r] / twinMs[r]);
  }
  return {low, high};
}

std::vector<ParityResult> measureParity(la::Runtime &runtime, const la::Program &program, const LibraryShape &shape,
                                        unsigned repeat) {
  std::vector<ParityResult> results;
  for (const Pair &pair : kPairs) {
    ParityResult result;
    result.entry = pair.entry.entry;
    result.twin = pair.twin.entry;
    result.shape = shape;
    SideCall entry(pair.entry, shape), twin(pair.twin, shape);
    errs() << formatv("[parity T={0}] {1} vs {2}: compiling and checking they agree...\n", shape.t, result.entry,
                      result.twin);
    for (SideCall *side : {&entry, &twin})
      if (Error err = side->call(runtime, program); err && !result.error)
        result.error = toString(std::move(err));
      else if (err)
        consumeError(std::move(err));
    if (!result.error) {
      result.outputDifference = relativeRms(entry.output().data(), twin.output().data(), entry.output().size());
      if (!(result.outputDifference <= kParityAgreement))
        result.error = formatv("the outputs differ by {0:e1} relative RMS (more than {1:e0}): not the same math",
                               result.outputDifference, kParityAgreement)
                           .str();
    }
    // Interleaved rounds, alternating which side goes first, so drift and warm caches hit both alike.
    for (unsigned r = 0; r < repeat && !result.error; ++r) {
      bool entryFirst = r % 2 == 0;
      double first = timeCall(entryFirst ? entry : twin, runtime, program, result.error);
      double second = timeCall(entryFirst ? twin : entry, runtime, program, result.error);
      result.entryMs.push_back(entryFirst ? first : second);
      result.twinMs.push_back(entryFirst ? second : first);
    }
    if (result.error)
      errs() << formatv("[parity T={0}] {1} vs {2}: error: {3}\n", shape.t, result.entry, result.twin, *result.error);
    else
      errs() << formatv("[parity T={0}] {1} {2:f3} ms vs {3} {4:f3} ms: {5:f3}x\n", shape.t, result.entry,
                        median(result.entryMs), result.twin, median(result.twinMs), result.ratio());
    results.push_back(std::move(result));
  }
  return results;
}

} // namespace la::bench
