//===- ContractionDims.h - batch/m/n/k roles of a la.contract's letters -*- C++ -*-===//
//
// Lowering and rewrites of `la.contract` ask the same questions of its letters: which are batch dimensions
// (in every operand), which come from one side only (m from the first input, n from the others), and which
// are summed (k). This is the one place that answers them. Two-input matrix products are classified by
// upstream `linalg::inferContractionDims` over the subscripts' indexing maps, as linalg classifies its own
// contractions; outer products (nothing summed) and three-input contractions, which it does not cover, by the
// same rule here.
//
//===----------------------------------------------------------------------===//
#ifndef LA_ANALYSIS_CONTRACTIONDIMS_H
#define LA_ANALYSIS_CONTRACTIONDIMS_H

#include "LA/IR/LAOps.h"

#include <string>

namespace mlir::la {

/// The letters of a contraction by role, each in the order of getLetters() (result letters, then summed).
struct ContractionDims {
  std::string batch; ///< in every input and in the result
  std::string m;     ///< in the result and the first input, not in every input
  std::string n;     ///< in the result and some later input only
  std::string k;     ///< summed: in some input, not in the result

  bool isBatch(char letter) const { return StringRef(batch).contains(letter); }
  bool isReduction(char letter) const { return StringRef(k).contains(letter); }
};

/// Classifies the letters of `subscripts` (a contraction of two or three inputs).
ContractionDims inferContractionDims(SubscriptsAttr subscripts);

} // namespace mlir::la

#endif // LA_ANALYSIS_CONTRACTIONDIMS_H
