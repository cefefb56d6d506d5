//===- BatchSlicingTest.cpp - which library entries the runtime runs slice by slice -===//
//
// The runtime compiles an entry once per batch×head slice and runs the slices on its thread pool only when
// Analysis/BatchSlicing.h proves the entry independent over those leading dimensions; an entry it cannot
// prove runs whole on one thread. This pins the decision `la::inspectProgram` makes (the runtime's own
// path: inline, canonicalise, analyse) for every library entry, so that a kernel cannot silently lose its
// parallelism, and checks that the analysis still refuses what would be wrong to slice.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Compiler.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <map>

namespace {

/// The slicedDims of every public entry of `source`.
std::map<std::string, int64_t> slicedDimsOf(llvm::StringRef source, llvm::StringRef name) {
  auto infos = la::inspectProgram(source, name);
  EXPECT_TRUE(bool(infos)) << llvm::toString(infos.takeError());
  std::map<std::string, int64_t> dims;
  if (infos)
    for (const la::EntryInfo &info : *infos)
      dims[info.name] = info.slicing.dims;
  return dims;
}

std::map<std::string, int64_t> slicedDimsOfFile(llvm::StringRef file) {
  std::string path = std::string(LA_KERNELS_DIR) + "/" + file.str();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path;
  if (!buffer)
    return {};
  return slicedDimsOf((*buffer)->getBuffer(), path);
}

TEST(BatchSlicing, DecayKernelsSliceLikeTheirStatelessTwins) {
  std::map<std::string, int64_t> dims = slicedDimsOfFile("retention.mlir");
  // The initial state [B,H,K,V] and the final-state slice keep batch and head as leading dimensions.
  EXPECT_EQ(dims["simple_gla"], 2);
  EXPECT_EQ(dims["simple_gla_with_state"], 2);
  EXPECT_EQ(dims["gla"], 2);
  EXPECT_EQ(dims["gla_with_state"], 2);
  // Retention's gate reads the head index (la.index 1): a [1,1,T,D] slice reads it from an argument
  // (la-slice-positions), so retention slices over batch and heads like simple GLA.
  EXPECT_EQ(dims["retention"], 2);
  EXPECT_EQ(dims["retention_with_state"], 2);
}

/// The sharedArguments of every public entry of `file`.
std::map<std::string, std::vector<bool>> sharedArgumentsOfFile(llvm::StringRef file) {
  std::string path = std::string(LA_KERNELS_DIR) + "/" + file.str();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path;
  std::map<std::string, std::vector<bool>> shared;
  if (!buffer)
    return shared;
  auto infos = la::inspectProgram((*buffer)->getBuffer(), path);
  EXPECT_TRUE(bool(infos)) << llvm::toString(infos.takeError());
  if (infos)
    for (const la::EntryInfo &info : *infos)
      shared[info.name] = info.slicing.sharedArguments;
  return shared;
}

// AFT's position bias w[T, T] (AFT-conv's per-head kernels w[h, 7, 7]) has no batch dimension: every batch
// slice reads it whole, and the kernels that take it slice over the batch like the others (before, they ran
// whole on one thread).
TEST(BatchSlicing, AftBiasIsSharedByEveryBatch) {
  std::map<std::string, int64_t> dims = slicedDimsOfFile("aft.mlir");
  std::map<std::string, std::vector<bool>> shared = sharedArgumentsOfFile("aft.mlir");
  for (const char *entry : {"aft_full", "aft_full_causal", "aft_local", "aft_conv"}) {
    EXPECT_EQ(dims[entry], 1) << entry;
    EXPECT_EQ(shared[entry], (std::vector<bool>{false, false, false, true})) << entry;
  }
  for (const char *entry : {"aft_causal", "aft_simple"}) {
    EXPECT_EQ(dims[entry], 1) << entry;
    EXPECT_TRUE(shared[entry].empty()) << entry;
  }
}

/// An argument a map or contraction broadcasts along the batch is shared only if every use treats it so, and
/// only maps and contractions may combine it with a slice's values.
TEST(BatchSlicing, SharedArguments) {
  constexpr const char *kProgram = R"mlir(
// A bias added to every batch, then a per-row maximum of the bias alone: shared.
func.func @bias(%x: tensor<?x?x8xf32>, %w: tensor<?x8xf32>) -> tensor<?x?x8xf32> {
  %y = la.map add "btd,td->btd" %x, %w : tensor<?x?x8xf32>, tensor<?x8xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
// The same argument also added position by position, as if it had the batch dimension: not sliceable.
func.func @bias_and_batched(%x: tensor<?x?x8xf32>, %w: tensor<?x8xf32>) -> tensor<?x?x8xf32> {
  %y = la.map add "btd,td->btd" %x, %w : tensor<?x?x8xf32>, tensor<?x8xf32> -> tensor<?x?x8xf32>
  %z = la.map add "btd,bd->btd" %y, %w : tensor<?x?x8xf32>, tensor<?x8xf32> -> tensor<?x?x8xf32>
  return %z : tensor<?x?x8xf32>
}
// A shared value returned as a result: every slice would write it; not sliceable.
func.func @returns_shared(%x: tensor<?x?x8xf32>, %w: tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y = la.map add "btd,td->btd" %x, %w : tensor<?x?x8xf32>, tensor<?x8xf32> -> tensor<?x?x8xf32>
  %e = la.map exp %w : tensor<?x8xf32> -> tensor<?x8xf32>
  return %y, %e : tensor<?x?x8xf32>, tensor<?x8xf32>
}
// A projection matrix without batch or head letters: shared by every (batch, head) slice.
func.func @shared_matrix(%x: tensor<?x?x?x8xf32>, %m: tensor<8x4xf32>) -> tensor<?x?x?x4xf32> {
  %y = la.contract "bhtd,de->bhte" %x, %m : tensor<?x?x?x8xf32>, tensor<8x4xf32> -> tensor<?x?x?x4xf32>
  return %y : tensor<?x?x?x4xf32>
}
)mlir";
  auto infos = la::inspectProgram(kProgram, "shared.mlir");
  ASSERT_TRUE(bool(infos)) << llvm::toString(infos.takeError());
  std::map<std::string, la::SliceLayout> slicing;
  for (const la::EntryInfo &info : *infos)
    slicing[info.name] = info.slicing;
  EXPECT_EQ(slicing["bias"].dims, 1);
  EXPECT_EQ(slicing["bias"].sharedArguments, (std::vector<bool>{false, true}));
  EXPECT_EQ(slicing["bias_and_batched"].dims, 0);
  EXPECT_EQ(slicing["returns_shared"].dims, 0);
  EXPECT_EQ(slicing["shared_matrix"].dims, 2);
  EXPECT_EQ(slicing["shared_matrix"].sharedArguments, (std::vector<bool>{false, true}));
}

TEST(BatchSlicing, LibraryEntries) {
  std::map<std::string, int64_t> linear = slicedDimsOfFile("linear_attention.mlir");
  EXPECT_EQ(linear["linear_attention"], 2);
  EXPECT_EQ(linear["linear_attention_causal"], 2);
  std::map<std::string, int64_t> flow = slicedDimsOfFile("flow_attention.mlir");
  EXPECT_EQ(flow["flow_attention"], 2);
  EXPECT_EQ(flow["flow_attention_causal"], 2);
}

/// A slice that drops or offsets a leading dimension, a reshape that merges one, or a size read from one
/// that is used as anything but that dimension's extent depends on the whole tensor: none of these may be
/// sliced over it. Shape glue that keeps the leading dimensions whole may.
TEST(BatchSlicing, ShapeGlue) {
  constexpr const char *kProgram = R"mlir(
// The last batch row only: offset along dimension 0.
func.func @last_batch(%x: tensor<?x?x8xf32>) -> tensor<1x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %last = arith.subi %b, %c1 : index
  %s = tensor.extract_slice %x[%last, 0, 0] [1, %h, 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<1x?x8xf32>
  return %s : tensor<1x?x8xf32>
}
// Batch and head merged into one dimension.
func.func @merged(%x: tensor<?x?x8xf32>) -> tensor<?x8xf32> {
  %m = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  return %m : tensor<?x8xf32>
}
// The batch size as the extent of the head dimension of an expanded tensor.
func.func @batch_as_heads(%x: tensor<?x?x8xf32>) -> tensor<?x?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %s = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %b, 2, 4] : tensor<?x?x8xf32> into tensor<?x?x2x4xf32>
  return %s : tensor<?x?x2x4xf32>
}
// The batch size used as a length along another dimension.
func.func @batch_as_length(%x: tensor<?x?x8xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %e = tensor.empty(%b, %h, %b) : tensor<?x?x?xf32>
  return %e : tensor<?x?x?xf32>
}
// The last dimension split in two: leading dimensions untouched, still sliceable.
func.func @split_last(%x: tensor<?x?x8xf32>) -> tensor<?x?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %s = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %h, 2, 4] : tensor<?x?x8xf32> into tensor<?x?x2x4xf32>
  return %s : tensor<?x?x2x4xf32>
}
// The first position of every (batch, head) slice: still sliceable.
func.func @first_position(%x: tensor<?x?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x?x8xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x8xf32>
  %s = tensor.extract_slice %x[0, 0, 0, 0] [%b, %h, 1, 8] [1, 1, 1, 1] : tensor<?x?x?x8xf32> to tensor<?x?x1x8xf32>
  %r = tensor.collapse_shape %s [[0], [1], [2, 3]] : tensor<?x?x1x8xf32> into tensor<?x?x8xf32>
  return %r : tensor<?x?x8xf32>
}
// The last position of a [B, H, N] running value (a derived variant's state): the unit dimension joins the
// head dimension's group, which a slice leaves whole; still sliceable.
func.func @last_of_vector(%x: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %n = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %last = arith.subi %n, %c1 : index
  %s = tensor.extract_slice %x[0, 0, %last] [%b, %h, 1] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x1xf32>
  %r = tensor.collapse_shape %s [[0], [1, 2]] : tensor<?x?x1xf32> into tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
// Heads merged with a dimension that is not a unit: not sliceable over heads.
func.func @heads_merged(%x: tensor<?x?x4xf32>) -> tensor<?x?xf32> {
  %r = tensor.collapse_shape %x [[0], [1, 2]] : tensor<?x?x4xf32> into tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
)mlir";
  std::map<std::string, int64_t> dims = slicedDimsOf(kProgram, "cross-slice.mlir");
  EXPECT_EQ(dims["last_batch"], 0);
  EXPECT_EQ(dims["merged"], 0);
  EXPECT_EQ(dims["batch_as_length"], 0);
  EXPECT_EQ(dims["batch_as_heads"], 0);
  EXPECT_EQ(dims["first_position"], 2);
  EXPECT_EQ(dims["split_last"], 2);
  EXPECT_EQ(dims["last_of_vector"], 2);
  EXPECT_EQ(dims["heads_merged"], 1);
}

} // namespace
