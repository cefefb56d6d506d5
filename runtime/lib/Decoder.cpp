//===- Decoder.cpp - run a causal kernel position by position -------------===//

#include "la/runtime/Decoder.h"
#include "la/runtime/Compiler.h"

#include "llvm/Support/FormatVariadic.h"

namespace la {

Decoder::Decoder(Runtime &runtime, std::shared_ptr<Program> variants, std::string entry, size_t numArguments,
                 size_t numResults, std::vector<std::string> names, int64_t sequenceDim)
    : runtime(runtime), variants(std::move(variants)), entry(entry), prefillName(entry + ".prefill"),
      resumeName(entry + ".resume"), numArguments(numArguments), numResults(numResults), names(std::move(names)),
      sequenceDim(sequenceDim) {}

int64_t Decoder::lengthOf(llvm::ArrayRef<TensorRef> inputs) const {
  if (inputs.empty() || static_cast<int64_t>(inputs[0].spec.shape.size()) <= sequenceDim)
    return 0;
  return inputs[0].spec.shape[sequenceDim];
}

llvm::Expected<std::unique_ptr<Decoder>> Decoder::create(Runtime &runtime, const Program &program,
                                                         llvm::StringRef entry) {
  auto signature = runtime.signature(program, entry);
  if (!signature)
    return signature.takeError();
  auto states = getSequenceStates(program.source(), program.name(), entry);
  if (!states)
    return states.takeError();
  auto declared = withStateVariants(program.source(), program.name(), entry);
  if (!declared)
    return declared.takeError();
  const std::string &source = *declared;
  auto variants = runtime.loadSource(source, program.name());
  if (!variants)
    return variants.takeError();
  // The resume variant's arguments: the entry's, then the states.
  std::string resume = (entry + ".resume").str();
  std::vector<std::string> argumentNames = entryArgumentNames(source, resume);
  size_t numArguments = signature->arguments.size();
  std::vector<std::string> stateNames;
  if (argumentNames.size() > numArguments)
    stateNames.assign(argumentNames.begin() + numArguments, argumentNames.end());
  return std::unique_ptr<Decoder>(new Decoder(runtime, std::move(*variants), entry.str(), numArguments,
                                              signature->results.size(), std::move(stateNames), states->dimension));
}

llvm::Error Decoder::run(const std::string &variant, llvm::ArrayRef<TensorRef> inputs,
                         llvm::ArrayRef<TensorRef> outputs, llvm::MutableArrayRef<HostTensor> states,
                         llvm::MutableArrayRef<HostTensor> nextStates, CallStats *stats) {
  if (inputs.size() != numArguments || outputs.size() != numResults)
    return llvm::createStringError(llvm::formatv("{0}: a call of '{1}' takes {2} arguments and {3} results (the "
                                                 "entry's own, without the state) but {4} and {5} were given",
                                                 variants->name(), entry, numArguments, numResults, inputs.size(),
                                                 outputs.size())
                                       .str());
  llvm::SmallVector<TensorRef, 8> arguments(inputs.begin(), inputs.end()), results(outputs.begin(), outputs.end());
  for (HostTensor &state : states)
    arguments.push_back(state.ref());
  for (HostTensor &state : nextStates)
    results.push_back(state.ref());
  return runtime.call(*variants, variant, arguments, results, stats);
}

llvm::Error Decoder::prefill(llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs, CallStats *stats) {
  current.clear();
  next.clear();
  processed = 0;
  llvm::SmallVector<TensorSpec, 8> specs;
  for (const TensorRef &input : inputs)
    specs.push_back(input.spec);
  auto resultSpecs = runtime.resultSpecs(*variants, prefillName, specs);
  if (!resultSpecs)
    return resultSpecs.takeError();
  std::vector<HostTensor> first, second;
  for (const TensorSpec &spec :
       llvm::ArrayRef<TensorSpec>(*resultSpecs).drop_front(std::min(numResults, resultSpecs->size()))) {
    first.emplace_back(spec);
    second.emplace_back(spec);
  }
  if (llvm::Error err = run(prefillName, inputs, outputs, {}, first, stats))
    return err;
  current = std::move(first);
  next = std::move(second);
  processed = lengthOf(inputs);
  return llvm::Error::success();
}

llvm::Error Decoder::step(llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs, CallStats *stats) {
  if (!started())
    return llvm::createStringError(
        llvm::formatv("{0}: '{1}': step before prefill (the first positions start the state)", variants->name(), entry)
            .str());
  if (llvm::Error err = run(resumeName, inputs, outputs, current, next, stats))
    return err;
  std::swap(current, next);
  processed += lengthOf(inputs);
  return llvm::Error::success();
}

} // namespace la
