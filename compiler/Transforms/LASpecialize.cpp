//===- LASpecialize.cpp - specialise an entry to concrete shapes ----------===//

#include "Transforms/Passes.h"

#include "Conversion/LAToLinalg/LoweringUtils.h"

#include "LA/IR/LAOps.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::la {
#define GEN_PASS_DEF_LASPECIALIZE
#include "Transforms/Passes.h.inc"

namespace {

/// The result types `op` infers from its (refined) operand types through InferShapedTypeOpInterface: each
/// dynamic dimension takes the inferred size, and a declared static dimension must agree with it. Ops
/// without the interface keep their types.
FailureOr<SmallVector<Type>> inferResultTypes(Operation *op) {
  SmallVector<Type> types = llvm::to_vector(op->getResultTypes());
  auto shaped = dyn_cast<InferShapedTypeOpInterface>(op);
  if (!shaped)
    return types;
  SmallVector<ShapedTypeComponents> inferred;
  if (failed(shaped.inferReturnTypeComponents(op->getContext(), op->getLoc(), op->getOperands(),
                                              op->getDiscardableAttrDictionary(), op->getPropertiesStorage(),
                                              op->getRegions(), inferred)))
    return op->emitOpError() << "cannot infer its result shapes from its operands";
  // An op may declare fewer results than it can infer (an online-softmax scan returns its value alone or its
  // whole state): its results take the first components.
  for (auto [index, result] : llvm::enumerate(op->getResults())) {
    if (index >= inferred.size())
      break;
    const ShapedTypeComponents &components = inferred[index];
    auto declared = cast<RankedTensorType>(result.getType());
    if (!components.hasRank())
      continue;
    ArrayRef<int64_t> dims = components.getDims();
    if (dims.size() != static_cast<size_t>(declared.getRank()))
      return op->emitOpError() << "result #" << index << " is declared with rank " << declared.getRank()
                               << " but its operands give rank " << dims.size();
    SmallVector<int64_t> shape(declared.getShape());
    for (auto [d, size] : llvm::enumerate(dims)) {
      if (ShapedType::isDynamic(size))
        continue;
      if (!ShapedType::isDynamic(shape[d]) && shape[d] != size)
        return op->emitOpError() << "result #" << index << " dimension " << d << " is declared " << shape[d]
                                 << " but its operands give " << size;
      shape[d] = size;
    }
    types[index] = RankedTensorType::get(shape, declared.getElementType(), declared.getEncoding());
  }
  return types;
}

struct LASpecializePass : impl::LASpecializeBase<LASpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError() << "no function named '" << entry << "' to specialise";
      return signalPassFailure();
    }
    // Callees are written for any shape (`tensor<?x..>`): inline them first so that refining the entry's
    // argument types never leaves a call whose operand types disagree with its callee's signature.
    OpPassManager inlining(ModuleOp::getOperationName());
    inlining.addPass(createInlinerPass());
    if (failed(runPipeline(inlining, module)))
      return signalPassFailure();
    if (failed(specializeArguments(func)) || failed(refineBody(func)))
      return signalPassFailure();
    // Sizes computed from the arguments (`tensor.dim`, `tensor.empty(%n, ..)`) fold to constants only now;
    // a second refinement carries them into the la ops that read them.
    OpPassManager folding(ModuleOp::getOperationName());
    folding.addPass(createCanonicalizerPass());
    if (failed(runPipeline(folding, module)) || failed(refineBody(func)))
      return signalPassFailure();
    storeResultsInHalf(func);

    // Keep only what the entry needs.
    for (auto other : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (other != func)
        other.setPrivate();
    OpPassManager cleanup(ModuleOp::getOperationName());
    cleanup.addPass(createSymbolDCEPass());
    if (failed(runPipeline(cleanup, module)))
      signalPassFailure();
  }

  LogicalResult specializeArguments(func::FuncOp func) {
    if (argTypes.size() != func.getNumArguments())
      return func.emitError() << "'" << entry << "' takes " << func.getNumArguments() << " arguments but "
                              << argTypes.size() << " types were given";
    Block &body = func.front();
    SmallVector<Type> newTypes;
    for (auto [i, text] : llvm::enumerate(argTypes)) {
      Type parsed = parseType(text, &getContext());
      auto declared = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
      auto given = dyn_cast_or_null<RankedTensorType>(parsed);
      if (!given || !declared)
        return func.emitError() << "argument #" << i << ": cannot specialise to '" << text << "'";
      bool halfStorage = isHalfStorageOf(given.getElementType(), declared.getElementType());
      if (given.getElementType() != declared.getElementType() && !halfStorage)
        return func.emitError() << "argument #" << i << " has element type " << given.getElementType() << " but '"
                                << entry << "' declares " << declared.getElementType()
                                << (declared.getElementType().isF32() ? " (f16 and bf16 are accepted too)" : "");
      if (halfStorage) {
        if (storageType && storageType != given.getElementType())
          return func.emitError() << "argument #" << i << " is " << given.getElementType()
                                  << " but an earlier argument is " << storageType
                                  << ": half-precision arguments must share one type";
        storageType = given.getElementType();
      }
      if (given.getRank() != declared.getRank())
        return func.emitError() << "argument #" << i << " has rank " << given.getRank() << " but '" << entry
                                << "' declares rank " << declared.getRank() << " (" << declared << ")";
      for (int64_t d = 0; d < given.getRank(); ++d)
        if (!declared.isDynamicDim(d) && declared.getDimSize(d) != given.getDimSize(d))
          return func.emitError() << "argument #" << i << " dimension " << d << " has size " << given.getDimSize(d)
                                  << " but '" << entry << "' declares " << declared.getDimSize(d);
      BlockArgument argument = body.getArgument(i);
      argument.setType(given);
      newTypes.push_back(given);
      if (halfStorage) {
        // The body computes in f32 as written; the argument is widened once, and the widening fuses into
        // its readers later, so no f32 copy of the input is built.
        OpBuilder builder = OpBuilder::atBlockBegin(&body);
        Value wide = convertElementType(builder, func.getLoc(), argument, declared.getElementType());
        argument.replaceAllUsesExcept(wide, wide.getDefiningOp());
      }
    }
    func.setType(FunctionType::get(&getContext(), newTypes, func.getResultTypes()));
    // Argument domains tell callers what to pass; the generated code does not read them, and the memref and
    // LLVM arguments that lowering makes of these tensors are no place for them.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.removeArgAttr(i, DomainAttr::kName);
    return success();
  }

  /// With half-precision arguments, results are stored in their half type, rounded once from the f32
  /// computation (after refinement, so the conversions see static shapes). A variant's states stay f32
  /// (`la.state`): a resume carries them on.
  void storeResultsInHalf(func::FuncOp func) {
    if (!storageType)
      return;
    func.walk([&](func::ReturnOp ret) {
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (func.getResultAttr(operand.getOperandNumber(), LADialect::kStateResultAttrName))
          continue;
        if (type && type.getElementType().isF32())
          operand.set(convertElementType(builder, ret.getLoc(), operand.get(), storageType));
      }
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    });
  }

  /// Whether arguments of `given` element type are accepted for a declared `declared` one: f16 and bf16
  /// storage for f32 kernels (the kernel computes and accumulates in f32).
  static bool isHalfStorageOf(Type given, Type declared) {
    return declared.isF32() && (given.isF16() || given.isBF16());
  }

  /// The half type of the arguments stored in f16/bf16 (null when none is).
  Type storageType;

  /// Refines la result types in program order, each op inferring its own from its operands (the pass only
  /// propagates); users outside la see their old type through a cast.
  LogicalResult refineBody(func::FuncOp func) {
    WalkResult walked = func.walk([&](Operation *op) {
      if (!isa<LADialect>(op->getDialect()))
        return WalkResult::advance();
      // A cast that only forgets static sizes (left by folding, or by an earlier refinement) is absorbed.
      for (OpOperand &operand : op->getOpOperands())
        if (auto cast = operand.get().getDefiningOp<tensor::CastOp>())
          if (tensor::canFoldIntoConsumerOp(cast))
            operand.set(cast.getSource());
      FailureOr<SmallVector<Type>> refined = inferResultTypes(op);
      if (failed(refined))
        return WalkResult::interrupt();
      for (auto [result, type] : llvm::zip(op->getResults(), *refined)) {
        Type old = result.getType();
        if (old == type)
          continue;
        result.setType(type);
        OpBuilder builder(op->getContext());
        builder.setInsertionPointAfter(op);
        Value back;
        for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
          Operation *user = use.getOwner();
          if (isa<LADialect>(user->getDialect()) || isa<func::ReturnOp>(user))
            continue;
          if (!back)
            back = tensor::CastOp::create(builder, op->getLoc(), old, result);
          use.set(back);
        }
      }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
    func.walk([&](func::ReturnOp ret) {
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    });
    return success();
  }
};

} // namespace
} // namespace mlir::la
