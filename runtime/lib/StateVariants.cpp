//===- StateVariants.cpp - declarations of prefill/resume variants --------===//
//
// `lac run --variant` and `lac signature --variant` run a variant the kernel file does not declare: the
// declaration is derived here and appended to the source, so the variant is an entry like any other (its
// cache key is the text's hash, its names and domains are the ones printed here).
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Compiler.h"

#include "ParsedProgram.h"

#include "Transforms/StateVariants.h"

#include "LA/IR/LADialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cassert>
#include <utility>

namespace la {
namespace {

/// `s` when the op at `location` is written `%s = ...` in `source`; empty otherwise.
std::string resultNameAt(llvm::StringRef source, mlir::Location location) {
  auto fileLoc = mlir::dyn_cast<mlir::FileLineColLoc>(location);
  if (!fileLoc)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  source.split(lines, '\n');
  if (fileLoc.getLine() == 0 || fileLoc.getLine() > lines.size())
    return "";
  llvm::StringRef line = lines[fileLoc.getLine() - 1];
  llvm::StringRef before = line.take_front(fileLoc.getColumn() > 0 ? fileLoc.getColumn() - 1 : 0).rtrim();
  if (!before.consume_back("="))
    return "";
  before = before.rtrim();
  size_t percent = before.rfind('%');
  if (percent == llvm::StringRef::npos)
    return "";
  llvm::StringRef name = before.drop_front(percent + 1);
  bool plain = !name.empty() && llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
  return plain ? name.str() : "";
}

// la::kAnyBlockAlignment stands for the compiler's own, for callers that do not see MLIR's headers.
static_assert(kAnyBlockAlignment == mlir::la::kAnyBlockAlignment);

template <typename Printable> std::string printed(Printable printable) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printable.print(os);
  return text;
}

/// The name of `variant` of `entry`: `<entry>.<variant>`, and `.<level>` for a state variant of one level.
std::string variantFunctionName(llvm::StringRef entry, llvm::StringRef variant, std::optional<int> level) {
  std::string name = (entry + "." + variant).str();
  if (level)
    name += "." + std::to_string(*level);
  return name;
}

/// `variant` of `entry` (of the states of `level` alone, for a state variant; for stretches that start at
/// multiples of `alignedTo`) derived in `parsed` as the function variantFunctionName names.
llvm::Expected<mlir::la::DerivedStateVariant> derive(ParsedProgram &parsed, llvm::StringRef bufferName,
                                                     llvm::StringRef entry, mlir::la::StateVariant variant,
                                                     std::optional<int> level = std::nullopt, int64_t alignedTo = 1) {
  llvm::StringRef variantName = mlir::la::getStateVariantName(variant);
  mlir::ModuleOp module = *parsed.module;
  mlir::SymbolTable symbols(module);
  auto function = symbols.lookup<mlir::func::FuncOp>(entry);
  if (!function || function.isExternal())
    return llvm::createStringError(bufferName.str() + ": no entry named '" + entry.str() + "' to derive a " +
                                   variantName.str() + " variant of");
  auto derived = mlir::la::deriveStateVariant(function, variant, variantFunctionName(entry, variantName, level),
                                              symbols, level, alignedTo);
  if (mlir::failed(derived))
    return parsed.diagnostics.error(bufferName.str() + ": '" + entry.str() + "' has no " + variantName.str() +
                                    " variant");
  return *derived;
}

} // namespace

std::vector<std::string> entryArgumentNames(llvm::StringRef source, llvm::StringRef entry) {
  std::vector<std::string> names;
  // A derived variant is declared `func.func private @name(...)` (la-derive-state-variants).
  size_t at = source.find(("func.func @" + entry + "(").str());
  if (at == llvm::StringRef::npos)
    at = source.find(("func.func private @" + entry + "(").str());
  if (at == llvm::StringRef::npos)
    return names;
  llvm::StringRef rest = source.drop_front(at);
  rest = rest.drop_front(rest.find('(') + 1);
  int depth = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '<' || c == '(' || c == '{')
      ++depth;
    else if (c == '>' || c == ')' || c == '}') {
      if (depth == 0)
        break;
      --depth;
    } else if (c == '%' && depth == 0) {
      size_t end = rest.find(':', i);
      names.push_back(rest.slice(i + 1, end).trim().str());
    }
  }
  return names;
}

