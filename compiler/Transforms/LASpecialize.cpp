//===- LASpecialize.cpp - specialise an entry to concrete shapes ----------===//

#include "Transforms/Passes.h"

#include "Conversion/LAToLinalg/LoweringUtils.h"

#include "LA/IR/LAOps.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::la {
#define GEN_PASS_DEF_LASPECIALIZE
#include "Transforms/Passes.h.inc"

namespace {

/// Merges a refined size into `shape[d]` (dynamic sizes are replaced by static ones).
void refineDim(SmallVectorImpl<int64_t> &shape, int64_t d, int64_t size) {
  if (ShapedType::isDynamic(shape[d]))
    shape[d] = size;
}

RankedTensorType withShape(Type type, ArrayRef<int64_t> shape) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(shape, tensor.getElementType());
}

ArrayRef<int64_t> shapeOf(Value value) { return cast<RankedTensorType>(value.getType()).getShape(); }

/// The result types an la op computes from its (refined) operand types; the old types where nothing is
/// learned.
SmallVector<Type> inferResultTypes(Operation *op) {
  SmallVector<Type> types = llvm::to_vector(op->getResultTypes());
  auto sameShapeAs = [&](Value from) {
    for (Type &t : types)
      t = withShape(t, shapeOf(from));
  };
  if (auto map = dyn_cast<MapOp>(op)) {
    SmallVector<int64_t> shape = llvm::to_vector(map.getResult().getType().getShape());
    for (auto [input, dims] : llvm::zip(map.getInputs(), map.getInputToResultDims()))
      for (auto [inputDim, resultDim] : llvm::enumerate(dims))
        refineDim(shape, resultDim, shapeOf(input)[inputDim]);
    types[0] = withShape(types[0], shape);
  } else if (auto contract = dyn_cast<ContractOp>(op)) {
    SubscriptsAttr subscripts = contract.getSubscripts();
    SmallVector<int64_t> shape = llvm::to_vector(contract.getResult().getType().getShape());
    for (auto [input, term] : llvm::zip(contract.getInputs(), subscripts.getInputs()))
      for (auto [d, c] : llvm::enumerate(term))
        if (int64_t resultDim = subscripts.getResultDim(c); resultDim >= 0)
          refineDim(shape, resultDim, shapeOf(input)[d]);
    types[0] = withShape(types[0], shape);
  } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
    for (auto [i, input] : llvm::enumerate(reduce.getInputs())) {
      SmallVector<int64_t> shape;
      for (auto [d, size] : llvm::enumerate(shapeOf(input)))
        if (!llvm::is_contained(reduce.getDims(), static_cast<int64_t>(d)))
          shape.push_back(size);
      types[i] = withShape(types[i], shape);
    }
  } else if (auto scan = dyn_cast<ScanOp>(op)) {
    std::optional<Combiner> combiner = scan.getCombiner();
    if (combiner == Combiner::decay)
      sameShapeAs(scan.getInputs()[0]);
    else if (combiner == Combiner::online_softmax)
      sameShapeAs(scan.getInputs()[1]);
    else
      for (auto [i, input] : llvm::enumerate(scan.getInputs()))
        types[i] = withShape(types[i], shapeOf(input));
  } else if (auto normalize = dyn_cast<NormalizeOp>(op)) {
    sameShapeAs(normalize.getInput());
  } else if (auto gate = dyn_cast<GateOp>(op)) {
    sameShapeAs(gate.getBranches().front());
  } else if (auto window = dyn_cast<WindowOp>(op)) {
    types[0] = withShape(types[0], WindowOp::inferShape(shapeOf(window.getInput()), window.getDims(), window.getSizes()));
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
    if (failed(specializeArguments(func)))
      return signalPassFailure();
    refineBody(func);
    // Sizes computed from the arguments (`tensor.dim`, `tensor.empty(%n, ..)`) fold to constants only now;
    // a second refinement carries them into the la ops that read them.
    OpPassManager folding(ModuleOp::getOperationName());
    folding.addPass(createCanonicalizerPass());
    if (failed(runPipeline(folding, module)))
      return signalPassFailure();
    refineBody(func);
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
        return func.emitError() << "argument #" << i << " has element type " << given.getElementType()
                                << " but '" << entry << "' declares " << declared.getElementType()
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
          return func.emitError() << "argument #" << i << " dimension " << d << " has size "
                                  << given.getDimSize(d) << " but '" << entry << "' declares "
                                  << declared.getDimSize(d);
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
    return success();
  }

  /// With half-precision arguments, results are stored in their half type, rounded once from the f32
  /// computation (after refinement, so the conversions see static shapes).
  void storeResultsInHalf(func::FuncOp func) {
    if (!storageType)
      return;
    func.walk([&](func::ReturnOp ret) {
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
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

  /// Refines la result types in program order; users outside la see their old type through a cast.
  void refineBody(func::FuncOp func) {
    func.walk([&](Operation *op) {
      if (!isa<LADialect>(op->getDialect()))
        return;
      // A cast that only forgets static sizes (left by folding, or by an earlier refinement) is absorbed.
      for (OpOperand &operand : op->getOpOperands())
        if (auto cast = operand.get().getDefiningOp<tensor::CastOp>())
          if (tensor::canFoldIntoConsumerOp(cast))
            operand.set(cast.getSource());
      SmallVector<Type> refined = inferResultTypes(op);
      for (auto [result, type] : llvm::zip(op->getResults(), refined)) {
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
    });
    func.walk([&](func::ReturnOp ret) {
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    });
  }
};

} // namespace
} // namespace mlir::la
