//===- cosformer_check.cpp - a user-written kernel against its own oracle --===//
//
// The last step of docs/writing-a-kernel.md: compile examples/cosformer.mlir with the runtime, run it on
// seeded inputs, and compare with a naive fp64 evaluation of the cosFormer formula
//   O_i = Σ_j w_ij V_j / (Σ_j w_ij + eps),   w_ij = (relu(Q_i) · relu(K_j)) cos(π(i - j) / 2N),
// written from the paper, not from the kernel. Prints the relative RMS error per shape and exits non-zero
// if one exceeds SPEC §7's fp32 tolerance, so the test suite runs it as a test.
//
//   cosformer_check [EXAMPLES_DIR]
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

/// The quadratic fp64 oracle, [B, H, N, D] inputs, [B, H, N, Dv] output.
std::vector<double> cosformerOracle(int64_t batchHeads, int64_t n, int64_t d, int64_t dv, const float *q,
                                    const float *k, const float *v) {
  const double pi = 3.14159265358979323846;
  std::vector<double> out(batchHeads * n * dv, 0.0);
  for (int64_t bh = 0; bh < batchHeads; ++bh)
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> num(dv, 0.0);
      double den = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < d; ++c)
          dot += std::max(0.0, double(q[(bh * n + i) * d + c])) * std::max(0.0, double(k[(bh * n + j) * d + c]));
        double w = dot * std::cos(pi * double(i - j) / (2.0 * double(n)));
        den += w;
        for (int64_t e = 0; e < dv; ++e)
          num[e] += w * v[(bh * n + j) * dv + e];
      }
      for (int64_t e = 0; e < dv; ++e)
        out[(bh * n + i) * dv + e] = num[e] / (den + 1e-6);
    }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = argc > 1 ? argv[1] : LA_EXAMPLES_DIR;
  la::RuntimeOptions options;
  options.cacheDir = "none";
  auto runtime = la::Runtime::create(options);
  if (!runtime) {
    llvm::errs() << llvm::toString(runtime.takeError()) << "\n";
    return 1;
  }
  auto program = (*runtime)->loadFile(dir + "/cosformer.mlir");
  if (!program) {
    llvm::errs() << llvm::toString(program.takeError()) << "\n";
    return 1;
  }

  int failures = 0;
  std::mt19937 generator(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const int64_t batch = 2, heads = 3, d = 24, dv = 40;
  for (int64_t n : {1, 37, 500}) {
    auto random = [&](int64_t count) {
      std::vector<float> data(count);
      for (float &x : data)
        x = uniform(generator);
      return data;
    };
    std::vector<float> q = random(batch * heads * n * d), k = random(batch * heads * n * d),
                       v = random(batch * heads * n * dv);
    auto spec = [](std::vector<int64_t> shape) {
      la::TensorSpec s;
      s.shape.assign(shape.begin(), shape.end());
      return s;
    };
    std::vector<la::TensorRef> inputs = {{q.data(), spec({batch, heads, n, d})},
                                         {k.data(), spec({batch, heads, n, d})},
                                         {v.data(), spec({batch, heads, n, dv})}};
    auto outputs = (*runtime)->run(**program, "cosformer", inputs);
    if (!outputs) {
      llvm::errs() << "N=" << n << ": " << llvm::toString(outputs.takeError()) << "\n";
      return 1;
    }
    std::vector<double> reference = cosformerOracle(batch * heads, n, d, dv, q.data(), k.data(), v.data());
    double errorSquared = 0.0, referenceSquared = 0.0;
    for (size_t i = 0; i < reference.size(); ++i) {
      double got = (*outputs)[0].get(static_cast<int64_t>(i));
      errorSquared += (got - reference[i]) * (got - reference[i]);
      referenceSquared += reference[i] * reference[i];
    }
    double relRms = referenceSquared > 0 ? std::sqrt(errorSquared / referenceSquared) : std::sqrt(errorSquared);
    double tolerance = n <= 256 ? 1e-5 : 1e-4; // SPEC §7, fp32
    bool ok = std::isfinite(relRms) && relRms <= tolerance;
    llvm::outs() << "cosformer B=" << batch << " H=" << heads << " N=" << n << " D=" << d << " Dv=" << dv
                 << ": relative RMS error " << relRms << (ok ? " (ok, ≤ " : " (FAILED, > ") << tolerance << ")\n";
    failures += !ok;
  }
  return failures == 0 ? 0 : 1;
}
