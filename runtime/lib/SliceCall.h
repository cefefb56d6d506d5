//===- SliceCall.h - call a compiled CPU kernel on one batch×head slice -*- C++ -*-===//
//
// A compiled CPU kernel takes one memref descriptor per tensor, {allocated, aligned, offset, sizes[r],
// strides[r]}, in the order: its arguments, one f32 [1, .., 1] coordinate per sliced dimension (the slice's
// index there, which `la-slice-positions` made the kernel read), its results. A SliceCall builds them once
// for the kernel's slice shapes; each call then only points them at a slice's data.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_SLICECALL_H
#define LA_RUNTIME_LIB_SLICECALL_H

#include "CpuJit.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace la {

class SliceCall {
public:
  explicit SliceCall(const LoadedKernel &kernel);
  SliceCall(const SliceCall &) = delete;
  SliceCall &operator=(const SliceCall &) = delete;

  /// Runs the kernel on one slice: `arguments` and `results` point at that slice's data (shaped like the
  /// kernel's `arguments` and `results`), `coordinates` give its index along each sliced dimension.
  void operator()(llvm::ArrayRef<char *> arguments, llvm::ArrayRef<char *> results,
                  llvm::ArrayRef<int64_t> coordinates);

private:
  void point(size_t tensor, char *data);

  const LoadedKernel &kernel;
  /// Every tensor's memref descriptor (allocated and aligned pointer, offset, sizes, strides), one after
  /// another in one buffer: built for each call of a kernel, so without a heap allocation for the usual
  /// arity (a state variant of Flow-Attention has 17 tensors of rank up to 4).
  llvm::SmallVector<int64_t, 192> descriptors;
  /// Where each tensor's descriptor starts in `descriptors`.
  llvm::SmallVector<unsigned, 24> starts;
  llvm::SmallVector<void *, 24> pointers;
  /// The coordinate tensors' data, one f32 each.
  llvm::SmallVector<float, 2> coordinateValues;
};

/// The index along each of the first `coordinates.size()` dimensions of `shape` of slice number `slice`
/// (row-major: the last sliced dimension varies fastest).
void getSliceCoordinates(llvm::ArrayRef<int64_t> shape, int64_t slice, llvm::MutableArrayRef<int64_t> coordinates);
/// Steps `coordinates` `step` slices on in the same order (wrapping to the first after the last); `step`
/// divides the last sliced dimension's size (a block of slices, or 1).
void nextSliceCoordinates(llvm::ArrayRef<int64_t> shape, llvm::MutableArrayRef<int64_t> coordinates, int64_t step = 1);

} // namespace la

#endif // LA_RUNTIME_LIB_SLICECALL_H
