//===- PipelineConfig.cpp - the option registry and its text forms --------===//

#include "Pipelines/PipelineConfig.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::la {
namespace {

template <typename T> constexpr OptionType optionTypeOf();
template <> constexpr OptionType optionTypeOf<bool>() { return OptionType::Bool; }
template <> constexpr OptionType optionTypeOf<int64_t>() { return OptionType::Int; }
template <> constexpr OptionType optionTypeOf<std::string>() { return OptionType::String; }

std::string toText(bool value) { return value ? "true" : "false"; }
std::string toText(int64_t value) { return std::to_string(value); }
std::string toText(const std::string &value) { return value; }

llvm::Error invalidValue(llvm::StringRef name, llvm::StringRef value, llvm::StringRef expected) {
  return llvm::createStringError(llvm::formatv("option '{0}': '{1}' is not {2}", name, value, expected).str());
}

llvm::Error fromText(llvm::StringRef name, llvm::StringRef value, bool &field) {
  if (value == "true" || value == "1")
    field = true;
  else if (value == "false" || value == "0")
    field = false;
  else
    return invalidValue(name, value, "a boolean (true, false, 1, 0)");
  return llvm::Error::success();
}

llvm::Error fromText(llvm::StringRef name, llvm::StringRef value, int64_t &field) {
  if (value.getAsInteger(10, field))
    return invalidValue(name, value, "an integer");
  return llvm::Error::success();
}

llvm::Error fromText(llvm::StringRef, llvm::StringRef value, std::string &field) {
  field = value.str();
  return llvm::Error::success();
}

/// Double-quotes a value the comma-separated text could not otherwise hold.
std::string quoteIfNeeded(llvm::StringRef value) {
  if (value.find_first_of(",\"\\ ") == llvm::StringRef::npos)
    return value.str();
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

/// Splits `name=value,name="va,lue",...` into items, unquoting the values.
llvm::Expected<llvm::SmallVector<std::pair<std::string, std::string>>> splitItems(llvm::StringRef text) {
  llvm::SmallVector<std::pair<std::string, std::string>> items;
  size_t i = 0;
  while (i < text.size()) {
    size_t equals = text.find('=', i);
    size_t comma = text.find(',', i);
    if (equals == llvm::StringRef::npos || equals > comma)
      return llvm::createStringError(llvm::formatv("'{0}' is not name=value", text.slice(i, comma).trim()).str());
    std::string name = text.slice(i, equals).trim().str();
    std::string value;
    i = equals + 1;
    if (i < text.size() && text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size())
          ++i;
        value += text[i];
      }
      if (i == text.size())
        return llvm::createStringError(llvm::formatv("option '{0}': unterminated quoted value", name).str());
      ++i;
      if (i < text.size() && text[i] != ',')
        return llvm::createStringError(llvm::formatv("option '{0}': text after the closing quote", name).str());
    } else {
      size_t end = std::min(text.find(',', i), text.size());
      value = text.slice(i, end).trim().str();
      i = end;
    }
    items.emplace_back(std::move(name), std::move(value));
    ++i; // the comma
  }
  return items;
}

} // namespace

llvm::StringRef getTargetName(PipelineTarget target) {
  switch (target) {
  case PipelineTarget::Common:
    return "common";
  case PipelineTarget::CPU:
    return "cpu";
  case PipelineTarget::CUDA:
    return "cuda";
  }
  llvm_unreachable("unknown target");
}

llvm::ArrayRef<OptionInfo> getOptionRegistry() {
  using Kind = TuningDomain::Kind;
  static const std::vector<OptionInfo> registry = [] {
    std::vector<OptionInfo> rows;
    PipelineConfig defaults;
#define LA_FIXED                                                                                                       \
  TuningDomain {}
#define LA_TUNE_BOOL(WHY) TuningDomain{Kind::Bool, 0, 1, "", WHY}
#define LA_TUNE_POW2(MIN, MAX, BOUND, WHY) TuningDomain{Kind::PowersOfTwo, MIN, MAX, BOUND, WHY}
#define LA_TUNE_RANGE(MIN, MAX, BOUND, WHY) TuningDomain{Kind::Range, MIN, MAX, BOUND, WHY}
#define LA_TUNE_DIVISORS(DIM, WHY) TuningDomain{Kind::Divisors, 0, 0, DIM, WHY}
#define LA_TUNE_ENUM(CHOICES, WHY) TuningDomain{Kind::Enum, 0, 0, "", WHY, CHOICES}
#define LA_OPTION(TARGET, FIELD, NAME, TYPE, DEFAULT, DOMAIN, DESCRIPTION)                                             \
  rows.push_back(                                                                                                      \
      OptionInfo{PipelineTarget::TARGET, NAME, optionTypeOf<TYPE>(), toText(defaults.FIELD), DOMAIN, DESCRIPTION});
#include "Pipelines/PipelineOptions.def"
#undef LA_FIXED
#undef LA_TUNE_BOOL
#undef LA_TUNE_POW2
#undef LA_TUNE_RANGE
#undef LA_TUNE_DIVISORS
#undef LA_TUNE_ENUM
    return rows;
  }();
  return registry;
}

