//===- OracleCheck.cpp - Generated outputs vs the fp64 oracles ------------===//
#include "OracleCheck.h"

#include "LibraryOracles.h"
#include "Oracles.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace la::bench;
namespace oracle = la::oracle;

namespace {

/// Running ‖got − want‖² and ‖want‖².
struct ErrorSum {
  double err = 0, ref = 0;
  void add(float got, double want) {
    double diff = double(got) - want;
    err += diff * diff;
    ref += want * want;
  }
  double relRms() const { return std::sqrt(err) / std::sqrt(ref); }
};

/// The first and the last of `count` (one index when count is 1).
std::vector<int64_t> firstAndLast(int64_t count) {
  return count > 1 ? std::vector<int64_t>{0, count - 1} : std::vector<int64_t>{0};
}

/// `count` indices spread evenly over [0, size).
std::vector<int64_t> spread(int64_t size, int64_t count) {
  count = std::clamp<int64_t>(count, 1, size);
  std::vector<int64_t> picked(count);
  for (int64_t i = 0; i < count; ++i)
    picked[i] = i * size / count;
  return picked;
}

/// Columns `cols` of rows [0, rows) of a [rows, width] block: what the oracle gets for a column subset.
std::vector<float> gatherColumns(const float *src, int64_t rows, int64_t width, const std::vector<int64_t> &cols) {
  std::vector<float> out(rows * cols.size());
  for (int64_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols.size(); ++c)
      out[r * cols.size() + c] = src[r * width + cols[c]];
  return out;
}

std::string joinIndices(const std::vector<int64_t> &values) {
  std::string text;
  for (int64_t v : values)
    text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

OracleCheck checkAft(LibraryKernel kernel, const LibraryShape &sh, const std::vector<const float *> &a,
                     const float *out, double budget) {
  const int64_t t = sh.t, d = sh.d;
  // aft_simple's oracle is O(T·d); the others loop over all (t, t') pairs per channel.
  int64_t channels = kernel == LibraryKernel::AftSimple ? d : int64_t(budget / (double(t) * double(t)));
  std::vector<int64_t> cols = spread(d, channels), batches = firstAndLast(sh.b);
  const int64_t nc = cols.size();
  ErrorSum sum;
  for (int64_t b : batches) {
    std::vector<float> q = gatherColumns(a[0] + b * t * d, t, d, cols);
    std::vector<float> k = gatherColumns(a[1] + b * t * d, t, d, cols);
    std::vector<float> v = gatherColumns(a[2] + b * t * d, t, d, cols);
    std::vector<double> want;
    switch (kernel) {
    case LibraryKernel::AftCausal:
      want = oracle::aftCausal(1, t, nc, q.data(), k.data(), v.data());
      break;
    case LibraryKernel::AftSimple:
      want = oracle::aftSimple(1, t, nc, q.data(), k.data(), v.data());
      break;
    case LibraryKernel::AftLocal:
      want = oracle::aftLocal(1, t, nc, q.data(), k.data(), v.data(), a[3], kAftLocalWindow);
      break;
    default:
      want = oracle::aftFull(1, t, nc, q.data(), k.data(), v.data(), a[3], kernel == LibraryKernel::AftFullCausal);
      break;
    }
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < nc; ++c)
        sum.add(out[(b * t + i) * d + cols[c]], want[i * nc + c]);
  }
  return {sum.relRms(),
          "b " + joinIndices(batches) + "; " + std::to_string(nc) + "/" + std::to_string(d) + " channels"};
}

/// aft_conv: every (head, channel) of [B, X, Y, h, c] is an independent X×Y image with its head's kernel, so
/// the picked channels go to the oracle as heads of one channel each, with their heads' kernels. The oracle
/// visits all (position, position) pairs per channel: T² steps.
OracleCheck checkAftConv(const LibraryShape &sh, const std::vector<const float *> &a, const float *out, double budget) {
  const AftConvImage img = aftConvImage(sh.t);
  const int64_t t = sh.t, c = sh.d, hc = sh.h * sh.d, taps = kAftConvKernel * kAftConvKernel;
  std::vector<int64_t> cols = spread(hc, int64_t(budget / (double(t) * double(t)))), batches = firstAndLast(sh.b);
  const int64_t nc = cols.size();
  std::vector<float> w(nc * taps);
  for (int64_t j = 0; j < nc; ++j)
    std::copy(a[3] + (cols[j] / c) * taps, a[3] + (cols[j] / c + 1) * taps, w.begin() + j * taps);
  ErrorSum sum;
  for (int64_t b : batches) {
    std::vector<float> q = gatherColumns(a[0] + b * t * hc, t, hc, cols);
    std::vector<float> k = gatherColumns(a[1] + b * t * hc, t, hc, cols);
    std::vector<float> v = gatherColumns(a[2] + b * t * hc, t, hc, cols);
    std::vector<double> want =
        oracle::aftConv(1, img.x, img.y, nc, 1, q.data(), k.data(), v.data(), w.data(), kAftConvKernel);
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < nc; ++j)
        sum.add(out[(b * t + i) * hc + cols[j]], want[i * nc + j]);
  }
  return {sum.relRms(), "b " + joinIndices(batches) + "; " + std::to_string(nc) + "/" + std::to_string(hc) +
                            " (head, channel) pairs"};
}

