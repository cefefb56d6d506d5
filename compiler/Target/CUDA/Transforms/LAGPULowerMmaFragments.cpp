//===- LAGPULowerMmaFragments.cpp - mma operand fragments: ldmatrix or loads ===//
//
// la_gpu.mma_fragment (LAGPUOps.td has its layout) becomes one nvgpu.ldmatrix where the hardware can load
// it: the buffer is in shared memory, already of the 16-bit operand type, contiguous along the fragment's
// rows or along k with every 8-element row piece on a 16-byte boundary, and holding whole tiles. Then each
// lane gives the address of one 8-element row of one of the 8×8 matrices that make up the fragment, and
// ldmatrix hands every lane its registers. A row piece contiguous along k is one row of the matrix as
// ldmatrix expects it; one contiguous along the fragment's rows (m of A stored k-major, as φ(K)^T in
// φ(K)^T·V, or n of B stored k-major, as V in S·V) is a column, which `.trans` transposes on the way.
// Anything else reads one element per register half and converts it. A fragment with a map maps each
// element in registers after the load, before the conversion. CUDAPasses.td has the contract.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/IR/LAGPUDialect.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-lower-mma-fragments"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPULOWERMMAFRAGMENTS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// ldmatrix reads rows of 8 b16 elements, 16 bytes each, from 16-byte aligned addresses.
constexpr int64_t kRowBytes = 16, kRowElements = 8;

/// Whether `value` (an index) is provably a multiple of `factor`: constants, and sums and products of such.
bool isMultipleOf(Value value, int64_t factor) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return *constant % factor == 0;
  if (auto add = value.getDefiningOp<arith::AddIOp>())
    return isMultipleOf(add.getLhs(), factor) && isMultipleOf(add.getRhs(), factor);
  if (auto mul = value.getDefiningOp<arith::MulIOp>())
    return isMultipleOf(mul.getLhs(), factor) || isMultipleOf(mul.getRhs(), factor);
  return false;
}

/// Whether the first element of `buffer` is 16-byte aligned: a chain of subviews with static offsets of a
/// `memref.view` at a 16-byte multiple of shared memory (la-gpu-outline-slice-kernel aligns the shared
/// buffer to kScratchAlignment, 64 bytes).
bool startsOnRowBoundary(Value buffer) {
  int64_t elementBytes = cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8, offsetBytes = 0;
  while (auto subview = buffer.getDefiningOp<memref::SubViewOp>()) {
    auto [strides, offset] = subview.getSourceType().getStridesAndOffset();
    for (auto [start, stride] : llvm::zip(subview.getStaticOffsets(), strides)) {
      if (ShapedType::isDynamic(start) || ShapedType::isDynamic(stride))
        return false;
      offsetBytes += start * stride * elementBytes;
    }
    buffer = subview.getSource();
  }
  auto view = buffer.getDefiningOp<memref::ViewOp>();
  return view && view.getType().getLayout().isIdentity() && offsetBytes % kRowBytes == 0 &&
         isMultipleOf(view.getByteShift(), kRowBytes);
}

/// Whether ldmatrix can load `op`'s fragment: null if not, else whether with `.trans`.
std::optional<bool> ldmatrixTranspose(lagpu::MmaFragmentOp op) {
  MemRefType source = op.getSource().getType();
  auto reject = [&](const char *why) -> std::optional<bool> {
    LLVM_DEBUG(llvm::dbgs() << "la-gpu-lower-mma-fragments: loads for " << source << " at " << op.getLoc() << ": "
                            << why << "\n");
    return std::nullopt;
  };
  if (op.getPerRegister() != 2 || source.getElementType() != op.getFragment().getType().getElementType())
    return reject("not a 16-bit buffer of the operand type");
  if (!nvgpu::NVGPUDialect::hasSharedMemoryAddressSpace(source))
    return reject("not in shared memory");
  int64_t rowDim = op.getRowDim(), kDim = op.getKDim();
  ArrayRef<int64_t> shape = source.getShape();
  if (ShapedType::isDynamic(shape[rowDim]) || ShapedType::isDynamic(shape[kDim]) ||
      shape[rowDim] % op.getTileRows() != 0 || shape[kDim] % op.getK() != 0)
    return reject("ragged or dynamic tiles");
  auto [strides, offset] = source.getStridesAndOffset();
  bool transpose;
  if (strides[kDim] == 1)
    transpose = false;
  else if (strides[rowDim] == 1)
    transpose = true;
  else
    return reject("contiguous along neither the rows nor k");
  for (auto [dim, stride] : llvm::enumerate(strides))
    if (stride != 1 && (ShapedType::isDynamic(stride) || stride % kRowElements != 0))
      return reject("a stride that is not a multiple of 16 bytes");
  // Each lane's row starts at the origin plus a multiple of 8 along the contiguous dimension.
  if (!startsOnRowBoundary(op.getSource()) || !isMultipleOf(op.getOrigin()[transpose ? rowDim : kDim], kRowElements))
    return reject("not provably 16-byte aligned");
  return transpose;
}

