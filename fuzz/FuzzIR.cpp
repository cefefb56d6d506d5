//===- FuzzIR.cpp - libFuzzer target for parse, verify and CPU lowering ----===//
//
// Kernels are user programs: whatever text `lac` or `Runtime::loadFile` is given must be parsed, verified
// and (when it verifies) lowered without crashing, however wrong it is; errors are diagnostics. This
// target parses the input as a module with every dialect the compiler knows, and when it verifies and has
// a public function on ranked float tensors, specialises that entry as the runtime would (`la-specialize`,
// every dynamic dimension a small size) and runs the CPU pipeline of compiler/Pipelines down to the LLVM
// dialect. Nothing is translated to LLVM IR, JIT-compiled or run.
//
// Bounds keep each input to milliseconds: inputs over kMaxInputBytes are skipped, and so are programs with
// a tensor of more than kMaxElements elements anywhere (constant folding would otherwise spend the time on
// arithmetic). The dynamic size and the pipeline options are derived from a hash of the input, so one
// input always takes the same path and a crash replays.
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LADialect.h"
#include "Pipelines/Pipelines.h"
#include "Target/CPU/CPUTarget.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <cstdlib>
#include <iterator>

using namespace mlir;

namespace {

constexpr size_t kMaxInputBytes = 4096;
constexpr int64_t kMaxElements = 1 << 14;
constexpr unsigned kMaxRank = 6;

const DialectRegistry &registry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry();
    registerAllDialects(*result);
    registerAllExtensions(*result);
    result->insert<la::LADialect>();
    return result;
  }();
  return *registry;
}

/// Whether every shaped type of every value in `module` is small enough to compile quickly.
bool typesAreSmall(ModuleOp module) {
  auto small = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasRank())
      return true;
    if (shaped.getRank() > kMaxRank)
      return false;
    int64_t elements = 1;
    for (int64_t size : shaped.getShape())
      if (!ShapedType::isDynamic(size) && (size > kMaxElements || (elements *= size) > kMaxElements))
        return false;
    return true;
  };
  WalkResult walk = module->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (!small(type))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          if (!small(type))
            return WalkResult::interrupt();
    if (auto func = dyn_cast<func::FuncOp>(op))
      for (Type type : func.getFunctionType().getResults())
        if (!small(type))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// The argument types of `func` with every dynamic size `dynamicSize`, as la-specialize takes them, or
/// false if an argument is not a ranked tensor of a float type the runtime passes.
bool specializedArgTypes(func::FuncOp func, int64_t dynamicSize, SmallVectorImpl<std::string> &types) {
  for (Type type : func.getArgumentTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.getEncoding())
      return false;
    Type element = tensor.getElementType();
    if (!element.isF16() && !element.isBF16() && !element.isF32() && !element.isF64())
      return false;
    SmallVector<int64_t> shape(tensor.getShape());
    for (int64_t &size : shape)
      if (ShapedType::isDynamic(size))
        size = dynamicSize;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << RankedTensorType::get(shape, element);
    types.push_back(text);
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  llvm::StringRef source(reinterpret_cast<const char *>(data), size);
  uint64_t hash = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(data, size));

  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  // Errors are the expected outcome for most inputs; printing them would only slow the fuzzer down.
  // LA_FUZZ_VERBOSE=1 shows them, to see how far an input gets.
  static const bool verbose = getenv("LA_FUZZ_VERBOSE") != nullptr;
  ScopedDiagnosticHandler swallow(&context, [](Diagnostic &diagnostic) {
    if (verbose)
      llvm::errs() << diagnostic << "\n";
    return success();
  });

  // Parsed as runtime/lib/Compiler.cpp does, from a copy: MemoryBuffer copies end in a NUL, which MLIR's
  // lexer reads as the end of the input. `parseSourceString` on the fuzzer's bytes, which have no NUL after
  // them, lets the (uninstrumented) lexer read past the end (found here as an ASan heap-buffer-overflow in
  // a memchr under mlir::parseAsmSourceFile; regressions/ir/parse-unterminated-buffer.mlir); upstream's
  // own mlir-parser-fuzzer only feeds NUL-terminated inputs for the same reason. Parsing verifies too.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "<fuzz>"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || !typesAreSmall(*module))
    return 0;

  func::FuncOp entry;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal()) {
      entry = func;
      break;
    }
  if (!entry)
    return 0;
  static constexpr int64_t kDynamicSizes[] = {1, 2, 3, 4, 8, 16};
  la::Specialization specialization;
  specialization.entry = entry.getSymName().str();
  if (!specializedArgTypes(entry, kDynamicSizes[hash % std::size(kDynamicSizes)], specialization.argTypes))
    return 0;

  // A small chunk size makes short sequences take the chunked paths too.
  la::PipelineConfig config;
  static constexpr int64_t kChunkSizes[] = {64, 2, 4};
  config.chunkSize = kChunkSizes[(hash >> 8) % std::size(kChunkSizes)];
  config.fuse = (hash >> 16) % 4 != 0;
  config.groupSweeps = (hash >> 18) % 2 == 0;
  config.registerTile = (hash >> 19) % 4 != 0;
  config.approximateMath = (hash >> 21) % 4 != 0;
  auto target = la::CPUTarget::create(config);
  if (!target) // the host CPU is always known to LLVM: a failure here is a bug
    llvm::report_fatal_error(target.takeError());

  PassManager pm(&context);
  la::buildPipeline(pm, **target, specialization);
  LogicalResult lowered = pm.run(*module);
  if (verbose)
    llvm::errs() << "@" << specialization.entry << ": lowering to the LLVM dialect "
                 << (succeeded(lowered) ? "succeeded" : "failed") << "\n";
  return 0;
}
