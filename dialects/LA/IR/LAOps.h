//===- LAOps.h - ops and attributes of the `la` dialect ---------*- C++ -*-===//

#ifndef LA_IR_LAOPS_H
#define LA_IR_LAOPS_H

#include "LA/IR/LADialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "LA/IR/LAEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "LA/IR/LAAttrs.h.inc"

#define GET_OP_CLASSES
#include "LA/IR/LAOps.h.inc"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

namespace mlir::la {

/// The reassociation that folds unit dimension `dim` of a rank-`rank` shape into a neighbour (the next one, or
/// the previous when it is last; none for rank 1, which collapses to rank 0). Spelled out because a
/// rank-reducing slice leaves the dropped dimension to be inferred, which is ambiguous once other dimensions
/// are 1 too (a [1, H, 1, D] slice of one position of one batch). Used where a scan of one position drops or
/// restores its sequence dimension.
SmallVector<ReassociationIndices> getUnitDimReassociation(int64_t rank, int64_t dim);

} // namespace mlir::la

#endif // LA_IR_LAOPS_H
