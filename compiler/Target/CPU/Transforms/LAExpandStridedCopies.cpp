//===- LAExpandStridedCopies.cpp - strided memref.copy as loops -----------===//
//
// `memref.copy` between contiguous buffers lowers to a memcpy intrinsic, but a copy involving a strided view
// (a slice of a larger buffer, as bufferisation makes for scan and loop results) lowers to a call to
// `memrefCopy` from MLIR's C runner utilities, a library the JIT does not link. Such copies become
// `linalg.copy` here, which the pipeline then turns into loops like every other linalg op.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAEXPANDSTRIDEDCOPIES
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

bool isContiguous(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return type.getLayout().isIdentity() || memref::isStaticShapeAndContiguousRowMajor(type);
}

struct LAExpandStridedCopiesPass : impl::LAExpandStridedCopiesBase<LAExpandStridedCopiesPass> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      if (isContiguous(copy.getSource()) && isContiguous(copy.getTarget()))
        return;
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });
  }
};

} // namespace
} // namespace mlir::la
