//===- EmulatorLibdeviceTest.cpp - Host libdevice math and the ABI symbol table ===//
//
// Every libdevice function of Libdevice.def against a wider-precision <cmath> reference (f32 against
// double, f64 against long double) on ordinary values and on NaN, infinities, signed zeros and subnormals:
// within 2 ulp, exactly where the operation is exact. The semantics that are libdevice's own (rsqrt, abs,
// powi, the NaN rules of fmax/fmin, round vs rint) against the values it specifies, and a check that every
// row of the .def is tested here. Then the symbol table a JIT binds: unique names, non-null addresses, every
// libdevice row and every function declared in ABI.h (read from the header's text).
//
//===----------------------------------------------------------------------===//
#include "EmulatorTestUtil.h"
#include "LibdeviceDecls.h"

#include "la/emulator/Libdevice.h"
#include "la/emulator/Symbols.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include "gmock/gmock.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

using namespace la::emu;
using namespace la::emu::test;

namespace {

// The distance between two finite values of one sign in units in the last place (adjacent floats have
// adjacent bit patterns).
template <typename T> uint64_t ulpDistance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  return x > y ? x - y : y - x;
}

// `got` is `want` (rounded to T from a wider reference) within `ulps`; NaN matches any NaN, and zeros and
// infinities must match exactly, sign included.
template <typename T> bool closeTo(T got, T want, uint64_t ulps) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got);
  if (want == 0 || got == 0 || std::isinf(want) || std::isinf(got) || std::signbit(want) != std::signbit(got))
    return std::memcmp(&got, &want, sizeof(T)) == 0;
  return ulpDistance(got, want) <= ulps;
}

template <typename T> std::vector<T> testValues() {
  const T inf = std::numeric_limits<T>::infinity(), tiny = std::numeric_limits<T>::denorm_min() * 5;
  std::vector<T> values = {std::numeric_limits<T>::quiet_NaN(), -inf, inf, T(-0.0), T(0), -tiny, tiny};
  for (double v : {-100.0, -3.5, -2.5, -1.0, -0.75, -0.5, -1e-3, 1e-3, 0.5, 0.75, 1.0, 1.5, 2.5, 3.5, 10.0, 100.0})
    values.push_back(T(v));
  return values;
}

// One math op: its f32 function, its f64 function (null for the fast variants, which are f32 only) and a
// reference that both precisions instantiate one size wider. `ulps`: how far from the rounded reference the
// result may be (0 where the operation is exact).
struct Unary {
  const char *name32, *name64;
  float (*f32)(float);
  double (*f64)(double);
  double (*ref32)(double);
  long double (*ref64)(long double);
  uint64_t ulps;
};

#define LA_REF(EXPR) [](auto x) { return EXPR; }
#define LA_UNARY(F32, F64, EXPR, ULPS) {#F32, #F64, &F32, &F64, LA_REF(EXPR), LA_REF(EXPR), ULPS}
#define LA_UNARY_F32(F32, EXPR, ULPS) {#F32, nullptr, &F32, nullptr, LA_REF(EXPR), nullptr, ULPS}

