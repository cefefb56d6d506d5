//===- Compiler.cpp - compile an la entry to a host object file -----------===//
//
// Parse (SourceMgr diagnostics with file:line:col) → the pipeline of compiler/Pipelines for the target
// (specialisation included) → the target's artefact (an object file defining `la_call_<entry>(void **)`).
// Nothing here shapes the generated code: every such step is a pass of the pipeline.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Compiler.h"

#include "ParsedProgram.h"

#include "Analysis/BatchSlicing.h"
#include "LA/IR/LAOps.h"
#include "Pipelines/Pipelines.h"
#include "Target/CPU/CPUTarget.h"
#include "Target/CUDA/CUDATarget.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace la {
namespace {

using mlir::la::PipelineStage;

llvm::Expected<std::unique_ptr<mlir::la::TargetBackend>> createTarget(const CompileOptions &options) {
  if (options.target == mlir::la::PipelineTarget::CUDA)
    return mlir::la::CUDATarget::create(options);
  return mlir::la::CPUTarget::create(options);
}

struct StageName {
  Stage stage;
  llvm::StringRef name;
  /// The target that has the stage; Common for the target-neutral ones.
  mlir::la::PipelineTarget target;
  /// The artefact `TargetBackend::emitArtifact` makes for it; empty for a printed IR stage.
  llvm::StringRef artifact;
};

constexpr StageName kStages[] = {
    {Stage::LA, "la", mlir::la::PipelineTarget::Common, ""},
    {Stage::Fused, "fused", mlir::la::PipelineTarget::Common, ""},
    {Stage::Linalg, "linalg", mlir::la::PipelineTarget::Common, ""},
    {Stage::LLVMDialect, "llvm-dialect", mlir::la::PipelineTarget::CPU, ""},
    {Stage::LLVM, "llvm", mlir::la::PipelineTarget::CPU, "llvm"},
    {Stage::Asm, "asm", mlir::la::PipelineTarget::CPU, "asm"},
    {Stage::Object, "obj", mlir::la::PipelineTarget::CPU, "obj"},
    {Stage::GPU, "gpu", mlir::la::PipelineTarget::CUDA, ""},
    {Stage::NVVM, "nvvm", mlir::la::PipelineTarget::CUDA, "nvvm"},
    {Stage::PTX, "ptx", mlir::la::PipelineTarget::CUDA, "ptx"},
    {Stage::Cubin, "cubin", mlir::la::PipelineTarget::CUDA, "cubin"},
};

const StageName &describe(Stage stage) {
  for (const StageName &entry : kStages)
    if (entry.stage == stage)
      return entry;
  llvm_unreachable("a stage without a name");
}

mlir::la::Specialization toSpecialization(llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                                          const SliceLayout &slicing = {}) {
  mlir::la::Specialization specialization;
  specialization.entry = entry.str();
  for (const TensorSpec &spec : arguments)
    specialization.argTypes.push_back(toMLIRTypeString(spec));
  specialization.slicedDims = slicing.dims;
  specialization.slicePieces = slicing.pieces;
  for (auto [i, shared] : llvm::enumerate(slicing.sharedArguments))
    if (shared)
      specialization.sharedArguments.push_back(static_cast<unsigned>(i));
  return specialization;
}

/// The runtime dtype of an MLIR element type (the dialect admits only these four).
std::optional<DType> toDType(Type element) {
  if (element.isF32())
    return DType::F32;
  if (element.isF16())
    return DType::F16;
  if (element.isBF16())
    return DType::BF16;
  if (element.isF64())
    return DType::F64;
  return std::nullopt;
}

llvm::Expected<std::vector<TensorSpec>> toSpecs(TypeRange types, llvm::StringRef what) {
  std::vector<TensorSpec> specs;
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return llvm::createStringError("%s type is not a static tensor after specialisation", what.str().c_str());
    TensorSpec spec;
    std::optional<DType> dtype = toDType(tensor.getElementType());
    if (!dtype)
      return llvm::createStringError("%s has an unsupported element type", what.str().c_str());
    spec.dtype = *dtype;
    spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    specs.push_back(spec);
  }
  return specs;
}

