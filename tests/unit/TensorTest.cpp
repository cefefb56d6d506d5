//===- TensorTest.cpp - HostTensor, TensorSpec and 16-bit float conversions ===//
//
// The half and bfloat16 conversions are checked against llvm::APFloat, an independent implementation of
// IEEE rounding: exhaustively for the 16-bit -> float direction and for every 16-bit value's neighbours in
// the other, plus pseudo-random floats and doubles.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Tensor.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace la;

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// `value` rounded to nearest-even in `semantics` by APFloat, as raw bits.
uint16_t apfloatRound(double value, const llvm::fltSemantics &semantics) {
  llvm::APFloat converted(value);
  bool losesInfo;
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(converted.bitcastToAPInt().getZExtValue());
}

double apfloatExtend(uint16_t bits, const llvm::fltSemantics &semantics) {
  llvm::APFloat value(semantics, llvm::APInt(16, bits));
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

bool isHalfNaN(uint16_t bits) { return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0; }
bool isBFloat16NaN(uint16_t bits) { return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0; }

} // namespace

//===----------------------------------------------------------------------===//
// DType and TensorSpec
//===----------------------------------------------------------------------===//

TEST(DType, NamesRoundTrip) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64})
    EXPECT_EQ(parseDType(dtypeName(dtype)), dtype);
  EXPECT_EQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(parseDType("f8"), std::nullopt);
  EXPECT_EQ(parseDType(""), std::nullopt);
  EXPECT_EQ(parseDType("F32"), std::nullopt);
}

TEST(DType, Sizes) {
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
}

TEST(TensorSpec, StrAndSizes) {
  TensorSpec spec{DType::F32, {2, 8, 4096, 64}};
  EXPECT_EQ(spec.str(), "f32[2x8x4096x64]");
  EXPECT_EQ(spec.numElements(), 2 * 8 * 4096 * 64);
  EXPECT_EQ(spec.numBytes(), size_t(2 * 8 * 4096 * 64 * 4));

  TensorSpec scalar{DType::BF16, {}};
  EXPECT_EQ(scalar.str(), "bf16[]");
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.numBytes(), 2u);

  TensorSpec empty{DType::F64, {3, 0, 5}};
  EXPECT_EQ(empty.str(), "f64[3x0x5]");
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_EQ(empty.numBytes(), 0u);

  EXPECT_EQ((TensorSpec{DType::F16, {int64_t(1) << 62, 4, 0}}).numElements(), 0);
  EXPECT_EQ((TensorSpec{DType::F16, {7}}).str(), "f16[7]");
  EXPECT_EQ(spec, (TensorSpec{DType::F32, {2, 8, 4096, 64}}));
  EXPECT_FALSE(spec == (TensorSpec{DType::F16, {2, 8, 4096, 64}}));
  EXPECT_FALSE(spec == (TensorSpec{DType::F32, {2, 8, 4096}}));
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

TEST(TensorSpec, CheckedNumBytes) {
  EXPECT_EQ((la::TensorSpec{la::DType::F32, {2, 3}}.checkedNumBytes()), 24);
  EXPECT_EQ((la::TensorSpec{la::DType::F16, {}}.checkedNumBytes()), 2);
  // A zero dimension empties the tensor before the other dimensions can overflow, as in NumPy.
  EXPECT_EQ((la::TensorSpec{la::DType::F64, {int64_t(1) << 62, 4, 0}}.checkedNumBytes()), 0);
  EXPECT_EQ((la::TensorSpec{la::DType::F32, {int64_t(1) << 61}}.checkedNumBytes()), std::nullopt);
  EXPECT_EQ((la::TensorSpec{la::DType::F32, {int64_t(1) << 60}}.checkedNumBytes()), int64_t(1) << 62);
  EXPECT_EQ((la::TensorSpec{la::DType::F32, {3, -1}}.checkedNumBytes()), std::nullopt);
}

TEST(HostTensor, ZeroInitialisedAndAligned) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    HostTensor tensor(TensorSpec{dtype, {3, 5, 7}});
    EXPECT_EQ(tensor.numElements(), 105);
    EXPECT_EQ(tensor.numBytes(), 105 * dtypeSize(dtype));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data()) % 64, 0u);
    const auto *bytes = static_cast<const unsigned char *>(tensor.data());
    for (size_t i = 0; i < tensor.numBytes(); ++i)
      ASSERT_EQ(bytes[i], 0) << "byte " << i;
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      ASSERT_EQ(tensor.get(i), 0.0);
  }
}

