//===- DialectTest.cpp - building, verifying and folding la ops from C++ ------===//

#include "LA/IR/LAMapFns.h"
#include "LA/IR/LAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::la;

namespace {

class LADialectTest : public ::testing::Test {
protected:
  LADialectTest() { context.loadDialect<LADialect, func::FuncDialect>(); }

  OwningOpRef<ModuleOp> parse(llvm::StringRef source) {
    return parseSourceString<ModuleOp>(source, ParserConfig(&context));
  }

  /// Collects diagnostics instead of printing them so tests can assert on the message.
  std::string diagnostics;
  MLIRContext context;
};

TEST_F(LADialectTest, BuildsAndVerifiesMapAndContract) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(b, loc);
  b.setInsertionPointToEnd(module.getBody());
  auto t4 = RankedTensorType::get({2, 3, ShapedType::kDynamic, 64}, b.getF32Type());
  auto kv = RankedTensorType::get({2, 3, 64, 64}, b.getF32Type());
  auto func = func::FuncOp::create(b, loc, "f", b.getFunctionType({t4, t4}, {kv}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto phi = MapOp::create(b, loc, t4, MapFn::elu1, ValueRange{entry->getArgument(0)});
  auto state = ContractOp::create(b, loc, kv, "bhmd,bhme->bhde", ValueRange{phi.getResult(), entry->getArgument(1)});
  func::ReturnOp::create(b, loc, state.getResult());
  EXPECT_TRUE(succeeded(verify(module)));
  module->erase();
}

TEST_F(LADialectTest, VerifierNamesTheMismatchedDimension) {
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  auto module = parse(R"mlir(
    func.func @f(%k: tensor<2x3x10x64xf32>, %v: tensor<2x3x12x32xf32>) -> tensor<2x3x64x32xf32> {
      %s = la.contract "bhmd,bhme->bhde" %k, %v
          : tensor<2x3x10x64xf32>, tensor<2x3x12x32xf32> -> tensor<2x3x64x32xf32>
      return %s : tensor<2x3x64x32xf32>
    })mlir");
  EXPECT_FALSE(module);
  EXPECT_NE(diagnostics.find("dimension 'm' has size 10 in input #0 but 12 in input #1"), std::string::npos)
      << diagnostics;
}

TEST_F(LADialectTest, MapFnArityTable) {
  EXPECT_EQ(getMapFnArity(MapFn::sigmoid), 1u);
  EXPECT_EQ(getMapFnArity(MapFn::mul), 2u);
  EXPECT_EQ(getMapFnArity(MapFn::affine), 3u);
  EXPECT_EQ(getMapFnNumParams(MapFn::clamp), 2u);
  EXPECT_EQ(getMapFnNumParams(MapFn::add_const), 1u);
  EXPECT_EQ(getMapFnNumParams(MapFn::elu1), 0u);
}

TEST_F(LADialectTest, CanonicalizeFusesMapChainAndFoldsStaticSize) {
  auto module = parse(R"mlir(
    func.func @f(%x: tensor<4x8xf32>, %y: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<f32>) {
      %a = la.map sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
      %b = la.map mul "ij,i->ij" %a, %y : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
      %n = la.size %x along 1 : tensor<4x8xf32> -> tensor<f32>
      return %b, %n : tensor<4x8xf32>, tensor<f32>
    })mlir");
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  int maps = 0, sizes = 0;
  module->walk([&](Operation *op) {
    maps += isa<MapOp>(op);
    sizes += isa<SizeOp>(op);
  });
  EXPECT_EQ(maps, 1) << "sigmoid and mul should fuse into one map";
  EXPECT_EQ(sizes, 0) << "a static size should fold to a constant";
  MapOp fused;
  module->walk([&](MapOp op) { fused = op; });
  EXPECT_TRUE(fused.hasRegionBody());
  EXPECT_EQ(fused.getSubscriptsAttr().str(), "ij,i->ij") << "the fused map keeps the consumer's dimension letters";
}

} // namespace
