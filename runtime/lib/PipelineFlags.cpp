//===- PipelineFlags.cpp - command-line flags for every pipeline option ---===//

#include "la/runtime/PipelineFlags.h"

namespace cl = llvm::cl;

namespace la {

/// A flag and the help text it points to (cl::desc keeps a StringRef, so the text lives beside the flag).
struct PipelineFlags::Flag {
  Flag(const mlir::la::OptionInfo &option, cl::SubCommandGroup &subcommands, cl::OptionCategory &category)
      : description((option.description + " [" + option.defaultValue + "]").str()),
        opt(option.name, cl::desc(description), cl::sub(subcommands), cl::cat(category)) {
    if (option.type == mlir::la::OptionType::Bool)
      opt.setValueExpectedFlag(cl::ValueOptional);
  }
  std::string description;
  cl::opt<std::string> opt;
};

PipelineFlags::PipelineFlags(cl::SubCommandGroup &subcommands, cl::OptionCategory &category) {
  // Values are kept as text and parsed by the registry, so every program accepts the same spellings.
  for (const mlir::la::OptionInfo &option : mlir::la::getOptionRegistry())
    flags.push_back(std::make_unique<Flag>(option, subcommands, category));
}

PipelineFlags::~PipelineFlags() = default;

llvm::Expected<CompileOptions> PipelineFlags::get() const {
  CompileOptions options;
  for (const auto &flag : flags) {
    const cl::opt<std::string> &opt = flag->opt;
    if (opt.getNumOccurrences() == 0)
      continue;
    llvm::StringRef value = opt.getValue();
    const mlir::la::OptionInfo *option = mlir::la::lookupOption(opt.ArgStr);
    if (value.empty() && option->type == mlir::la::OptionType::Bool)
      value = "true";
    if (llvm::Error err = options.set(opt.ArgStr, value))
      return llvm::createStringError("--" + opt.ArgStr.str() + ": " + llvm::toString(std::move(err)));
  }
  return options;
}

std::vector<std::string> PipelineFlags::given() const {
  std::vector<std::string> names;
  for (const auto &flag : flags)
    if (flag->opt.getNumOccurrences() > 0)
      names.push_back(flag->opt.ArgStr.str());
  return names;
}

} // namespace la
