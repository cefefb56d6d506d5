//===- LibraryOracleSelfTest.cpp - AFT/FLASH/decay oracles cross-checked --===//
//
// Evidence that the fp64 oracles of LibraryOracles.h transcribe SPEC §3-§5
// correctly. This file checks:
//   * AFT: the special cases agree with AFT-full (causal / simple with w = 0,
//     local with window >= T, 1 and 0, conv with s = 1 and with a dense bias
//     matrix built from the kernel); local and conv agree with the SPEC's
//     independent expm1 / zero-padded conv2d decomposition; the conv
//     orientation (x' − x + p, y' − y + p) is pinned by a dominant bias;
//     logits of ±80 and ±1000 stay finite and softmax shift invariance holds;
//   * GAU/FLASH: a hand-computed GAU case; a single chunk equals GAU scaled
//     by N/c; each chunk's quad part equals GAU on that chunk (partial last
//     chunk included); the causal linear part is an exclusive chunk scan
//     (0 on chunk 0) and causal outputs ignore the future;
//   * decay scans: recurrent == parallel (outputs and final state) with and
//     without h0, both gate kinds, T in {1, 37, 100}, ordinary and strong
//     (down to −30) gates; per-key gates that are equal across K reduce to
//     per-head gates; retention == the scan with its constant gates; a state
//     round trip (T1 steps, then the rest from the returned state) equals
//     one run; hand-computed simple GLA and GLA cases;
//   * misuse throws std::invalid_argument.
//
//===----------------------------------------------------------------------===//

#include "LibraryOracles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace la::oracle;

namespace {

/// Agreement required between two fp64 transcriptions of the same formula.
constexpr double kCrossTol = 1e-12;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double maxAbs(const std::vector<double> &x) {
  double m = 0.0;
  for (double e : x)
    m = std::max(m, std::fabs(e));
  return m;
}

void expectFinite(const std::vector<double> &x, const std::string &what) {
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) {
      ADD_FAILURE() << what << ": non-finite element " << i << " = " << x[i];
      return;
    }
}

/// relRms <= tol (or exact agreement when ref is legitimately all zero, e.g.
/// relu² of a single negative score, allowed only with allowZero).
void expectClose(const std::vector<double> &ref, const std::vector<double> &got, double tol, const std::string &what,
                 bool allowZero = false) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  ErrorStats st = compare(ref, got);
  EXPECT_EQ(st.firstNonFinite, -1) << what;
  EXPECT_LE(st.relRms, tol) << what << " maxAbs=" << st.maxAbs;
  // Guard against trivially agreeing all-zero results.
  if (!allowZero) {
    EXPECT_GT(maxAbs(ref), 0.0) << what << ": reference is identically zero";
  }
}

std::vector<double> scaled(std::vector<double> x, double f) {
  for (double &e : x)
    e *= f;
  return x;
}

//===----------------------------------------------------------------------===//
// AFT helpers
//===----------------------------------------------------------------------===//

struct AftInputs {
  std::vector<float> q, k, v, w;
};

AftInputs makeAft(int64_t b, int64_t t, int64_t d, uint64_t seed, float kLo, float kHi) {
  return {uniform(b * t * d, seed * 5 + 1, -2.0f, 2.0f), uniform(b * t * d, seed * 5 + 2, kLo, kHi),
          uniform(b * t * d, seed * 5 + 3, -1.0f, 1.0f), uniform(t * t, seed * 5 + 4, -1.0f, 1.0f)};
}

/// SPEC §3's AFT-local decomposition, written independently of the oracle
/// and without any max subtraction (moderate inputs only):
///   num_t = Σ_{t'} e^{k}v + Σ_{|t−t'|<s} (e^{w} − 1) e^{k} v, den likewise.
std::vector<double> aftLocalExpm1(int64_t batch, int64_t T, int64_t d, const AftInputs &in, int64_t s) {
  std::vector<double> out(static_cast<size_t>(batch * T * d));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < d; ++c) {
      double gNum = 0.0, gDen = 0.0;
      for (int64_t tp = 0; tp < T; ++tp) {
        double ek = std::exp(double(in.k[(b * T + tp) * d + c]));
        gNum += ek * double(in.v[(b * T + tp) * d + c]);
        gDen += ek;
      }
      for (int64_t t = 0; t < T; ++t) {
        double num = gNum, den = gDen;
        for (int64_t tp = std::max<int64_t>(0, t - s + 1); tp < std::min<int64_t>(T, t + s); ++tp) {
          double f = std::expm1(double(in.w[t * T + tp])) * std::exp(double(in.k[(b * T + tp) * d + c]));
          num += f * double(in.v[(b * T + tp) * d + c]);
          den += f;
        }
        out[(b * T + t) * d + c] = sigmoid(double(in.q[(b * T + t) * d + c])) * num / den;
      }
    }
  return out;
}

/// Copies the channels of head `i` out of a [B, P, h, c] buffer into a
/// [B, P, c] one (P = X·Y flattened positions).
std::vector<float> headSlice(const std::vector<float> &x, int64_t batch, int64_t positions, int64_t heads, int64_t c,
                             int64_t i) {
  std::vector<float> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t ch = 0; ch < c; ++ch)
        out.push_back(x[((b * positions + p) * heads + i) * c + ch]);
  return out;
}

/// Runs aftFull per head on the flattened X·Y sequence with the per-head
/// dense bias matrices `bias[i]` ([P, P]) and reassembles [B, P, h, c].
std::vector<double> aftConvViaFull(int64_t batch, int64_t positions, int64_t heads, int64_t c, const AftInputs &in,
                                   const std::vector<std::vector<float>> &bias) {
  std::vector<double> out(static_cast<size_t>(batch * positions * heads * c));
  for (int64_t i = 0; i < heads; ++i) {
    auto qi = headSlice(in.q, batch, positions, heads, c, i);
    auto ki = headSlice(in.k, batch, positions, heads, c, i);
    auto vi = headSlice(in.v, batch, positions, heads, c, i);
    auto yi = aftFull(batch, positions, c, qi.data(), ki.data(), vi.data(), bias[i].data(), false);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t p = 0; p < positions; ++p)
        for (int64_t ch = 0; ch < c; ++ch)
          out[((b * positions + p) * heads + i) * c + ch] = yi[(b * positions + p) * c + ch];
  }
  return out;
}