const Unary kUnary[] = {
    LA_UNARY(__nv_fabsf, __nv_fabs, std::fabs(x), 0),
    LA_UNARY(__nv_acosf, __nv_acos, std::acos(x), 2),
    LA_UNARY(__nv_acoshf, __nv_acosh, std::acosh(x), 2),
    LA_UNARY(__nv_asinf, __nv_asin, std::asin(x), 2),
    LA_UNARY(__nv_asinhf, __nv_asinh, std::asinh(x), 2),
    LA_UNARY(__nv_atanf, __nv_atan, std::atan(x), 2),
    LA_UNARY(__nv_atanhf, __nv_atanh, std::atanh(x), 2),
    LA_UNARY(__nv_cbrtf, __nv_cbrt, std::cbrt(x), 2),
    LA_UNARY(__nv_ceilf, __nv_ceil, std::ceil(x), 0),
    LA_UNARY(__nv_cosf, __nv_cos, std::cos(x), 2),
    LA_UNARY_F32(__nv_fast_cosf, std::cos(x), 2),
    LA_UNARY(__nv_coshf, __nv_cosh, std::cosh(x), 2),
    LA_UNARY(__nv_erff, __nv_erf, std::erf(x), 2),
    LA_UNARY(__nv_erfcf, __nv_erfc, std::erfc(x), 2),
    LA_UNARY(__nv_expf, __nv_exp, std::exp(x), 2),
    LA_UNARY_F32(__nv_fast_expf, std::exp(x), 2),
    LA_UNARY(__nv_exp2f, __nv_exp2, std::exp2(x), 2),
    LA_UNARY(__nv_expm1f, __nv_expm1, std::expm1(x), 2),
    LA_UNARY(__nv_floorf, __nv_floor, std::floor(x), 0),
    LA_UNARY(__nv_logf, __nv_log, std::log(x), 2),
    LA_UNARY_F32(__nv_fast_logf, std::log(x), 2),
    LA_UNARY(__nv_log10f, __nv_log10, std::log10(x), 2),
    LA_UNARY_F32(__nv_fast_log10f, std::log10(x), 2),
    LA_UNARY(__nv_log1pf, __nv_log1p, std::log1p(x), 2),
    LA_UNARY(__nv_log2f, __nv_log2, std::log2(x), 2),
    LA_UNARY_F32(__nv_fast_log2f, std::log2(x), 2),
    LA_UNARY(__nv_roundf, __nv_round, std::round(x), 0),
    LA_UNARY(__nv_rintf, __nv_rint, std::rint(x), 0),
    LA_UNARY(__nv_rsqrtf, __nv_rsqrt, decltype(x)(1) / std::sqrt(x), 2),
    LA_UNARY(__nv_sinf, __nv_sin, std::sin(x), 2),
    LA_UNARY_F32(__nv_fast_sinf, std::sin(x), 2),
    LA_UNARY(__nv_sinhf, __nv_sinh, std::sinh(x), 2),
    LA_UNARY(__nv_sqrtf, __nv_sqrt, std::sqrt(x), 0),
    LA_UNARY(__nv_tanf, __nv_tan, std::tan(x), 2),
    LA_UNARY_F32(__nv_fast_tanf, std::tan(x), 2),
    LA_UNARY(__nv_tanhf, __nv_tanh, std::tanh(x), 2),
};

TEST(EmulatorLibdevice, UnaryFunctionsMatchAWiderReference) {
  for (const Unary &u : kUnary) {
    for (float x : testValues<float>()) {
      float got = u.f32(x), want = float(u.ref32(double(x)));
      EXPECT_TRUE(closeTo(got, want, u.ulps)) << u.name32 << "(" << x << ") = " << got << ", want " << want;
    }
    if (!u.f64)
      continue;
    for (double x : testValues<double>()) {
      double got = u.f64(x), want = double(u.ref64((long double)x));
      EXPECT_TRUE(closeTo(got, want, u.ulps)) << u.name64 << "(" << x << ") = " << got << ", want " << want;
    }
  }
}

struct Binary {
  const char *name32, *name64;
  float (*f32)(float, float);
  double (*f64)(double, double);
  double (*ref32)(double, double);
  long double (*ref64)(long double, long double);
  uint64_t ulps;
  // fmax/fmin of +0 and -0 may give either zero (arith.maxnumf/minnumf allow both; so does C).
  bool eitherZero = false;

  template <typename T> bool check(T x, T y, T got, T want) const {
    if (eitherZero && x == 0 && y == 0)
      return got == 0;
    return closeTo(got, want, ulps);
  }
};

