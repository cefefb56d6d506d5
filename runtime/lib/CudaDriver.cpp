//===- CudaDriver.cpp - the CUDA driver API, opened at run time -----------===//

#include "CudaDriver.h"

#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <map>
#include <mutex>

namespace la::cuda {

namespace {
// The driver's handles, as the ABI passes them.
using Result = int;                                                       // CUresult; 0 is CUDA_SUCCESS
using Device = int;                                                       // CUdevice
constexpr int kNoDevice = 100;                                            // CUDA_ERROR_NO_DEVICE
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76; // CUdevice_attribute
} // namespace

/// The entry points the runtime uses, by their exported names (the `_v2` ones are what cuda.h's macros pick).
struct Driver::EntryPoints {
  Result (*cuInit)(unsigned);
  Result (*cuGetErrorName)(Result, const char **);
  Result (*cuGetErrorString)(Result, const char **);
  Result (*cuDeviceGetCount)(int *);
  Result (*cuDeviceGet)(Device *, int);
  Result (*cuDeviceGetName)(char *, int, Device);
  Result (*cuDeviceGetAttribute)(int *, int, Device);
  Result (*cuDevicePrimaryCtxRetain)(void **, Device);
  Result (*cuCtxSetCurrent)(void *);
  Result (*cuModuleLoadData)(void **, const void *);
  Result (*cuModuleUnload)(void *);
  Result (*cuModuleGetFunction)(void **, void *, const char *);
  Result (*cuFuncSetAttribute)(void *, int, int);
  Result (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                           void **, void **);
  Result (*cuMemAllocAsync)(DevicePointer *, size_t, void *);
  Result (*cuMemFreeAsync)(DevicePointer, void *);
  Result (*cuMemcpyHtoDAsync_v2)(DevicePointer, const void *, size_t, void *);
  Result (*cuMemcpyDtoHAsync_v2)(void *, DevicePointer, size_t, void *);
  Result (*cuStreamSynchronize)(void *);
  Result (*cuEventCreate)(void **, unsigned);
  Result (*cuEventRecord)(void *, void *);
  Result (*cuEventSynchronize)(void *);
  Result (*cuEventElapsedTime)(float *, void *, void *);
  Result (*cuEventDestroy_v2)(void *);
};

llvm::Error Driver::check(Result status, llvm::StringRef call) const {
  if (status == 0)
    return llvm::Error::success();
  const char *name = nullptr, *text = nullptr;
  if (api->cuGetErrorName(status, &name) != 0)
    name = nullptr;
  if (api->cuGetErrorString(status, &text) != 0)
    text = nullptr;
  return llvm::createStringError(llvm::formatv("{0} failed: {1} ({2})", call,
                                               name ? name : ("CUresult " + std::to_string(status)).c_str(),
                                               text ? text : "no description")
                                     .str());
}

llvm::Error Driver::open(int ordinal) {
  std::optional<std::string> override = llvm::sys::Process::GetEnv("LA_CUDA_DRIVER");
  library = override ? *override : "libcuda.so.1";
  std::string message;
  auto handle = llvm::sys::DynamicLibrary::getPermanentLibrary(library.c_str(), &message);
  if (!handle.isValid())
    return llvm::createStringError(llvm::formatv("the cuda target needs the NVIDIA driver, and {0} cannot be "
                                                 "loaded: {1} (on a machine without a GPU, use cuda-emu)",
                                                 library, message)
                                       .str());
  api = std::make_shared<EntryPoints>();
  llvm::Error missing = llvm::Error::success();
  auto resolve = [&](auto &function, const char *name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(handle.getAddressOfSymbol(name));
    if (!function && !missing)
      missing = llvm::createStringError(
          llvm::formatv("{0} has no '{1}': a CUDA 11.2 or newer driver is needed", library, name).str());
  };
#define LA_RESOLVE(NAME) resolve(api->NAME, #NAME)
  LA_RESOLVE(cuInit);
  LA_RESOLVE(cuGetErrorName);
  LA_RESOLVE(cuGetErrorString);
  LA_RESOLVE(cuDeviceGetCount);
  LA_RESOLVE(cuDeviceGet);
  LA_RESOLVE(cuDeviceGetName);
  LA_RESOLVE(cuDeviceGetAttribute);
  LA_RESOLVE(cuDevicePrimaryCtxRetain);
  LA_RESOLVE(cuCtxSetCurrent);
  LA_RESOLVE(cuModuleLoadData);
  LA_RESOLVE(cuModuleUnload);
  LA_RESOLVE(cuModuleGetFunction);
  LA_RESOLVE(cuFuncSetAttribute);
  LA_RESOLVE(cuLaunchKernel);
  LA_RESOLVE(cuMemAllocAsync);
  LA_RESOLVE(cuMemFreeAsync);
  LA_RESOLVE(cuMemcpyHtoDAsync_v2);
  LA_RESOLVE(cuMemcpyDtoHAsync_v2);
  LA_RESOLVE(cuStreamSynchronize);
  LA_RESOLVE(cuEventCreate);
  LA_RESOLVE(cuEventRecord);
  LA_RESOLVE(cuEventSynchronize);
  LA_RESOLVE(cuEventElapsedTime);
  LA_RESOLVE(cuEventDestroy_v2);
#undef LA_RESOLVE
  if (missing)
    return missing;

  Result status = api->cuInit(0);
  if (status == kNoDevice)
    return llvm::createStringError(
        llvm::formatv("{0} is loaded but reports no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE); on a machine "
                      "without a GPU, use cuda-emu",
                      library)
            .str());
  if (llvm::Error err = check(status, "cuInit"))
    return err;
  int count = 0;
  if (llvm::Error err = check(api->cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return err;
  if (ordinal < 0 || ordinal >= count)
    return llvm::createStringError(
        llvm::formatv("CUDA device {0} does not exist: the driver sees {1} device(s)", ordinal, count).str());
  Device device = 0;
  if (llvm::Error err = check(api->cuDeviceGet(&device, ordinal), "cuDeviceGet"))
    return err;
  char name[256] = {};
  int major = 0, minor = 0;
  if (llvm::Error err = check(api->cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"))
    return err;
  if (llvm::Error err = check(api->cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device),
                              "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)"))
    return err;
  if (llvm::Error err = check(api->cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device),
                              "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)"))
    return err;
  arch = llvm::formatv("sm_{0}{1}", major, minor).str();
  description = llvm::formatv("device {0} ({1}, {2})", ordinal, name, arch).str();
  return check(api->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
}

llvm::Expected<Driver &> Driver::get(int ordinal) {
  // One driver per device for the life of the process (the library stays loaded; the primary context is
  // retained, never released: kernels of a cached entry may be launched until exit). A failure is kept as
  // its message and returned again to every caller.
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Driver>> drivers;
  static std::map<int, std::string> failures;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = drivers.find(ordinal); it != drivers.end())
    return *it->second;
  if (auto it = failures.find(ordinal); it != failures.end())
    return llvm::createStringError(it->second);
  auto driver = std::unique_ptr<Driver>(new Driver());
  if (llvm::Error err = driver->open(ordinal)) {
    std::string message = llvm::toString(std::move(err));
    failures[ordinal] = message;
    return llvm::createStringError(message);
  }
  return *(drivers[ordinal] = std::move(driver));
}

llvm::Error Driver::enter() const { return check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent"); }

llvm::Expected<std::unique_ptr<KernelModule>> Driver::loadKernel(llvm::StringRef cubin, llvm::StringRef kernelName,
                                                                 unsigned dynamicSharedBytes) const {
  if (llvm::Error err = enter())
    return std::move(err);
  void *module = nullptr, *function = nullptr;
  if (llvm::Error err = check(api->cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData"))
    return llvm::createStringError(llvm::toString(std::move(err)) + " on " + describe());
  std::string name = kernelName.str();
  if (llvm::Error err = check(api->cuModuleGetFunction(&function, module, name.c_str()),
                              ("cuModuleGetFunction('" + name + "')").c_str())) {
    api->cuModuleUnload(module);
    return std::move(err);
  }
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: without it a launch may ask for 48 KiB at most.
  constexpr int kMaxDynamicSharedSizeBytes = 8;
  if (dynamicSharedBytes > 0)
    if (llvm::Error err = check(
            api->cuFuncSetAttribute(function, kMaxDynamicSharedSizeBytes, static_cast<int>(dynamicSharedBytes)),
            ("cuFuncSetAttribute('" + name + "', max dynamic shared bytes " + std::to_string(dynamicSharedBytes) + ")")
                .c_str())) {
      api->cuModuleUnload(module);
      return std::move(err);
    }
  return std::unique_ptr<KernelModule>(new KernelModule(*this, module, function, std::move(name), dynamicSharedBytes));
}

KernelModule::~KernelModule() {
  // Unloading can only fail for a context the process no longer has; nothing is left to free then.
  if (llvm::Error err = driver.enter()) {
    llvm::consumeError(std::move(err));
    return;
  }
  driver.api->cuModuleUnload(module);
}

llvm::Error KernelModule::launch(Dim3 grid, Dim3 block, Stream stream, llvm::ArrayRef<void *> parameters) const {
  if (llvm::Error err = driver.enter())
    return err;
  return driver.check(driver.api->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                                 dynamicSharedBytes, stream, const_cast<void **>(parameters.data()),
                                                 nullptr),
                      ("cuLaunchKernel('" + name + "')").c_str());
}

llvm::Expected<DevicePointer> Driver::allocate(size_t bytes, Stream stream) const {
  if (llvm::Error err = enter())
    return std::move(err);
  DevicePointer pointer = 0;
  if (llvm::Error err = check(api->cuMemAllocAsync(&pointer, bytes, stream),
                              llvm::formatv("cuMemAllocAsync({0} bytes)", bytes).str()))
    return std::move(err);
  return pointer;
}

llvm::Error Driver::release(DevicePointer pointer, Stream stream) const {
  if (llvm::Error err = enter())
    return err;
  return check(api->cuMemFreeAsync(pointer, stream), "cuMemFreeAsync");
}

llvm::Error Driver::copyToDevice(DevicePointer destination, const void *source, size_t bytes, Stream stream) const {
  if (llvm::Error err = enter())
    return err;
  return check(api->cuMemcpyHtoDAsync_v2(destination, source, bytes, stream), "cuMemcpyHtoDAsync");
}

llvm::Error Driver::copyToHost(void *destination, DevicePointer source, size_t bytes, Stream stream) const {
  if (llvm::Error err = enter())
    return err;
  return check(api->cuMemcpyDtoHAsync_v2(destination, source, bytes, stream), "cuMemcpyDtoHAsync");
}

llvm::Error Driver::synchronize(Stream stream) const {
  if (llvm::Error err = enter())
    return err;
  return check(api->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

llvm::Expected<double> Driver::timeOnStream(Stream stream, llvm::function_ref<llvm::Error()> work) const {
  if (llvm::Error err = enter())
    return std::move(err);
  void *events[2] = {nullptr, nullptr};
  llvm::Error err = llvm::Error::success();
  for (void *&event : events)
    if (!err)
      err = check(api->cuEventCreate(&event, /*CU_EVENT_DEFAULT=*/0), "cuEventCreate");
  if (!err)
    err = check(api->cuEventRecord(events[0], stream), "cuEventRecord");
  if (!err)
    err = work();
  if (!err)
    err = check(api->cuEventRecord(events[1], stream), "cuEventRecord");
  if (!err)
    err = check(api->cuEventSynchronize(events[1]), "cuEventSynchronize");
  float milliseconds = 0;
  if (!err)
    err = check(api->cuEventElapsedTime(&milliseconds, events[0], events[1]), "cuEventElapsedTime");
  for (void *event : events)
    if (event)
      err = llvm::joinErrors(std::move(err), check(api->cuEventDestroy_v2(event), "cuEventDestroy"));
  if (err)
    return std::move(err);
  return double(milliseconds);
}

} // namespace la::cuda
