//===- LibraryKernels.h - The AFT, GAU/FLASH and decay kernels la-bench times -*- C++ -*-===//
//
// What la-bench needs to know about the kernels of kernels/aft.mlir, kernels/flash.mlir and
// kernels/retention.mlir beyond their entry names: the shape of every argument (in the order of the
// `func.func` signature), how the benchmark fills it, and the output shape. The cost model is in
// LibraryCost.h, the unfused references in LibraryReference.h, the fp64 checks in OracleCheck.h.
//
// No MLIR or LLVM dependency: this file is part of the `LABenchSupport` library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_LIBRARYKERNELS_H
#define LA_BENCH_LIBRARYKERNELS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace la::bench {

/// The three families of the kernel library beyond flow/linear attention, one `.mlir` file each.
enum class LibraryFamily { Aft, Flash, Decay };

/// The benchmarked entries, named like their `func.func`.
enum class LibraryKernel {
  AftCausal,
  AftSimple,
  AftLocal,
  AftFull,
  AftFullCausal,
  AftConv,
  Gau,
  Flash,
  FlashCausal,
  Retention,
  SimpleGla,
  Gla,
};

/// The window of `aft_local` and the chunk of `flash`/`flash_causal`: the sizes of the kernels' masks
/// (`band(t, s, 64)`, `block(n, m, 256)`), which the references and the cost model must use too.
constexpr int64_t kAftLocalWindow = 64;
/// The s×s kernel of `aft_conv` (its `la.window ... size [7, 7]` and `!conv_kernel`), and the widest image
/// row `aftConvImage` picks.
constexpr int64_t kAftConvKernel = 7;
constexpr int64_t kAftConvMaxX = 32;
constexpr int64_t kFlashChunk = 256;
/// The chunk of the eager decay references (fla's `chunk_size = 64`) and of the decay cost model.
constexpr int64_t kDecayChunk = 64;

/// One problem size. What the fields mean depends on the family:
///   AFT:   q, k, v, out [b, t, d] (no heads; `e` unused); aft_conv: q, k, v, out [b, X, Y, h, d] with
///          X·Y = t (aftConvImage), w [h, 7, 7] (d = the paper's c, channels per head);
///   FLASH: u, v, out [b, t, e]; the query/key pairs [b, t, d] (d = the paper's s);
///   decay: q, k [b, h, t, d]; v, out [b, h, t, e] (d = K, e = V).
struct LibraryShape {
  int64_t b = 2, h = 1, t = 1024, d = 64, e = 64;
};

/// The X×Y image aft_conv runs at for T = X·Y positions: X the largest divisor of T not above 32 (32 for
/// every T the benchmark uses, so X = 32, Y = T/32), Y = T / X. torch_baseline.py's `aft_conv_image` is the
/// same rule.
struct AftConvImage {
  int64_t x, y;
};
AftConvImage aftConvImage(int64_t t);

/// How the benchmark fills an argument.
enum class Fill {
  /// torch.randn: normal, mean 0, std 1.
  Normal,
  /// F.logsigmoid(torch.randn(...)), the log-gates of fla's benchmarks: all < 0, mean about −0.8.
  LogSigmoidNormal,
};

struct LibraryArgument {
  std::string name;
  std::vector<int64_t> shape;
  Fill fill = Fill::Normal;
  int64_t count() const;
};

const char *libraryEntryName(LibraryKernel kernel);
LibraryFamily libraryFamily(LibraryKernel kernel);
/// "aft", "flash", "decay": the `--only` values and the JSON `family` field.
const char *libraryFamilyName(LibraryFamily family);
/// The kernel file of a family inside the kernels directory ("aft.mlir", "flash.mlir", "retention.mlir").
const char *libraryKernelFile(LibraryFamily family);
bool libraryIsCausal(LibraryKernel kernel);

/// The arguments of `kernel`, in signature order.
std::vector<LibraryArgument> libraryArguments(LibraryKernel kernel, const LibraryShape &shape);
/// The shape of the single result.
std::vector<int64_t> libraryOutputShape(LibraryKernel kernel, const LibraryShape &shape);
/// Fills `count` floats as `fill` says, from `seed`, so that runs (and the two sides of a parity pair)
/// compare.
void fillLibraryArgument(float *data, size_t count, Fill fill, uint64_t seed);
/// "B=2 T=1024 d=512" and the like, for the table.
std::string describeLibraryShape(LibraryKernel kernel, const LibraryShape &shape);

} // namespace la::bench

#endif // LA_BENCH_LIBRARYKERNELS_H