/// SPEC §3's AFT-conv form, independent of the oracle: with zero padding and
/// PyTorch conv2d (cross-correlation) orientation,
///   Y = σ(Q) ⊙ [conv2d(e^K ⊙ V, e^w − 1) + Σ e^K ⊙ V]
///            / [conv2d(e^K, e^w − 1) + Σ e^K]
/// where conv2d(f, κ)(x, y) = Σ_{a,b} κ[a][b] f(x + a − p, y + b − p).
std::vector<double> aftConvSpecForm(int64_t batch, int64_t X, int64_t Y, int64_t heads, int64_t c, const AftInputs &in,
                                    int64_t s) {
  const int64_t p = (s - 1) / 2;
  auto at = [&](int64_t b, int64_t x, int64_t y, int64_t i, int64_t ch) {
    return (((b * X + x) * Y + y) * heads + i) * c + ch;
  };
  std::vector<double> out(static_cast<size_t>(batch * X * Y * heads * c));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < heads; ++i)
      for (int64_t ch = 0; ch < c; ++ch) {
        double gNum = 0.0, gDen = 0.0;
        for (int64_t x = 0; x < X; ++x)
          for (int64_t y = 0; y < Y; ++y) {
            double ek = std::exp(double(in.k[at(b, x, y, i, ch)]));
            gNum += ek * double(in.v[at(b, x, y, i, ch)]);
            gDen += ek;
          }
        for (int64_t x = 0; x < X; ++x)
          for (int64_t y = 0; y < Y; ++y) {
            double num = gNum, den = gDen;
            for (int64_t a = 0; a < s; ++a)
              for (int64_t bb = 0; bb < s; ++bb) {
                int64_t xs = x + a - p, ys = y + bb - p;
                if (xs < 0 || xs >= X || ys < 0 || ys >= Y)
                  continue; // zero padding
                double kappa = std::expm1(double(in.w[(i * s + a) * s + bb]));
                double ek = std::exp(double(in.k[at(b, xs, ys, i, ch)]));
                num += kappa * ek * double(in.v[at(b, xs, ys, i, ch)]);
                den += kappa * ek;
              }
            out[at(b, x, y, i, ch)] = sigmoid(double(in.q[at(b, x, y, i, ch)])) * num / den;
          }
      }
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// AFT (SPEC §3)
//===----------------------------------------------------------------------===//

TEST(AftOracle, CausalAndSimpleMatchFullWithZeroBias) {
  const int64_t B = 2, d = 13;
  uint64_t seed = 10;
  for (int64_t T : {1, 37, 100}) {
    AftInputs in = makeAft(B, T, d, ++seed, -3.0f, 3.0f);
    std::vector<float> zero(static_cast<size_t>(T * T), 0.0f);
    std::string tag = "T=" + std::to_string(T);
    expectClose(aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), zero.data(), true),
                aftCausal(B, T, d, in.q.data(), in.k.data(), in.v.data()), kCrossTol, "causal " + tag);
    expectClose(aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), zero.data(), false),
                aftSimple(B, T, d, in.q.data(), in.k.data(), in.v.data()), kCrossTol, "simple " + tag);
  }
}

TEST(AftOracle, FullCausalIgnoresUpperTriangle) {
  const int64_t B = 2, T = 37, d = 7;
  AftInputs in = makeAft(B, T, d, 20, -3.0f, 3.0f);
  std::vector<float> w2 = in.w;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t tp = t + 1; tp < T; ++tp)
      w2[t * T + tp] = 50.0f;
  auto a = aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), true);
  auto b = aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), w2.data(), true);
  EXPECT_EQ(a, b) << "causal AFT-full read w above the diagonal";
  // ...while the non-causal form must see the change.
  auto na = aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), false);
  auto nb = aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), w2.data(), false);
  EXPECT_GT(compare(na, nb).relRms, 1e-2);
}

TEST(AftOracle, LocalWindowLimits) {
  const int64_t B = 2, d = 9;
  uint64_t seed = 30;
  for (int64_t T : {1, 37, 100}) {
    AftInputs in = makeAft(B, T, d, ++seed, -3.0f, 3.0f);
    std::string tag = "T=" + std::to_string(T);
    auto full = aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), false);
    for (int64_t s : {T, T + 5})
      expectClose(full, aftLocal(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), s), kCrossTol,
                  "window>=T " + tag);
    // Window 1: only the diagonal bias w_tt survives.
    std::vector<float> diag(static_cast<size_t>(T * T), 0.0f);
    for (int64_t t = 0; t < T; ++t)
      diag[t * T + t] = in.w[t * T + t];
    expectClose(aftFull(B, T, d, in.q.data(), in.k.data(), in.v.data(), diag.data(), false),
                aftLocal(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), 1), kCrossTol, "window=1 " + tag);
    // Window 0: no bias at all.
    expectClose(aftSimple(B, T, d, in.q.data(), in.k.data(), in.v.data()),
                aftLocal(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), 0), kCrossTol, "window=0 " + tag);
  }
}

TEST(AftOracle, LocalMatchesSpecExpm1Decomposition) {
  const int64_t B = 2, T = 37, d = 6;
  AftInputs in = makeAft(B, T, d, 40, -1.0f, 1.0f);
  for (int64_t s : {1, 2, 5, 20, 36, 37}) {
    auto ref = aftLocalExpm1(B, T, d, in, s);
    auto got = aftLocal(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), s);
    expectClose(ref, got, kCrossTol, "window " + std::to_string(s));
  }
  // The band must matter: different windows give different answers.
  auto a = aftLocal(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), 2);
  auto b = aftLocal(B, T, d, in.q.data(), in.k.data(), in.v.data(), in.w.data(), 5);
  EXPECT_GT(compare(a, b).relRms, 1e-3);
}