/// Runs the pipeline on `parsed` up to (and including) `stage` (LA, Fused, Linalg, or anything later: the
/// target's whole pass pipeline). Without arguments, `LA`
/// and `Fused` are not specialised.
/// `slicing.dims` > 0 compiles one batch×head slice that reads its coordinates from extra arguments.
LogicalResult runStages(ParsedProgram &parsed, const mlir::la::TargetBackend &target, llvm::StringRef entry,
                        llvm::ArrayRef<TensorSpec> arguments, Stage stage, const SliceLayout &slicing = {}) {
  PassManager pm(parsed.context.get(), ModuleOp::getOperationName());
  mlir::la::Specialization specialization;
  if (!arguments.empty() || stage > Stage::Fused)
    specialization = toSpecialization(entry, arguments, slicing);
  specialization.slicedDims = slicing.dims;
  specialization.slicePieces = slicing.pieces;
  if (stage == Stage::LA)
    mlir::la::addSpecialization(pm, specialization);
  else
    mlir::la::buildPipeline(pm, target, specialization,
                            stage == Stage::Fused    ? PipelineStage::Fused
                            : stage == Stage::Linalg ? PipelineStage::Linalg
                                                     : PipelineStage::TargetIR);
  return pm.run(*parsed.module);
}

/// What a stage is compiled for: the arguments and the slicing.
struct StageInput {
  std::vector<TensorSpec> arguments;
  SliceLayout slicing;
};

/// A GPU kernel covers one batch×head slice per thread block, as the runtime launches it, so past the
/// target-neutral stages the CUDA target compiles one slice's arguments; the CPU stages show the whole call.
/// `emitStage` and `getPipelineText` share this, so that the printed pipeline is the one the stage ran.
llvm::Expected<StageInput> planStageInput(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                          llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options,
                                          mlir::la::PipelineTarget kind, Stage stage) {
  StageInput input{std::vector<TensorSpec>(arguments.begin(), arguments.end()), SliceLayout()};
  if (kind != mlir::la::PipelineTarget::CUDA || stage <= Stage::Fused || !options.sliceBatchHeads)
    return input;
  auto entries = inspectProgram(source, bufferName);
  if (!entries)
    return entries.takeError();
  for (const EntryInfo &info : *entries)
    if (info.name == entry)
      input.slicing = info.slicing;
  input.arguments = sliceArguments(arguments, input.slicing);
  return input;
}

} // namespace

std::optional<Stage> parseStage(llvm::StringRef name) {
  for (const StageName &entry : kStages)
    if (entry.name == name)
      return entry.stage;
  return std::nullopt;
}

std::vector<TensorSpec> sliceArguments(llvm::ArrayRef<TensorSpec> arguments, const SliceLayout &slicing,
                                       int64_t block) {
  std::vector<TensorSpec> slice(arguments.begin(), arguments.end());
  for (auto [i, spec] : llvm::enumerate(slice))
    for (int64_t d = 0; d < slicing.dims && d < static_cast<int64_t>(spec.shape.size()) && !slicing.isShared(i); ++d)
      spec.shape[d] = d + 1 == slicing.dims ? block : 1;
  return slice;
}

mlir::la::PipelineTarget getStageTarget(Stage stage) { return describe(stage).target; }

llvm::SmallVector<llvm::StringRef> getStageNames(mlir::la::PipelineTarget target) {
  llvm::SmallVector<llvm::StringRef> names;
  for (const StageName &entry : kStages)
    if (entry.target == mlir::la::PipelineTarget::Common || entry.target == target)
      names.push_back(entry.name);
  return names;
}

bool isBinaryStage(Stage stage) { return stage == Stage::Object || stage == Stage::Cubin; }

llvm::StringRef getCompilerVersion() {
  // Bump when generated code changes without a change of options (cache entries then miss).
  return "la-compiler 0.5 (LLVM " LLVM_VERSION_STRING ")";
}

std::string toMLIRTypeString(const TensorSpec &spec) {
  std::string text = "tensor<";
  for (int64_t size : spec.shape)
    text += (size < 0 ? std::string("?") : std::to_string(size)) + "x";
  return text + dtypeName(spec.dtype).str() + ">";
}

std::string ValueDomain::describe(llvm::StringRef name) const {
  return mlir::la::DomainAttr::describeInterval(min, max, name);
}

