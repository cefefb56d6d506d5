//===- Libdevice.cpp - CUDA libdevice math on the host ---------------------===//
//
// MLIR lowers math.exp, math.sqrt, arith.remf, ... in GPU code to calls of CUDA's libdevice (`__nv_expf`,
// ...). An emulated kernel is host code, so it calls these definitions instead: each computes what libdevice
// documents with the host's <cmath>, which is not libdevice's code, so results may differ from a GPU's in
// the last bits (docs/gpu-emulator.md). The `__nv_fast_*` variants are the same accurate functions: a GPU's
// approximations are within a documented error of the exact result, and so is the host's.
//
// Every function is generated from its row of la/emulator/Libdevice.def; the helpers below are the HOST
// column's functions where libdevice's semantics are not one <cmath> call.
//
//===----------------------------------------------------------------------===//
#include "LibdeviceDecls.h"

#include <cmath>
#include <cstring>

namespace {

// 1/sqrt(x), from a correctly rounded square root (two roundings; libdevice's rsqrt is within 2 ulp too):
// rsqrt(+-0) = +-inf, rsqrt(+inf) = +0, rsqrt(x < 0) = NaN.
template <typename T> T rsqrt(T x) { return T(1) / std::sqrt(x); }

// x to an integer power, through pow on the exponent converted to x's type (exact for f64, and for f32 up
// to |n| = 2^24), so that pow's special cases hold: powi(x, 0) = 1 even for a NaN x.
template <typename T> T powi(T x, int32_t n) { return std::pow(x, T(n)); }

// libdevice's abs(INT_MIN) is INT_MIN (the negation wraps, as the GPU's abs.s32 does); std::abs would be
// undefined there.
int32_t absInt(int32_t x) { return x < 0 ? int32_t(0u - uint32_t(x)) : x; }

// sincos(x, &s, &c): the pointers are the caller's stack slots (allocas of the kernel's own fiber), typed by
// the call's precision; memcpy since the rewrite passes them as opaque pointers.
template <typename T> void sincos(T x, void *sinOut, void *cosOut) {
  T s = std::sin(x), c = std::cos(x);
  std::memcpy(sinOut, &s, sizeof(T));
  std::memcpy(cosOut, &c, sizeof(T));
}

} // namespace

extern "C" {
#define LA_EMU_LIBDEVICE(NAME, HOST, RESULT, ...)                                                                      \
  LA_EMU_CTYPE(RESULT) NAME(LA_EMU_PARAMS(__VA_ARGS__)) { return HOST(LA_EMU_ARGS(__VA_ARGS__)); }
#include "la/emulator/Libdevice.def"
}
