//===- EagerOps.h - Tensor ops the way an eager framework runs them -*- C++ -*-===//
//
// The building blocks of the unfused references (Reference.cpp, LibraryReference.cpp): one parallel loop nest
// per tensor op, each allocating its result uninitialised (like `torch.empty`) and first touching it inside
// the parallel loop, so page faults of large fresh tensors are part of the time, as they are in eager mode.
// Shapes are [S, L, W] with S the slices an op is parallel over (B*H, or B for head-less kernels).
//
// Elementwise exp is a Cephes-style polynomial that GCC vectorises, standing in for the vectorised (SLEEF)
// exp of eager frameworks; calling scalar libm expf would make the baseline slower for a reason that has
// nothing to do with fusion. Contractions are loop nests whose innermost loop runs over the contiguous
// last dimension, so they vectorise; they are not a tuned BLAS (the PyTorch column has that).
//
// No MLIR dependency (LLVM only for ForkJoinPool.h's threads): this file is part of the `LABenchSupport`
// library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_EAGEROPS_H
#define LA_BENCH_EAGEROPS_H

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <utility>

namespace la::bench::eager {

//===----------------------------------------------------------------------===//
// Elementwise math
//===----------------------------------------------------------------------===//

/// exp(x) in float, about 1 ulp (Cephes expf): range reduction by ln 2 in two parts, degree-6 polynomial,
/// 2^n assembled in the exponent bits. Branch-free so that loops calling it vectorise.
inline float expApprox(float x) {
  x = std::min(std::max(x, -87.0f), 88.3762626647950f);
  // n = round(x / ln 2) by the 1.5 * 2^23 trick: std::floor does not vectorise without -fno-trapping-math.
  constexpr float kRound = 12582912.0f;
  float fx = (x * 1.44269504088896341f + kRound) - kRound;
  float r = x - fx * 0.693359375f;
  r = r - fx * -2.12194440e-4f;
  float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(fx) + 127) << 23;
  // __builtin_bit_cast (GCC >= 11, Clang >= 9) rather than memcpy: the memcpy through a local blocks GCC's
  // vectoriser.
  return y * __builtin_bit_cast(float, bits);
}

inline float sigmoidF(float x) { return 1.0f / (1.0f + expApprox(-x)); }
/// torch.nn.functional.elu (alpha = 1); fast-transformers adds 1 in a separate op.
inline float eluF(float x) { return x > 0.0f ? x : expApprox(x) - 1.0f; }

//===----------------------------------------------------------------------===//
// Memory of the intermediates
//===----------------------------------------------------------------------===//

/// How `allocate` serves the intermediates until the next call (set by each reference entry point; reference
/// calls are not run concurrently).
void setMemory(ReferenceMemory memory);
/// Uninitialised memory for `count` floats, 64-byte aligned: a cached block of that size when the memory mode
/// is `Cached` and one is free, else fresh from the C library.
float *acquireBlock(size_t count);
/// Gives a block back: kept for reuse (`Cached`) or freed (`Fresh`).
void releaseBlock(float *block, size_t count);

/// A materialised intermediate: owns uninitialised memory (untouched until the op writes it, like
/// `torch.empty`), or views the caller's output buffer when it is the last op (the tensor an eager call
/// would return).
class Tensor {
public:
  Tensor() = default;
  Tensor(float *ptr, size_t count, bool owned) : ptr(ptr), count(count), owned(owned) {}
  Tensor(Tensor &&other) noexcept : ptr(other.ptr), count(other.count), owned(other.owned) {
    other.ptr = nullptr;
    other.owned = false;
  }
  Tensor &operator=(Tensor &&other) noexcept {
    if (this != &other) {
      reset();
      std::swap(ptr, other.ptr);
      std::swap(count, other.count);
      std::swap(owned, other.owned);
    }
    return *this;
  }
  ~Tensor() { reset(); }

  float *data() const { return ptr; }
  /// Drops the tensor, as rebinding a Python name does.
  void reset() {
    if (owned && ptr)
      releaseBlock(ptr, count);
    ptr = nullptr;
    owned = false;
  }

private:
  float *ptr = nullptr;
  size_t count = 0;
  bool owned = false;
};

inline Tensor allocate(size_t count, float *into = nullptr) {
  if (into)
    return Tensor(into, count, /*owned=*/false);
  return Tensor(acquireBlock(count), count, /*owned=*/true);
}

