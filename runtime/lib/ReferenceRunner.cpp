//===- ReferenceRunner.cpp - run the fp64 reference of an entry -----------===//

#include "ReferenceRunner.h"

#include "la/runtime/Compiler.h"

namespace la {

ReferenceRunner::ReferenceRunner(const RuntimeOptions &kernelOptions) : options(kernelOptions) {
  options.checkNumerics = false;
  options.compile.fuse = false;
  options.compile.groupSweeps = false;
  options.compile.registerTile = false;
  // The reference is the CPU's, whichever target the kernels it checks run on.
  options.target = RuntimeTarget::CPU;
  options.compile.target = mlir::la::PipelineTarget::CPU;
}

llvm::Expected<std::shared_ptr<Program>> ReferenceRunner::promoted(const Program &program, llvm::StringRef entry) {
  std::lock_guard lock(mutex);
  if (!runtime) {
    auto created = Runtime::create(options);
    if (!created)
      return created.takeError();
    runtime = std::move(*created);
  }
  std::shared_ptr<Program> &slot = programs[(program.contentHash() + "/" + entry).str()];
  if (!slot) {
    auto text = promoteToF64(program.source(), program.name(), entry);
    if (!text)
      return text.takeError();
    auto loaded = runtime->loadSource(*text, (program.name() + " (fp64 reference)").str());
    if (!loaded)
      return loaded.takeError();
    slot = std::move(*loaded);
  }
  return slot;
}

llvm::Expected<llvm::SmallVector<HostTensor>> ReferenceRunner::run(const Program &program, llvm::StringRef entry,
                                                                   llvm::ArrayRef<TensorRef> inputs) {
  auto reference = promoted(program, entry);
  if (!reference)
    return reference.takeError();
  llvm::SmallVector<HostTensor> wide;
  llvm::SmallVector<TensorRef> refs;
  for (const TensorRef &input : inputs) {
    TensorSpec spec = input.spec;
    spec.dtype = DType::F64;
    HostTensor &copy = wide.emplace_back(spec);
    for (int64_t i = 0, e = spec.numElements(); i < e; ++i)
      copy.set(i, elementAt(input, i));
  }
  for (HostTensor &tensor : wide)
    refs.push_back(tensor.ref());
  return runtime->run(**reference, entry, refs);
}

} // namespace la
