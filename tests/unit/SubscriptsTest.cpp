//===- SubscriptsTest.cpp - #la.subscripts: parsing and dimension queries ---===//

#include "LA/IR/LADialect.h"
#include "LA/IR/LAOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using mlir::la::SubscriptsAttr;

namespace {

struct SubscriptsTest : ::testing::Test {
  SubscriptsTest() { context.loadDialect<la::LADialect>(); }

  /// Parses `text`, keeping the message of a malformed string in `error`.
  SubscriptsAttr parse(StringRef text) {
    error.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      error = diag.str();
      return success();
    });
    return SubscriptsAttr::parseText(&context, text, [&] { return emitError(UnknownLoc::get(&context)); });
  }

  MLIRContext context;
  std::string error;
};

TEST_F(SubscriptsTest, ParsesTermsAndQueries) {
  SubscriptsAttr parsed = parse("bhnd,bhmd,bhme->bhne");
  ASSERT_TRUE(parsed) << error;
  ASSERT_EQ(parsed.getNumInputs(), 3u);
  EXPECT_EQ(parsed.getInput(1), "bhmd");
  EXPECT_EQ(parsed.getResult(), "bhne");
  EXPECT_EQ(parsed.getContractedLetters(), "dm");
  EXPECT_EQ(parsed.getBatchLetters(), "bh");
  EXPECT_EQ(parsed.getLetters(), "bhnedm");
  EXPECT_EQ(parsed.getResultDim('e'), 3);
  EXPECT_EQ(parsed.getResultDim('m'), -1);
  EXPECT_EQ(parsed.str(), "bhnd,bhmd,bhme->bhne");
  EXPECT_EQ(parsed, SubscriptsAttr::getFromTerms(&context, {"bhnd", "bhmd", "bhme"}, "bhne"))
      << "parsed once: the same letters give the same attribute";
}

TEST_F(SubscriptsTest, IndexingMapsOverResultThenContractedLetters) {
  SubscriptsAttr parsed = parse("nd,md->nm");
  ASSERT_TRUE(parsed) << error;
  SmallVector<AffineMap> maps = parsed.getIndexingMaps();
  ASSERT_EQ(maps.size(), 3u);
  auto text = [](AffineMap map) {
    std::string s;
    llvm::raw_string_ostream os(s);
    map.print(os);
    return s;
  };
  // Loops n, m, d (result letters, then the contracted d).
  EXPECT_EQ(text(maps[0]), "(d0, d1, d2) -> (d0, d2)");
  EXPECT_EQ(text(maps[1]), "(d0, d1, d2) -> (d1, d2)");
  EXPECT_EQ(text(maps[2]), "(d0, d1, d2) -> (d0, d1)");
  // In a caller's loop order.
  EXPECT_EQ(text(parsed.getIndexingMaps("dnm")[0]), "(d0, d1, d2) -> (d1, d0)");
}

TEST_F(SubscriptsTest, RankZeroTermIsEmpty) {
  SubscriptsAttr parsed = parse(",bhn->bhn");
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed.getInput(0), "");
  EXPECT_EQ(parsed.getBatchLetters(), "");
  EXPECT_EQ(parsed.str(), ",bhn->bhn");
}

TEST_F(SubscriptsTest, RejectsMalformedWithPreciseMessages) {
  auto errorOf = [&](StringRef text) {
    EXPECT_FALSE(parse(text)) << text.str();
    return error;
  };
  EXPECT_NE(errorOf("bhnd,bhmd").find("no '->'"), std::string::npos);
  EXPECT_NE(errorOf("ab->a->b").find("more than one '->'"), std::string::npos);
  EXPECT_NE(errorOf("aB,b->a").find("has 'B' at position 1"), std::string::npos);
  EXPECT_NE(errorOf("aa,b->a").find("repeats dimension 'a'"), std::string::npos);
  EXPECT_NE(errorOf("ab,b->aa").find("of the result"), std::string::npos);
}

} // namespace