llvm::SmallVector<const OptionInfo *> getOptionsOf(PipelineTarget target) {
  llvm::SmallVector<const OptionInfo *> options;
  for (PipelineTarget wanted : {PipelineTarget::Common, target}) {
    for (const OptionInfo &option : getOptionRegistry())
      if (option.target == wanted)
        options.push_back(&option);
    if (target == PipelineTarget::Common)
      break;
  }
  return options;
}

const OptionInfo *lookupOption(llvm::StringRef name) {
  for (const OptionInfo &option : getOptionRegistry())
    if (option.name == name)
      return &option;
  return nullptr;
}

llvm::Expected<llvm::SmallVector<std::string>> enumerateDomain(const OptionInfo &option,
                                                               const llvm::StringMap<int64_t> &sizes) {
  const TuningDomain &domain = option.domain;
  llvm::SmallVector<std::string> values;
  std::optional<int64_t> bound;
  if (!domain.bound.empty()) {
    auto it = sizes.find(domain.bound);
    if (it == sizes.end())
      return llvm::createStringError(
          llvm::formatv("option '{0}': its domain depends on the problem size '{1}', which was not given", option.name,
                        domain.bound)
              .str());
    bound = it->second;
  }
  auto add = [&](int64_t value) {
    if (!bound || value <= *bound)
      values.push_back(std::to_string(value));
  };
  switch (domain.kind) {
  case TuningDomain::Kind::Fixed:
    break;
  case TuningDomain::Kind::Bool:
    values = {"false", "true"};
    break;
  case TuningDomain::Kind::PowersOfTwo:
    for (int64_t value = llvm::PowerOf2Ceil(std::max<int64_t>(domain.min, 1)); value <= domain.max; value *= 2)
      add(value);
    break;
  case TuningDomain::Kind::Range:
    for (int64_t value = domain.min; value <= domain.max; ++value)
      add(value);
    break;
  case TuningDomain::Kind::Enum: {
    llvm::SmallVector<llvm::StringRef> choices;
    domain.choices.split(choices, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef choice : choices)
      values.push_back(choice.trim().str());
    break;
  }
  case TuningDomain::Kind::Divisors:
    for (int64_t value = 1; bound && value <= *bound; ++value)
      if (*bound % value == 0)
        values.push_back(std::to_string(value));
    break;
  }
  return values;
}

std::string PipelineConfig::get(llvm::StringRef name) const {
#define LA_OPTION(TARGET, FIELD, NAME, TYPE, DEFAULT, DOMAIN, DESCRIPTION)                                             \
  if (name == NAME)                                                                                                    \
    return toText(FIELD);
#include "Pipelines/PipelineOptions.def"
  return "";
}

llvm::Error PipelineConfig::set(llvm::StringRef name, llvm::StringRef value) {
#define LA_OPTION(TARGET, FIELD, NAME, TYPE, DEFAULT, DOMAIN, DESCRIPTION)                                             \
  if (name == NAME)                                                                                                    \
    return fromText(name, value, FIELD);
#include "Pipelines/PipelineOptions.def"
  std::vector<std::string> known;
  for (const OptionInfo &option : getOptionRegistry())
    known.push_back(option.name.str());
  return llvm::createStringError(
      llvm::formatv("unknown option '{0}' (options: {1})", name, llvm::join(known, ", ")).str());
}

std::string PipelineConfig::str(PipelineTarget target) const {
  llvm::SmallVector<std::string> items;
  for (const OptionInfo *option : getOptionsOf(target))
    items.push_back((option->name + "=" + quoteIfNeeded(get(option->name))).str());
  return llvm::join(items, ",");
}

llvm::Expected<PipelineConfig> PipelineConfig::parse(llvm::StringRef text) {
  PipelineConfig config;
  auto items = splitItems(text);
  if (!items)
    return items.takeError();
  for (const auto &[name, value] : *items)
    if (llvm::Error err = config.set(name, value))
      return std::move(err);
  return config;
}

} // namespace mlir::la
