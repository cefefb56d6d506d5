//===- LANVGPUBF16MmaToNVVM.cpp - bf16 mma.sync past an upstream gap ------===//
//
// MLIR 22 verifies a bf16 nvgpu.mma.sync but cannot lower it; CUDAPasses.td has the rewrite. Remove this
// pass when convert-nvgpu-to-nvvm deduces bf16 (tests/Target/CUDA/la-nvgpu-bf16-mma-to-nvvm.mlir shows it).
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

namespace mlir::la {
#define GEN_PASS_DEF_LANVGPUBF16MMATONVVM
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

bool isBF16M16N8K16(nvgpu::MmaSyncOp op) {
  auto shape = op.getMmaShapeAsArray();
  return op.getMatrixA().getType().getElementType().isBF16() && shape[0] == 16 && shape[1] == 8 && shape[2] == 16 &&
         op.getMatrixC().getType().getElementType().isF32();
}

/// The rows of a vector<Rx2xbf16> fragment, each bitcast to the i32 register that holds it.
SmallVector<Value> packedRegisters(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  auto pair = VectorType::get({1}, b.getI32Type());
  SmallVector<Value> registers;
  for (int64_t r = 0; r < type.getDimSize(0); ++r) {
    Value row = vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{r});
    Value word = vector::BitCastOp::create(b, loc, pair, row);
    registers.push_back(vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
  }
  return registers;
}

void lower(nvgpu::MmaSyncOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> a = packedRegisters(b, loc, op.getMatrixA());
  SmallVector<Value> bRegisters = packedRegisters(b, loc, op.getMatrixB());
  SmallVector<Value> c;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t e = 0; e < 2; ++e)
      c.push_back(vector::ExtractOp::create(b, loc, op.getMatrixC(), ArrayRef<int64_t>{r, e}));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto mma = NVVM::MmaOp::create(b, loc, resultType, a, bRegisters, c, ArrayRef<int64_t>{16, 8, 16},
                                 /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                                 std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
                                 std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, mma, ArrayRef<int64_t>{i}));
  op.replaceAllUsesWith(vector::FromElementsOp::create(b, loc, op.getType(), d).getResult());
  op.erase();
}

struct LANVGPUBF16MmaToNVVMPass : impl::LANVGPUBF16MmaToNVVMBase<LANVGPUBF16MmaToNVVMPass> {
  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> mmas;
    getOperation()->walk([&](nvgpu::MmaSyncOp op) {
      if (isBF16M16N8K16(op))
        mmas.push_back(op);
    });
    for (nvgpu::MmaSyncOp op : mmas)
      lower(op);
  }
};

} // namespace
} // namespace mlir::la
