//===- LAGPUFuseProducersIntoLoops.cpp - elementwise producers computed per chunk ===//
//
// The la→la stage leaves a kernel's feature maps and casts (φ(q), φ(k), v in f32, a decay's log-gates) as
// generics over the whole sequence slice, which chunk loops then read a chunk at a time. On the CPU that is
// cheap: the tensor is cache-resident and the register blocks slice their producers (ProducerSlicer). On the
// GPU such a tensor is a global scratch buffer: written once, read back by every loop that slices it, and
// wider than its inputs (f16 in, f32 out). Computing the producer on each slice instead keeps the chunk's
// tile small enough for shared memory (la-gpu-outline-slice-kernel) and reads the inputs in their own type.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-fuse-producers-into-loops"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUFUSEPRODUCERSINTOLOOPS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Bytes of one element of a statically shaped tensor, 0 for anything else.
double elementBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isIntOrFloat())
    return 0;
  return tensor.getElementTypeBitWidth() / 8.0;
}

/// The slices of `result` each taken inside a loop that does not hold its producer: what fusing would
/// recompute. `others` counts every other use (the producer runs whole for those anyway).
struct SliceUses {
  SmallVector<tensor::ExtractSliceOp> inLoops;
  unsigned others = 0;
};

SliceUses classifyUses(OpResult result) {
  SliceUses uses;
  for (Operation *user : result.getUsers()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    auto loop = slice ? slice->getParentOfType<scf::ForOp>() : scf::ForOp();
    if (loop && !loop->isAncestor(result.getOwner()))
      uses.inLoops.push_back(slice);
    else
      ++uses.others;
  }
  return uses;
}

/// Whether recomputing `producer` on each of its slices in loops moves fewer global bytes than writing its
/// result once and reading the slices back, per element of the result: with u slices in loops, reading I
/// bytes of inputs and writing O, fused costs u·I, unfused I + O + u·O; when other uses keep the whole
/// result anyway, fused costs I + O + u·I. (A slice covers the result once over its loop's iterations; the
/// arithmetic is ignored: the producers are elementwise and the GPU has ALU to spare next to its memory.)
bool fusingSavesTraffic(linalg::GenericOp producer, const SliceUses &uses) {
  auto resultType = cast<RankedTensorType>(producer->getResult(0).getType());
  double outputBytes = elementBytes(resultType);
  if (outputBytes == 0)
    return false;
  double inputBytes = 0;
  for (Value input : producer.getDpsInputs()) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type) // A scalar: read once, wherever it is computed.
      continue;
    if (elementBytes(type) == 0)
      return false;
    inputBytes += elementBytes(type) * double(type.getNumElements()) / double(resultType.getNumElements());
  }
  double u = uses.inLoops.size();
  double fused = u * inputBytes + (uses.others ? inputBytes + outputBytes : 0);
  double unfused = inputBytes + outputBytes + u * outputBytes;
  return fused <= unfused;
}

/// A producer worth computing per slice: an elementwise generic with one result, no reduction and a
/// static shape.
bool isFusibleProducer(linalg::GenericOp generic) {
  return generic && generic->getNumResults() == 1 && linalg::isElementwise(generic) &&
         cast<RankedTensorType>(generic->getResult(0).getType()).hasStaticShape();
}

struct LAGPUFuseProducersIntoLoopsPass : impl::LAGPUFuseProducersIntoLoopsBase<LAGPUFuseProducersIntoLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // A fused producer's slice reads slices of its own inputs, which may be producers in turn: repeat until
    // no producer moves (each round moves at least one op into a deeper loop, so this ends).
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<linalg::GenericOp> producers;
      getOperation().walk([&](linalg::GenericOp generic) {
        if (isFusibleProducer(generic))
          producers.push_back(generic);
      });
      for (linalg::GenericOp producer : producers) {
        SliceUses uses = classifyUses(producer->getResult(0));
        if (uses.inLoops.empty() || !fusingSavesTraffic(producer, uses))
          continue;
        for (tensor::ExtractSliceOp slice : uses.inLoops) {
          rewriter.setInsertionPoint(slice);
          FailureOr<TilingResult> tiled =
              tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, producer->getResult(0));
          if (failed(tiled) || tiled->tiledValues.front().getType() != slice.getType()) {
            LLVM_DEBUG(llvm::dbgs() << "not fused into its loop: " << slice << "\n");
            continue;
          }
          LLVM_DEBUG(llvm::dbgs() << "fused " << producer->getName() << " at " << producer->getLoc()
                                  << " into the loop of " << slice << "\n");
          rewriter.replaceOp(slice, tiled->tiledValues.front());
          changed = true;
        }
        if (producer->use_empty())
          rewriter.eraseOp(producer);
      }
    }
    // A fused producer writes into a slice of its old destination, usually a tensor.empty of the whole
    // sequence that other loops use too: an empty tensor of the slice's shape instead, so each bufferises to
    // its own per-chunk temporary rather than to a window of a sequence-long buffer.
    RewritePatternSet patterns(&getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
