//===- FuzzNpy.cpp - libFuzzer target for the .npy reader -----------------===//
//
// `la::parseNpy` reads files from anywhere (lac --input, the tests, Python), so every byte sequence must
// give either a tensor or an error, never a crash or an oversized allocation. Beyond what the sanitizers
// see, a successful parse must be consistent (the data size matches the shape) and a fixed point of the
// writer (`npyHeader` + data parses back to the same tensor). Each input is read three ways, since
// `reinterpretU2As` is the caller's choice and not part of the file.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Npy.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstring>
#include <optional>

using namespace la;

namespace {

/// Aborts with a message when a property of the reader does not hold (libFuzzer records the input).
void check(bool condition, const char *what) {
  if (condition)
    return;
  fprintf(stderr, "la-fuzz-npy: invariant violated: %s\n", what);
  abort();
}

bool sameTensor(const HostTensor &a, const HostTensor &b) {
  return a.spec() == b.spec() && a.numBytes() == b.numBytes() &&
         (a.numBytes() == 0 || std::memcmp(a.data(), b.data(), a.numBytes()) == 0);
}

/// Parses `bytes` with `reinterpretU2As` and checks what a successful parse promises.
std::optional<HostTensor> parseAndCheck(llvm::StringRef bytes, std::optional<DType> reinterpretU2As) {
  llvm::Expected<HostTensor> tensor = parseNpy(bytes, "<fuzz>", reinterpretU2As);
  if (!tensor) {
    std::string message = llvm::toString(tensor.takeError());
    check(llvm::StringRef(message).starts_with("<fuzz>: "), "an error message does not start with the name");
    return std::nullopt;
  }
  const TensorSpec &spec = tensor->spec();
  for (int64_t dim : spec.shape)
    check(dim >= 0, "a negative dimension was accepted");
  check(spec.numElements() <= kNpyMaxElements, "more elements than kNpyMaxElements");
  check(tensor->numBytes() == spec.numBytes(), "storage size differs from the shape's");
  // The data is the tail of the file, so it cannot be larger than the input.
  check(tensor->numBytes() <= bytes.size(), "more data than the input holds");
  check(spec.dtype != DType::BF16 || reinterpretU2As == DType::BF16, "bf16 without asking for it");
  if (tensor->numBytes() != 0)
    check(std::memcmp(bytes.data() + bytes.size() - tensor->numBytes(), tensor->data(), tensor->numBytes()) == 0,
          "the data is not the tail of the file");

  // Written back as the writer does, it must read as the same tensor.
  std::string file = npyHeader(spec);
  file.append(static_cast<const char *>(tensor->data()), tensor->numBytes());
  std::optional<DType> reread = spec.dtype == DType::BF16 ? std::optional<DType>(DType::BF16) : std::nullopt;
  llvm::Expected<HostTensor> again = parseNpy(file, "<fuzz-rewritten>", reread);
  if (!again) {
    fprintf(stderr, "%s\n", llvm::toString(again.takeError()).c_str());
    check(false, "the rewritten file does not parse");
  }
  check(sameTensor(*tensor, *again), "the rewritten file parses to a different tensor");
  return std::move(*tensor);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  std::optional<HostTensor> plain = parseAndCheck(bytes, std::nullopt);
  std::optional<HostTensor> bf16 = parseAndCheck(bytes, DType::BF16);
  std::optional<HostTensor> f16 = parseAndCheck(bytes, DType::F16);
  // `reinterpretU2As` only makes '<u2' files readable: whatever reads without it reads the same with it.
  if (plain) {
    check(bf16 && sameTensor(*plain, *bf16), "reinterpretU2As = bf16 changed a non-'<u2' file");
    check(f16 && sameTensor(*plain, *f16), "reinterpretU2As = f16 changed a non-'<u2' file");
  }
  // Both readings of a '<u2' file see the same bits.
  if (bf16 && f16)
    check(bf16->numBytes() == f16->numBytes() && bf16->shape() == f16->shape() &&
              (bf16->numBytes() == 0 || std::memcmp(bf16->data(), f16->data(), f16->numBytes()) == 0),
          "bf16 and f16 readings differ in their bits");
  return 0;
}
