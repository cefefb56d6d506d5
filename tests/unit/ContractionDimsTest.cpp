//===- ContractionDimsTest.cpp - batch/m/n/k roles of contraction letters ---===//

#include "Analysis/ContractionDims.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::la;

namespace {

struct ContractionDimsTest : ::testing::Test {
  ContractionDimsTest() { context.loadDialect<LADialect>(); }

  ContractionDims classify(StringRef text) {
    SubscriptsAttr subscripts =
        SubscriptsAttr::parseText(&context, text, [&] { return emitError(UnknownLoc::get(&context)); });
    EXPECT_TRUE(subscripts) << text.str();
    return inferContractionDims(subscripts);
  }

  MLIRContext context;
};

// Matrix products: linalg::inferContractionDims over the subscripts' indexing maps.
TEST_F(ContractionDimsTest, BatchedMatrixProduct) {
  ContractionDims dims = classify("bhnd,bhmd->bhnm"); // q kᵀ
  EXPECT_EQ(dims.batch, "bh");
  EXPECT_EQ(dims.m, "n");
  EXPECT_EQ(dims.n, "m");
  EXPECT_EQ(dims.k, "d");
}

TEST_F(ContractionDimsTest, SequenceReductionIsK) {
  ContractionDims dims = classify("bhmd,bhme->bhde"); // kᵀ v: the sequence is summed
  EXPECT_EQ(dims.batch, "bh");
  EXPECT_EQ(dims.m, "d");
  EXPECT_EQ(dims.n, "e");
  EXPECT_EQ(dims.k, "m");
}

TEST_F(ContractionDimsTest, MatrixVectorProduct) {
  ContractionDims dims = classify("bhnd,bhd->bhn"); // the normaliser q · z
  EXPECT_EQ(dims.batch, "bh");
  EXPECT_EQ(dims.m, "n");
  EXPECT_EQ(dims.n, "");
  EXPECT_EQ(dims.k, "d");
}

// Forms upstream does not cover, by the same rule.
TEST_F(ContractionDimsTest, OuterProductHasNoK) {
  ContractionDims dims = classify("bnd,bne->bnde");
  EXPECT_EQ(dims.batch, "bn");
  EXPECT_EQ(dims.m, "d");
  EXPECT_EQ(dims.n, "e");
  EXPECT_EQ(dims.k, "");
}

TEST_F(ContractionDimsTest, ThreeInputContraction) {
  ContractionDims dims = classify("bhnd,bhmd,bhme->bhne"); // tril(q kᵀ) v as one product
  EXPECT_EQ(dims.batch, "bh");
  EXPECT_EQ(dims.m, "n");
  EXPECT_EQ(dims.n, "e");
  EXPECT_EQ(dims.k, "dm");
  EXPECT_TRUE(dims.isReduction('m'));
  EXPECT_FALSE(dims.isReduction('e'));
}

TEST_F(ContractionDimsTest, LetterSummedInOneInputOnly) {
  ContractionDims dims = classify("nd,n->n"); // d is summed but only the first input has it
  EXPECT_EQ(dims.batch, "n");
  EXPECT_EQ(dims.k, "d");
}

} // namespace