#define LA_REF2(EXPR) [](auto x, auto y) { return EXPR; }
#define LA_BINARY(F32, F64, EXPR, ...) {#F32, #F64, &F32, &F64, LA_REF2(EXPR), LA_REF2(EXPR), __VA_ARGS__}
#define LA_BINARY_F32(F32, EXPR, ULPS) {#F32, nullptr, &F32, nullptr, LA_REF2(EXPR), nullptr, ULPS}

const Binary kBinary[] = {
    LA_BINARY(__nv_fmodf, __nv_fmod, std::fmod(x, y), 0),
    LA_BINARY(__nv_fmaxf, __nv_fmax, std::fmax(x, y), 0, /*eitherZero=*/true),
    LA_BINARY(__nv_fminf, __nv_fmin, std::fmin(x, y), 0, /*eitherZero=*/true),
    LA_BINARY(__nv_atan2f, __nv_atan2, std::atan2(x, y), 2),
    LA_BINARY(__nv_copysignf, __nv_copysign, std::copysign(x, y), 0),
    LA_BINARY(__nv_powf, __nv_pow, std::pow(x, y), 2),
    LA_BINARY_F32(__nv_fast_powf, std::pow(x, y), 2),
};

TEST(EmulatorLibdevice, BinaryFunctionsMatchAWiderReference) {
  for (const Binary &b : kBinary) {
    for (float x : testValues<float>())
      for (float y : testValues<float>()) {
        float got = b.f32(x, y), want = float(b.ref32(double(x), double(y)));
        EXPECT_TRUE(b.check(x, y, got, want))
            << b.name32 << "(" << x << ", " << y << ") = " << got << ", want " << want;
      }
    if (!b.f64)
      continue;
    for (double x : testValues<double>())
      for (double y : testValues<double>()) {
        double got = b.f64(x, y), want = double(b.ref64((long double)x, (long double)y));
        EXPECT_TRUE(b.check(x, y, got, want))
            << b.name64 << "(" << x << ", " << y << ") = " << got << ", want " << want;
      }
  }
}

// The classification tests return an i32 that is a boolean: only zero / non-zero counts.
struct Classification {
  const char *name32, *name64;
  int32_t (*f32)(float);
  int32_t (*f64)(double);
  bool (*ref32)(float);
  bool (*ref64)(double);
};

#define LA_CLASSIFICATION(F32, F64, EXPR) {#F32, #F64, &F32, &F64, LA_REF(EXPR), LA_REF(EXPR)}

const Classification kClassifications[] = {
    LA_CLASSIFICATION(__nv_finitef, __nv_isfinited, bool(std::isfinite(x))),
    LA_CLASSIFICATION(__nv_isinff, __nv_isinfd, bool(std::isinf(x))),
    LA_CLASSIFICATION(__nv_isnanf, __nv_isnand, bool(std::isnan(x))),
};

TEST(EmulatorLibdevice, ClassificationsAreNonZeroExactlyWhenTrue) {
  for (const Classification &c : kClassifications) {
    for (float x : testValues<float>())
      EXPECT_EQ(c.f32(x) != 0, c.ref32(x)) << c.name32 << "(" << x << ")";
    for (double x : testValues<double>())
      EXPECT_EQ(c.f64(x) != 0, c.ref64(x)) << c.name64 << "(" << x << ")";
  }
  EXPECT_NE(__nv_isinff(-INFINITY), 0);
  EXPECT_EQ(__nv_finitef(NAN), 0);
  EXPECT_NE(__nv_finitef(-0.0f), 0);
  EXPECT_NE(__nv_isnand(-NAN), 0);
}

// The functions the tests below check one by one, each with its own semantics.
const char *const kCheckedOneByOne[] = {"__nv_fmaf", "__nv_fma",     "__nv_powif",        "__nv_powi",
                                        "__nv_abs",  "__nv_sincosf", "__nv_fast_sincosf", "__nv_sincos"};