/// `value` as base + constant: a constant has no base, an `arith.addi` with a constant operand the other
/// one, anything else itself with offset 0.
std::pair<Value, int64_t> splitOffset(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return {Value(), *constant};
  if (auto add = value.getDefiningOp<arith::AddIOp>()) {
    if (std::optional<int64_t> constant = getConstantIntValue(add.getRhs()))
      return {add.getLhs(), *constant};
    if (std::optional<int64_t> constant = getConstantIntValue(add.getLhs()))
      return {add.getRhs(), *constant};
  }
  return {value, 0};
}

/// Whether `second` is the B fragment of the tile 8 columns past `first`'s (a warp's tiles side by side:
/// la-gpu-contract-to-mma's origins groupBase + 8·j), read the same way from the same buffer, later in the
/// same block with no write to memory in between: one ldmatrix x4 at `first`, from `first`'s origin, can
/// load both.
bool isNextTile(lagpu::MmaFragmentOp first, lagpu::MmaFragmentOp second) {
  if (first->getBlock() != second->getBlock() || first.isA() || second.isA() ||
      first.getSource() != second.getSource() || first.getLane() != second.getLane() ||
      first.getRowDim() != second.getRowDim() || first.getKDim() != second.getKDim() ||
      first.getFragment().getType() != second.getFragment().getType() || first.hasMap() != second.hasMap() ||
      (first.hasMap() && !OperationEquivalence::isRegionEquivalentTo(&first.getMap(), &second.getMap(),
                                                                     OperationEquivalence::IgnoreLocations)))
    return false;
  for (auto [dim, pair] : llvm::enumerate(llvm::zip(first.getOrigin(), second.getOrigin()))) {
    auto [a, b] = pair;
    if (dim != first.getRowDim()) {
      if (a != b)
        return false;
      continue;
    }
    auto [baseA, offsetA] = splitOffset(a);
    auto [baseB, offsetB] = splitOffset(b);
    if (baseA != baseB || offsetB != offsetA + 8)
      return false;
  }
  // `second` is read early, at `first`: nothing in between may write memory (mma.sync and index
  // arithmetic are pure; another fragment only reads).
  for (Operation *op = first->getNextNode(); op != second.getOperation(); op = op->getNextNode())
    if (!isMemoryEffectFree(op) && !isa<lagpu::MmaFragmentOp>(op))
      return false;
  return true;
}

/// Emits the ops of one fragment lowering at `op`.
class FragmentLowering {
public:
  FragmentLowering(lagpu::MmaFragmentOp op) : b(op), loc(op.getLoc()), op(op) {}

  /// One ldmatrix of 4 (A) or 2 (B) 8×8 matrices. Lane l gives the address of row l % 8 of matrix l / 8
  /// (lanes 16-31 repeat those of 0-15 for B, whose x2 reads only the first 16). Matrix i holds register
  /// i's elements: for A, rows +8·(i % 2) and k +8·(i / 2); for B, k +8·i.
  Value ldmatrix(bool transpose) {
    auto [inMatrix, matrix] = laneRow();
    Value rowOffset, kOffset;
    if (op.isA()) {
      Value rowHalf = mul(rem(matrix, 2), 8), kHalf = mul(div(matrix, 2), 8);
      // A row piece along k is a row of 8 k for one m; along m (.trans), a row of 8 m for one k.
      rowOffset = transpose ? rowHalf : add(rowHalf, inMatrix);
      kOffset = transpose ? add(kHalf, inMatrix) : kHalf;
    } else {
      Value kHalf = mul(rem(matrix, 2), 8);
      rowOffset = transpose ? index(0) : inMatrix;
      kOffset = transpose ? add(kHalf, inMatrix) : kHalf;
    }
    return load(rowOffset, kOffset, op.getFragment().getType(), transpose);
  }

