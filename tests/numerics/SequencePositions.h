//===- SequencePositions.h - cut a [B, H, T, ...] tensor along T -*- C++ -*-===//
//
// Shared by the tests that run a causal kernel in pieces (prefill, resumes, decode steps) and compare the
// pieces with one run over the whole sequence.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TESTS_NUMERICS_SEQUENCEPOSITIONS_H
#define LA_TESTS_NUMERICS_SEQUENCEPOSITIONS_H

#include "la/runtime/Tensor.h"

namespace la::test {

/// Positions [begin, end) of a [B, H, T, ...] tensor.
inline HostTensor positions(const HostTensor &tensor, int64_t begin, int64_t end) {
  TensorSpec spec = tensor.spec();
  int64_t length = spec.shape[2], outer = spec.shape[0] * spec.shape[1], inner = 1;
  for (size_t d = 3; d < spec.shape.size(); ++d)
    inner *= spec.shape[d];
  spec.shape[2] = end - begin;
  HostTensor piece(spec);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = begin; t < end; ++t)
      for (int64_t i = 0; i < inner; ++i)
        piece.set((o * (end - begin) + (t - begin)) * inner + i, tensor.get((o * length + t) * inner + i));
  return piece;
}

} // namespace la::test

#endif // LA_TESTS_NUMERICS_SEQUENCEPOSITIONS_H
