//===- LAFuseBlockEpilogues.cpp - elementwise consumers on register blocks ===//
//
// Chooses the consumers to fuse (BlockEpilogues.h does the fusing): the elementwise consumer of each matrix
// product planned with a row loop, and of each loop that writes its result a tile at a time.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockEpilogues.h"
#include "Target/CPU/Transforms/BlockLoops.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-fuse-block-epilogues"

namespace mlir::la {
#define GEN_PASS_DEF_LAFUSEBLOCKEPILOGUES
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

struct EpilogueTarget {
  SmallVector<linalg::GenericOp, 2> contractions;
  linalg::GenericOp epilogue;
  RegisterBlockAttr config;
};

struct LAFuseBlockEpiloguesPass : impl::LAFuseBlockEpiloguesBase<LAFuseBlockEpiloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<EpilogueTarget> targets;
    llvm::DenseMap<Operation *, size_t> targetOfEpilogue;
    func.walk([&](linalg::GenericOp op) {
      RegisterBlockAttr config = getRegisterBlock(op);
      if (!config || !config.getRowLoop())
        return;
      linalg::GenericOp epilogue = findEpilogue(op->getResult(0));
      if (!epilogue)
        return;
      // A consumer of two products with one plan (AFT's num / den) runs on the blocks of both: each block
      // computes its tile of each product, then the consumer; the second product is never stored whole
      // (aft_conv: its 8 MiB accumulator was filled, written and read back). With different plans it runs
      // on the first's blocks and reads slices of the second.
      auto [it, inserted] = targetOfEpilogue.try_emplace(epilogue, targets.size());
      if (inserted)
        targets.push_back({{op}, epilogue, config});
      else if (targets[it->second].config == config)
        targets[it->second].contractions.push_back(op);
    });
    // Causal chunk loops write their output a chunk at a time: a consumer of that runs on each chunk.
    SmallVector<std::pair<OpResult, linalg::GenericOp>> loopTargets;
    llvm::SmallPtrSet<Operation *, 4> loopEpilogues;
    func.walk([&](scf::ForOp loop) {
      for (OpResult result : loop.getResults()) {
        auto insert = loop.getYieldedValues()[result.getResultNumber()].getDefiningOp<tensor::InsertSliceOp>();
        if (!insert || llvm::count_if(insert.getSourceType().getShape(), [](int64_t size) { return size > 1; }) < 2)
          continue;
        if (linalg::GenericOp epilogue = findEpilogue(result))
          if (!targetOfEpilogue.contains(epilogue) && loopEpilogues.insert(epilogue).second)
            loopTargets.emplace_back(result, epilogue);
      }
    });
    if (targets.empty() && loopTargets.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (auto [result, epilogue] : loopTargets) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << epilogue.getLoc() << ": consumer of a tile loop\n");
      // An optimisation: unfused is fine.
      if (failed(fuseEpilogueIntoLoop(rewriter, result, epilogue)))
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "]   left unfused\n");
    }
    for (EpilogueTarget &target : targets) {
      Location loc = target.epilogue.getLoc(); // the ops are replaced before a failure is known
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loc << ": consumer fused into the blocks of "
                              << target.contractions.size() << " product(s), the first at "
                              << target.contractions.front().getLoc() << "\n");
      FailureOr<SmallVector<LoopLikeOpInterface>> loops = fuseEpilogueIntoBlocks(
          rewriter, target.contractions, target.epilogue, target.config.getTileSizes(), target.config.getLoopOrder());
      if (failed(loops)) {
        emitError(loc, "la-fuse-block-epilogues: fusing this consumer into register blocks failed");
        return signalPassFailure();
      }
      peelOuterToInner(rewriter, *loops);
    }
    // Static shapes for the peeled blocks, and block-sized accumulators instead of slices of N×Dv ones.
    if (failed(canonicalizeBlocks(func, /*foldEmptyTensors=*/true)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