TEST(EmulatorLibdevice, FmaRoundsOnce) {
  // (1 + 2^-23)(1 - 2^-23) = 1 - 2^-46: rounded before the add it is 1, and the sum 0.
  float e = std::ldexp(1.0f, -23);
  EXPECT_EQ(__nv_fmaf(1 + e, 1 - e, -1.0f), -std::ldexp(1.0f, -46));
  double d = std::ldexp(1.0, -52);
  EXPECT_EQ(__nv_fma(1 + d, 1 - d, -1.0), -std::ldexp(1.0, -104));
  EXPECT_EQ(__nv_fmaf(2.0f, 3.0f, 1.0f), 7.0f);
  EXPECT_TRUE(std::isnan(__nv_fmaf(INFINITY, 0.0f, 1.0f)));
  EXPECT_TRUE(std::isnan(__nv_fma(1.0, 1.0, NAN)));
  for (float x : testValues<float>())
    for (float y : testValues<float>())
      EXPECT_TRUE(closeTo(__nv_fmaf(x, y, 0.5f), std::fma(x, y, 0.5f), 0)) << x << " " << y;
}

TEST(EmulatorLibdevice, PowiTakesAnIntegerExponent) {
  for (int32_t n : {-3, -2, -1, 0, 1, 2, 3, 10, 31}) {
    for (float x : testValues<float>()) {
      float got = __nv_powif(x, n), want = float(std::pow(double(x), double(n)));
      EXPECT_TRUE(closeTo(got, want, 2)) << "powif(" << x << ", " << n << ") = " << got << ", want " << want;
    }
    for (double x : testValues<double>()) {
      double got = __nv_powi(x, n), want = double(std::pow((long double)x, (long double)n));
      EXPECT_TRUE(closeTo(got, want, 2)) << "powi(" << x << ", " << n << ") = " << got << ", want " << want;
    }
  }
  EXPECT_EQ(__nv_powif(NAN, 0), 1.0f); // x^0 is 1 for every x
  EXPECT_EQ(__nv_powif(-2.0f, 3), -8.0f);
  EXPECT_EQ(__nv_powif(-0.0f, -1), -INFINITY);
  EXPECT_EQ(__nv_powi(2.0, -2), 0.25);
}

TEST(EmulatorLibdevice, AbsWrapsAtIntMin) {
  EXPECT_EQ(__nv_abs(-5), 5);
  EXPECT_EQ(__nv_abs(7), 7);
  EXPECT_EQ(__nv_abs(0), 0);
  EXPECT_EQ(__nv_abs(INT_MAX), INT_MAX);
  EXPECT_EQ(__nv_abs(-INT_MAX), INT_MAX);
  EXPECT_EQ(__nv_abs(INT_MIN), INT_MIN); // abs.s32: the negation wraps
}

TEST(EmulatorLibdevice, SincosStoresBothResults) {
  for (auto *fn : {&__nv_sincosf, &__nv_fast_sincosf})
    for (float x : testValues<float>()) {
      float s = 42, c = 42;
      fn(x, &s, &c);
      EXPECT_TRUE(closeTo(s, float(std::sin(double(x))), 2)) << "sin " << x;
      EXPECT_TRUE(closeTo(c, float(std::cos(double(x))), 2)) << "cos " << x;
    }
  for (double x : testValues<double>()) {
    double sc[3] = {42, 42, 42};
    __nv_sincos(x, &sc[0], &sc[1]);
    EXPECT_TRUE(closeTo(sc[0], double(std::sin((long double)x)), 2)) << "sin " << x;
    EXPECT_TRUE(closeTo(sc[1], double(std::cos((long double)x)), 2)) << "cos " << x;
    EXPECT_EQ(sc[2], 42) << "wrote past its outputs";
  }
  float s, c;
  __nv_sincosf(-0.0f, &s, &c);
  EXPECT_TRUE(s == 0 && std::signbit(s) && c == 1);
}

