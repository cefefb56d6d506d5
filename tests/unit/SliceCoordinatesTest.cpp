//===- SliceCoordinatesTest.cpp - a slice's index along the sliced dimensions -===//
//
// The runtime tells each slice call where the slice sits ([b, h] for a [B, H, ...] call), which kernels that
// read `la.index` along a batch dimension need (retention's per-head decay). A thread's contiguous range of
// slices steps the coordinates one slice at a time (nextSliceCoordinates) from the first one's
// (getSliceCoordinates); both must agree on every slice, from any starting slice.
//
//===----------------------------------------------------------------------===//

#include "SliceCall.h"

#include <gtest/gtest.h>

namespace {

TEST(SliceCoordinates, SteppingMatchesTheDirectFormFromAnyStart) {
  const llvm::SmallVector<int64_t> shape{3, 4, 5}; // a [B, H, N] call sliced over B and H
  for (int64_t begin : {0, 1, 3, 7, 11}) {
    llvm::SmallVector<int64_t, 2> stepped(2);
    la::getSliceCoordinates(shape, begin, stepped);
    for (int64_t slice = begin; slice < 12; ++slice, la::nextSliceCoordinates(shape, stepped)) {
      llvm::SmallVector<int64_t, 2> direct(2);
      la::getSliceCoordinates(shape, slice, direct);
      EXPECT_EQ(stepped, direct) << "slice " << slice << " from " << begin;
      EXPECT_EQ(direct[0] * 4 + direct[1], slice);
    }
  }
}

TEST(SliceCoordinates, OneSlicedDimension) {
  const llvm::SmallVector<int64_t> shape{6, 100, 64}; // AFT's [B, T, d], sliced over B
  llvm::SmallVector<int64_t, 1> coordinates(1);
  la::getSliceCoordinates(shape, 4, coordinates);
  EXPECT_EQ(coordinates[0], 4);
  la::nextSliceCoordinates(shape, coordinates);
  EXPECT_EQ(coordinates[0], 5);
  la::nextSliceCoordinates(shape, coordinates);
  EXPECT_EQ(coordinates[0], 0) << "wraps after the last slice";
}

} // namespace