TEST(HostTensor, GetSetEveryDType) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    HostTensor tensor(TensorSpec{dtype, {2, 3}});
    // Values every dtype represents exactly.
    const double values[] = {0.0, -1.0, 0.5, 3.0, -256.0, 0.125};
    for (int64_t i = 0; i < 6; ++i)
      tensor.set(i, values[i]);
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(tensor.get(i), values[i]) << dtypeName(dtype).str() << " element " << i;
  }
}

TEST(HostTensor, SetRoundsToTheDType) {
  HostTensor f32(TensorSpec{DType::F32, {1}});
  f32.set(0, 0.1);
  EXPECT_EQ(f32.get(0), static_cast<double>(0.1f));
  float stored;
  std::memcpy(&stored, f32.data(), sizeof(stored));
  EXPECT_EQ(stored, 0.1f);

  HostTensor f16(TensorSpec{DType::F16, {1}});
  f16.set(0, 0.1);
  uint16_t bits;
  std::memcpy(&bits, f16.data(), sizeof(bits));
  EXPECT_EQ(bits, 0x2e66); // The half nearest 0.1 is 0.0999755859375.
  f16.set(0, 1e6);
  EXPECT_TRUE(std::isinf(f16.get(0)));

  HostTensor bf16(TensorSpec{DType::BF16, {1}});
  bf16.set(0, 1.0 / 3.0);
  std::memcpy(&bits, bf16.data(), sizeof(bits));
  EXPECT_EQ(bits, 0x3eab);

  HostTensor f64(TensorSpec{DType::F64, {1}});
  f64.set(0, 0.1);
  EXPECT_EQ(f64.get(0), 0.1);
}

// A double just above the midpoint of two halves must round up. Going through float first would land exactly
// on the midpoint and then round to even, i.e. down; `set` must round only once.
TEST(HostTensor, SetRoundsDoublesOnce) {
  HostTensor f16(TensorSpec{DType::F16, {1}});
  f16.set(0, 1.0 + 0x1p-11 + 0x1p-40);
  EXPECT_EQ(f16.get(0), 1.0 + 0x1p-10);
  f16.set(0, 1.0 + 0x1p-11); // The exact midpoint ties to even.
  EXPECT_EQ(f16.get(0), 1.0);
  f16.set(0, -(1.0 + 0x1p-11 + 0x1p-40));
  EXPECT_EQ(f16.get(0), -(1.0 + 0x1p-10));

  HostTensor bf16(TensorSpec{DType::BF16, {1}});
  bf16.set(0, 1.0 + 0x1p-8 + 0x1p-40);
  EXPECT_EQ(bf16.get(0), 1.0 + 0x1p-7);
  bf16.set(0, 1.0 + 0x1p-8);
  EXPECT_EQ(bf16.get(0), 1.0);

  // Random doubles, including ones far outside float's range, against APFloat's direct rounding.
  std::mt19937_64 rng(42);
  for (int n = 0; n < 200000; ++n) {
    uint64_t raw = rng();
    double value;
    std::memcpy(&value, &raw, sizeof(value));
    if (n % 2) // Half the samples near the 16-bit formats' ranges, where rounding is interesting.
      value = std::ldexp(std::ldexp(static_cast<double>(raw >> 11), -53) + 1.0, int(raw % 60) - 30) *
              ((raw >> 10) & 1 ? -1 : 1);
    if (std::isnan(value))
      continue;
    f16.set(0, value);
    bf16.set(0, value);
    uint16_t halfBits, bfloatBits;
    std::memcpy(&halfBits, f16.data(), 2);
    std::memcpy(&bfloatBits, bf16.data(), 2);
    ASSERT_EQ(halfBits, apfloatRound(value, llvm::APFloat::IEEEhalf())) << value;
    ASSERT_EQ(bfloatBits, apfloatRound(value, llvm::APFloat::BFloat())) << value;
  }
}

TEST(HostTensor, SetNaNAndInfinity) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    HostTensor tensor(TensorSpec{dtype, {3}});
    tensor.set(0, std::numeric_limits<double>::quiet_NaN());
    tensor.set(1, std::numeric_limits<double>::infinity());
    tensor.set(2, -std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isnan(tensor.get(0))) << dtypeName(dtype).str();
    EXPECT_EQ(tensor.get(1), std::numeric_limits<double>::infinity()) << dtypeName(dtype).str();
    EXPECT_EQ(tensor.get(2), -std::numeric_limits<double>::infinity()) << dtypeName(dtype).str();
  }
}