// The values libdevice (and C's Annex F, which it follows) specifies where a result could go either way.
TEST(EmulatorLibdevice, SpecialValuesAreLibdevices) {
  auto same = [](float got, float want) { return closeTo(got, want, 0); };
  const float inf = INFINITY;
  // rsqrt: 1/sqrt(x), including its signed zero and infinity.
  EXPECT_TRUE(same(__nv_rsqrtf(4.0f), 0.5f));
  EXPECT_TRUE(same(__nv_rsqrtf(0.0f), inf));
  EXPECT_TRUE(same(__nv_rsqrtf(-0.0f), -inf));
  EXPECT_TRUE(same(__nv_rsqrtf(inf), 0.0f));
  EXPECT_TRUE(std::isnan(__nv_rsqrtf(-1.0f)));
  EXPECT_EQ(__nv_rsqrt(0.25), 2.0);
  // fmax/fmin (arith.maxnumf/minnumf): a NaN operand gives the other one; NaN only if both are.
  EXPECT_EQ(__nv_fmaxf(NAN, 1.0f), 1.0f);
  EXPECT_EQ(__nv_fmaxf(-1.0f, NAN), -1.0f);
  EXPECT_EQ(__nv_fminf(NAN, 1.0f), 1.0f);
  EXPECT_EQ(__nv_fmin(2.0, NAN), 2.0);
  EXPECT_TRUE(std::isnan(__nv_fmaxf(NAN, NAN)));
  EXPECT_EQ(__nv_fmaxf(-inf, 3.0f), 3.0f);
  // round: halves away from zero; rint (math.roundeven): halves to even.
  EXPECT_EQ(__nv_roundf(2.5f), 3.0f);
  EXPECT_EQ(__nv_roundf(-2.5f), -3.0f);
  EXPECT_TRUE(same(__nv_roundf(-0.4f), -0.0f));
  EXPECT_EQ(__nv_rintf(2.5f), 2.0f);
  EXPECT_EQ(__nv_rintf(3.5f), 4.0f);
  EXPECT_TRUE(same(__nv_rintf(-0.5f), -0.0f));
  EXPECT_EQ(__nv_round(0.5), 1.0);
  EXPECT_EQ(__nv_rint(0.5), 0.0);
  // fmod (arith.remf): the sign of the dividend, NaN for a zero divisor.
  EXPECT_EQ(__nv_fmodf(-5.0f, 3.0f), -2.0f);
  EXPECT_EQ(__nv_fmodf(5.0f, -3.0f), 2.0f);
  EXPECT_TRUE(same(__nv_fmodf(-0.0f, 1.0f), -0.0f));
  EXPECT_TRUE(std::isnan(__nv_fmodf(1.0f, 0.0f)));
  EXPECT_TRUE(std::isnan(__nv_fmod(inf, 1.0)));
  // Signed zeros and infinities of the elementary functions.
  EXPECT_TRUE(same(__nv_sqrtf(-0.0f), -0.0f));
  EXPECT_TRUE(same(__nv_expf(-inf), 0.0f));
  EXPECT_TRUE(same(__nv_expm1f(-0.0f), -0.0f));
  EXPECT_TRUE(same(__nv_logf(0.0f), -inf));
  EXPECT_TRUE(same(__nv_log1pf(-1.0f), -inf));
  EXPECT_TRUE(std::isnan(__nv_logf(-1.0f)));
  EXPECT_TRUE(same(__nv_tanhf(-inf), -1.0f));
  EXPECT_TRUE(same(__nv_tanhf(-0.0f), -0.0f));
  EXPECT_TRUE(same(__nv_erfcf(-inf), 2.0f));
  EXPECT_TRUE(same(__nv_cbrtf(-8.0f), -2.0f));
  EXPECT_TRUE(same(__nv_atan2f(0.0f, -0.0f), float(M_PI)));
  EXPECT_TRUE(same(__nv_atan2f(-0.0f, -0.0f), -float(M_PI)));
  EXPECT_TRUE(same(__nv_copysignf(1.0f, -0.0f), -1.0f));
  EXPECT_TRUE(same(__nv_powf(NAN, 0.0f), 1.0f));
  EXPECT_TRUE(same(__nv_powf(1.0f, NAN), 1.0f));
  EXPECT_TRUE(same(__nv_powf(-0.0f, -3.0f), -inf));
  EXPECT_TRUE(same(__nv_ceilf(-0.5f), -0.0f));
  EXPECT_TRUE(same(__nv_fabsf(-0.0f), 0.0f));
}

