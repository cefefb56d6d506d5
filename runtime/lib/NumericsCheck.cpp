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

OutputCheck compareWithReference(unsigned result, const TensorRef &output, const TensorRef &reference) {
  assert(reference.spec.dtype == DType::F64 && reference.spec.shape == output.spec.shape &&
         "the reference is an f64 tensor of the output's shape");
  OutputCheck check;
  check.result = result;
  check.spec = output.spec;
  check.tolerance = checkTolerance(output.spec.dtype);
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

bool NumericsReport::passed() const {
  return llvm::all_of(outputs, [](const OutputCheck &check) { return check.passed(); });
}

std::string NumericsReport::str() const {
  return llvm::join(llvm::map_range(outputs, [](const OutputCheck &check) { return check.str(); }), "\n");
}

llvm::json::Value NumericsReport::toJSON() const {
  llvm::json::Array array;
  for (const OutputCheck &check : outputs)
    array.push_back(check.toJSON());
  return llvm::json::Object{{"passed", passed()}, {"outputs", std::move(array)}};
}

} // namespace la