//===----------------------------------------------------------------------===//
// Eager tensor ops, every one parallel over the S slices
//===----------------------------------------------------------------------===//

/// out = f(x), elementwise over S slices of `len` elements.
template <typename F>
Tensor map(ForkJoinPool &pool, const float *x, int64_t slices, int64_t len, F f, float *into = nullptr) {
  Tensor out = allocate(slices * len, into);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * len, e = end * len; i < e; ++i)
      o[i] = f(x[i]);
  });
  return out;
}

/// out = f(x, y), elementwise, same shapes.
template <typename F>
Tensor zip(ForkJoinPool &pool, const float *x, const float *y, int64_t slices, int64_t len, F f,
           float *into = nullptr) {
  Tensor out = allocate(slices * len, into);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * len, e = end * len; i < e; ++i)
      o[i] = f(x[i], y[i]);
  });
  return out;
}

/// out[s, l, w] = f(x[s, l, w], r[s, l]): a per-position scalar broadcast along the last dim (`r[...,
/// None]`).
template <typename F>
Tensor broadcastRows(ForkJoinPool &pool, const float *x, const float *r, int64_t slices, int64_t len, int64_t width,
                     F f, float *into = nullptr) {
  Tensor out = allocate(slices * len * width, into);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin * len; row < end * len; ++row) {
      float scalar = r[row];
      for (int64_t w = 0; w < width; ++w)
        o[row * width + w] = f(x[row * width + w], scalar);
    }
  });
  return out;
}

/// out[s, l] = f(x[s, l], seq[l]): a [L] vector broadcast over the slices (`x * normal[None, None, :]`).
template <typename F>
Tensor broadcastSeq(ForkJoinPool &pool, const float *x, const float *seq, int64_t slices, int64_t len, F f) {
  Tensor out = allocate(slices * len);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s)
      for (int64_t l = 0; l < len; ++l)
        o[s * len + l] = f(x[s * len + l], seq[l]);
  });
  return out;
}

/// x.sum(dim=2): [S, L, W] -> [S, W].
inline Tensor sumSeq(ForkJoinPool &pool, const float *x, int64_t slices, int64_t len, int64_t width) {
  Tensor out = allocate(slices * width);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      float *dst = o + s * width;
      std::fill(dst, dst + width, 0.0f);
      for (int64_t l = 0; l < len; ++l) {
        const float *src = x + (s * len + l) * width;
        for (int64_t w = 0; w < width; ++w)
          dst[w] += src[w];
      }
    }
  });
  return out;
}

/// x.cumsum(dim=2), inclusive: [S, L, W] -> [S, L, W].
inline Tensor cumsumSeq(ForkJoinPool &pool, const float *x, int64_t slices, int64_t len, int64_t width) {
  Tensor out = allocate(slices * len * width);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const float *src = x + s * len * width;
      float *dst = o + s * len * width;
      std::copy(src, src + width, dst);
      for (int64_t l = 1; l < len; ++l)
        for (int64_t w = 0; w < width; ++w)
          dst[l * width + w] = dst[(l - 1) * width + w] + src[l * width + w];
    }
  });
  return out;
}

/// einsum("nhld,nhd->nhl"): [S, L, W] · [S, W] -> [S, L].
inline Tensor dotVec(ForkJoinPool &pool, const float *x, const float *y, int64_t slices, int64_t len, int64_t width) {
  Tensor out = allocate(slices * len);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s)
      for (int64_t l = 0; l < len; ++l) {
        const float *row = x + (s * len + l) * width;
        const float *vec = y + s * width;
        float acc = 0;
        for (int64_t w = 0; w < width; ++w)
          acc += row[w] * vec[w];
        o[s * len + l] = acc;
      }
  });
  return out;
}

/// einsum("nhld,nhld->nhl"): [S, L, W] · [S, L, W] -> [S, L].
inline Tensor dotRows(ForkJoinPool &pool, const float *x, const float *y, int64_t slices, int64_t len, int64_t width) {
  Tensor out = allocate(slices * len);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin * len; row < end * len; ++row) {
      float acc = 0;
      for (int64_t w = 0; w < width; ++w)
        acc += x[row * width + w] * y[row * width + w];
      o[row] = acc;
    }
  });
  return out;
}