// A row added to Libdevice.def needs a check here.
TEST(EmulatorLibdevice, EveryRowOfTheDefIsTested) {
  std::set<std::string> tested(std::begin(kCheckedOneByOne), std::end(kCheckedOneByOne));
  auto add = [&](const char *name32, const char *name64) {
    tested.insert(name32);
    if (name64)
      tested.insert(name64);
  };
  for (const Unary &u : kUnary)
    add(u.name32, u.name64);
  for (const Binary &b : kBinary)
    add(b.name32, b.name64);
  for (const Classification &c : kClassifications)
    add(c.name32, c.name64);
  std::set<std::string> rows;
  for (const LibdeviceFunction &f : libdeviceFunctions())
    EXPECT_TRUE(rows.insert(f.name).second) << "duplicate row " << f.name;
  EXPECT_EQ(tested, rows);
}

TEST(EmulatorLibdevice, TypedTableHasTheDefsSignatures) {
  EXPECT_EQ(libdeviceFunctions().size(), 92u); // MLIR 22's populateLibDeviceConversionPatterns
  const LibdeviceFunction *expf = findLibdeviceFunction("__nv_expf");
  ASSERT_NE(expf, nullptr);
  EXPECT_EQ(expf->result, LibdeviceType::F32);
  EXPECT_THAT(expf->paramTypes(), ::testing::ElementsAre(LibdeviceType::F32));
  const LibdeviceFunction *powi = findLibdeviceFunction("__nv_powi");
  ASSERT_NE(powi, nullptr);
  EXPECT_EQ(powi->result, LibdeviceType::F64);
  EXPECT_THAT(powi->paramTypes(), ::testing::ElementsAre(LibdeviceType::F64, LibdeviceType::I32));
  const LibdeviceFunction *sincos = findLibdeviceFunction("__nv_fast_sincosf");
  ASSERT_NE(sincos, nullptr);
  EXPECT_EQ(sincos->result, LibdeviceType::Void);
  EXPECT_THAT(sincos->paramTypes(), ::testing::ElementsAre(LibdeviceType::F32, LibdeviceType::Ptr, LibdeviceType::Ptr));
  const LibdeviceFunction *isnanf = findLibdeviceFunction("__nv_isnanf");
  ASSERT_NE(isnanf, nullptr);
  EXPECT_EQ(isnanf->result, LibdeviceType::I32);
  EXPECT_EQ(findLibdeviceFunction("__nv_frexpf"), nullptr); // libdevice has it; MLIR never calls it
  EXPECT_EQ(libdeviceTypeName(LibdeviceType::Ptr), "ptr");
  // A result has the first parameter's type but for the i32 tests (isnan, ...) and sincos (void).
  for (const LibdeviceFunction &f : libdeviceFunctions()) {
    ASSERT_GE(f.numParams, 1u) << f.name;
    ASSERT_LE(f.numParams, LibdeviceFunction::kMaxParams) << f.name;
    if (f.result != LibdeviceType::Void && f.result != LibdeviceType::I32) {
      EXPECT_EQ(f.result, f.params[0]) << f.name;
    }
  }
}

