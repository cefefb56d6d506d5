//===- Npy.h - Read and write NumPy .npy files ------------------*- C++ -*-===//
//
// `lac`, the tests and the benchmarks exchange tensors with Python through NumPy's `.npy` format
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html). Only what kernels take is
// supported: little-endian, C-order (row-major) arrays of
//
//   '<f2' (f16), '<f4' (f32), '<f8' (f64), and '<u2' holding bfloat16 bit patterns (see below),
//
// in format versions 1.0, 2.0 and 3.0. Rank 0 and zero-size dimensions are valid.
//
// bfloat16 convention: NumPy has no bfloat16 type, and the raw two-byte void descr ('<V2') that
// extension types such as `ml_dtypes.bfloat16` can end up saved as says nothing about the element type, so
// '<V2' is rejected. A bfloat16 tensor is instead stored as its uint16 bit patterns, descr '<u2':
//
//   np.save("k.npy", k_bf16.view(np.uint16))           # writing from Python (ml_dtypes)
//   k_bf16 = np.load("k.npy").view(ml_dtypes.bfloat16) # reading in Python
//
// `writeNpy` writes bf16 tensors this way. A '<u2' file is read only when the caller says what the bits
// mean by passing `reinterpretU2As` (bf16, or f16 for half bit patterns); otherwise it is an error, since
// an integer tensor is not a valid kernel argument and silently treating it as floats would be wrong.
//
// Reading is defensive: every malformed file gives an `llvm::Error` whose message starts with the file
// (or buffer) name and says what is wrong, and no allocation is larger than the data actually present.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_NPY_H
#define LA_RUNTIME_NPY_H

#include "la/runtime/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace la {

/// Largest header a `.npy` file may declare. NumPy's own writer never needs more than a few hundred bytes
/// for the arrays supported here; the limit keeps a corrupt length from being trusted.
constexpr uint64_t kNpyMaxHeaderBytes = uint64_t(1) << 20;
/// Largest element count a `.npy` file may declare (2^34, 64 GiB of f32).
constexpr int64_t kNpyMaxElements = int64_t(1) << 34;

/// Reads the `.npy` file at `path` into a new tensor. `reinterpretU2As` (F16 or BF16) makes a '<u2' file
/// acceptable and gives the dtype its uint16 bit patterns are read as; it does not affect other descrs.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path, std::optional<DType> reinterpretU2As = std::nullopt);

/// Parses the complete contents of a `.npy` file held in memory. `name` (a path, or e.g. "<stdin>") starts
/// every error message. `reinterpretU2As` is as for `readNpy`.
llvm::Expected<HostTensor> parseNpy(llvm::StringRef bytes, llvm::StringRef name,
                                    std::optional<DType> reinterpretU2As = std::nullopt);

/// The header (magic, version, length and dict, padded to 64 bytes, exactly as `numpy.save` writes it)
/// that precedes the data of a `.npy` file for a tensor of `spec`. `spec` must have non-negative dims.
std::string npyHeader(const TensorSpec &spec);

/// Writes `tensor` to `path` as a `.npy` file (bf16 as '<u2', see above). The file is written to a
/// temporary file in the same directory and renamed over `path`, so readers never see a partial file and a
/// failed write leaves any previous file untouched.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

/// As above, for a view of the caller's buffer. Fails if the spec has negative dims or the data pointer is
/// null while the tensor is not empty.
llvm::Error writeNpy(llvm::StringRef path, const TensorRef &tensor);

} // namespace la

#endif // LA_RUNTIME_NPY_H
