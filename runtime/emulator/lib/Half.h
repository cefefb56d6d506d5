//===- Half.h - f16 and bf16 bit conversions ------------------------------===//
//
// The emulator moves f16/bf16 values as bits (as PTX registers hold them) and computes in f32: every f16 and
// bf16 value is exact in f32, and so is the product of two of them.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIB_HALF_H
#define LA_EMULATOR_LIB_HALF_H

#include <cstdint>
#include <cstring>

namespace la::emu {

inline float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) // inf / nan
    return bitsToFloat(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) { // zero / subnormal: mant * 2^-24
    float f = float(mant) * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// Round to nearest even, with overflow to infinity.
inline uint16_t floatToHalf(float f) {
  uint32_t x = floatToBits(f), sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx > 0x7f800000) // nan
    return sign | 0x7e00;
  if (absx >= 0x477ff000) // rounds to >= 65520: inf
    return sign | 0x7c00;
  if (absx < 0x38800000) { // below the smallest normal: a subnormal step of 2^-24
    float scaled = bitsToFloat(absx) * 16777216.0f;
    // Round to nearest even through the FPU's current (default nearest-even) mode.
    uint32_t m = uint32_t(__builtin_nearbyintf(scaled));
    return sign | m;
  }
  uint32_t rounded = absx + 0xfff + ((absx >> 13) & 1);
  return sign | ((rounded - (112u << 23)) >> 13);
}

inline float bf16ToFloat(uint16_t h) { return bitsToFloat(uint32_t(h) << 16); }
inline uint16_t floatToBF16(float f) {
  uint32_t x = floatToBits(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (x >> 16) | 0x40;
  return (x + 0x7fff + ((x >> 16) & 1)) >> 16;
}

} // namespace la::emu

#endif // LA_EMULATOR_LIB_HALF_H