TEST(AftOracle, ConvKernel1IsPerHeadDiagonalBias) {
  const int64_t B = 2, X = 4, Y = 5, H = 3, C = 2, P = X * Y;
  AftInputs in = makeAft(B, P, H * C, 50, -3.0f, 3.0f);
  in.w = uniform(H, 51, -2.0f, 2.0f); // [h, 1, 1]
  std::vector<std::vector<float>> bias(H, std::vector<float>(P * P, 0.0f));
  for (int64_t i = 0; i < H; ++i)
    for (int64_t p = 0; p < P; ++p)
      bias[i][p * P + p] = in.w[i];
  expectClose(aftConvViaFull(B, P, H, C, in, bias),
              aftConv(B, X, Y, H, C, in.q.data(), in.k.data(), in.v.data(), in.w.data(), 1), kCrossTol, "s=1");
}

TEST(AftOracle, ConvMatchesDenseBiasAndSpecConv2dForm) {
  struct Case {
    int64_t X, Y, H, C, s;
  };
  // s = 7 exceeds X = 5: the window is clipped by the image edges.
  std::vector<Case> cases = {{5, 4, 3, 2, 3}, {5, 4, 3, 2, 5}, {5, 4, 2, 3, 7}, {1, 6, 1, 1, 3}, {1, 1, 2, 3, 3}};
  uint64_t seed = 60;
  for (const Case &cs : cases) {
    const int64_t B = 2, P = cs.X * cs.Y, p = (cs.s - 1) / 2;
    AftInputs in = makeAft(B, P, cs.H * cs.C, ++seed, -1.0f, 1.0f);
    in.w = uniform(cs.H * cs.s * cs.s, seed * 7, -1.0f, 1.0f);
    // Dense [P, P] bias per head, flattening (x, y) -> x·Y + y.
    std::vector<std::vector<float>> bias(cs.H, std::vector<float>(P * P, 0.0f));
    for (int64_t i = 0; i < cs.H; ++i)
      for (int64_t x = 0; x < cs.X; ++x)
        for (int64_t y = 0; y < cs.Y; ++y)
          for (int64_t xp = 0; xp < cs.X; ++xp)
            for (int64_t yp = 0; yp < cs.Y; ++yp)
              if (std::abs(xp - x) <= p && std::abs(yp - y) <= p)
                bias[i][(x * cs.Y + y) * P + (xp * cs.Y + yp)] = in.w[(i * cs.s + (xp - x + p)) * cs.s + (yp - y + p)];
    auto got = aftConv(B, cs.X, cs.Y, cs.H, cs.C, in.q.data(), in.k.data(), in.v.data(), in.w.data(), cs.s);
    std::string tag = "X=" + std::to_string(cs.X) + " Y=" + std::to_string(cs.Y) + " s=" + std::to_string(cs.s);
    expectClose(aftConvViaFull(B, P, cs.H, cs.C, in, bias), got, kCrossTol, "dense bias " + tag);
    expectClose(aftConvSpecForm(B, cs.X, cs.Y, cs.H, cs.C, in, cs.s), got, kCrossTol, "conv2d form " + tag);
  }
}

TEST(AftOracle, ConvOrientation) {
  // One head, one channel, 3×3 image, s = 3 (p = 1). A bias of 60 at kernel
  // entry [a][b] makes position (x, y) attend (almost) only to
  // (x + a − 1, y + b − 1) when that exists: e^{-60} ≈ 1e-26.
  const int64_t X = 3, Y = 3;
  AftInputs in = makeAft(1, X * Y, 1, 70, -1.0f, 1.0f);
  struct Offset {
    int64_t a, b;
  };
  for (Offset off : {Offset{2, 1}, Offset{0, 1}, Offset{1, 0}, Offset{1, 2}, Offset{2, 0}}) {
    std::vector<float> w(9, 0.0f);
    w[off.a * 3 + off.b] = 60.0f;
    auto y = aftConv(1, X, Y, 1, 1, in.q.data(), in.k.data(), in.v.data(), w.data(), 3);
    for (int64_t x = 0; x < X; ++x)
      for (int64_t yy = 0; yy < Y; ++yy) {
        int64_t xs = x + off.a - 1, ys = yy + off.b - 1;
        if (xs < 0 || xs >= X || ys < 0 || ys >= Y)
          continue;
        double expect = sigmoid(in.q[x * Y + yy]) * double(in.v[xs * Y + ys]);
        EXPECT_NEAR(y[x * Y + yy], expect, 1e-12)
            << "offset [" << off.a << "][" << off.b << "] at (" << x << "," << yy << ")";
      }
  }
}

TEST(AftOracle, LargeMagnitudeInputsStayFinite) {
  const int64_t B = 2, T = 37, d = 5;
  const int64_t X = 5, Y = 4, H = 2, C = 2, s = 3;
  for (float mag : {80.0f, 1000.0f}) {
    AftInputs in = makeAft(B, T, d, 80, -mag, mag);
    in.q = uniform(B * T * d, 81, -mag, mag);
    in.w = uniform(T * T, 82, -mag, mag);
    std::string tag = "±" + std::to_string(int(mag)) + " ";
    const float *q = in.q.data(), *k = in.k.data(), *v = in.v.data();
    expectFinite(aftCausal(B, T, d, q, k, v), tag + "causal");
    expectFinite(aftSimple(B, T, d, q, k, v), tag + "simple");
    expectFinite(aftFull(B, T, d, q, k, v, in.w.data(), true), tag + "full causal");
    expectFinite(aftFull(B, T, d, q, k, v, in.w.data(), false), tag + "full");
    expectFinite(aftLocal(B, T, d, q, k, v, in.w.data(), 4), tag + "local");
    AftInputs cin = makeAft(B, X * Y, H * C, 83, -mag, mag);
    cin.q = uniform(B * X * Y * H * C, 84, -mag, mag);
    cin.w = uniform(H * s * s, 85, -mag, mag);
    expectFinite(aftConv(B, X, Y, H, C, cin.q.data(), cin.k.data(), cin.v.data(), cin.w.data(), s), tag + "conv");
  }
}

