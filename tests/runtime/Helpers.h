//===- Helpers.h - shared pieces of the runtime concurrency tests -*- C++ -*-===//
//
// Seeded inputs for the small kernels the tests compile, a start barrier that releases every thread at once
// (so they really race for the same cache slot or file), and a look at what a disk-cache directory holds.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TESTS_RUNTIME_HELPERS_H
#define LA_TESTS_RUNTIME_HELPERS_H

#include "la/runtime/Runtime.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace la::test {

inline std::string kernelPath(llvm::StringRef file) { return std::string(LA_KERNELS_DIR) + "/" + file.str(); }

/// The three [B, H, N, D] arguments of linear_attention / flow_attention, uniform(-1, 1) from `seed`.
struct AttentionInputs {
  AttentionInputs(int64_t b, int64_t h, int64_t n, int64_t d, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (auto &values : data) {
      values.resize(b * h * n * d);
      for (float &value : values)
        value = uniform(generator);
      TensorSpec spec;
      spec.shape = {b, h, n, d};
      refs.push_back(TensorRef{values.data(), spec});
    }
  }
  AttentionInputs(const AttentionInputs &) = delete;

  std::vector<float> data[3];
  std::vector<TensorRef> refs;
};

/// Bitwise equality of two results: same spec and same bytes (the kernels are deterministic, so any
/// difference means a wrong kernel or a torn entry, not rounding).
inline bool sameBits(const HostTensor &a, const HostTensor &b) {
  return a.spec() == b.spec() && a.numBytes() == b.numBytes() && std::memcmp(a.data(), b.data(), a.numBytes()) == 0;
}

/// Blocks every caller until `count` have arrived, then lets them all go together.
class StartLine {
public:
  explicit StartLine(unsigned count) : waiting(count) {}
  void arriveAndWait() {
    std::unique_lock lock(mutex);
    if (--waiting == 0) {
      released.notify_all();
      return;
    }
    released.wait(lock, [&] { return waiting == 0; });
  }

private:
  std::mutex mutex;
  std::condition_variable released;
  unsigned waiting;
};

/// The names of the files in `directory` (not recursive).
inline std::vector<std::string> listFiles(llvm::StringRef directory) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end; it != end && !ec; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  return names;
}

/// Removes `directory` and everything in it.
inline void removeTree(llvm::StringRef directory) { llvm::sys::fs::remove_directories(directory); }

} // namespace la::test

#endif // LA_TESTS_RUNTIME_HELPERS_H
