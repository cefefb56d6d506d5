//===- LAPromoteToF64.cpp - widen every floating-point type to f64 ---------===//
//
// The fp64 reference of the numerics guard is the kernel itself, computed in double precision. MLIR's
// AttrTypeReplacer walks every type and attribute of the module (function types, tensor element types,
// block arguments, TypeAttrs such as `acc = f32`), so only the values that carry a float semantics of their
// own, FloatAttr and dense float constants, need converting here.
//
//===----------------------------------------------------------------------===//

#include "Transforms/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAPROMOTETOF64
#include "Transforms/Passes.h.inc"

namespace {

bool isNarrowFloat(Type type) { return isa<Float16Type, BFloat16Type, Float32Type>(type); }

/// `value` as a double-precision APFloat (exact: every narrow value is representable).
APFloat widen(APFloat value) {
  bool losesInfo = false;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return value;
}

struct LAPromoteToF64Pass : impl::LAPromoteToF64Base<LAPromoteToF64Pass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    Type f64 = Float64Type::get(context);

    AttrTypeReplacer replacer;
    // Types: scalars directly; tensors, functions and TypeAttrs through their sub-elements.
    replacer.addReplacement([&](FloatType type) -> std::optional<Type> {
      if (isNarrowFloat(type))
        return f64;
      return std::nullopt;
    });
    // Attributes holding float values: their type alone cannot be swapped, the values must follow. Added
    // after the type rule, so they are tried first (AttrTypeReplacer tries the latest rule first).
    replacer.addReplacement([&](FloatAttr attr) -> std::optional<std::pair<Attribute, WalkResult>> {
      if (!isNarrowFloat(attr.getType()))
        return std::nullopt;
      return std::make_pair(FloatAttr::get(f64, widen(attr.getValue())), WalkResult::skip());
    });
    replacer.addReplacement([&](DenseFPElementsAttr attr) -> std::optional<std::pair<Attribute, WalkResult>> {
      if (!isNarrowFloat(attr.getElementType()))
        return std::nullopt;
      auto type = cast<ShapedType>(attr.getType()).clone(f64);
      SmallVector<APFloat> values;
      for (APFloat value : attr.getValues<APFloat>())
        values.push_back(widen(value));
      return std::make_pair(DenseElementsAttr::get(type, values), WalkResult::skip());
    });

    replacer.recursivelyReplaceElementsIn(getOperation(), /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    if (failed(verify(getOperation())))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