// The functions run inside a launch as anywhere else (on a fiber's stack).
TEST(EmulatorLibdevice, CallableFromAKernel) {
  std::vector<float> out(64);
  LaunchConfig config;
  config.block = {64, 1, 1};
  config.buffers = {buffer("out", out)};
  LaunchReport report = run(
      [o = out.data()] {
        uint32_t t = __la_emu_tid_x();
        float s, c;
        __nv_sincosf(float(t) * 0.1f, &s, &c);
        stGlobal(o + t, __nv_expf(-float(t)) + s * s + c * c, "libdevice.mlir:3:5");
      },
      config);
  ASSERT_TRUE(report.clean()) << text(report);
  for (uint32_t t = 0; t < 64; ++t)
    EXPECT_NEAR(out[t], std::exp(-double(t)) + 1.0, 1e-6) << t;
}

} // namespace

namespace {

std::set<std::string> declaredInABIHeader() {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> header = llvm::MemoryBuffer::getFile(LA_EMULATOR_ABI_HEADER_PATH);
  if (!header) {
    ADD_FAILURE() << "cannot read " << LA_EMULATOR_ABI_HEADER_PATH;
    return {};
  }
  // A declaration is the name followed by its parameter list; comments name functions without one.
  llvm::Regex declaration("(__la_emu_[A-Za-z0-9_]+)[[:space:]]*\\(");
  std::set<std::string> names;
  llvm::StringRef text = (*header)->getBuffer();
  llvm::SmallVector<llvm::StringRef, 2> match;
  while (declaration.match(text, &match)) {
    names.insert(match[1].str());
    text = text.substr(match[0].data() + match[0].size() - text.data());
  }
  return names;
}

// The names of `a` missing from `b`, for a failure message that names them.
std::string missing(const std::set<std::string> &a, const std::set<std::string> &b) {
  std::string names;
  for (const std::string &name : a)
    if (!b.count(name))
      names += " " + name;
  return names;
}

TEST(EmulatorSymbols, NamesAreUniqueAndAddressesNonNull) {
  std::set<std::string> seen;
  for (const Symbol &s : abiSymbols()) {
    EXPECT_TRUE(seen.insert(s.name).second) << "duplicate " << s.name;
    EXPECT_NE(s.address, nullptr) << s.name;
  }
}

TEST(EmulatorSymbols, HasEveryFunctionOfABIHeader) {
  std::set<std::string> declared = declaredInABIHeader();
  EXPECT_GE(declared.size(), 40u) << "ABI.h parsed wrongly";
  std::set<std::string> listed;
  for (const Symbol &s : abiSymbols())
    if (llvm::StringRef(s.name).starts_with("__la_emu_"))
      listed.insert(s.name);
  EXPECT_EQ(listed, declared) << "not in abiSymbols():" << missing(declared, listed)
                              << "; not in ABI.h:" << missing(listed, declared);
}

TEST(EmulatorSymbols, HasEveryLibdeviceFunction) {
  std::set<std::string> listed;
  for (const Symbol &s : abiSymbols())
    if (llvm::StringRef(s.name).starts_with("__nv_"))
      listed.insert(s.name);
  std::set<std::string> rows;
  for (const LibdeviceFunction &f : libdeviceFunctions())
    rows.insert(f.name);
  EXPECT_EQ(listed, rows) << "not in abiSymbols():" << missing(rows, listed);
  EXPECT_EQ(abiSymbols().size(), declaredInABIHeader().size() + rows.size()) << "a name of neither kind";
}

TEST(EmulatorSymbols, AddressesAreTheFunctions) {
  auto address = [](llvm::StringRef name) -> void * {
    for (const Symbol &s : abiSymbols())
      if (name == s.name)
        return s.address;
    return nullptr;
  };
  EXPECT_EQ(address("__la_emu_barrier0"), reinterpret_cast<void *>(&__la_emu_barrier0));
  auto *expf = reinterpret_cast<float (*)(float)>(address("__nv_expf"));
  ASSERT_NE(expf, nullptr);
  EXPECT_EQ(expf(0.0f), 1.0f);
  auto *powi = reinterpret_cast<double (*)(double, int32_t)>(address("__nv_powi"));
  ASSERT_NE(powi, nullptr);
  EXPECT_EQ(powi(3.0, 3), 27.0);
}

} // namespace
