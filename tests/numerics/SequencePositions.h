//===- SequencePositions.h - cut a tensor along its sequence -*- C++ -*-===//
//
// Shared by the tests that run a causal kernel in pieces (prefill, resumes, decode steps) and compare the
// pieces with one run over the whole sequence.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TESTS_NUMERICS_SEQUENCEPOSITIONS_H
#define LA_TESTS_NUMERICS_SEQUENCEPOSITIONS_H

#include "la/runtime/Tensor.h"

namespace la::test {

/// Positions [begin, end) of a tensor whose sequence is dimension `seq` ([B, H, T, ...] by default).
inline HostTensor positions(const HostTensor &tensor, int64_t begin, int64_t end, size_t seq = 2) {
  TensorSpec spec = tensor.spec();
  int64_t length = spec.shape[seq], outer = 1, inner = 1;
  for (size_t d = 0; d < spec.shape.size(); ++d)
    (d < seq ? outer : inner) *= d == seq ? 1 : spec.shape[d];
  spec.shape[seq] = end - begin;
  HostTensor piece(spec);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = begin; t < end; ++t)
      for (int64_t i = 0; i < inner; ++i)
        piece.set((o * (end - begin) + (t - begin)) * inner + i, tensor.get((o * length + t) * inner + i));
  return piece;
}

/// The sizes of an argument of rank `rank` whose sequence is dimension `seq`: [B, H, T, W, ...] for `seq` = 2,
/// [B·H, T, W, ...] for `seq` = 1 (AFT's [B, T, d]); a lower rank takes the leading sizes.
inline llvm::SmallVector<int64_t, 4> sequenceShape(size_t rank, size_t seq, int64_t batch, int64_t heads,
                                                   int64_t length, int64_t width) {
  llvm::SmallVector<int64_t, 4> shape(rank);
  for (size_t d = 0; d < rank; ++d)
    shape[d] = d == seq ? length : d > seq ? width : seq == 1 ? batch * heads : d == 0 ? batch : heads;
  return shape;
}

} // namespace la::test

#endif // LA_TESTS_NUMERICS_SEQUENCEPOSITIONS_H
