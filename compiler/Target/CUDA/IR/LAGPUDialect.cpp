//===- LAGPUDialect.cpp - the `la_gpu` dialect ----------------------------===//

#include "Target/CUDA/IR/LAGPUDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::lagpu;

#include "Target/CUDA/IR/LAGPUDialect.cpp.inc"

void LAGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Target/CUDA/IR/LAGPUOps.cpp.inc"
      >();
}

LogicalResult MmaFragmentOp::verify() {
  MemRefType source = getSource().getType();
  VectorType fragment = getFragment().getType();
  int64_t rank = source.getRank();
  if (static_cast<int64_t>(getOrigin().size()) != rank)
    return emitOpError() << "has " << getOrigin().size() << " origin indices for a source of rank " << rank;
  // I64Attr getters are unsigned: a negative dimension reads as a huge one.
  auto rowDim = static_cast<int64_t>(getRowDim()), kDim = static_cast<int64_t>(getKDim());
  if (rowDim < 0 || rowDim >= rank || kDim < 0 || kDim >= rank || rowDim == kDim)
    return emitOpError() << "row_dim " << rowDim << " and k_dim " << kDim
                         << " must be two different dimensions of the rank-" << rank << " source";
  int64_t registers = fragment.getDimSize(0), perRegister = fragment.getDimSize(1);
  if (registers != 4 && registers != 2)
    return emitOpError() << "result " << fragment << " has " << registers
                         << " registers: an A operand has 4, a B operand 2";
  unsigned width = fragment.getElementTypeBitWidth();
  if (perRegister * width != 32)
    return emitOpError() << "result " << fragment << " does not pack " << perRegister << " elements of " << width
                         << " bits into each 32-bit register";
  if (!isa<FloatType>(source.getElementType()))
    return emitOpError() << "source element type " << source.getElementType() << " is not floating-point";
  if (!hasMap())
    return success();
  Block &map = getMap().front();
  if (!getMap().hasOneBlock() || map.getNumArguments() != 1 || map.getArgument(0).getType() != source.getElementType())
    return emitOpError() << "map must be one block with one argument of the source element type "
                         << source.getElementType();
  if (map.empty() || !isa<YieldOp>(map.back()))
    return emitOpError() << "map must end in la_gpu.yield";
  return success();
}

#define GET_OP_CLASSES
#include "Target/CUDA/IR/LAGPUOps.cpp.inc"