llvm::Expected<std::vector<EntryInfo>> inspectProgram(llvm::StringRef source, llvm::StringRef bufferName) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ModuleOp module = *(*parsed)->module;
  std::vector<EntryInfo> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    EntryInfo info;
    info.name = func.getSymName().str();
    if (auto declared = (*parsed)->declaredVariants.find(info.name); declared != (*parsed)->declaredVariants.end()) {
      info.variantKind = declared->second.kind;
      info.variantOf = declared->second.of;
    }
    auto toSignature = [](TypeRange types, llvm::SmallVectorImpl<TensorSpec> &specs) {
      for (Type type : types) {
        TensorSpec spec;
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor)
          return false;
        std::optional<DType> dtype = toDType(tensor.getElementType());
        if (!dtype)
          return false;
        spec.dtype = *dtype;
        for (int64_t size : tensor.getShape())
          spec.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
        specs.push_back(spec);
      }
      return true;
    };
    if (!toSignature(func.getArgumentTypes(), info.signature.arguments) ||
        !toSignature(func.getResultTypes(), info.signature.results))
      return llvm::createStringError("%s: entry '%s' has an argument or result that is not a f16/bf16/f32/f64 tensor",
                                     bufferName.str().c_str(), info.name.c_str());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto domain = func.getArgAttrOfType<mlir::la::DomainAttr>(i, mlir::la::DomainAttr::kName);
      info.signature.argumentDomains.push_back(
          domain ? std::optional<ValueDomain>(ValueDomain{domain.getLowerBound(), domain.getUpperBound()})
                 : std::nullopt);
    }
    entries.push_back(std::move(info));
  }
  // Slicing is decided on the inlined, simplified program, which is what gets compiled.
  PassManager pm((*parsed)->context.get());
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(module)))
    return (*parsed)->diagnostics.error("simplifying the program failed");
  for (EntryInfo &info : entries)
    if (auto func = module.lookupSymbol<func::FuncOp>(info.name)) {
      mlir::la::BatchSlicing slicing = mlir::la::analyzeBatchSlicing(func);
      info.slicing.dims = slicing.dims;
      if (llvm::is_contained(slicing.sharedArguments, true))
        info.slicing.sharedArguments.assign(slicing.sharedArguments.begin(), slicing.sharedArguments.end());
    }
  return entries;
}

llvm::Expected<std::vector<TensorSpec>> inferResultSpecs(llvm::StringRef source, llvm::StringRef bufferName,
                                                         llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  PassManager pm((*parsed)->context.get(), ModuleOp::getOperationName());
  pm.addPass(mlir::la::createLADeriveStateVariants());
  mlir::la::addSpecialization(pm, toSpecialization(entry, arguments));
  // Shapes propagate through the inlined body; a derived state's slice of the last position has its sizes
  // from tensor.dim, folded by canonicalisation.
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*(*parsed)->module)))
    return (*parsed)->diagnostics.error(bufferName.str() + ": specialising '" + entry.str() + "' failed");
  auto func = (*parsed)->module->lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return llvm::createStringError(bufferName.str() + ": no entry named '" + entry.str() + "'");
  // The declared result types stay as written (`?`) until the pipeline refines them; what is returned is
  // static, behind a cast.
  SmallVector<Type> returned;
  for (Value value : func.getBody().front().getTerminator()->getOperands()) {
    auto cast = value.getDefiningOp<tensor::CastOp>();
    returned.push_back(cast ? cast.getSource().getType() : value.getType());
  }
  return toSpecs(returned, "a result of '" + entry.str() + "'");
}

llvm::Expected<CompiledKernel> compileKernel(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                             llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options,
                                             const SliceLayout &slicing) {
  auto target = createTarget(options);
  if (!target)
    return target.takeError();
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ParsedProgram &program = **parsed;
  // Two runs of one pipeline: the result types are read at the linalg stage, before bufferisation turns
  // results into out-parameters.
  if (failed(runStages(program, **target, entry, arguments, Stage::Linalg, slicing)))
    return program.diagnostics.error("lowering to linalg failed");
  auto func = program.module->lookupSymbol<func::FuncOp>(entry);
  auto results = toSpecs(func.getResultTypes(), "a result");
  if (!results)
    return results.takeError();

  PassManager pm(program.context.get(), ModuleOp::getOperationName());
  (*target)->buildLoweringPipeline(pm);
  if (failed(pm.run(*program.module)))
    return program.diagnostics.error("lowering for the target failed");
  // The CPU's artefact is an object file; the CUDA target's is the `gpu` stage as text, which the emulator
  // (and, for a device, the PTX generation) starts from.
  llvm::Expected<std::string> object = std::string();
  if ((*target)->getKind() == mlir::la::PipelineTarget::CUDA) {
    llvm::raw_string_ostream os(*object);
    program.module->print(os);
  } else {
    object = (*target)->emitArtifact(*program.module, "obj");
  }
  if (!object)
    return object.takeError();

  CompiledKernel kernel;
  kernel.entry = entry.str();
  kernel.arguments.assign(arguments.begin(), arguments.end());
  kernel.results = std::move(*results);
  kernel.slicing = slicing;
  kernel.object.assign(object->begin(), object->end());
  return kernel;
}

