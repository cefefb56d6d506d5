//===- NumericsCheck.h - compare kernel outputs with an fp64 reference -*- C++ -*-===//
//
// The numerics guard (`lac run --check`, `RuntimeOptions::checkNumerics`, `Runtime::checkNumerics`): the
// entry is run a second time as its fp64 reference, the same program with every floating-point type widened
// to f64 (`la-promote-to-f64`) and compiled without fusion, register tiling or approximate math, on the same
// inputs converted exactly to f64. Each output is then compared with the reference:
//
//   max |x − y|   and   relative RMS ‖x − y‖₂ / ‖y‖₂   (SPEC §7's measures, over positions where both are
//                                                      finite; ‖x − y‖₂ alone when y is all zeros)
//
// and every NaN or infinity in an output is counted, the first one reported by its multi-index. An output
// passes when its relative RMS error is within the tolerance of its dtype and it is finite wherever the
// reference is finite (a NaN the fp64 reference also produces comes from the inputs, not the kernel).
//
// What it catches: precision loss (half storage, approximate math, accumulation order), and code-generation
// faults in fusion, tiling and vectorisation. What it cannot catch: a mistake in the `la` program itself, or
// in the `la`-level rewrites (chunking of scans) that the reference shares; those are what the SPEC-derived
// oracles of tests/numerics are for.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_NUMERICSCHECK_H
#define LA_RUNTIME_NUMERICSCHECK_H

#include "la/runtime/Tensor.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace la {

/// The relative-RMS bound an output of `dtype` must meet: SPEC §7's fp32 bound for sequences up to 16K
/// (1e-4), its half-precision bound (5e-3) for f16/bf16, and 1e-9 for f64 (only summation order differs).
double checkTolerance(DType dtype);

/// One output against its reference.
struct OutputCheck {
  /// Result number in the entry's signature.
  unsigned result = 0;
  TensorSpec spec;
  double maxAbsError = 0;
  double relRmsError = 0;
  double tolerance = 0;
  /// NaN/Inf elements of the output, and the first one (row-major order) with its value.
  int64_t nonFinite = 0;
  std::optional<llvm::SmallVector<int64_t, 4>> firstNonFinite;
  double firstNonFiniteValue = 0;
  /// Output NaN/Inf where the reference is finite: the kernel's doing, not the inputs'.
  int64_t nonFiniteWhereReferenceFinite = 0;
  /// NaN/Inf elements of the fp64 reference itself (the inputs overflow even in double precision).
  int64_t referenceNonFinite = 0;

  bool passed() const { return nonFiniteWhereReferenceFinite == 0 && relRmsError <= tolerance; }
  /// "result #0 f32[1x2x9x8]: max |err| 2.4e-07, rel RMS 1.1e-07 (tolerance 1e-04): ok".
  std::string str() const;
  llvm::json::Value toJSON() const;
};

/// An input with values outside its argument's declared domain (`#la.domain`), where the kernel's
/// mathematics is not defined: outputs that are off may be the input's fault, not the kernel's.
struct DomainViolation {
  /// Argument number in the entry's signature.
  unsigned argument = 0;
  TensorSpec spec;
  ValueDomain domain;
  /// Elements outside the domain (NaN included), and the first one (row-major order) with its value.
  int64_t count = 0;
  llvm::SmallVector<int64_t, 4> firstIndex;
  double firstValue = 0;

  /// "argument #3 f32[2x8x64]: 512 values outside its domain x ≤ 0.0, the first 0.53 at [0, 0, 0]".
  std::string str() const;
  llvm::json::Value toJSON() const;
};

/// The elements of `input` outside `domain`; none when every element lies inside.
std::optional<DomainViolation> checkDomain(unsigned argument, const TensorRef &input, const ValueDomain &domain);

/// Every output of one call against the fp64 reference, after the inputs against their declared domains.
struct NumericsReport {
  std::vector<DomainViolation> inputs;
  std::vector<OutputCheck> outputs;

  /// No input outside its domain and every output within tolerance.
  bool passed() const;
  /// One line per input outside its domain, then one per output.
  std::string str() const;
  /// {"passed": bool, "inputs": [...], "outputs": [...]}.
  llvm::json::Value toJSON() const;
};

/// Compares `output` with `reference` (an f64 tensor of the same shape), to the tolerance of the output's dtype,
/// or of `inputPrecision` where that is coarser: an f32 output computed from f16 inputs (a variant's state,
/// kept in f32) is held to the half-precision bound, since the kernel may round its operands to the inputs'
/// type: the GPU's tensor cores do (linear_attention_causal.prefill on cuda-emu with f16 inputs returns its
/// f32 state at rel RMS 1.7e-4, over the f32 bound).
OutputCheck compareWithReference(unsigned result, const TensorRef &output, const TensorRef &reference,
                                 std::optional<DType> inputPrecision = std::nullopt);

/// The least precise dtype of `tensors` (by checkTolerance); none when there are none.
std::optional<DType> leastPreciseDType(llvm::ArrayRef<TensorRef> tensors);

} // namespace la

#endif // LA_RUNTIME_NUMERICSCHECK_H