  /// One ldmatrix x4 for this B fragment and `next`'s, 8 columns on (isNextTile): matrices 0 and 1 are this
  /// tile's registers, 2 and 3 the next one's. Returns both fragments.
  std::pair<Value, Value> ldmatrixPair(bool transpose) {
    auto [inMatrix, matrix] = laneRow();
    Value kHalf = mul(rem(matrix, 2), 8), tile = mul(div(matrix, 2), 8);
    Value rowOffset = transpose ? tile : add(tile, inMatrix);
    Value kOffset = transpose ? add(kHalf, inMatrix) : kHalf;
    VectorType half = op.getFragment().getType();
    Value both = load(rowOffset, kOffset, VectorType::get({4, half.getDimSize(1)}, half.getElementType()), transpose);
    // Row by row: the NVVM tail lowers whole-row extracts and inserts (LLVM array elements), not n-D slices.
    auto rows = [&](int64_t first) {
      Value fragment = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(half)));
      for (int64_t r = 0; r < 2; ++r)
        fragment = vector::InsertOp::create(b, loc, vector::ExtractOp::create(b, loc, both, first + r), fragment, r);
      return fragment;
    };
    return {rows(0), rows(2)};
  }

  /// One load per element, converted to the operand type; zero past a ragged edge, read from a clamped
  /// address so that every lane loads and no branch splits the warp.
  Value loads() {
    VectorType type = op.getFragment().getType();
    Value lane = op.getLane();
    Value group = div(lane, 4), inGroup = rem(lane, 4);
    int64_t perRegister = op.getPerRegister(), k = op.getK();
    Value fragment = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
    for (int64_t r = 0; r < type.getDimSize(0); ++r)
      for (int64_t e = 0; e < perRegister; ++e) {
        Value row = add(op.getOrigin()[op.getRowDim()], op.isA() ? add(group, 8 * (r % 2)) : group);
        int64_t kStep = (op.isA() ? r / 2 : r) * (k / 2) + e;
        Value kk = add(op.getOrigin()[op.getKDim()], add(mul(inGroup, perRegister), index(kStep)));
        fragment = vector::InsertOp::create(b, loc, element(row, kk, type.getElementType()), fragment,
                                            ArrayRef<int64_t>{r, e});
      }
    return fragment;
  }