llvm::Expected<std::string> getPipelineText(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                            llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options) {
  auto target = createTarget(options);
  if (!target)
    return target.takeError();
  // The whole pass pipeline: it ends with the GPU stage on CUDA and the LLVM dialect on the CPU.
  mlir::la::PipelineTarget kind = (*target)->getKind();
  Stage end = kind == mlir::la::PipelineTarget::CUDA ? Stage::GPU : Stage::LLVMDialect;
  auto input = planStageInput(source, bufferName, entry, arguments, options, kind, end);
  if (!input)
    return input.takeError();
  MLIRContext context(MLIRContext::Threading::DISABLED);
  PassManager pm(&context, ModuleOp::getOperationName());
  mlir::la::buildPipeline(pm, **target, toSpecialization(entry, input->arguments, input->slicing));
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

llvm::Expected<std::string> getResolvedOptionsText(const CompileOptions &options) {
  auto target = createTarget(options);
  if (!target)
    return target.takeError();
  mlir::la::PipelineTarget kind = (*target)->getKind();
  return "target=" + mlir::la::getTargetName(kind).str() + "," + (*target)->getConfig().str(kind) +
         ",slice=" + (options.sliceBatchHeads ? "1" : "0");
}

llvm::Expected<std::string> promoteToF64(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ParsedProgram &program = **parsed;
  // Only `entry` and what it calls are widened: another entry that cannot be (say, one with an explicit
  // truncation) must not stop this one from being checked. The other entries become private, so symbol DCE
  // keeps those that `entry` calls (retention calls @simple_gla) and drops the rest.
  for (auto func : program.module->getOps<func::FuncOp>())
    if (func.isPublic() && func.getSymName() != entry)
      func.setPrivate();
  PassManager pm(program.context.get(), ModuleOp::getOperationName());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(mlir::la::createLAPromoteToF64());
  if (failed(pm.run(*program.module))) {
    llvm::Error diagnostics = program.diagnostics.error("");
    return llvm::createStringError(llvm::formatv("{0}\n{1}: cannot build the fp64 reference of '{2}': it does not "
                                                 "verify once every float type is f64",
                                                 llvm::toString(std::move(diagnostics)), bufferName, entry)
                                       .str());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  program.module->print(os);
  return text;
}

llvm::Expected<std::string> emitStage(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                      llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options,
                                      Stage stage) {
  auto target = createTarget(options);
  if (!target)
    return target.takeError();
  const StageName &wanted = describe(stage);
  mlir::la::PipelineTarget kind = (*target)->getKind();
  if (wanted.target != mlir::la::PipelineTarget::Common && wanted.target != kind)
    return llvm::createStringError(llvm::formatv("stage '{0}' belongs to the {1} target; the {2} target emits {3}",
                                                 wanted.name, mlir::la::getTargetName(wanted.target),
                                                 mlir::la::getTargetName(kind), llvm::join(getStageNames(kind), ", "))
                                       .str());
  auto input = planStageInput(source, bufferName, entry, arguments, options, kind, stage);
  if (!input)
    return input.takeError();
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ParsedProgram &program = **parsed;
  if (failed(runStages(program, **target, entry, input->arguments, stage, input->slicing)))
    return program.diagnostics.error("compilation failed");
  if (wanted.artifact.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    // As mlir-opt prints it (a blank line after the module), so `la-opt` output compares equal.
    program.module->print(os);
    os << "\n";
    return text;
  }
  auto artifact = (*target)->emitArtifact(*program.module, wanted.artifact);
  if (!artifact) {
    // The passes' own diagnostics (file:line:col of the op at fault) first, then what failed.
    std::string reason = llvm::toString(artifact.takeError());
    std::string diagnostics = llvm::toString(program.diagnostics.error(""));
    return llvm::createStringError(diagnostics.empty() ? reason : diagnostics + "\n" + reason);
  }
  return artifact;
}

} // namespace la