TEST(AftOracle, SoftmaxShiftInvarianceAtHugeLogits) {
  // Shifting every k of a channel by a constant cancels in the softmax. With
  // k on a 1/8 grid in [-4, 4] the shifted values k ± 1000 are exact in
  // fp32, and e^{±1000} is far outside fp64's range, so this only holds if
  // each oracle subtracts the maximum before exp. Likewise shifting all of w
  // (also on the 1/8 grid) for AFT-full.
  const int64_t B = 2, T = 37, d = 5;
  AftInputs in = makeAft(B, T, d, 90, -4.0f, 4.0f);
  for (float &x : in.k)
    x = std::round(x * 8.0f) / 8.0f;
  for (float &x : in.w)
    x = std::round(x * 8.0f) / 8.0f;
  const int64_t X = 5, Y = 4, H = 2, C = 2, s = 3; // conv view, P = 20
  AftInputs cin = makeAft(B, X * Y, H * C, 91, -4.0f, 4.0f);
  for (float &x : cin.k)
    x = std::round(x * 8.0f) / 8.0f;
  cin.w = uniform(H * s * s, 92, -1.0f, 1.0f);

  for (float shift : {1000.0f, -1000.0f}) {
    std::vector<float> ks = in.k, cks = cin.k, ws = in.w;
    for (float &x : ks)
      x += shift;
    for (float &x : cks)
      x += shift;
    for (float &x : ws)
      x += shift;
    const float *q = in.q.data(), *k = in.k.data(), *v = in.v.data();
    std::string tag = "shift " + std::to_string(int(shift)) + " ";
    expectClose(aftCausal(B, T, d, q, k, v), aftCausal(B, T, d, q, ks.data(), v), kCrossTol, tag + "causal");
    expectClose(aftSimple(B, T, d, q, k, v), aftSimple(B, T, d, q, ks.data(), v), kCrossTol, tag + "simple");
    for (bool causal : {false, true})
      expectClose(aftFull(B, T, d, q, k, v, in.w.data(), causal), aftFull(B, T, d, q, ks.data(), v, ws.data(), causal),
                  kCrossTol, tag + "full");
    expectClose(aftLocal(B, T, d, q, k, v, in.w.data(), 4), aftLocal(B, T, d, q, ks.data(), v, in.w.data(), 4),
                kCrossTol, tag + "local");
    expectClose(aftConv(B, X, Y, H, C, cin.q.data(), cin.k.data(), cin.v.data(), cin.w.data(), s),
                aftConv(B, X, Y, H, C, cin.q.data(), cks.data(), cin.v.data(), cin.w.data(), s), kCrossTol,
                tag + "conv");
  }
}

TEST(AftOracle, HandComputedT2) {
  // One channel, T = 2: q = (0, 2), k = (0, 1), v = (2, −1).
  //   causal: Y_0 = σ(0)·2 = 1;
  //           Y_1 = σ(2)·(e^0·2 + e^1·(−1)) / (e^0 + e^1)
  //               = σ(2)(2 − e)/(1 + e) = −0.17014862370815198
  //   simple: Y_t = σ(q_t)(2 − e)/(1 + e): Y_0 = −0.0965878679450073,
  //           Y_1 = −0.17014862370815198
  std::vector<float> q = {0.0f, 2.0f}, k = {0.0f, 1.0f}, v = {2.0f, -1.0f};
  auto c = aftCausal(1, 2, 1, q.data(), k.data(), v.data());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0], 1.0, 1e-15);
  EXPECT_NEAR(c[1], -0.17014862370815198, 1e-15);
  auto s = aftSimple(1, 2, 1, q.data(), k.data(), v.data());
  EXPECT_NEAR(s[0], -0.0965878679450073, 1e-15);
  EXPECT_NEAR(s[1], -0.17014862370815198, 1e-15);
  // AFT-full causal with w = [[0, *], [−1, 0]]: Y_1 = σ(2)(e^{−1}·2 − e)/(e^{−1}
  // + e).
  std::vector<float> w = {0.0f, 99.0f, -1.0f, 0.0f};
  auto f = aftFull(1, 2, 1, q.data(), k.data(), v.data(), w.data(), true);
  double e1 = std::exp(-1.0), e = std::exp(1.0);
  EXPECT_NEAR(f[0], 1.0, 1e-15);
  EXPECT_NEAR(f[1], sigmoid(2.0) * (2.0 * e1 - e) / (e1 + e), 1e-15);
}

//===----------------------------------------------------------------------===//
// GAU and FLASH (SPEC §4)
//===----------------------------------------------------------------------===//

namespace {

struct FlashInputs {
  std::vector<float> u, v, qq, kq, ql, kl;
};

FlashInputs makeFlash(int64_t B, int64_t N, int64_t s, int64_t e, uint64_t seed) {
  return {uniform(B * N * e, seed * 7 + 1, -1.0f, 1.0f), uniform(B * N * e, seed * 7 + 2, -1.0f, 1.0f),
          uniform(B * N * s, seed * 7 + 3, -1.0f, 1.0f), uniform(B * N * s, seed * 7 + 4, -1.0f, 1.0f),
          uniform(B * N * s, seed * 7 + 5, -1.0f, 1.0f), uniform(B * N * s, seed * 7 + 6, -1.0f, 1.0f)};
}

std::vector<double> runFlash(int64_t B, int64_t N, int64_t s, int64_t e, const FlashInputs &in, int64_t c, bool causal,
                             FlashParts *parts = nullptr) {
  return flash(B, N, s, e, in.u.data(), in.v.data(), in.qq.data(), in.kq.data(), in.ql.data(), in.kl.data(), c, causal,
               parts);
}

/// Rows [r0, r1) of every batch of a [B, N, w] buffer.
template <typename T>
std::vector<T> rows(const std::vector<T> &x, int64_t B, int64_t N, int64_t w, int64_t r0, int64_t r1) {
  std::vector<T> out;
  for (int64_t b = 0; b < B; ++b)
    out.insert(out.end(), x.begin() + (b * N + r0) * w, x.begin() + (b * N + r1) * w);
  return out;
}

} // namespace

