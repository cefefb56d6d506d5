//===- Subscripts.h - einsum-like subscript strings -------------*- C++ -*-===//
//
// `la.contract` and the broadcasting form of `la.map` name the dimensions of their operands with strings such
// as "bhnd,bhmd->bhnm". This is the one parser and query helper for them.
//
//===----------------------------------------------------------------------===//

#ifndef LA_IR_SUBSCRIPTS_H
#define LA_IR_SUBSCRIPTS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::la {

/// A parsed subscript string: one term per input and one for the result.
struct Subscripts {
  SmallVector<std::string> inputs;
  std::string result;

  /// Parses "ab,bc->ac". Letters are 'a'-'z', distinct within a term; an empty term is a rank-0 operand.
  /// The error message names the offending term and character.
  static llvm::Expected<Subscripts> parse(StringRef text);

  /// Prints back to the canonical "ab,bc->ac" form.
  std::string str() const;

  /// Letters that occur in some input but not in the result, in first-occurrence order.
  std::string contractedLetters() const;

  /// Letters present in every input and in the result (the batch dimensions), in result order.
  std::string batchLetters() const;
};

} // namespace mlir::la

#endif // LA_IR_SUBSCRIPTS_H
