//===- CudaLauncher.cpp - a GPU call's plan as an ahead-of-time C launcher -===//

#include "CudaLauncher.h"
#include "ParsedProgram.h"

#include "Target/CUDA/CUDATarget.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

namespace la {

llvm::Expected<DeviceImage> buildDeviceImage(const CompiledKernel &kernel, const CompileOptions &options,
                                             bool assemble) {
  auto parsed = parseProgram(llvm::StringRef(kernel.object.data(), kernel.object.size()), kernel.entry + ".gpu.mlir");
  if (!parsed)
    return parsed.takeError();
  mlir::ModuleOp module = *(*parsed)->module;
  auto launch = mlir::la::describeAotKernel(module);
  if (!launch)
    return launch.takeError();
  DeviceImage image{std::move(*launch), {}};
  if (!assemble)
    return image;
  auto target = mlir::la::CUDATarget::create(options);
  if (!target)
    return target.takeError();
  auto cubin = (*target)->emitArtifact(module, "cubin");
  if (!cubin)
    return cubin.takeError();
  image.cubin = std::move(*cubin);
  return image;
}

namespace {

/// The slices of a call whose first sliced argument is `spec`: the product of its `dims` leading sizes.
int64_t slicesOf(const TensorSpec &spec, int64_t dims) {
  int64_t slices = 1;
  for (int64_t d = 0; d < dims; ++d)
    slices *= spec.shape[d];
  return slices;
}

/// "memref<1x1x37x48xf16>": one slice of `spec` (its `dims` leading sizes 1) as the kernels see it.
std::string sliceType(TensorSpec spec, int64_t dims) {
  for (int64_t d = 0; d < dims && d < static_cast<int64_t>(spec.shape.size()); ++d)
    spec.shape[d] = 1;
  std::string type = toMLIRTypeString(spec);
  return "memref" + type.substr(type.find('<'));
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

} // namespace

llvm::Expected<mlir::la::AotLauncher> describeLauncher(llvm::StringRef entry, const SliceLayout &slicing,
                                                       llvm::ArrayRef<TensorSpec> inputs,
                                                       llvm::ArrayRef<TensorSpec> outputs, const GpuPiecesPlan &plan,
                                                       llvm::ArrayRef<LauncherKernel> kernels) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError("entry '" + entry.str() + "': no AOT launcher: " + message.str());
  };
  mlir::la::AotLauncher launcher;
  launcher.entry = entry.str();
  launcher.slicedDims = slicing.dims;
  int64_t callSlices = inputs.empty() ? 1 : slicesOf(inputs[slicing.firstSlicedArgument()], slicing.dims);
  if (callSlices == 0)
    return fail("the call has no slice (a size 0 among its batch dimensions)");
  // Bytes of `spec` per slice of the call.
  auto perSlice = [&](const TensorSpec &spec, llvm::StringRef what) -> llvm::Expected<int64_t> {
    int64_t bytes = static_cast<int64_t>(spec.numBytes());
    if (bytes % callSlices != 0)
      return fail(llvm::formatv("{0} ({1}) does not split into the call's {2} slices", what, spec.str(), callSlices));
    return bytes / callSlices;
  };
  for (auto [i, spec] : llvm::enumerate(llvm::concat<const TensorSpec>(inputs, outputs))) {
    bool shared = i < inputs.size() && slicing.isShared(i);
    launcher.parameters.push_back(shared ? sliceType(spec, 0) + " (the whole tensor, read by every slice)"
                                         : sliceType(spec, slicing.dims));
  }
  for (const LauncherKernel &kernel : kernels)
    launcher.kernels.push_back({kernel.image.launch, kernel.image.cubin});
  for (const PlanBuffer &buffer : plan.buffers) {
    auto bytes = perSlice(buffer.spec, buffer.what);
    if (!bytes)
      return bytes.takeError();
    launcher.regions.push_back({*bytes, bitsOf(buffer.fill), buffer.what});
  }
  for (const PlanLaunch &launch : plan.launches) {
    const LauncherKernel &kernel = kernels[launch.kernel];
    if (kernel.slicing.dims != slicing.dims)
      return fail(llvm::formatv("kernel '{0}' is sliced along {1} dimensions, the call along {2}",
                                kernel.image.launch.name, kernel.slicing.dims, slicing.dims));
    mlir::la::AotLauncher::Launch written;
    written.kernel = launch.kernel;
    written.what = launch.what;
    if (slicing.dims > 0) {
      int64_t blocks = slicesOf(launch.inputs[kernel.slicing.firstSlicedArgument()].spec, slicing.dims);
      if (blocks % callSlices != 0)
        return fail(llvm::formatv("kernel '{0}' runs {1} blocks, not a multiple of the call's {2} slices",
                                  kernel.image.launch.name, blocks, callSlices));
      written.blocksPerSlice = blocks / callSlices;
    }
    for (const PlanTensor &tensor : llvm::concat<const PlanTensor>(launch.inputs, launch.outputs)) {
      size_t index = tensor.place == PlanTensor::Place::Output ? inputs.size() + tensor.index : tensor.index;
      written.operands.push_back({tensor.place == PlanTensor::Place::Buffer, index});
    }
    launcher.launches.push_back(std::move(written));
  }
  return launcher;
}

} // namespace la