TEST(GauOracle, HandComputed) {
  // N = 2, s = 1, e = 1: q = (1, −1), k = (2, 1), v = (1, 3), u = (1, 1).
  // Scores q kᵀ = [[2, 1], [−2, −1]]; relu² = [[4, 1], [0, 0]]; /(N·s = 2)
  // = [[2, 0.5], [0, 0]]. Non-causal O = (2·1 + 0.5·3, 0) = (3.5, 0);
  // causal O = (2·1, 0) = (2, 0). With u = (2, 5) the first row doubles.
  std::vector<float> q = {1.0f, -1.0f}, k = {2.0f, 1.0f}, v = {1.0f, 3.0f};
  std::vector<float> u = {1.0f, 1.0f}, u2 = {2.0f, 5.0f};
  auto nc = gau(1, 2, 1, 1, u.data(), v.data(), q.data(), k.data(), false);
  EXPECT_EQ(nc, (std::vector<double>{3.5, 0.0}));
  auto ca = gau(1, 2, 1, 1, u.data(), v.data(), q.data(), k.data(), true);
  EXPECT_EQ(ca, (std::vector<double>{2.0, 0.0}));
  auto g2 = gau(1, 2, 1, 1, u2.data(), v.data(), q.data(), k.data(), false);
  EXPECT_EQ(g2, (std::vector<double>{7.0, 0.0}));
}

TEST(FlashOracle, SingleChunkEqualsScaledGau) {
  // With c >= N there is one chunk: Vq_t = Σ_m relu²/(c·s) v_m, GAU divides
  // by N·s, so u ⊙ Vq = gau · N/c. Causal: the linear part of chunk 0 is 0,
  // so the whole output is gau(causal) · N/c.
  const int64_t B = 2, s = 6, e = 5;
  uint64_t seed = 100;
  for (int64_t N : {1, 37, 100})
    for (int64_t c : {N, N + 3}) {
      FlashInputs in = makeFlash(B, N, s, e, ++seed);
      std::string tag = "N=" + std::to_string(N) + " c=" + std::to_string(c);
      double f = double(N) / double(c);
      auto gc = gau(B, N, s, e, in.u.data(), in.v.data(), in.qq.data(), in.kq.data(), true);
      // N = 1: relu² of one score may be 0, so the output may be too.
      expectClose(scaled(gc, f), runFlash(B, N, s, e, in, c, true), kCrossTol, "causal " + tag, N == 1);

      FlashParts parts;
      auto out = runFlash(B, N, s, e, in, c, false, &parts);
      std::vector<double> gatedQuad(parts.quad.size());
      for (size_t i = 0; i < gatedQuad.size(); ++i)
        gatedQuad[i] = double(in.u[i]) * parts.quad[i];
      auto gn = gau(B, N, s, e, in.u.data(), in.v.data(), in.qq.data(), in.kq.data(), false);
      expectClose(scaled(gn, f), gatedQuad, kCrossTol, "quad " + tag, N == 1);
      // Non-causal linear part: ql_t · (Σ_m kl_m ⊗ v_m) / N, summed here as
      // Σ_m (ql_t · kl_m) v_m / N.
      std::vector<double> lin(parts.linear.size(), 0.0);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < N; ++t)
          for (int64_t m = 0; m < N; ++m) {
            double a = 0.0;
            for (int64_t j = 0; j < s; ++j)
              a += double(in.ql[(b * N + t) * s + j]) * double(in.kl[(b * N + m) * s + j]);
            for (int64_t j = 0; j < e; ++j)
              lin[(b * N + t) * e + j] += a * double(in.v[(b * N + m) * e + j]) / double(N);
          }
      expectClose(lin, parts.linear, kCrossTol, "linear " + tag);
      std::vector<double> combined(out.size());
      for (size_t i = 0; i < out.size(); ++i)
        combined[i] = double(in.u[i]) * (parts.quad[i] + parts.linear[i]);
      expectClose(combined, out, kCrossTol, "combine " + tag, N == 1);
    }
}

TEST(FlashOracle, QuadPartIsGauPerChunk) {
  // Chunk g's quad part is GAU (u = 1) on rows [g·c, end) rescaled from the
  // chunk's own length L to the divisor c·s: factor L/c (< 1 for a partial
  // last chunk, whose divisor stays c·s).
  const int64_t B = 2, N = 37, s = 6, e = 5;
  FlashInputs in = makeFlash(B, N, s, e, 110);
  for (int64_t c : {1, 4, 8, 16})
    for (bool causal : {false, true}) {
      FlashParts parts;
      runFlash(B, N, s, e, in, c, causal, &parts);
      for (int64_t start = 0; start < N; start += c) {
        int64_t end = std::min(start + c, N), L = end - start;
        auto vq = rows(in.v, B, N, e, start, end);
        auto qq = rows(in.qq, B, N, s, start, end);
        auto kq = rows(in.kq, B, N, s, start, end);
        std::vector<float> ones(vq.size(), 1.0f);
        auto ref = gau(B, L, s, e, ones.data(), vq.data(), qq.data(), kq.data(), causal);
        // A short chunk can be all zero (negative scores); nonzero-ness is
        // checked once for the whole quad part below.
        expectClose(scaled(ref, double(L) / double(c)), rows(parts.quad, B, N, e, start, end), kCrossTol,
                    "c=" + std::to_string(c) + " chunk@" + std::to_string(start) + (causal ? " causal" : ""),
                    /*allowZero=*/true);
      }
      EXPECT_GT(maxAbs(parts.quad), 0.0) << "c=" << c;
    }
}