private:
  OpBuilder b;
  Location loc;
  lagpu::MmaFragmentOp op;

  /// The lane's row within its 8×8 matrix, and that matrix.
  std::pair<Value, Value> laneRow() { return {rem(op.getLane(), kRowElements), div(op.getLane(), kRowElements)}; }

  /// ldmatrix of `type` (one 8×8 matrix per register) from the origin moved by the lane's offsets.
  Value load(Value rowOffset, Value kOffset, VectorType type, bool transpose) {
    SmallVector<Value> indices(op.getOrigin());
    indices[op.getRowDim()] = add(indices[op.getRowDim()], rowOffset);
    indices[op.getKDim()] = add(indices[op.getKDim()], kOffset);
    Value loaded = nvgpu::LdMatrixOp::create(b, loc, type, op.getSource(), indices, transpose,
                                             static_cast<int32_t>(type.getDimSize(0)));
    if (!op.hasMap())
      return loaded;
    // ldmatrix only loads whole tiles: no element is past an edge, so each is mapped and converted back.
    Value mapped = loaded;
    for (int64_t r = 0; r < type.getDimSize(0); ++r)
      for (int64_t e = 0; e < type.getDimSize(1); ++e) {
        Value element = vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{r, e});
        mapped = vector::InsertOp::create(b, loc, convert(applyMap(element), type.getElementType()), mapped,
                                          ArrayRef<int64_t>{r, e});
      }
    return mapped;
  }

  /// The fragment's map applied to one element of its source (the element itself without a map).
  Value applyMap(Value element) {
    if (!op.hasMap())
      return element;
    Block &map = op.getMap().front();
    IRMapping mapping;
    mapping.map(map.getArgument(0), element);
    for (Operation &nested : map.without_terminator())
      b.clone(nested, mapping);
    return mapping.lookupOrDefault(cast<lagpu::YieldOp>(map.back()).getValue());
  }

  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }
  Value add(Value x, int64_t y) { return add(x, index(y)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, index(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, index(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, index(y)); }

  /// source[row, k] (the other dimensions at the origin) as `type`, or zero past the end of either.
  Value element(Value row, Value k, Type type) {
    SmallVector<Value> indices(op.getOrigin());
    Value inBounds;
    auto clamp = [&](int64_t dim, Value position, int64_t tile) {
      int64_t extent = op.getSource().getType().getDimSize(dim);
      if (!ShapedType::isDynamic(extent) && extent % tile == 0) {
        indices[dim] = position;
        return;
      }
      Value last = arith::SubIOp::create(b, loc, memref::DimOp::create(b, loc, op.getSource(), dim), index(1));
      Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, position, last);
      inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, fits).getResult() : fits;
      indices[dim] = arith::MinUIOp::create(b, loc, position, last);
    };
    clamp(op.getRowDim(), row, op.getTileRows());
    clamp(op.getKDim(), k, op.getK());
    Value value = convert(applyMap(memref::LoadOp::create(b, loc, op.getSource(), indices)), type);
    if (!inBounds)
      return value;
    Value zero = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
    return arith::SelectOp::create(b, loc, inBounds, value, zero);
  }

  Value convert(Value value, Type type) {
    auto from = cast<FloatType>(value.getType()), to = cast<FloatType>(type);
    if (from == to)
      return value;
    if (from.getWidth() < to.getWidth())
      return arith::ExtFOp::create(b, loc, type, value);
    if (from.getWidth() > to.getWidth())
      return arith::TruncFOp::create(b, loc, type, value);
    // f16 <-> bf16: through f32.
    return arith::TruncFOp::create(b, loc, type, arith::ExtFOp::create(b, loc, b.getF32Type(), value));
  }
};

struct LAGPULowerMmaFragmentsPass : impl::LAGPULowerMmaFragmentsBase<LAGPULowerMmaFragmentsPass> {
  void runOnOperation() override {
    SmallVector<lagpu::MmaFragmentOp> fragments;
    getOperation()->walk([&](lagpu::MmaFragmentOp op) { fragments.push_back(op); });
    // B fragments of neighbouring tiles in one ldmatrix x4, in pairs in program order.
    DenseMap<Operation *, lagpu::MmaFragmentOp> pairedWith;
    DenseSet<Operation *> seconds;
    DenseMap<Operation *, bool> transposeOf;
    for (lagpu::MmaFragmentOp op : fragments)
      if (std::optional<bool> transpose = ldmatrixTranspose(op))
        transposeOf[op] = *transpose;
    for (auto [i, first] : llvm::enumerate(fragments)) {
      if (!transposeOf.count(first) || seconds.contains(first))
        continue;
      for (lagpu::MmaFragmentOp second : ArrayRef(fragments).drop_front(i + 1))
        if (transposeOf.count(second) && !seconds.contains(second) && isNextTile(first, second)) {
          pairedWith[first] = second;
          seconds.insert(second);
          break;
        }
    }
    int64_t byLdmatrix = 0, byLoads = 0;
    for (lagpu::MmaFragmentOp op : fragments) {
      if (seconds.contains(op))
        continue; // lowered with the first of its pair
      FragmentLowering lowering(op);
      ++(transposeOf.count(op) ? byLdmatrix : byLoads);
      if (lagpu::MmaFragmentOp second = pairedWith.lookup(op)) {
        auto [mine, next] = lowering.ldmatrixPair(transposeOf[op]);
        second.replaceAllUsesWith(next);
        second.erase();
        op.replaceAllUsesWith(mine);
      } else {
        op.replaceAllUsesWith(transposeOf.count(op) ? lowering.ldmatrix(transposeOf[op]) : lowering.loads());
      }
      op.erase();
    }
    LLVM_DEBUG(llvm::dbgs() << "la-gpu-lower-mma-fragments: " << byLdmatrix << " ldmatrix (" << pairedWith.size()
                            << " for two B tiles), " << byLoads << " by loads\n");
  }
};

} // namespace
} // namespace mlir::la