TEST(HostTensor, RankZeroAndEmpty) {
  HostTensor scalar(TensorSpec{DType::F64, {}});
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.numBytes(), 8u);
  scalar.set(0, 2.5);
  EXPECT_EQ(scalar.get(0), 2.5);

  HostTensor empty(TensorSpec{DType::F32, {4, 0}});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_EQ(empty.numBytes(), 0u);
  EXPECT_EQ(empty.shape(), llvm::ArrayRef<int64_t>({4, 0}));

  HostTensor none;
  EXPECT_EQ(none.numBytes(), 0u);
  EXPECT_EQ(none.data(), nullptr);
}

TEST(HostTensor, CopiesOwnTheirStorage) {
  HostTensor original(TensorSpec{DType::F32, {100}});
  for (int64_t i = 0; i < 100; ++i)
    original.set(i, static_cast<double>(i));

  HostTensor copy(original);
  EXPECT_NE(copy.data(), original.data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u);
  EXPECT_EQ(copy.spec(), original.spec());
  copy.set(5, -1.0);
  EXPECT_EQ(original.get(5), 5.0);
  EXPECT_EQ(copy.get(99), 99.0);

  HostTensor assigned(TensorSpec{DType::F16, {3}});
  assigned = original;
  EXPECT_NE(assigned.data(), original.data());
  EXPECT_EQ(assigned.spec(), original.spec());
  EXPECT_EQ(assigned.get(7), 7.0);
  assigned = *&assigned; // Self-assignment keeps the contents.
  EXPECT_EQ(assigned.get(7), 7.0);

  const void *storage = original.data();
  HostTensor moved(std::move(original));
  EXPECT_EQ(moved.data(), storage); // Moving hands the storage over without copying.
  EXPECT_EQ(moved.get(42), 42.0);
  EXPECT_EQ(original.data(), nullptr); // NOLINT(bugprone-use-after-move): the documented moved-from state.
  EXPECT_EQ(original.numBytes(), 0u);

  HostTensor moveAssigned;
  moveAssigned = std::move(moved);
  EXPECT_EQ(moveAssigned.data(), storage);
  EXPECT_EQ(moveAssigned.get(42), 42.0);
  EXPECT_EQ(moved.data(), nullptr); // NOLINT(bugprone-use-after-move)

  TensorRef ref = moveAssigned.ref();
  EXPECT_EQ(ref.data, storage);
  EXPECT_EQ(ref.spec, moveAssigned.spec());
}

//===----------------------------------------------------------------------===//
// Half
//===----------------------------------------------------------------------===//