TEST(FlashOracle, CausalLinearPartIsExclusiveChunkScan) {
  // Independent transcription: carry the state Σ kl_m ⊗ v_m over chunks,
  // read it out before adding the current chunk, divide by g·c.
  const int64_t B = 2, N = 37, s = 6, e = 5;
  FlashInputs in = makeFlash(B, N, s, e, 120);
  for (int64_t c : {1, 4, 8, 36, 37}) {
    FlashParts parts;
    runFlash(B, N, s, e, in, c, true, &parts);
    std::vector<double> ref(parts.linear.size(), 0.0);
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> state(s * e, 0.0);
      for (int64_t start = 0; start < N; start += c) {
        int64_t end = std::min(start + c, N);
        for (int64_t t = start; t < end && start > 0; ++t)
          for (int64_t i = 0; i < s; ++i)
            for (int64_t j = 0; j < e; ++j)
              ref[(b * N + t) * e + j] += double(in.ql[(b * N + t) * s + i]) * state[i * e + j] / double(start);
        for (int64_t m = start; m < end; ++m)
          for (int64_t i = 0; i < s; ++i)
            for (int64_t j = 0; j < e; ++j)
              state[i * e + j] += double(in.kl[(b * N + m) * s + i]) * double(in.v[(b * N + m) * e + j]);
      }
    }
    std::string tag = "c=" + std::to_string(c);
    if (c < N)
      expectClose(ref, parts.linear, kCrossTol, tag);
    else
      EXPECT_EQ(maxAbs(parts.linear), 0.0) << tag;
    // The first chunk's linear part is exactly zero.
    auto first = rows(parts.linear, B, N, e, 0, std::min(c, N));
    EXPECT_EQ(maxAbs(first), 0.0) << tag;
  }
}

TEST(FlashOracle, CausalOutputIgnoresFuture) {
  // Causal: rows [0, 32) of a length-37 run equal a length-32 run on the
  // prefix (the partial last chunk [32, 37) cannot leak backwards).
  const int64_t B = 2, N = 37, Np = 32, s = 6, e = 5, c = 8;
  FlashInputs in = makeFlash(B, N, s, e, 130);
  FlashInputs pre{rows(in.u, B, N, e, 0, Np),  rows(in.v, B, N, e, 0, Np),  rows(in.qq, B, N, s, 0, Np),
                  rows(in.kq, B, N, s, 0, Np), rows(in.ql, B, N, s, 0, Np), rows(in.kl, B, N, s, 0, Np)};
  auto full = runFlash(B, N, s, e, in, c, true);
  auto prefix = runFlash(B, Np, s, e, pre, c, true);
  expectClose(prefix, rows(full, B, N, e, 0, Np), kCrossTol, "causal prefix");
  // Non-causal linear part does not depend on the chunk size.
  FlashParts p4, p16;
  runFlash(B, N, s, e, in, 4, false, &p4);
  runFlash(B, N, s, e, in, 16, false, &p16);
  expectClose(p4.linear, p16.linear, kCrossTol, "linear vs chunk size");
}

//===----------------------------------------------------------------------===//
// Decay scans (SPEC §5)
//===----------------------------------------------------------------------===//

namespace {

struct DecayInputs {
  std::vector<float> q, k, v;
  std::vector<double> g, h0;
};

DecayInputs makeDecay(const DecayDims &dims, DecayGate gate, uint64_t seed, float gLo, float gHi) {
  DecayInputs in;
  in.q = uniform(dims.qkSize(), seed * 11 + 1, -1.0f, 1.0f);
  in.k = uniform(dims.qkSize(), seed * 11 + 2, -1.0f, 1.0f);
  in.v = uniform(dims.vSize(), seed * 11 + 3, -1.0f, 1.0f);
  for (float x : uniform(dims.gateSize(gate == DecayGate::PerKey), seed * 11 + 4, gLo, gHi))
    in.g.push_back(x);
  for (float x : uniform(dims.stateSize(), seed * 11 + 5, -1.0f, 1.0f))
    in.h0.push_back(x);
  return in;
}

/// Time steps [t0, t1) of a [B, H, T, W] buffer.
template <typename T>
std::vector<T> steps(const std::vector<T> &x, const DecayDims &dims, int64_t w, int64_t t0, int64_t t1) {
  std::vector<T> out;
  for (int64_t bh = 0; bh < dims.batch * dims.heads; ++bh)
    out.insert(out.end(), x.begin() + (bh * dims.t + t0) * w, x.begin() + (bh * dims.t + t1) * w);
  return out;
}

const char *gateName(DecayGate g) { return g == DecayGate::PerKey ? "per-key" : "per-head"; }

} // namespace

TEST(DecayOracle, RecurrentMatchesParallel) {
  uint64_t seed = 200;
  for (DecayGate gate : {DecayGate::PerHead, DecayGate::PerKey})
    for (int64_t T : {1, 37, 100})
      for (bool withH0 : {false, true}) {
        DecayDims dims{2, 3, T, 5, 7};
        DecayInputs in = makeDecay(dims, gate, ++seed, -2.0f, 0.0f);
        const double *h0 = withH0 ? in.h0.data() : nullptr;
        auto rec = decayRecurrent(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), gate, h0);
        auto par = decayParallel(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), gate, h0);
        std::string tag = std::string(gateName(gate)) + " T=" + std::to_string(T) + (withH0 ? " h0" : "");
        ASSERT_EQ(rec.o.size(), size_t(dims.vSize()));
        ASSERT_EQ(rec.finalState.size(), size_t(dims.stateSize()));
        expectClose(par.o, rec.o, kCrossTol, "o " + tag);
        expectClose(par.finalState, rec.finalState, kCrossTol, "S " + tag);
      }
}

