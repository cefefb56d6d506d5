//===- LAInferShapes.cpp - result shapes of `la` ops from their operands --===//
//
// Every la op implements InferShapedTypeOpInterface: its result shapes follow from its operands' shapes and
// attributes, so shape propagation (`la-specialize`) asks the op rather than knowing each op's rule. Only
// shapes are inferred, not types: kernels declare `?` results on purpose (one kernel serves every shape),
// and InferTypeOpInterface would reject any declared type less refined than the inferred one.
//
// A dimension no operand fixes stays dynamic; the verifiers have already checked that the operands agree,
// so where several operands give a size, the first static one is taken.
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LAOps.h"

using namespace mlir;
using namespace mlir::la;

/// The shape of `value` as the inference sees it (possibly refined beyond its type).
static SmallVector<int64_t> shapeOf(const ValueShapeRange &operands, Value value) {
  SmallVector<int64_t> dims;
  operands.getShape(value).getDims(dims);
  return dims;
}

/// Merges `size` into `dim`: a static size replaces a dynamic one.
static void refine(int64_t &dim, int64_t size) {
  if (ShapedType::isDynamic(dim))
    dim = size;
}

/// One result of the given shape.
static LogicalResult inferred(SmallVectorImpl<ShapedTypeComponents> &shapes, ArrayRef<int64_t> shape) {
  shapes.emplace_back(shape);
  return success();
}

/// The result shape `subscripts` gives: each result letter takes its size from the inputs that carry it
/// (letters only an input carries are summed over and left out).
static SmallVector<int64_t> resultShapeOf(SubscriptsAttr subscripts, ValueRange inputs, ValueShapeRange operands) {
  SmallVector<int64_t> shape(subscripts.getResult().size(), ShapedType::kDynamic);
  for (auto [input, term] : llvm::zip(inputs, subscripts.getInputs()))
    for (auto [letter, size] : llvm::zip(term, shapeOf(operands, input)))
      if (int64_t dim = subscripts.getResultDim(letter); dim >= 0)
        refine(shape[dim], size);
  return shape;
}

LogicalResult MapOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                               DictionaryAttr attributes, OpaqueProperties properties,
                                               RegionRange regions, SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  SubscriptsAttr subscripts = adaptor.getSubscriptsAttr();
  if (!subscripts) {
    // Every input has the result's shape.
    SmallVector<int64_t> shape = shapeOf(operands, adaptor.getInputs().front());
    for (Value input : adaptor.getInputs().drop_front())
      for (auto [dim, size] : llvm::zip(shape, shapeOf(operands, input)))
        refine(dim, size);
    return inferred(shapes, shape);
  }
  return inferred(shapes, resultShapeOf(subscripts, adaptor.getInputs(), operands));
}

LogicalResult ContractOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                                    DictionaryAttr attributes, OpaqueProperties properties,
                                                    RegionRange regions,
                                                    SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  SubscriptsAttr subscripts = adaptor.getSubscripts();
  return inferred(shapes, resultShapeOf(subscripts, adaptor.getInputs(), operands));
}

LogicalResult ReduceOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                                  DictionaryAttr attributes, OpaqueProperties properties,
                                                  RegionRange regions, SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  // One result per input, each the input without the reduced dimensions.
  for (Value input : adaptor.getInputs()) {
    SmallVector<int64_t> shape;
    for (auto [d, size] : llvm::enumerate(shapeOf(operands, input)))
      if (!llvm::is_contained(adaptor.getDims(), static_cast<int64_t>(d)))
        shape.push_back(size);
    shapes.emplace_back(shape);
  }
  return success();
}

LogicalResult ScanOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                                DictionaryAttr attributes, OpaqueProperties properties,
                                                RegionRange regions, SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  // `decay %x, %g` has one value-shaped result (x's); `online_softmax %k, %v` up to three (y, m, z), each of
  // v's shape: an op declaring y alone takes the first (callers pair results with these in order). Other
  // combiners carry one state per input, of its shape.
  std::optional<Combiner> combiner = adaptor.getCombiner();
  if (combiner == Combiner::decay)
    return inferred(shapes, shapeOf(operands, adaptor.getInputs()[0]));
  if (combiner == Combiner::online_softmax) {
    for (int state = 0; state < 3; ++state)
      shapes.emplace_back(shapeOf(operands, adaptor.getInputs()[1]));
    return success();
  }
  for (Value input : adaptor.getInputs())
    shapes.emplace_back(shapeOf(operands, input));
  return success();
}

LogicalResult NormalizeOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                                     DictionaryAttr attributes, OpaqueProperties properties,
                                                     RegionRange regions,
                                                     SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  return inferred(shapes, shapeOf(operands, adaptor.getInput()));
}

LogicalResult GateOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                                DictionaryAttr attributes, OpaqueProperties properties,
                                                RegionRange regions, SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  // Branches have the result's shape; the gate only prefix-broadcasts into it.
  SmallVector<int64_t> shape = shapeOf(operands, adaptor.getBranches().front());
  for (Value branch : adaptor.getBranches().drop_front())
    for (auto [dim, size] : llvm::zip(shape, shapeOf(operands, branch)))
      refine(dim, size);
  return inferred(shapes, shape);
}

LogicalResult SizeOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange, DictionaryAttr,
                                                OpaqueProperties, RegionRange,
                                                SmallVectorImpl<ShapedTypeComponents> &shapes) {
  return inferred(shapes, {});
}

LogicalResult WindowOp::inferReturnTypeComponents(MLIRContext *, std::optional<Location>, ValueShapeRange operands,
                                                  DictionaryAttr attributes, OpaqueProperties properties,
                                                  RegionRange regions, SmallVectorImpl<ShapedTypeComponents> &shapes) {
  Adaptor adaptor(operands.getValues(), attributes, properties, regions);
  return inferred(shapes, inferShape(shapeOf(operands, adaptor.getInput()), adaptor.getDims(), adaptor.getSizes()));
}