TEST(Half, SpecialValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);  // Largest finite half.
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff); // Just below the midpoint to infinity.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // The midpoint ties to even, which is infinity.
  EXPECT_EQ(floatToHalf(-65520.0f), 0xfc00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400); // Smallest normal.
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001); // Smallest subnormal.
  EXPECT_EQ(floatToHalf(-0x1p-24f), 0x8001);
  EXPECT_EQ(floatToHalf(0x3p-24f), 0x0003);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);        // Half the smallest subnormal ties to even (zero).
  EXPECT_EQ(floatToHalf(0x1.000002p-25f), 0x0001); // Just above it rounds up.
  EXPECT_EQ(floatToHalf(0x3p-25f), 0x0002);        // 1.5 ulp ties to even, 2.
  EXPECT_EQ(floatToHalf(0x1.ff8p-15f), 0x03ff);    // Largest subnormal.
  EXPECT_EQ(floatToHalf(0x1.ffcp-15f), 0x0400);    // Its midpoint to 2^-14 rounds up into the normals.
  EXPECT_EQ(floatToHalf(0x1p-30f), 0x0000);
  EXPECT_EQ(floatToHalf(-0x1p-30f), 0x8000);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);            // Tie, even is down.
  EXPECT_EQ(floatToHalf(1.0f + 0x3p-11f), 0x3c02);            // Tie, even is up.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); // Above the tie.

  EXPECT_EQ(halfToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x8000), 0.0f);
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x83ff), -0x3ffp-24f);
  EXPECT_EQ(halfToFloat(0x0400), 0x1p-14f);
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(Half, NaN) {
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01))); // Signalling NaN stays NaN.
  EXPECT_TRUE(std::isnan(halfToFloat(0xfe00)));
  EXPECT_TRUE(isHalfNaN(floatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(isHalfNaN(floatToHalf(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, 0x8000);
  // A float NaN whose payload lies entirely in the bits a half drops must not become infinity.
  EXPECT_TRUE(isHalfNaN(floatToHalf(floatOf(0x7f800001))));
  EXPECT_TRUE(isHalfNaN(floatToHalf(floatOf(0xff800001))));
}

TEST(Half, AllValuesMatchAPFloat) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    float value = halfToFloat(bits);
    if (isHalfNaN(bits)) {
      ASSERT_TRUE(std::isnan(value)) << std::hex << h;
      ASSERT_TRUE(isHalfNaN(floatToHalf(value))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(bitsOf(value), bitsOf(static_cast<float>(apfloatExtend(bits, llvm::APFloat::IEEEhalf()))))
        << std::hex << h;
    ASSERT_EQ(floatToHalf(value), bits) << std::hex << h;
    // The neighbouring floats, the midpoints to the next half and the floats either side of them probe
    // every rounding decision.
    float next = halfToFloat(static_cast<uint16_t>(h + 1));
    if ((h & 0x7fff) >= 0x7c00 || isHalfNaN(static_cast<uint16_t>(h + 1)) || (h & 0x7fff) == 0x7fff)
      next = value * 2.0f; // Past the largest finite half: probe the overflow region instead.
    float midpoint = static_cast<float>((static_cast<double>(value) + next) / 2);
    for (float probe : {std::nextafter(value, next), midpoint, std::nextafter(midpoint, value),
                        std::nextafter(midpoint, next), std::nextafter(value, -next)}) {
      if (std::isnan(probe))
        continue;
      ASSERT_EQ(floatToHalf(probe), apfloatRound(probe, llvm::APFloat::IEEEhalf()))
          << std::hexfloat << probe << " near half " << std::hex << h;
    }
  }
}

TEST(Half, RandomFloatsMatchAPFloat) {
  std::mt19937 rng(7);
  for (int n = 0; n < 1000000; ++n) {
    float value = floatOf(rng());
    if (std::isnan(value))
      continue;
    ASSERT_EQ(floatToHalf(value), apfloatRound(value, llvm::APFloat::IEEEhalf())) << std::hexfloat << value;
  }
}

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

TEST(BFloat16, SpecialValuesAndRounding) {
  EXPECT_EQ(floatToBFloat16(0.0f), 0x0000);
  EXPECT_EQ(floatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(-3.0f), 0xc040);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(floatToBFloat16(-std::numeric_limits<float>::infinity()), 0xff80);
  // Ties go to even; anything above a tie rounds up.
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f808000)), 0x3f80);
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f818000)), 0x3f82);
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f808001)), 0x3f81);
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f807fff)), 0x3f80);
  // Carry from the significand into the exponent, and past the largest finite value into infinity.
  EXPECT_EQ(floatToBFloat16(floatOf(0x3fffc000)), 0x4000);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBFloat16(floatOf(0x7f7f7fff)), 0x7f7f);
  // Subnormals round like everything else.
  EXPECT_EQ(floatToBFloat16(floatOf(0x00008000)), 0x0000);
  EXPECT_EQ(floatToBFloat16(floatOf(0x00018000)), 0x0002);
  EXPECT_EQ(floatToBFloat16(floatOf(0x80008001)), 0x8001);

  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(bfloat16ToFloat(0x0001), floatOf(0x00010000));
  EXPECT_TRUE(std::signbit(bfloat16ToFloat(0x8000)));
}

TEST(BFloat16, NaN) {
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7fc0)));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7f81)));
  EXPECT_TRUE(isBFloat16NaN(floatToBFloat16(std::numeric_limits<float>::quiet_NaN())));
  // Rounding or truncating this NaN's payload would give infinity (0x7f80) or overflow the exponent.
  EXPECT_TRUE(isBFloat16NaN(floatToBFloat16(floatOf(0x7f800001))));
  EXPECT_TRUE(isBFloat16NaN(floatToBFloat16(floatOf(0x7fffffff))));
  EXPECT_EQ(floatToBFloat16(floatOf(0xffffffff)) & 0x8000, 0x8000);
}

TEST(BFloat16, AllValuesMatchAPFloat) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    float value = bfloat16ToFloat(bits);
    if (isBFloat16NaN(bits)) {
      ASSERT_TRUE(std::isnan(value));
      ASSERT_TRUE(isBFloat16NaN(floatToBFloat16(value)));
      continue;
    }
    ASSERT_EQ(bitsOf(value), bitsOf(static_cast<float>(apfloatExtend(bits, llvm::APFloat::BFloat())))) << std::hex << b;
    ASSERT_EQ(floatToBFloat16(value), bits);
    // Every float whose top half is `bits` and whose low half is near a rounding boundary.
    for (uint32_t low : {0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      float probe = floatOf(static_cast<uint32_t>(bits) << 16 | low);
      if (std::isnan(probe))
        continue;
      ASSERT_EQ(floatToBFloat16(probe), apfloatRound(probe, llvm::APFloat::BFloat())) << std::hexfloat << probe;
    }
  }
}
