/* A stand-in for libcuda, for tests/gpu/cuda-aot-c.test: it records what an AOT launcher asks the driver to
   do and prints it, so the test can check the launch without a GPU. Loading accepts only an ELF image. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static int module_token;
/* A function handle points at its kernel's name, so a launch can say which kernel it runs. */
static char function_names[16][128];
static unsigned loads, functions;

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  const unsigned char *bytes = image;
  if (memcmp(bytes,
             "\x7f"
             "ELF",
             4) != 0) {
    printf("stub: cuModuleLoadData: not an ELF image\n");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  ++loads;
  printf("stub: cuModuleLoadData: ELF class %d, load #%u\n", bytes[4], loads);
  *module = (CUmodule)&module_token;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  printf("stub: cuModuleGetFunction: %s\n", name);
  if (module != (CUmodule)&module_token || functions == 16)
    return CUDA_ERROR_INVALID_HANDLE;
  snprintf(function_names[functions], sizeof(function_names[functions]), "%s", name);
  *function = (CUfunction)function_names[functions++];
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  printf("stub: cuModuleUnload\n");
  return module == (CUmodule)&module_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  const char *name = (const char *)function;
  printf("stub: cuFuncSetAttribute: %s attribute %d = %d\n", name, (int)attribute, value);
  return name >= function_names[0] && name < function_names[16] ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuMemsetD32Async(CUdeviceptr destination, unsigned int value, size_t count, CUstream stream) {
  printf("stub: cuMemsetD32Async: 0x%llx = 0x%08x x %zu stream %p\n", (unsigned long long)destination, value, count,
         (void *)stream);
  return CUDA_SUCCESS;
}

/* The parameter count is not in the call: the caller says how many each launch passes, in launch order
   (repeating). */
const int *stub_parameter_counts = NULL;
int stub_parameter_kinds = 0;
static unsigned launches;

CUresult cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                        unsigned blockY, unsigned blockZ, unsigned sharedBytes, CUstream stream, void **params,
                        void **extra) {
  const char *name = (const char *)function;
  if (name < function_names[0] || name >= function_names[16])
    return CUDA_ERROR_INVALID_HANDLE;
  printf("stub: cuLaunchKernel: %s grid %u,%u,%u block %u,%u,%u shared %u stream %p extra %p\n", name, gridX, gridY,
         gridZ, blockX, blockY, blockZ, sharedBytes, (void *)stream, (void *)extra);
  int count = stub_parameter_kinds ? stub_parameter_counts[launches++ % stub_parameter_kinds] : 0;
  for (int i = 0; i < count; ++i)
    printf("stub:   param %d = 0x%llx\n", i, (unsigned long long)*(CUdeviceptr *)params[i]);
  return CUDA_SUCCESS;
}