TEST(DecayOracle, StrongGatesStayFiniteAndAgree) {
  // Gates down to −30: the inclusive cumsum G reaches about −1500 at T = 100,
  // so exp(−G_s) would overflow; the partial-sum form must not.
  uint64_t seed = 300;
  for (DecayGate gate : {DecayGate::PerHead, DecayGate::PerKey}) {
    DecayDims dims{2, 3, 100, 5, 7};
    DecayInputs in = makeDecay(dims, gate, ++seed, -30.0f, 0.0f);
    for (bool withH0 : {false, true}) {
      const double *h0 = withH0 ? in.h0.data() : nullptr;
      auto rec = decayRecurrent(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), gate, h0);
      auto par = decayParallel(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), gate, h0);
      std::string tag = std::string(gateName(gate)) + (withH0 ? " h0" : "");
      expectFinite(rec.o, "recurrent " + tag);
      expectFinite(par.o, "parallel " + tag);
      expectClose(par.o, rec.o, kCrossTol, "o " + tag);
      expectClose(par.finalState, rec.finalState, kCrossTol, "S " + tag);
    }
    // Every gate at exactly −30 (and at −1000, where e^g underflows to 0).
    for (double gv : {-30.0, -1000.0}) {
      std::vector<double> g(in.g.size(), gv);
      auto rec = decayRecurrent(dims, in.q.data(), in.k.data(), in.v.data(), g.data(), gate, in.h0.data());
      auto par = decayParallel(dims, in.q.data(), in.k.data(), in.v.data(), g.data(), gate, in.h0.data());
      expectClose(par.o, rec.o, kCrossTol, "constant gate");
      expectClose(par.finalState, rec.finalState, kCrossTol, "constant gate S");
    }
  }
}

TEST(DecayOracle, EqualPerKeyGatesReduceToPerHead) {
  DecayDims dims{2, 3, 37, 5, 7};
  DecayInputs in = makeDecay(dims, DecayGate::PerHead, 400, -2.0f, 0.0f);
  std::vector<double> gk;
  for (double x : in.g)
    gk.insert(gk.end(), size_t(dims.k), x);
  auto head =
      decayRecurrent(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), DecayGate::PerHead, in.h0.data());
  auto key = decayRecurrent(dims, in.q.data(), in.k.data(), in.v.data(), gk.data(), DecayGate::PerKey, in.h0.data());
  expectClose(head.o, key.o, 1e-14, "o");
  expectClose(head.finalState, key.finalState, 1e-14, "S");
}

TEST(DecayOracle, FloatWrappersMatchCore) {
  DecayDims dims{2, 3, 37, 5, 7};
  for (DecayGate gate : {DecayGate::PerHead, DecayGate::PerKey}) {
    DecayInputs in = makeDecay(dims, gate, 450, -2.0f, 0.0f);
    // makeDecay's fp64 gates/h0 are widened fp32 values, so narrowing is
    // exact.
    std::vector<float> gf(in.g.begin(), in.g.end());
    std::vector<float> hf(in.h0.begin(), in.h0.end());
    auto core = decayRecurrent(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), gate, in.h0.data());
    DecayResult wrap = gate == DecayGate::PerKey
                           ? gla(dims, in.q.data(), in.k.data(), in.v.data(), gf.data(), hf.data())
                           : simpleGla(dims, in.q.data(), in.k.data(), in.v.data(), gf.data(), hf.data());
    EXPECT_EQ(core.o, wrap.o) << gateName(gate);
    EXPECT_EQ(core.finalState, wrap.finalState) << gateName(gate);
  }
}

TEST(DecayOracle, RetentionIsConstantGateScan) {
  // γ_h = 1 − 2^{−5−h}: log γ_0 = log(31/32), log γ_1 = log(63/64), ...
  for (int64_t h = 0; h < 8; ++h) {
    double gamma = 1.0 - std::ldexp(1.0, int(-5 - h)); // exact in fp64
    EXPECT_NEAR(retentionLogDecay(h), std::log(gamma), 1e-17) << "head " << h;
  }
  EXPECT_NEAR(retentionLogDecay(0), std::log(31.0 / 32.0), 1e-17);

  DecayDims dims{2, 4, 37, 5, 7};
  DecayInputs in = makeDecay(dims, DecayGate::PerHead, 500, -1.0f, 0.0f);
  std::vector<float> hf(in.h0.begin(), in.h0.end());
  auto gates = retentionGates(dims);
  ASSERT_EQ(gates.size(), size_t(dims.gateSize(false)));
  EXPECT_EQ(gates[(1 * dims.heads + 2) * dims.t + 17], retentionLogDecay(2));
  auto ret = retention(dims, in.q.data(), in.k.data(), in.v.data(), hf.data());
  auto par = decayParallel(dims, in.q.data(), in.k.data(), in.v.data(), gates.data(), DecayGate::PerHead, in.h0.data());
  expectClose(par.o, ret.o, kCrossTol, "retention vs parallel");
  expectClose(par.finalState, ret.finalState, kCrossTol, "retention vs parallel S");
  // simpleGla with the gates rounded to fp32 (relative rounding ~6e-8 of
  // |g| ~ 0.03, accumulated over at most 37 steps).
  std::vector<float> gf(gates.begin(), gates.end());
  auto sg = simpleGla(dims, in.q.data(), in.k.data(), in.v.data(), gf.data(), hf.data());
  expectClose(ret.o, sg.o, 1e-6, "retention vs simpleGla(fp32 gates)");
  // Different heads really decay differently.
  EXPECT_LT(retentionLogDecay(0), retentionLogDecay(1));
}

TEST(DecayOracle, StateRoundTrip) {
  // T1 steps from h0, then T − T1 steps from the returned state == one run.
  DecayDims dims{2, 3, 37, 5, 7};
  uint64_t seed = 600;
  for (DecayGate gate : {DecayGate::PerHead, DecayGate::PerKey}) {
    DecayInputs in = makeDecay(dims, gate, ++seed, -2.0f, 0.0f);
    const int64_t gw = gate == DecayGate::PerKey ? dims.k : 1;
    for (bool parallel : {false, true}) {
      auto run = parallel ? decayParallel : decayRecurrent;
      auto whole = run(dims, in.q.data(), in.k.data(), in.v.data(), in.g.data(), gate, in.h0.data(), std::nullopt);
      for (int64_t T1 : {1, 15, 36}) {
        DecayDims d1 = dims, d2 = dims;
        d1.t = T1;
        d2.t = dims.t - T1;
        auto part = [&](const DecayDims &d, int64_t t0, int64_t t1, const double *h) {
          auto q = steps(in.q, dims, dims.k, t0, t1);
          auto k = steps(in.k, dims, dims.k, t0, t1);
          auto v = steps(in.v, dims, dims.v, t0, t1);
          auto g = steps(in.g, dims, gw, t0, t1);
          return run(d, q.data(), k.data(), v.data(), g.data(), gate, h, std::nullopt);
        };
        auto first = part(d1, 0, T1, in.h0.data());
        auto second = part(d2, T1, dims.t, first.finalState.data());
        std::string tag =
            std::string(gateName(gate)) + (parallel ? " parallel" : " recurrent") + " T1=" + std::to_string(T1);
        expectClose(steps(whole.o, dims, dims.v, 0, T1), first.o, kCrossTol, "first half " + tag);
        expectClose(steps(whole.o, dims, dims.v, T1, dims.t), second.o, kCrossTol, "second half " + tag);
        expectClose(whole.finalState, second.finalState, kCrossTol, "final state " + tag);
      }
    }
  }
}