OracleCheck checkFlash(LibraryKernel kernel, const LibraryShape &sh, const std::vector<const float *> &a,
                       const float *out, double budget) {
  const int64_t t = sh.t, s = sh.d, e = sh.e;
  std::vector<int64_t> cols = spread(e, 16), batches = firstAndLast(sh.b);
  const int64_t ne = cols.size();
  // gau's and causal FLASH's oracles visit all (t, t') pairs with an s-long dot each; a causal output only
  // depends on earlier positions, so causal FLASH is checked on a prefix of whole chunks when T is large.
  int64_t rows = t;
  if (kernel == LibraryKernel::FlashCausal) {
    while (rows > 2 * kFlashChunk && 0.5 * double(rows) * double(rows) * double(s + ne) > budget)
      rows = (rows / 2 + kFlashChunk - 1) / kFlashChunk * kFlashChunk;
  }
  ErrorSum sum;
  for (int64_t b : batches) {
    std::vector<float> u = gatherColumns(a[0] + b * t * e, rows, e, cols);
    std::vector<float> v = gatherColumns(a[1] + b * t * e, rows, e, cols);
    std::vector<double> want;
    if (kernel == LibraryKernel::Gau)
      want = oracle::gau(1, rows, s, ne, u.data(), v.data(), a[2] + b * t * s, a[3] + b * t * s, false);
    else
      want = oracle::flash(1, rows, s, ne, u.data(), v.data(), a[2] + b * t * s, a[3] + b * t * s, a[4] + b * t * s,
                           a[5] + b * t * s, kFlashChunk, kernel == LibraryKernel::FlashCausal);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t c = 0; c < ne; ++c)
        sum.add(out[(b * t + i) * e + cols[c]], want[i * ne + c]);
  }
  std::string coverage = "b " + joinIndices(batches) + "; " + std::to_string(ne) + "/" + std::to_string(e) + " columns";
  if (rows < t)
    coverage += "; positions < " + std::to_string(rows);
  return {sum.relRms(), coverage};
}

OracleCheck checkDecay(LibraryKernel kernel, const LibraryShape &sh, const std::vector<const float *> &a,
                       const float *out) {
  const int64_t t = sh.t, kd = sh.d, vd = sh.e;
  const oracle::DecayDims dims{1, 1, t, kd, vd};
  std::vector<int64_t> slices = firstAndLast(sh.b * sh.h);
  ErrorSum sum;
  for (int64_t slice : slices) {
    const float *q = a[0] + slice * t * kd, *k = a[1] + slice * t * kd, *v = a[2] + slice * t * vd;
    oracle::DecayResult want;
    if (kernel == LibraryKernel::Retention) {
      // One slice of one head: the head's constant gate, not head 0's (what retention() would use here).
      std::vector<double> g(t, oracle::retentionLogDecay(slice % sh.h));
      want = oracle::decayRecurrent(dims, q, k, v, g.data(), oracle::DecayGate::PerHead);
    } else if (kernel == LibraryKernel::SimpleGla) {
      want = oracle::simpleGla(dims, q, k, v, a[3] + slice * t);
    } else {
      want = oracle::gla(dims, q, k, v, a[3] + slice * t * kd);
    }
    for (int64_t i = 0; i < t * vd; ++i)
      sum.add(out[slice * t * vd + i], want.o[i]);
  }
  return {sum.relRms(), "(b,h) slices " + joinIndices(slices) + " of " + std::to_string(sh.b * sh.h)};
}

} // namespace

OracleCheck la::bench::checkOracle(KernelKind kind, const Shape &sh, const float *q, const float *k, const float *v,
                                   const float *out) {
  const bool causal = isCausal(kind);
  const bool flow = kind == KernelKind::FlowNormal || kind == KernelKind::FlowCausal;
  const int64_t n = sh.n, m = causal ? sh.n : sh.m, d = sh.d, dv = sh.dv;
  const oracle::AttnDims dims{1, 1, n, m, d, dv};
  std::vector<int64_t> slices = firstAndLast(sh.slices());
  ErrorSum sum;
  for (int64_t slice : slices) {
    const float *qs = q + slice * n * d, *ks = k + slice * m * d, *vs = v + slice * m * dv;
    std::vector<double> want = flow ? oracle::flowAttentionRecurrent(dims, qs, ks, vs, causal)
                                    : oracle::linearAttentionRecurrent(dims, qs, ks, vs, causal);
    for (int64_t i = 0; i < n * dv; ++i)
      sum.add(out[slice * n * dv + i], want[i]);
  }
  return {sum.relRms(), "(b,h) slices " + joinIndices(slices) + " of " + std::to_string(sh.slices())};
}

OracleCheck la::bench::checkLibraryOracle(LibraryKernel kernel, const LibraryShape &shape,
                                          const std::vector<const float *> &args, const float *out, double workBudget) {
  switch (libraryFamily(kernel)) {
  case LibraryFamily::Aft:
    if (kernel == LibraryKernel::AftConv)
      return checkAftConv(shape, args, out, workBudget);
    return checkAft(kernel, shape, args, out, workBudget);
  case LibraryFamily::Flash:
    return checkFlash(kernel, shape, args, out, workBudget);
  case LibraryFamily::Decay:
    return checkDecay(kernel, shape, args, out);
  }
  return {};
}
