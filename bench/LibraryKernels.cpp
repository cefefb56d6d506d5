//===- LibraryKernels.cpp - Arguments of the AFT, GAU/FLASH and decay kernels ----===//
#include "LibraryKernels.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace la::bench;

int64_t LibraryArgument::count() const {
  int64_t n = 1;
  for (int64_t size : shape)
    n *= size;
  return n;
}

AftConvImage la::bench::aftConvImage(int64_t t) {
  int64_t x = std::max<int64_t>(1, std::min(t, kAftConvMaxX));
  while (x > 1 && t % x != 0)
    --x;
  return {x, t / x};
}

const char *la::bench::libraryEntryName(LibraryKernel kernel) {
  switch (kernel) {
  case LibraryKernel::AftCausal:
    return "aft_causal";
  case LibraryKernel::AftSimple:
    return "aft_simple";
  case LibraryKernel::AftLocal:
    return "aft_local";
  case LibraryKernel::AftFull:
    return "aft_full";
  case LibraryKernel::AftFullCausal:
    return "aft_full_causal";
  case LibraryKernel::AftConv:
    return "aft_conv";
  case LibraryKernel::Gau:
    return "gau";
  case LibraryKernel::Flash:
    return "flash";
  case LibraryKernel::FlashCausal:
    return "flash_causal";
  case LibraryKernel::Retention:
    return "retention";
  case LibraryKernel::SimpleGla:
    return "simple_gla";
  case LibraryKernel::Gla:
    return "gla";
  }
  return "?";
}

LibraryFamily la::bench::libraryFamily(LibraryKernel kernel) {
  switch (kernel) {
  case LibraryKernel::AftCausal:
  case LibraryKernel::AftSimple:
  case LibraryKernel::AftLocal:
  case LibraryKernel::AftFull:
  case LibraryKernel::AftFullCausal:
  case LibraryKernel::AftConv:
    return LibraryFamily::Aft;
  case LibraryKernel::Gau:
  case LibraryKernel::Flash:
  case LibraryKernel::FlashCausal:
    return LibraryFamily::Flash;
  case LibraryKernel::Retention:
  case LibraryKernel::SimpleGla:
  case LibraryKernel::Gla:
    return LibraryFamily::Decay;
  }
  return LibraryFamily::Aft;
}

const char *la::bench::libraryFamilyName(LibraryFamily family) {
  switch (family) {
  case LibraryFamily::Aft:
    return "aft";
  case LibraryFamily::Flash:
    return "flash";
  case LibraryFamily::Decay:
    return "decay";
  }
  return "?";
}

const char *la::bench::libraryKernelFile(LibraryFamily family) {
  switch (family) {
  case LibraryFamily::Aft:
    return "aft.mlir";
  case LibraryFamily::Flash:
    return "flash.mlir";
  case LibraryFamily::Decay:
    return "retention.mlir";
  }
  return "?";
}

bool la::bench::libraryIsCausal(LibraryKernel kernel) {
  switch (kernel) {
  case LibraryKernel::AftCausal:
  case LibraryKernel::AftFullCausal:
  case LibraryKernel::FlashCausal:
  case LibraryKernel::Retention:
  case LibraryKernel::SimpleGla:
  case LibraryKernel::Gla:
    return true;
  default:
    return false;
  }
}

