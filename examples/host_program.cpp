//===- host_program.cpp - using the la runtime from a C++ host program ----===//
//
// Two ways to get a kernel, one way to run it:
//   1. load a kernel file (kernels/flow_attention.mlir) and run it on this program's own std::vector buffers;
//   2. build a kernel in C++ with the `la` builder API (non-causal linear attention), hand the module to the
//      runtime, and check it against the library's kernels/linear_attention.mlir on the same inputs.
// Exits non-zero if anything fails, so the test suite runs it as a test.
//
//   host_program [KERNELS_DIR]
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LADialect.h"
#include "LA/IR/LAOps.h"
#include "la/runtime/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>
#include <vector>

namespace {

int check(llvm::Error err, const char *what) {
  if (!err)
    return 0;
  llvm::errs() << what << ": " << llvm::toString(std::move(err)) << "\n";
  return 1;
}

/// Non-causal linear attention with the elu+1 feature map, built op by op (the C++ twin of
/// @linear_attention in kernels/linear_attention.mlir).
mlir::OwningOpRef<mlir::ModuleOp> buildLinearAttention(mlir::MLIRContext &context) {
  using namespace mlir;
  context.loadDialect<mlir::la::LADialect, func::FuncDialect>();
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());

  int64_t dyn = ShapedType::kDynamic;
  Type f32 = b.getF32Type();
  auto x4 = RankedTensorType::get({dyn, dyn, dyn, dyn}, f32); // [B,H,N,D], [B,H,D,Dv], ...
  auto x3 = RankedTensorType::get({dyn, dyn, dyn}, f32);      // [B,H,D], [B,H,N]
  auto func = func::FuncOp::create(b, loc, "built_linear_attention", b.getFunctionType({x4, x4, x4}, {x4}));
  b.setInsertionPointToStart(func.addEntryBlock());
  Value q = func.getArgument(0), k = func.getArgument(1), v = func.getArgument(2);

  using mlir::la::MapFn;
  Value qf = mlir::la::MapOp::create(b, loc, x4, MapFn::elu1, ValueRange{q});
  Value kf = mlir::la::MapOp::create(b, loc, x4, MapFn::elu1, ValueRange{k});
  Value s = mlir::la::ContractOp::create(b, loc, x4, "bhmd,bhme->bhde", ValueRange{kf, v});
  Value z = mlir::la::ReduceOp::create(b, loc, x3, mlir::la::Combiner::add, kf, ArrayRef<int64_t>{2}).getResult(0);
  Value num = mlir::la::ContractOp::create(b, loc, x4, "bhnd,bhde->bhne", ValueRange{qf, s});
  Value den = mlir::la::ContractOp::create(b, loc, x3, "bhnd,bhd->bhn", ValueRange{qf, z});
  Value out = mlir::la::NormalizeOp::create(b, loc, x4, mlir::la::NormalizeKind::sum, num, den, 3);
  func::ReturnOp::create(b, loc, out);
  return module;
}

} // namespace

int main(int argc, char **argv) {
  std::string kernels = argc > 1 ? argv[1] : LA_KERNELS_DIR;
  const int64_t batch = 2, heads = 4, n = 300, d = 32, dv = 24;

  // The program's own buffers, C order [B, H, N, D].
  std::mt19937 generator(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(batch * heads * n * d), k(q.size()), v(batch * heads * n * dv);
  for (std::vector<float> *buffer : {&q, &k, &v})
    for (float &x : *buffer)
      x = uniform(generator);
  std::vector<float> flowOut(batch * heads * n * dv), fileOut(flowOut.size()), builtOut(flowOut.size());

  auto spec = [](int64_t last, int64_t b, int64_t h, int64_t len) {
    la::TensorSpec s;
    s.shape = {b, h, len, last};
    return s;
  };
  std::vector<la::TensorRef> inputs = {{q.data(), spec(d, batch, heads, n)},
                                       {k.data(), spec(d, batch, heads, n)},
                                       {v.data(), spec(dv, batch, heads, n)}};
  auto output = [&](std::vector<float> &buffer) {
    return std::vector<la::TensorRef>{{buffer.data(), spec(dv, batch, heads, n)}};
  };

  la::RuntimeOptions options;
  options.cacheDir = "none"; // keep the example hermetic; the default is $LA_CACHE_DIR or ~/.cache/la
  auto runtime = la::Runtime::create(options);
  if (!runtime)
    return check(runtime.takeError(), "creating the runtime");

  // 1. A kernel file.
  auto flow = (*runtime)->loadFile(kernels + "/flow_attention.mlir");
  if (!flow)
    return check(flow.takeError(), "loading flow_attention.mlir");
  la::CallStats stats;
  if (check((*runtime)->call(**flow, "flow_attention", inputs, output(flowOut), &stats), "flow_attention"))
    return 1;
  llvm::outs() << "flow_attention: compiled in " << stats.compileMs << " ms (" << la::cacheSourceName(stats.cache)
               << "), out[0] = " << flowOut[0] << "\n";
  if (check((*runtime)->call(**flow, "flow_attention", inputs, output(flowOut), &stats), "flow_attention again"))
    return 1;
  llvm::outs() << "second call: kernel from the " << la::cacheSourceName(stats.cache) << " cache\n";

  // 2. A kernel built in C++, checked against the library's version of the same mathematics.
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = buildLinearAttention(context);
  auto built = (*runtime)->loadModule(*module, "built_linear_attention");
  if (!built)
    return check(built.takeError(), "loading the built module");
  auto file = (*runtime)->loadFile(kernels + "/linear_attention.mlir");
  if (!file)
    return check(file.takeError(), "loading linear_attention.mlir");
  if (check((*runtime)->call(**built, "built_linear_attention", inputs, output(builtOut)), "built kernel") ||
      check((*runtime)->call(**file, "linear_attention", inputs, output(fileOut)), "linear_attention"))
    return 1;
  double maxDiff = 0;
  for (size_t i = 0; i < fileOut.size(); ++i)
    maxDiff = std::max(maxDiff, static_cast<double>(std::abs(fileOut[i] - builtOut[i])));
  llvm::outs() << "built_linear_attention vs kernels/linear_attention.mlir: max |diff| = " << maxDiff << "\n";
  // Same ops in the same order compile to the same code: the results must agree to the last bits.
  if (!(maxDiff <= 1e-6)) {
    llvm::errs() << "the built kernel disagrees with the library kernel\n";
    return 1;
  }
  llvm::outs() << "ok\n";
  return 0;
}
