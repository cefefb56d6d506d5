//===- NumericsCheck.cpp - compare kernel outputs with an fp64 reference ---===//

#include "la/runtime/NumericsCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <cmath>

namespace la {
namespace {

/// The row-major multi-index of flat element `flat`.
llvm::SmallVector<int64_t, 4> multiIndex(llvm::ArrayRef<int64_t> shape, int64_t flat) {
  llvm::SmallVector<int64_t, 4> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

std::string indexText(llvm::ArrayRef<int64_t> index) {
  return "[" + llvm::join(llvm::map_range(index, [](int64_t i) { return std::to_string(i); }), ", ") + "]";
}

} // namespace

double checkTolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 5e-3;
  case DType::F32:
    return 1e-4;
  case DType::F64:
    return 1e-9;
  }
  return 0;
}

std::optional<DType> leastPreciseDType(llvm::ArrayRef<TensorRef> tensors) {
  std::optional<DType> least;
  for (const TensorRef &tensor : tensors)
    if (!least || checkTolerance(tensor.spec.dtype) > checkTolerance(*least))
      least = tensor.spec.dtype;
  return least;
}

OutputCheck compareWithReference(unsigned result, const TensorRef &output, const TensorRef &reference,
                                 std::optional<DType> inputPrecision) {
  assert(reference.spec.dtype == DType::F64 && reference.spec.shape == output.spec.shape &&
         "the reference is an f64 tensor of the output's shape");
  OutputCheck check;
  check.result = result;
  check.spec = output.spec;
  check.tolerance = checkTolerance(output.spec.dtype);
  if (inputPrecision)
    check.tolerance = std::max(check.tolerance, checkTolerance(*inputPrecision));
  double errorSquares = 0, referenceSquares = 0;
  int64_t n = output.spec.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double x = elementAt(output, i);
    double y = elementAt(reference, i);
    bool referenceFinite = std::isfinite(y);
    check.referenceNonFinite += !referenceFinite;
    if (!std::isfinite(x)) {
      if (check.nonFinite++ == 0) {
        check.firstNonFinite = multiIndex(output.spec.shape, i);
        check.firstNonFiniteValue = x;
      }
      check.nonFiniteWhereReferenceFinite += referenceFinite;
      continue;
    }
    if (!referenceFinite)
      continue;
    double error = std::abs(x - y);
    check.maxAbsError = std::max(check.maxAbsError, error);
    errorSquares += error * error;
    referenceSquares += y * y;
  }
  check.relRmsError = referenceSquares > 0 ? std::sqrt(errorSquares / referenceSquares) : std::sqrt(errorSquares);
  return check;
}

std::string OutputCheck::str() const {
  std::string text = llvm::formatv("result #{0} {1}: ", result, spec.str()).str();
  if (nonFinite > 0) {
    text += llvm::formatv("{0} NaN/Inf, the first {1} at {2}", nonFinite,
                          std::isnan(firstNonFiniteValue) ? "NaN"
                          : firstNonFiniteValue > 0       ? "+Inf"
                                                          : "-Inf",
                          indexText(*firstNonFinite))
                .str();
    text += nonFiniteWhereReferenceFinite > 0
                ? llvm::formatv(" ({0} where the fp64 reference is finite); ", nonFiniteWhereReferenceFinite).str()
                : " (the fp64 reference is not finite there either); ";
  }
  if (referenceNonFinite > 0)
    text +=
        llvm::formatv("the fp64 reference has {0} NaN/Inf (the inputs overflow even in double); ", referenceNonFinite)
            .str();
  text += llvm::formatv("max |err| {0:e2}, rel RMS {1:e2} (tolerance {2:e0}): {3}", maxAbsError, relRmsError, tolerance,
                        passed() ? "ok" : "FAILED")
              .str();
  return text;
}

llvm::json::Value OutputCheck::toJSON() const {
  llvm::json::Object object{{"result", static_cast<int64_t>(result)},
                            {"output", spec.str()},
                            {"max_abs_error", maxAbsError},
                            {"rel_rms_error", relRmsError},
                            {"tolerance", tolerance},
                            {"non_finite", nonFinite},
                            {"non_finite_where_reference_finite", nonFiniteWhereReferenceFinite},
                            {"reference_non_finite", referenceNonFinite},
                            {"passed", passed()}};
  if (firstNonFinite)
    object["first_non_finite"] = llvm::json::Array(*firstNonFinite);
  else
    object["first_non_finite"] = nullptr;
  return object;
}

std::optional<DomainViolation> checkDomain(unsigned argument, const TensorRef &input, const ValueDomain &domain) {
  DomainViolation violation;
  int64_t n = input.spec.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double value = elementAt(input, i);
    if (domain.contains(value))
      continue;
    if (violation.count++ == 0) {
      violation.firstIndex = multiIndex(input.spec.shape, i);
      violation.firstValue = value;
    }
  }
  if (violation.count == 0)
    return std::nullopt;
  violation.argument = argument;
  violation.spec = input.spec;
  violation.domain = domain;
  return violation;
}

std::string DomainViolation::str() const {
  return llvm::formatv("argument #{0} {1}: {2} value(s) outside its domain {3}, the first {4:g} at {5}", argument,
                       spec.str(), count, domain.describe("x"), firstValue, indexText(firstIndex))
      .str();
}

llvm::json::Value DomainViolation::toJSON() const {
  return llvm::json::Object{{"argument", static_cast<int64_t>(argument)},
                            {"input", spec.str()},
                            {"domain", domain.describe("x")},
                            {"outside", count},
                            {"first_index", llvm::json::Array(firstIndex)},
                            {"first_value", firstValue}};
}

bool NumericsReport::passed() const {
  return inputs.empty() && llvm::all_of(outputs, [](const OutputCheck &check) { return check.passed(); });
}

std::string NumericsReport::str() const {
  std::vector<std::string> lines;
  for (const DomainViolation &violation : inputs)
    lines.push_back(violation.str());
  if (!inputs.empty())
    lines.push_back("the kernel is not defined for these inputs, so the outputs below say nothing about it:");
  for (const OutputCheck &check : outputs)
    lines.push_back(check.str());
  return llvm::join(lines, "\n");
}

llvm::json::Value NumericsReport::toJSON() const {
  llvm::json::Array inputArray, outputArray;
  for (const DomainViolation &violation : inputs)
    inputArray.push_back(violation.toJSON());
  for (const OutputCheck &check : outputs)
    outputArray.push_back(check.toJSON());
  return llvm::json::Object{
      {"passed", passed()}, {"inputs", std::move(inputArray)}, {"outputs", std::move(outputArray)}};
}

} // namespace la