std::vector<LibraryArgument> la::bench::libraryArguments(LibraryKernel kernel, const LibraryShape &s) {
  const std::vector<int64_t> aft = {s.b, s.t, s.d};
  const std::vector<int64_t> uv = {s.b, s.t, s.e}, qk = {s.b, s.t, s.d};
  const std::vector<int64_t> dq = {s.b, s.h, s.t, s.d}, dv = {s.b, s.h, s.t, s.e};
  switch (kernel) {
  case LibraryKernel::AftCausal:
  case LibraryKernel::AftSimple:
    return {{"q", aft}, {"k", aft}, {"v", aft}};
  case LibraryKernel::AftLocal:
  case LibraryKernel::AftFull:
  case LibraryKernel::AftFullCausal:
    // w is the learned [T, T] position bias; N(0, 1) keeps aft_local's e^w − 1 decomposition (SPEC §3)
    // away from the cancellation it suffers for strongly negative w.
    return {{"q", aft}, {"k", aft}, {"v", aft}, {"w", {s.t, s.t}}};
  case LibraryKernel::AftConv: {
    // w is the learned 7×7 kernel per head, N(0, 1) like aft_local's bias (the e^w − 1 form, SPEC §3).
    AftConvImage img = aftConvImage(s.t);
    const std::vector<int64_t> x = {s.b, img.x, img.y, s.h, s.d};
    return {{"q", x}, {"k", x}, {"v", x}, {"w", {s.h, kAftConvKernel, kAftConvKernel}}};
  }
  case LibraryKernel::Gau:
    return {{"u", uv}, {"v", uv}, {"q", qk}, {"k", qk}};
  case LibraryKernel::Flash:
  case LibraryKernel::FlashCausal:
    return {{"u", uv}, {"v", uv}, {"qq", qk}, {"kq", qk}, {"ql", qk}, {"kl", qk}};
  case LibraryKernel::Retention:
    return {{"q", dq}, {"k", dq}, {"v", dv}};
  case LibraryKernel::SimpleGla:
    return {{"q", dq}, {"k", dq}, {"v", dv}, {"g", {s.b, s.h, s.t}, Fill::LogSigmoidNormal}};
  case LibraryKernel::Gla:
    return {{"q", dq}, {"k", dq}, {"v", dv}, {"g", dq, Fill::LogSigmoidNormal}};
  }
  return {};
}

std::vector<int64_t> la::bench::libraryOutputShape(LibraryKernel kernel, const LibraryShape &s) {
  if (kernel == LibraryKernel::AftConv) {
    AftConvImage img = aftConvImage(s.t);
    return {s.b, img.x, img.y, s.h, s.d};
  }
  switch (libraryFamily(kernel)) {
  case LibraryFamily::Aft:
    return {s.b, s.t, s.d};
  case LibraryFamily::Flash:
    return {s.b, s.t, s.e};
  case LibraryFamily::Decay:
    return {s.b, s.h, s.t, s.e};
  }
  return {};
}

void la::bench::fillLibraryArgument(float *data, size_t count, Fill fill, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) {
    float x = normal(generator);
    // log σ(x) = −log(1 + e^{−x}), written to stay finite for large |x|.
    data[i] = fill == Fill::Normal ? x : std::min(x, 0.0f) - std::log1p(std::exp(-std::abs(x)));
  }
}

std::string la::bench::describeLibraryShape(LibraryKernel kernel, const LibraryShape &s) {
  auto n = [](int64_t x) { return std::to_string(x); };
  if (kernel == LibraryKernel::AftConv) {
    // T positions as an X×Y image: "X=32 Y=128" at T = 4096.
    AftConvImage img = aftConvImage(s.t);
    return "B=" + n(s.b) + " h=" + n(s.h) + " c=" + n(s.d) + " X=" + n(img.x) + " Y=" + n(img.y) +
           " s=" + n(kAftConvKernel);
  }
  switch (libraryFamily(kernel)) {
  case LibraryFamily::Aft:
    return "B=" + n(s.b) + " d=" + n(s.d) + (kernel == LibraryKernel::AftLocal ? " s=" + n(kAftLocalWindow) : "");
  case LibraryFamily::Flash:
    return "B=" + n(s.b) + " s=" + n(s.d) + " e=" + n(s.e) +
           (kernel == LibraryKernel::Gau ? "" : " c=" + n(kFlashChunk));
  case LibraryFamily::Decay:
    return "B=" + n(s.b) + " H=" + n(s.h) + " K=" + n(s.d) + " V=" + n(s.e);
  }
  return "";
}