TEST(DecayOracle, HandComputedSimpleGla) {
  // K = V = 1 (scale = 1), T = 2: q = (1, 2), k = (3, −1), v = (0.5, 2),
  // g = (−1, −0.5), h0 = 4.
  //   S_0 = e^{−1}·4 + 3·0.5 = 2.9715177646857693 = o_0
  //   S_1 = e^{−0.5}·S_0 + (−1)·2;  o_1 = 2·S_1 = −0.3953667396746612
  DecayDims dims{1, 1, 2, 1, 1};
  std::vector<float> q = {1.0f, 2.0f}, k = {3.0f, -1.0f}, v = {0.5f, 2.0f};
  std::vector<float> g = {-1.0f, -0.5f}, h0 = {4.0f};
  double s0 = 4.0 * std::exp(-1.0) + 1.5;
  double s1 = std::exp(-0.5) * s0 - 2.0;
  auto r = simpleGla(dims, q.data(), k.data(), v.data(), g.data(), h0.data());
  ASSERT_EQ(r.o.size(), 2u);
  EXPECT_NEAR(r.o[0], 2.9715177646857693, 1e-15);
  EXPECT_NEAR(r.o[1], -0.3953667396746612, 1e-15);
  EXPECT_NEAR(r.finalState[0], s1, 1e-15);
  std::vector<double> gd = {-1.0, -0.5}, hd = {4.0};
  auto p = decayParallel(dims, q.data(), k.data(), v.data(), gd.data(), DecayGate::PerHead, hd.data());
  EXPECT_NEAR(p.o[0], s0, 1e-15);
  EXPECT_NEAR(p.o[1], 2.0 * s1, 1e-15);
  EXPECT_NEAR(p.finalState[0], s1, 1e-15);
  // Explicit scale overrides K^{-1/2}.
  auto r3 = simpleGla(dims, q.data(), k.data(), v.data(), g.data(), h0.data(), 3.0);
  EXPECT_NEAR(r3.o[1], 3.0 * 2.0 * s1, 1e-14);
}

TEST(DecayOracle, HandComputedGla) {
  // K = 2 (scale = 1/√2), V = 1, T = 2, no h0:
  //   k = ((1, 2), (1, 0)), v = (1, 3), q = ((0, 0), (1, 1)),
  //   g = ((0, 0), (−1, −2)).
  //   S_0 = (1, 2); o_0 = 0.
  //   S_1 = (e^{−1}·1 + 1·3, e^{−2}·2 + 0·3);
  //   o_1 = (e^{−1} + 3 + 2e^{−2}) / √2 = 2.5728433840919087.
  DecayDims dims{1, 1, 2, 2, 1};
  std::vector<float> q = {0, 0, 1, 1}, k = {1, 2, 1, 0}, v = {1, 3};
  std::vector<float> g = {0, 0, -1, -2};
  auto r = gla(dims, q.data(), k.data(), v.data(), g.data());
  EXPECT_EQ(r.o[0], 0.0);
  EXPECT_NEAR(r.o[1], 2.5728433840919087, 1e-15);
  EXPECT_NEAR(r.finalState[0], std::exp(-1.0) + 3.0, 1e-15);
  EXPECT_NEAR(r.finalState[1], 2.0 * std::exp(-2.0), 1e-15);
}

//===----------------------------------------------------------------------===//
// Misuse
//===----------------------------------------------------------------------===//

TEST(LibraryOracleMisuse, Throws) {
  std::vector<float> x(64, 0.5f);
  const float *p = x.data();
  EXPECT_THROW(aftCausal(1, 0, 1, p, p, p), std::invalid_argument);
  EXPECT_THROW(aftSimple(1, 2, 1, nullptr, p, p), std::invalid_argument);
  EXPECT_THROW(aftFull(1, 2, 1, p, p, p, nullptr, false), std::invalid_argument);
  EXPECT_THROW(aftLocal(1, 2, 1, p, p, p, p, -1), std::invalid_argument);
  EXPECT_THROW(aftConv(1, 2, 2, 1, 1, p, p, p, p, 2), std::invalid_argument);
  EXPECT_THROW(aftConv(1, 2, 2, 1, 1, p, p, p, p, 0), std::invalid_argument);
  // A softmax row with no finite logit.
  float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> w = {ninf, ninf, 0.0f, 0.0f};
  EXPECT_THROW(aftFull(1, 2, 1, p, p, p, w.data(), false), std::invalid_argument);
  std::vector<float> wOk = {ninf, 0.0f, 0.0f, 0.0f}; // one finite logit
  EXPECT_NO_THROW(aftFull(1, 2, 1, p, p, p, wOk.data(), false));
  EXPECT_THROW(gau(1, 2, 0, 1, p, p, p, p, false), std::invalid_argument);
  EXPECT_THROW(flash(1, 4, 1, 1, p, p, p, p, p, p, 0, true), std::invalid_argument);
  std::vector<double> g(8, -0.1);
  EXPECT_THROW(decayRecurrent(DecayDims{1, 1, 2, 0, 1}, p, p, p, g.data(), DecayGate::PerHead), std::invalid_argument);
  EXPECT_THROW(decayParallel(DecayDims{1, 1, 2, 1, 1}, p, p, p, nullptr, DecayGate::PerKey), std::invalid_argument);
  EXPECT_THROW(retentionLogDecay(-1), std::invalid_argument);
}
