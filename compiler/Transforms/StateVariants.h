//===- StateVariants.h - prefill and resume variants of a causal entry -*- C++ -*-===//
//
// The derivation behind la-derive-state-variants (LADeriveStateVariants.cpp), for callers that want a variant
// the kernel file does not declare (`lac run --variant`).
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_STATEVARIANTS_H
#define LA_TRANSFORMS_STATEVARIANTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::la {

enum class StateVariant { Prefill, Resume };

/// "prefill" or "resume".
StringRef getStateVariantName(StateVariant variant);

/// A derived variant: a new public function beside its source, and where each state comes from.
struct DerivedStateVariant {
  func::FuncOp function;
  /// One per state, in signature order: the scan that carries it.
  SmallVector<Location> stateLocations;
};

/// Builds `variant` of the causal `source` as a new function `name` inserted before `source`: prefill takes
/// the source's arguments, resume those and then one state per scan along the sequence; both return the
/// source's results, then each scan's state after the last position. Emits an error at the op that makes
/// `source` non-causal, and fails.
FailureOr<DerivedStateVariant> deriveStateVariant(func::FuncOp source, StateVariant variant, StringRef name,
                                                  SymbolTable &symbols);

} // namespace mlir::la

#endif // LA_TRANSFORMS_STATEVARIANTS_H