llvm::Expected<SequenceStates> getSequenceStates(llvm::StringRef source, llvm::StringRef bufferName,
                                                 llvm::StringRef entry, int64_t alignedTo) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  auto derived = derive(**parsed, bufferName, entry, mlir::la::StateVariant::Prefill, std::nullopt, alignedTo);
  if (!derived)
    return derived.takeError();
  SequenceStates states{derived->sequenceDim, derived->additive, derived->combinable, {}};
  states.alignment = derived->alignment;
  // la::StateCombine is mlir::la::StateCombine for callers that do not see MLIR's headers: same cases, in
  // the same order.
  constexpr std::pair<mlir::la::StateCombine, StateCombine> kCombines[] = {
      {mlir::la::StateCombine::Sum, StateCombine::Sum},
      {mlir::la::StateCombine::Decay, StateCombine::Decay},
      {mlir::la::StateCombine::SoftmaxAverage, StateCombine::SoftmaxAverage},
      {mlir::la::StateCombine::SoftmaxMax, StateCombine::SoftmaxMax},
      {mlir::la::StateCombine::SoftmaxNorm, StateCombine::SoftmaxNorm}};
  for (const mlir::la::StateOrigin &origin : derived->states) {
    states.levels.push_back(origin.level);
    states.combines.push_back(kCombines[static_cast<size_t>(origin.combine)].second);
    assert(kCombines[static_cast<size_t>(origin.combine)].first == origin.combine && "cases out of order");
  }
  return states;
}

llvm::Expected<std::string> declareStateVariant(llvm::StringRef source, llvm::StringRef bufferName,
                                                llvm::StringRef entry, llvm::StringRef variant,
                                                std::optional<int> level, int64_t alignedTo) {
  std::optional<mlir::la::StateVariant> kind = mlir::la::parseStateVariant(variant);
  if (!kind)
    return llvm::createStringError("variant '" + variant.str() + "': expected prefill, resume or state");
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  if (level && *kind != mlir::la::StateVariant::State)
    return llvm::createStringError("variant '" + variant.str() + "': only the state variant has levels");
  auto derived = derive(**parsed, bufferName, entry, *kind, level, alignedTo);
  if (!derived)
    return derived.takeError();
  mlir::func::FuncOp derivedFunction = derived->function;
  mlir::FunctionType type = derivedFunction.getFunctionType();
  bool takesStates = *kind != mlir::la::StateVariant::Prefill;

  // Argument names: the entry's own, then one per state; a clash gets the state's number appended.
  std::vector<std::string> names = entryArgumentNames(source, entry);
  names.resize(type.getNumInputs() - (takesStates ? derived->states.size() : 0));
  llvm::StringSet<> taken;
  for (auto [i, argName] : llvm::enumerate(names)) {
    if (argName.empty())
      argName = "arg" + std::to_string(i);
    taken.insert(argName);
  }
  for (auto [i, origin] : llvm::enumerate(derived->states)) {
    std::string stateName = resultNameAt(source, origin.location);
    if (!stateName.empty() && !origin.role.empty())
      stateName += "_" + origin.role.str();
    if (stateName.empty() || taken.contains(stateName))
      stateName = (stateName.empty() ? "state" : stateName) + std::to_string(i);
    taken.insert(stateName);
    if (takesStates)
      names.push_back(stateName);
  }

  std::string text = "\n// The " + variant.str() + " variant of @" + entry.str() + " (lac --variant " + variant.str() +
                     "; la-derive-state-variants writes its body).\n";
  text += "func.func private @" + derivedFunction.getSymName().str() + "(";
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    text += (i ? ", %" : "%") + names[i] + ": " + printed(type.getInput(i));
    if (mlir::DictionaryAttr attrs = derivedFunction.getArgAttrDict(i); attrs && !attrs.empty())
      text += " " + printed(attrs);
  }
  text += ") -> (";
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    text += (i ? ", " : "") + printed(type.getResult(i));
  text += ") attributes {" + mlir::la::getStateVariantAttrName(*kind).str() + " = @" + entry.str();
  if (level)
    text += ", " + mlir::la::LADialect::kStateLevelAttrName.str() + " = " + std::to_string(*level);
  if (alignedTo > 1)
    text += ", " + mlir::la::LADialect::kAlignedToAttrName.str() + " = " + std::to_string(alignedTo);
  text += "}\n";
  derivedFunction.erase();
  return text;
}

llvm::Expected<std::string> withStateVariants(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                              int64_t alignedTo) {
  std::string program = source.str();
  for (llvm::StringRef variant : {"prefill", "resume", "state"}) {
    auto declaration = declareStateVariant(program, bufferName, entry, variant, std::nullopt, alignedTo);
    if (!declaration)
      return declaration.takeError();
    program += *declaration;
  }
  // States on several levels: a state variant per level too.
  auto states = getSequenceStates(source, bufferName, entry, alignedTo);
  if (!states)
    return states.takeError();
  int levels = states->levels.empty() ? 1 : *llvm::max_element(states->levels);
  for (int level = 1; levels > 1 && level <= levels; ++level) {
    auto declaration = declareStateVariant(program, bufferName, entry, "state", level, alignedTo);
    if (!declaration)
      return declaration.takeError();
    program += *declaration;
  }
  return program;
}

} // namespace la
