//===- RegisterBlockAttr.cpp - the register-tiling lowering config --------===//
//
// `#la.register_block<tile = [...], order = [...], vector = V[, rows = R][, transpose = [...]]
//                     [, panel_loop = L, panel_size = P]>`: the plan `la-register-block-strategy` makes for a
// contraction, read by the register-tiling steps. Keys are written in this order and parsed in any order;
// the optional ones are printed only when set.
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LAOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::la;

LogicalResult RegisterBlockAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> tileSizes,
                                        ArrayRef<int64_t> loopOrder, int64_t vectorLoop, std::optional<int64_t> rowLoop,
                                        ArrayRef<int64_t> transposeInputs, std::optional<int64_t> panelLoop,
                                        int64_t panelSize) {
  int64_t rank = tileSizes.size();
  if (rank == 0)
    return emitError() << "a register block needs at least one loop";
  if (llvm::any_of(tileSizes, [](int64_t size) { return size < 1; }))
    return emitError() << "every tile size must be positive";
  llvm::SmallBitVector seen(rank);
  for (int64_t loop : loopOrder) {
    if (loop < 0 || loop >= rank || seen.test(loop))
      return emitError() << "order must be a permutation of the " << rank << " loops";
    seen.set(loop);
  }
  if (static_cast<int64_t>(loopOrder.size()) != rank)
    return emitError() << "order must be a permutation of the " << rank << " loops";
  auto isLoop = [&](int64_t loop) { return loop >= 0 && loop < rank; };
  if (!isLoop(vectorLoop))
    return emitError() << "vector loop " << vectorLoop << " is not one of the " << rank << " loops";
  if (rowLoop && (!isLoop(*rowLoop) || *rowLoop == vectorLoop))
    return emitError() << "row loop " << *rowLoop << " must be a loop other than the vector loop";
  if (llvm::any_of(transposeInputs, [](int64_t operand) { return operand < 0; }) || !llvm::is_sorted(transposeInputs) ||
      llvm::adjacent_find(transposeInputs) != transposeInputs.end())
    return emitError() << "transpose must list operand numbers in increasing order";
  if (panelLoop.has_value() != (panelSize > 0))
    return emitError() << "panel_loop and a positive panel_size go together";
  if (panelLoop && (!isLoop(*panelLoop) || *panelLoop == vectorLoop || panelLoop == rowLoop))
    return emitError() << "panel loop " << *panelLoop << " must be a loop other than the vector and row loops";
  return success();
}

RegisterBlockAttr RegisterBlockAttr::getBlock(MLIRContext *context, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  return get(context, shape, ArrayRef<int64_t>(order), static_cast<int64_t>(shape.size()) - 1, std::nullopt,
             ArrayRef<int64_t>(), std::nullopt, 0);
}

RegisterBlockAttr RegisterBlockAttr::withoutPanel() const {
  return get(getContext(), getTileSizes(), getLoopOrder(), getVectorLoop(), getRowLoop(), getTransposeInputs(),
             std::nullopt, 0);
}

RegisterBlockAttr RegisterBlockAttr::withoutTransposes() const {
  return get(getContext(), getTileSizes(), getLoopOrder(), getVectorLoop(), getRowLoop(), ArrayRef<int64_t>(),
             getPanelLoop(), getPanelSize());
}

bool RegisterBlockAttr::fitsInOneBlock(ArrayRef<int64_t> ranges) const {
  if (ranges.size() != getTileSizes().size())
    return false;
  return llvm::all_of(llvm::zip(ranges, getTileSizes()), [](auto pair) {
    auto [range, tile] = pair;
    return !ShapedType::isDynamic(range) && range <= tile;
  });
}

static void printList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << "[";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

void RegisterBlockAttr::print(AsmPrinter &printer) const {
  printer << "<tile = ";
  printList(printer, getTileSizes());
  printer << ", order = ";
  printList(printer, getLoopOrder());
  printer << ", vector = " << getVectorLoop();
  if (getRowLoop())
    printer << ", rows = " << *getRowLoop();
  if (!getTransposeInputs().empty()) {
    printer << ", transpose = ";
    printList(printer, getTransposeInputs());
  }
  if (getPanelLoop())
    printer << ", panel_loop = " << *getPanelLoop() << ", panel_size = " << getPanelSize();
  printer << ">";
}

Attribute RegisterBlockAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> tileSizes, loopOrder, transposeInputs;
  std::optional<int64_t> vectorLoop, rowLoop, panelLoop;
  int64_t panelSize = 0;
  llvm::StringSet<> seen;
  auto parseList = [&](SmallVector<int64_t> &values) {
    return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                          [&] { return parser.parseInteger(values.emplace_back()); });
  };
  auto parseInteger = [&](std::optional<int64_t> &value) { return parser.parseInteger(value.emplace()); };
  auto parseEntry = [&]() -> ParseResult {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (!seen.insert(key).second)
      return parser.emitError(keyLoc) << "'" << key << "' is given twice";
    if (key == "tile")
      return parseList(tileSizes);
    if (key == "order")
      return parseList(loopOrder);
    if (key == "vector")
      return parseInteger(vectorLoop);
    if (key == "rows")
      return parseInteger(rowLoop);
    if (key == "transpose")
      return parseList(transposeInputs);
    if (key == "panel_loop")
      return parseInteger(panelLoop);
    if (key == "panel_size")
      return parser.parseInteger(panelSize);
    return parser.emitError(keyLoc) << "unknown key '" << key
                                    << "'; expected tile, order, vector, rows, transpose, panel_loop or panel_size";
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater, parseEntry))
    return {};
  if (!seen.contains("tile") || !seen.contains("order") || !vectorLoop) {
    parser.emitError(loc) << "expected tile, order and vector";
    return {};
  }
  // (The generated getChecked, not AsmParser's template: the storage class is defined in LADialect.cpp.)
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(), ArrayRef<int64_t>(tileSizes),
                    ArrayRef<int64_t>(loopOrder), *vectorLoop, rowLoop, ArrayRef<int64_t>(transposeInputs), panelLoop,
                    panelSize);
}
