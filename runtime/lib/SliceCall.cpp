//===- SliceCall.cpp - call a compiled CPU kernel on one batch×head slice -===//

#include "SliceCall.h"

#include <cassert>
#include <cstring>

namespace la {

SliceCall::SliceCall(const LoadedKernel &kernel) : kernel(kernel) {
  const CompiledKernel &info = kernel.info();
  TensorSpec coordinateSpec;
  coordinateSpec.shape.assign(info.slicing.dims, 1);
  llvm::SmallVector<const TensorSpec *, 24> specs;
  for (const TensorSpec &spec : info.arguments)
    specs.push_back(&spec);
  for (int64_t d = 0; d < info.slicing.dims; ++d)
    specs.push_back(&coordinateSpec);
  for (const TensorSpec &spec : info.results)
    specs.push_back(&spec);
  for (const TensorSpec *spec : specs) {
    starts.push_back(descriptors.size());
    descriptors.append(3 + 2 * spec->shape.size(), 0);
  }
  for (auto [i, spec] : llvm::enumerate(specs)) {
    int64_t *desc = descriptors.data() + starts[i];
    int64_t rank = spec->shape.size();
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      desc[3 + d] = spec->shape[d];
      desc[3 + rank + d] = stride;
      stride *= spec->shape[d];
    }
    pointers.push_back(desc);
  }
  coordinateValues.assign(info.slicing.dims, 0.0f);
  for (int64_t d = 0; d < info.slicing.dims; ++d)
    point(info.arguments.size() + d, reinterpret_cast<char *>(&coordinateValues[d]));
}

void SliceCall::point(size_t tensor, char *data) {
  std::memcpy(&descriptors[starts[tensor]], &data, sizeof(data));
  std::memcpy(&descriptors[starts[tensor] + 1], &data, sizeof(data));
}

void SliceCall::operator()(llvm::ArrayRef<char *> arguments, llvm::ArrayRef<char *> results,
                           llvm::ArrayRef<int64_t> coordinates) {
  const CompiledKernel &info = kernel.info();
  assert(arguments.size() == info.arguments.size() && results.size() == info.results.size() &&
         static_cast<int64_t>(coordinates.size()) == info.slicing.dims && "one pointer per tensor");
  for (auto [i, data] : llvm::enumerate(arguments))
    point(i, data);
  for (auto [d, coordinate] : llvm::enumerate(coordinates))
    coordinateValues[d] = static_cast<float>(coordinate);
  size_t firstResult = info.arguments.size() + coordinates.size();
  for (auto [i, data] : llvm::enumerate(results))
    point(firstResult + i, data);
  kernel.call(pointers.data());
}

void getSliceCoordinates(llvm::ArrayRef<int64_t> shape, int64_t slice, llvm::MutableArrayRef<int64_t> coordinates) {
  for (int64_t d = static_cast<int64_t>(coordinates.size()) - 1; d >= 0; --d) {
    coordinates[d] = slice % shape[d];
    slice /= shape[d];
  }
}

void nextSliceCoordinates(llvm::ArrayRef<int64_t> shape, llvm::MutableArrayRef<int64_t> coordinates, int64_t step) {
  for (int64_t d = static_cast<int64_t>(coordinates.size()) - 1; d >= 0; --d, step = 1) {
    coordinates[d] += step;
    if (coordinates[d] < shape[d])
      return;
    coordinates[d] = 0;
  }
}

} // namespace la
