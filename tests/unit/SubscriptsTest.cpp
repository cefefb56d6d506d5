//===- SubscriptsTest.cpp - parsing of einsum-like subscripts ---------------===//

#include "LA/IR/Subscripts.h"

#include <gtest/gtest.h>

using mlir::la::Subscripts;

TEST(Subscripts, ParsesTermsAndQueries) {
  auto parsed = Subscripts::parse("bhnd,bhmd,bhme->bhne");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  ASSERT_EQ(parsed->inputs.size(), 3u);
  EXPECT_EQ(parsed->inputs[1], "bhmd");
  EXPECT_EQ(parsed->result, "bhne");
  EXPECT_EQ(parsed->contractedLetters(), "dm");
  EXPECT_EQ(parsed->batchLetters(), "bh");
  EXPECT_EQ(parsed->str(), "bhnd,bhmd,bhme->bhne");
}

TEST(Subscripts, RankZeroTermIsEmpty) {
  auto parsed = Subscripts::parse(",bhn->bhn");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->inputs[0], "");
  EXPECT_EQ(parsed->batchLetters(), "");
}

static std::string errorOf(llvm::StringRef text) {
  auto parsed = Subscripts::parse(text);
  if (parsed)
    return "";
  return llvm::toString(parsed.takeError());
}

TEST(Subscripts, RejectsMalformedWithPreciseMessages) {
  EXPECT_NE(errorOf("bhnd,bhmd").find("no '->'"), std::string::npos);
  EXPECT_NE(errorOf("ab->a->b").find("more than one '->'"), std::string::npos);
  EXPECT_NE(errorOf("aB,b->a").find("has 'B' at position 1"), std::string::npos);
  EXPECT_NE(errorOf("aa,b->a").find("repeats dimension 'a'"), std::string::npos);
  EXPECT_NE(errorOf("ab,b->aa").find("of the result"), std::string::npos);
}
