/* A stand-in for libcuda, for tests/gpu/cuda-aot-c.test: it records what an AOT launcher asks the driver to
   do and prints it, so the test can check the launch without a GPU. Loading accepts only an ELF image. */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static int module_token, function_token;
static unsigned loads;

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
  if (module != (CUmodule)&module_token)
    return CUDA_ERROR_INVALID_HANDLE;
  *function = (CUfunction)&function_token;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  printf("stub: cuModuleUnload\n");
  return module == (CUmodule)&module_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The parameter count is not in the call: the caller passes how many it expects to be read. */
int stub_parameter_count = 0;

CUresult cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                        unsigned blockY, unsigned blockZ, unsigned sharedBytes, CUstream stream, void **params,
                        void **extra) {
  if (function != (CUfunction)&function_token)
    return CUDA_ERROR_INVALID_HANDLE;
  printf("stub: cuLaunchKernel: grid %u,%u,%u block %u,%u,%u shared %u stream %p extra %p\n", gridX, gridY, gridZ,
         blockX, blockY, blockZ, sharedBytes, (void *)stream, (void *)extra);
  for (int i = 0; i < stub_parameter_count; ++i)
    printf("stub:   param %d = 0x%llx\n", i, (unsigned long long)*(CUdeviceptr *)params[i]);
  return CUDA_SUCCESS;
}