/// einsum("nhld,nhlm->nhdm"), the state Kᵀ V: [S, L, D] x [S, L, E] -> [S, D, E].
inline Tensor contractSeq(ForkJoinPool &pool, const float *k, const float *v, int64_t slices, int64_t len, int64_t d,
                          int64_t e) {
  Tensor out = allocate(slices * d * e);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      float *__restrict st = o + s * d * e;
      std::fill(st, st + d * e, 0.0f);
      for (int64_t l = 0; l < len; ++l) {
        const float *kr = k + (s * len + l) * d;
        const float *vr = v + (s * len + l) * e;
        for (int64_t i = 0; i < d; ++i) {
          float ki = kr[i];
          for (int64_t j = 0; j < e; ++j)
            st[i * e + j] += ki * vr[j];
        }
      }
    }
  });
  return out;
}

/// einsum("nhld,nhdm->nhlm"), the read-out Q S: [S, L, D] x [S, D, E] -> [S, L, E].
inline Tensor readOut(ForkJoinPool &pool, const float *q, const float *state, int64_t slices, int64_t len, int64_t d,
                      int64_t e) {
  Tensor out = allocate(slices * len * e);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const float *st = state + s * d * e;
      for (int64_t l = 0; l < len; ++l) {
        const float *qr = q + (s * len + l) * d;
        float *__restrict orow = o + (s * len + l) * e;
        std::fill(orow, orow + e, 0.0f);
        for (int64_t i = 0; i < d; ++i) {
          float qi = qr[i];
          for (int64_t j = 0; j < e; ++j)
            orow[j] += qi * st[i * e + j];
        }
      }
    }
  });
  return out;
}

/// einsum("nhld,nhlm->nhldm"), every position's outer product: [S, L, D] x [S, L, E] -> [S, L, D, E].
inline Tensor outerRows(ForkJoinPool &pool, const float *k, const float *v, int64_t slices, int64_t len, int64_t d,
                        int64_t e) {
  Tensor out = allocate(static_cast<size_t>(slices) * len * d * e);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin * len; row < end * len; ++row)
      for (int64_t i = 0; i < d; ++i) {
        float ki = k[row * d + i];
        for (int64_t j = 0; j < e; ++j)
          o[(row * d + i) * e + j] = ki * v[row * e + j];
      }
  });
  return out;
}

/// einsum("nhld,nhldm->nhlm"), each position against its own state: [S, L, D] x [S, L, D, E] -> [S, L, E].
inline Tensor readOutRows(ForkJoinPool &pool, const float *q, const float *states, int64_t slices, int64_t len,
                          int64_t d, int64_t e) {
  Tensor out = allocate(slices * len * e);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin * len; row < end * len; ++row) {
      float *__restrict orow = o + row * e;
      std::fill(orow, orow + e, 0.0f);
      for (int64_t i = 0; i < d; ++i) {
        float qi = q[row * d + i];
        const float *st = states + (row * d + i) * e;
        for (int64_t j = 0; j < e; ++j)
          orow[j] += qi * st[j];
      }
    }
  });
  return out;
}

/// torch.softmax(x, dim=-1) on [S, L]: one fused op in eager frameworks too (max, exp-sum, divide).
inline Tensor softmaxLast(ForkJoinPool &pool, const float *x, int64_t slices, int64_t len) {
  Tensor out = allocate(slices * len);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const float *row = x + s * len;
      float *dst = o + s * len;
      float maxValue = -std::numeric_limits<float>::infinity();
      for (int64_t l = 0; l < len; ++l)
        maxValue = std::max(maxValue, row[l]);
      float sum = 0;
      for (int64_t l = 0; l < len; ++l) {
        dst[l] = expApprox(row[l] - maxValue);
        sum += dst[l];
      }
      float inv = 1.0f / sum;
      for (int64_t l = 0; l < len; ++l)
        dst[l] *= inv;
    }
  });
  return out;
}

inline auto addConst(float c) {
  return [c](float x) { return x + c; };
}
inline auto mulConst(float c) {
  return [c](float x) { return x * c; };
}
inline const auto reciprocal = [](float x) { return 1.0f / x; };
inline const auto sigmoid = [](float x) { return sigmoidF(x); };
inline const auto elu = [](float x) { return eluF(x); }; // a lambda, not a function pointer, so it inlines
inline const auto mul = [](float x, float y) { return x * y; };
inline const auto divide = [](float x, float y) { return x / y; };

} // namespace la::bench::eager

#endif // LA_BENCH_EAGEROPS_H
