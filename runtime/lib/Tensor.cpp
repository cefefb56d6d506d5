//===- Tensor.cpp - Host tensors and 16-bit float conversions -------------===//
//
// The half and bfloat16 conversions are done on the bit patterns rather than with `_Float16`/F16C so that
// they behave the same on every host and compiler, and so that `HostTensor::set` can round a double to a
// 16-bit type exactly once (see `roundToOddFloat`).
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Tensor.h"

#include "llvm/Support/MathExtras.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

using namespace la;

llvm::StringRef la::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  }
  llvm_unreachable("unknown DType");
}

std::optional<DType> la::parseDType(llvm::StringRef name) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64})
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

size_t la::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
    return 4;
  case DType::F64:
    return 8;
  }
  llvm_unreachable("unknown DType");
}

int64_t TensorSpec::numElements() const {
  // A zero dim empties the tensor whatever the other dims are; checking for it first keeps a shape such as
  // (2^62, 4, 0), valid in NumPy, from overflowing on the way to 0.
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::optional<int64_t> TensorSpec::checkedNumBytes() const {
  if (llvm::any_of(shape, [](int64_t dim) { return dim < 0; }))
    return std::nullopt;
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t dim : shape)
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  return bytes;
}

std::string TensorSpec::str() const {
  std::string result = dtypeName(dtype).str();
  result += '[';
  // -1 is how signatures spell a dynamic size (EntrySignature); any other negative size is shown as it is.
  result += llvm::join(
      llvm::map_range(shape, [](int64_t dim) { return dim == -1 ? std::string("?") : std::to_string(dim); }), "x");
  result += ']';
  return result;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor::HostTensor(TensorSpec spec) : tensorSpec(std::move(spec)) {
  size_t bytes = tensorSpec.numBytes();
  // Value-initialising the blocks zero-fills them, which is the documented initial content.
  blocks.resize((bytes + sizeof(Block) - 1) / sizeof(Block));
  storage = llvm::MutableArrayRef<std::byte>(blocks.empty() ? nullptr : blocks.front().bytes, bytes);
}

HostTensor::HostTensor(const HostTensor &other) : tensorSpec(other.tensorSpec), blocks(other.blocks) {
  storage = llvm::MutableArrayRef<std::byte>(blocks.empty() ? nullptr : blocks.front().bytes, other.storage.size());
}

HostTensor::HostTensor(HostTensor &&other) noexcept
    : tensorSpec(std::move(other.tensorSpec)), blocks(std::move(other.blocks)), storage(other.storage) {
  // Leave `other` in the default-constructed state rather than viewing the blocks it handed over.
  other.tensorSpec = TensorSpec();
  other.blocks.clear();
  other.storage = {};
}

HostTensor &HostTensor::operator=(const HostTensor &other) {
  if (this != &other)
    *this = HostTensor(other);
  return *this;
}

HostTensor &HostTensor::operator=(HostTensor &&other) noexcept {
  if (this == &other)
    return *this;
  tensorSpec = std::move(other.tensorSpec);
  blocks = std::move(other.blocks);
  storage = other.storage;
  other.tensorSpec = TensorSpec();
  other.blocks.clear();
  other.storage = {};
  return *this;
}

namespace {
/// Loads a `T` from possibly unaligned memory (the flat index of an f64 tensor is always aligned, but
/// memcpy keeps this free of aliasing questions too).
template <typename T> T load(const std::byte *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T> void store(std::byte *p, T value) { std::memcpy(p, &value, sizeof(T)); }

/// Rounds `value` to float, but to the neighbour with an odd last bit whenever the conversion is inexact
/// (round-to-odd). Rounding that result to nearest-even in a format with at least two fewer significand
/// bits (half: 11, bfloat16: 8, float: 24) gives the same result as rounding `value` directly, which a
/// plain double -> float -> half cast does not: 1 + 2^-11 + 2^-40 would first become the tie 1 + 2^-11 and
/// then round down to 1 instead of up to 1 + 2^-10.
float roundToOddFloat(double value) {
  float rounded = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(rounded) == value)
    return rounded;
  uint32_t bits;
  std::memcpy(&bits, &rounded, sizeof(bits));
  if ((bits & 1) == 0) {
    // The other neighbour of `value` is one step towards it. This also turns an overflow to infinity into
    // FLT_MAX and an underflow to zero into the smallest subnormal, keeping the "inexact" information.
    rounded = std::nextafter(rounded, value > static_cast<double>(rounded) ? std::numeric_limits<float>::infinity()
                                                                           : -std::numeric_limits<float>::infinity());
  }
  return rounded;
}
} // namespace

double la::elementAt(const TensorRef &tensor, int64_t i) {
  assert(i >= 0 && i < tensor.spec.numElements() && "flat index out of range");
  const std::byte *p =
      static_cast<const std::byte *>(tensor.data) + static_cast<size_t>(i) * dtypeSize(tensor.spec.dtype);
  switch (tensor.spec.dtype) {
  case DType::F16:
    return halfToFloat(load<uint16_t>(p));
  case DType::BF16:
    return bfloat16ToFloat(load<uint16_t>(p));
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  }
  llvm_unreachable("unknown DType");
}

double HostTensor::get(int64_t i) const {
  return elementAt(TensorRef{const_cast<std::byte *>(storage.data()), tensorSpec}, i);
}

void HostTensor::set(int64_t i, double value) {
  assert(i >= 0 && i < numElements() && "flat index out of range");
  std::byte *p = storage.data() + static_cast<size_t>(i) * dtypeSize(dtype());
  switch (dtype()) {
  case DType::F16:
    return store(p, floatToHalf(roundToOddFloat(value)));
  case DType::BF16:
    return store(p, floatToBFloat16(roundToOddFloat(value)));
  case DType::F32:
    return store(p, static_cast<float>(value));
  case DType::F64:
    return store(p, value);
  }
  llvm_unreachable("unknown DType");
}

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint16_t la::floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t abs = bits & 0x7fffffff;

  if (abs >= 0x7f800000) {
    if (abs == 0x7f800000)
      return sign | 0x7c00;
    // NaN: keep it quiet and keep the top of the payload, as hardware conversions do.
    return sign | 0x7e00 | static_cast<uint16_t>((abs >> 13) & 0x3ff);
  }
  // 65520 is the midpoint between the largest half, 65504 (odd significand), and the next power of two,
  // so ties-to-even sends it and everything above to infinity.
  if (abs >= 0x477ff000)
    return sign | 0x7c00;

  if (abs >= 0x38800000) {
    // Normal half (>= 2^-14): rebias the exponent (127 -> 15) and round away 13 significand bits. A carry
    // out of the significand correctly bumps the exponent.
    uint32_t half = ((abs >> 23) - 112) << 10 | ((abs >> 13) & 0x3ff);
    uint32_t rest = abs & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }

  // Subnormal half: the result counts multiples of 2^-24. A float of exponent field e and significand m
  // (with the implicit bit) is m * 2^(e - 150), i.e. m * 2^(e - 126) multiples, so shift right by 126 - e.
  uint32_t exponent = abs >> 23;
  // Below 2^-25 (exponent field 102) everything rounds to zero; this also covers float subnormals.
  if (exponent < 102)
    return sign;
  uint32_t significand = (abs & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - exponent; // 14..24
  uint32_t half = significand >> shift;
  uint32_t rest = significand & ((1u << shift) - 1);
  uint32_t midpoint = 1u << (shift - 1);
  if (rest > midpoint || (rest == midpoint && (half & 1)))
    ++half; // May carry into the smallest normal, 0x0400, which is the right encoding.
  return sign | static_cast<uint16_t>(half);
}

float la::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t significand = bits & 0x3ff;
  if (exponent == 0x1f) // Infinity or NaN; the payload is kept.
    return floatFromBits(sign | 0x7f800000 | significand << 13);
  if (exponent == 0) {
    // Zero or subnormal: significand * 2^-24 is exact in float.
    float magnitude = static_cast<float>(significand) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return floatFromBits(sign | (exponent + 112) << 23 | significand << 13);
}

uint16_t la::floatToBFloat16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    // NaN: truncating could clear every payload bit and produce infinity, so force the quiet bit.
    return static_cast<uint16_t>(bits >> 16) | 0x0040;
  // Round to nearest even on the low 16 bits. Adding 0x7fff (+1 when the kept part is odd) carries into the
  // kept part exactly when the discarded part is above half, or is half and the kept part is odd. The carry
  // propagates into the exponent, which also rounds values above the largest bfloat16 to infinity.
  uint32_t roundingBias = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float la::bfloat16ToFloat(uint16_t bits) { return floatFromBits(static_cast<uint32_t>(bits) << 16); }

std::pair<double, double> la::samplingInterval(const std::optional<ValueDomain> &domain) {
  double low = -1.0, high = 1.0;
  if (!domain)
    return {low, high};
  if (domain->min)
    low = std::max(low, *domain->min);
  if (domain->max)
    high = std::min(high, *domain->max);
  if (low <= high)
    return {low, high};
  if (domain->min && domain->max)
    return {*domain->min, *domain->max};
  return domain->min ? std::make_pair(*domain->min, *domain->min + 2.0)
                     : std::make_pair(*domain->max - 2.0, *domain->max);
}
