//===- LibraryReference.h - Unfused eager-style AFT, GAU/FLASH and decay baselines -*- C++ -*-===//
//
// The SPEC §3-§5 formulas run the way PyTorch eager runs them (EagerOps.h: one parallel loop nest per
// tensor op, every intermediate materialised), in float32 like the kernels, on the same ForkJoinPool and
// thread count:
//   - AFT as the paper's equations: causal and simple with a global max subtracted before exp, aft_local
//     as SPEC §3's global sums plus a band-masked dense [T, T] matrix product (what `torch.matmul` with a
//     masked bias does), aft_full as SPEC §7's [B, T, T, d] joint softmax (aft_full_causal: −inf at
//     t' > t), aft_conv as SPEC §3's global sums plus two depthwise F.conv2d's (groups = h·c, padding 3) of
//     e^K ⊙ V and e^K with e^{w} − 1;
//   - GAU and FLASH as lucidrains/FLASH-pytorch's `GAU` and `FLASH` forward after the projections: dense
//     relu² scores, chunks as a [B, G, c, ·] reshape, causal chunk states by cumsum and shift;
//   - retention / simple GLA / GLA in fla's chunked torch form (chunk 64): a decay-masked score tile per
//     chunk, the per-chunk states by a sequential scan over chunks; GLA's per-key decay through
//     q ⊙ e^{b} and k ⊙ e^{−b} inside a chunk (b the in-chunk cumsum of the log-gates).
// Not reentrant: run one reference call at a time.
//
// No MLIR dependency (LLVM only for ForkJoinPool.h's threads): this file is part of the `LABenchSupport`
// library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_LIBRARYREFERENCE_H
#define LA_BENCH_LIBRARYREFERENCE_H

#include "LibraryKernels.h"
#include "Reference.h"

#include <string>
#include <vector>

namespace la::bench {

/// Bytes of the largest single tensor the reference materialises ([B, T, T, d] for aft_full, the [B, N, N]
/// scores for gau, ...), to compare with --reference-limit-gib.
double libraryReferenceLargestTensorBytes(LibraryKernel kernel, const LibraryShape &shape);
/// About the most memory the reference holds at once.
double libraryReferencePeakBytes(LibraryKernel kernel, const LibraryShape &shape);
/// Why the reference cannot run at this shape (the chunked forms reshape T into whole chunks, as the eager
/// code does after padding), or empty.
std::string libraryReferenceUnsupported(LibraryKernel kernel, const LibraryShape &shape);

/// Runs the unfused reference: `args` in the order of libraryArguments(), `out` shaped like
/// libraryOutputShape().
void runLibraryReference(LibraryKernel kernel, const LibraryShape &shape, const std::vector<const float *> &args,
                         float *out, ForkJoinPool &pool, ReferenceMemory memory = ReferenceMemory::Cached);

} // namespace la::bench

#endif // LA_BENCH_LIBRARYREFERENCE_H
