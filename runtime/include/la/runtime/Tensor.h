//===- Tensor.h - Host tensors passed to and from kernels -------*- C++ -*-===//
//
// Kernels read and write dense row-major (C-order) tensors in host memory. A `TensorRef` is a non-owning
// view of the caller's buffer; `HostTensor` owns one (used by `lac`, tests and benchmarks).
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_TENSOR_H
#define LA_RUNTIME_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace la {

/// Element types a kernel argument may have. bf16 is stored as the upper 16 bits of an IEEE f32.
enum class DType : uint8_t { F16, BF16, F32, F64 };

/// "f16", "bf16", "f32", "f64".
llvm::StringRef dtypeName(DType dtype);
/// Parses the names printed by `dtypeName`; nullopt for anything else.
std::optional<DType> parseDType(llvm::StringRef name);
/// Bytes per element.
size_t dtypeSize(DType dtype);

/// The values an entry argument may hold, as its `#la.domain` declares them: either bound may be absent,
/// both are inclusive (a log-gate: max 0).
struct ValueDomain {
  std::optional<double> min, max;

  bool contains(double value) const { return (!min || value >= *min) && (!max || value <= *max); }
  /// "g ≤ 0.0", "0.0 ≤ x ≤ 1.0".
  std::string describe(llvm::StringRef name) const;
};

/// Where random test inputs of an argument are drawn: [-1, 1], cut to its declared domain (a log-gate ≤ 0
/// draws from [-1, 0]); a domain that misses [-1, 1] gives the width-2 interval at its bound.
std::pair<double, double> samplingInterval(const std::optional<ValueDomain> &domain);

/// Element type and shape of a tensor, without data.
struct TensorSpec {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;

  int64_t numElements() const;
  size_t numBytes() const { return static_cast<size_t>(numElements()) * dtypeSize(dtype); }
  /// The size in bytes, or nullopt when a dimension is negative or the size does not fit in int64_t (a zero
  /// dimension gives 0 whatever the others are, as in `numElements`). Check it before trusting a shape
  /// from outside.
  std::optional<int64_t> checkedNumBytes() const;
  /// "f32[2x8x4096x64]"; a -1 (dynamic) size prints as "?".
  std::string str() const;
  bool operator==(const TensorSpec &other) const { return dtype == other.dtype && shape == other.shape; }
  /// Whether every dimension is known (none is -1, the signature's `?`).
  bool hasStaticShape() const {
    return std::none_of(shape.begin(), shape.end(), [](int64_t size) { return size < 0; });
  }
};

/// A non-owning view of a dense C-order tensor in host memory.
struct TensorRef {
  void *data = nullptr;
  TensorSpec spec;
};

/// A dense C-order tensor that owns its (64-byte aligned) storage, zero-initialised.
class HostTensor {
public:
  HostTensor() = default;
  explicit HostTensor(TensorSpec spec);
  // `storage` points into `blocks`, so copies must re-point it at their own blocks, and a moved-from tensor
  // must not keep a view of storage it no longer owns. A default-constructed or moved-from tensor holds no
  // storage: data() is null and numBytes() is 0 (whatever its spec says), so it must not be read.
  HostTensor(const HostTensor &other);
  HostTensor(HostTensor &&other) noexcept;
  HostTensor &operator=(const HostTensor &other);
  HostTensor &operator=(HostTensor &&other) noexcept;

  const TensorSpec &spec() const { return tensorSpec; }
  DType dtype() const { return tensorSpec.dtype; }
  llvm::ArrayRef<int64_t> shape() const { return tensorSpec.shape; }
  int64_t numElements() const { return tensorSpec.numElements(); }
  void *data() { return storage.data(); }
  const void *data() const { return storage.data(); }
  TensorRef ref() { return TensorRef{data(), tensorSpec}; }
  /// Size of the data in bytes (`spec().numBytes()`).
  size_t numBytes() const { return storage.size(); }

  /// Element `i` (flat index) converted to double, for any dtype.
  double get(int64_t i) const;
  /// Stores `value` at flat index `i`, rounded to the tensor's dtype.
  void set(int64_t i, double value);

private:
  struct alignas(64) Block {
    std::byte bytes[64];
  };
  TensorSpec tensorSpec;
  std::vector<Block> blocks;
  llvm::MutableArrayRef<std::byte> storage;
};

/// Element `i` (flat index) of a view, converted to double, for any dtype.
double elementAt(const TensorRef &tensor, int64_t i);

/// IEEE half and bfloat16 conversions (round to nearest even), used by `HostTensor` and the `.npy` I/O.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

} // namespace la

#endif // LA_RUNTIME_TENSOR_H
