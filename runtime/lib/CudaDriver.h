//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// Internal to the runtime: how the `cuda` target reaches a GPU. libcuda.so.1 is opened with dlopen on first
// use rather than linked, so the runtime builds and runs on machines without the NVIDIA driver (every
// machine of this project); there, asking for the target fails with an error saying what is missing, never
// a crash. `$LA_CUDA_DRIVER` names another library in its place (tests/gpu/cuda-driver.test uses a stub).
//
// The driver ABI is declared here (a handful of handles and entry points, stable since CUDA 4), not taken
// from cuda.h, so the runtime needs no toolkit headers to build.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_CUDADRIVER_H
#define LA_RUNTIME_LIB_CUDADRIVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace la::cuda {

/// A device address (CUdeviceptr).
using DevicePointer = unsigned long long;
/// A stream (CUstream); null is the context's default stream.
using Stream = void *;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class Driver;

/// A cubin loaded into the device's primary context, and one of its kernels. Unloaded when destroyed.
class KernelModule {
public:
  ~KernelModule();
  KernelModule(const KernelModule &) = delete;
  KernelModule &operator=(const KernelModule &) = delete;

  /// Launches the kernel on `stream` with `parameters[i]` pointing to parameter i's value.
  llvm::Error launch(Dim3 grid, Dim3 block, Stream stream, llvm::ArrayRef<void *> parameters) const;
  const std::string &kernelName() const { return name; }

private:
  friend class Driver;
  KernelModule(const Driver &driver, void *module, void *function, std::string name, unsigned dynamicSharedBytes)
      : driver(driver), module(module), function(function), name(std::move(name)),
        dynamicSharedBytes(dynamicSharedBytes) {}
  const Driver &driver;
  void *module;
  void *function;
  std::string name;
  /// Bytes of dynamic shared memory every launch asks for.
  unsigned dynamicSharedBytes;
};

/// The process's CUDA driver with one device's primary context. Thread-safe: every call makes that context
/// current on the calling thread first.
class Driver {
public:
  /// Opens the driver (`$LA_CUDA_DRIVER`, else libcuda.so.1), initialises it and retains the primary context
  /// of device `ordinal`. Loaded once per process; a failure is reported again to each caller, naming the
  /// library, the driver call and its CUDA_ERROR_* code.
  static llvm::Expected<Driver &> get(int ordinal);

  /// The device's compute capability as an architecture name, "sm_80".
  const std::string &getArch() const { return arch; }
  /// "device 0 (NVIDIA H100 80GB HBM3, sm_90)".
  const std::string &describe() const { return description; }

  /// Loads `cubin` and finds `kernelName` in it; a kernel with dynamic shared memory may then ask for
  /// `dynamicSharedBytes` of it at every launch (beyond 48 KiB only with the function's attribute set here).
  llvm::Expected<std::unique_ptr<KernelModule>> loadKernel(llvm::StringRef cubin, llvm::StringRef kernelName,
                                                           unsigned dynamicSharedBytes = 0) const;

  /// Stream-ordered device memory (cuMemAllocAsync / cuMemFreeAsync): usable by work later on `stream`.
  llvm::Expected<DevicePointer> allocate(size_t bytes, Stream stream) const;
  llvm::Error release(DevicePointer pointer, Stream stream) const;
  llvm::Error copyToDevice(DevicePointer destination, const void *source, size_t bytes, Stream stream) const;
  llvm::Error copyToHost(void *destination, DevicePointer source, size_t bytes, Stream stream) const;
  llvm::Error synchronize(Stream stream) const;
  /// Runs `work` (which queues on `stream`) between two CUDA events and waits for the second: the device
  /// time of what `work` queued, in milliseconds (cuEventElapsedTime, about 0.5 us resolution).
  llvm::Expected<double> timeOnStream(Stream stream, llvm::function_ref<llvm::Error()> work) const;

  struct EntryPoints;

private:
  friend class KernelModule;
  Driver() = default;
  llvm::Error open(int ordinal);
  /// Makes the primary context current on this thread.
  llvm::Error enter() const;
  /// `call` failed with `status`: "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument)".
  llvm::Error check(int status, llvm::StringRef call) const;

  std::string library;
  std::shared_ptr<EntryPoints> api;
  void *context = nullptr;
  std::string arch, description;
};

} // namespace la::cuda

#endif // LA_RUNTIME_LIB_CUDADRIVER_H
