/* A stand-in for libcuda.so.1, for tests/gpu/cuda-driver.test: the runtime's `cuda` target opens it through
   $LA_CUDA_DRIVER. Device memory is host memory (zero-filled); a launch runs nothing and prints what it was
   asked, naming each parameter by the allocation it points to, so the test checks the host side of a call
   without a GPU. $LA_STUB_CUDA picks the device: unset, sm_80; "no-device", cuInit fails as on a machine
   without one; "sm_XY", that compute capability. $LA_STUB_PARAMS: how many launch parameters to print. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum { SUCCESS = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, NO_DEVICE = 100, INVALID_IMAGE = 200, NOT_FOUND = 500 };

static int initialised, context_token, module_token, function_token;
static void *allocations[64];
static size_t sizes[64];
static unsigned allocation_count;

static const char *mode(void) {
  const char *value = getenv("LA_STUB_CUDA");
  return value ? value : "sm_80";
}

CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return INVALID_VALUE;
  if (strcmp(mode(), "no-device") == 0)
    return NO_DEVICE;
  initialised = 1;
  return SUCCESS;
}

/* The errors the stub returns: code, name, description. */
static const struct {
  CUresult code;
  const char *name, *text;
} errors[] = {
    {NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
};

static CUresult describe(CUresult error, const char **out, int want_name) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *out = want_name ? errors[i].name : errors[i].text;
      return SUCCESS;
    }
  return INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **name) { return describe(error, name, 1); }

CUresult cuGetErrorString(CUresult error, const char **text) { return describe(error, text, 0); }

CUresult cuDeviceGetCount(int *count) {
  *count = initialised;
  return initialised ? SUCCESS : NOT_INITIALIZED;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? SUCCESS : INVALID_VALUE;
}

CUresult cuDeviceGetName(char *name, int length, int device) {
  snprintf(name, (size_t)length, "Stub GPU");
  return device == 0 ? SUCCESS : INVALID_VALUE;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  int major = 0, minor = 0;
  if (sscanf(mode(), "sm_%1d%1d", &major, &minor) != 2 || device != 0)
    return INVALID_VALUE;
  if (attribute == 75)
    *value = major;
  else if (attribute == 76)
    *value = minor;
  else
    return INVALID_VALUE;
  return SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  *context = &context_token;
  return device == 0 ? SUCCESS : INVALID_VALUE;
}

CUresult cuCtxSetCurrent(void *context) { return context == &context_token ? SUCCESS : INVALID_VALUE; }

CUresult cuModuleLoadData(void **module, const void *image) {
  if (memcmp(image,
             "\x7f"
             "ELF",
             4) != 0)
    return INVALID_IMAGE;
  printf("stub: cuModuleLoadData: ELF class %d\n", ((const unsigned char *)image)[4]);
  *module = &module_token;
  return SUCCESS;
}

CUresult cuModuleUnload(void *module) {
  printf("stub: cuModuleUnload\n");
  return module == &module_token ? SUCCESS : INVALID_VALUE;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  printf("stub: cuModuleGetFunction: %s\n", name);
  if (module != &module_token)
    return INVALID_VALUE;
  *function = &function_token;
  return SUCCESS;
}

CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  printf("stub: cuFuncSetAttribute: attribute %d = %d\n", attribute, value);
  return function == &function_token ? SUCCESS : INVALID_VALUE;
}

static int find_allocation(CUdeviceptr pointer) {
  for (unsigned i = 0; i < allocation_count; ++i)
    if (allocations[i] && (CUdeviceptr)allocations[i] == pointer)
      return (int)i;
  return -1;
}

CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes, void *stream) {
  if (allocation_count == 64)
    return INVALID_VALUE;
  printf("stub: cuMemAllocAsync: #%u, %zu bytes, stream %p\n", allocation_count, bytes, stream);
  allocations[allocation_count] = calloc(1, bytes);
  sizes[allocation_count] = bytes;
  *pointer = (CUdeviceptr)allocations[allocation_count++];
  return SUCCESS;
}

CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) {
  int i = find_allocation(pointer);
  if (i < 0)
    return INVALID_VALUE;
  printf("stub: cuMemFreeAsync: #%d\n", i);
  free(allocations[i]);
  allocations[i] = NULL;
  (void)stream;
  return SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void *source, size_t bytes, void *stream) {
  int i = find_allocation(destination);
  if (i < 0 || bytes > sizes[i])
    return INVALID_VALUE;
  printf("stub: cuMemcpyHtoDAsync: #%d, %zu bytes\n", i, bytes);
  memcpy(allocations[i], source, bytes);
  (void)stream;
  return SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *destination, CUdeviceptr source, size_t bytes, void *stream) {
  int i = find_allocation(source);
  if (i < 0 || bytes > sizes[i])
    return INVALID_VALUE;
  printf("stub: cuMemcpyDtoHAsync: #%d, %zu bytes\n", i, bytes);
  memcpy(destination, allocations[i], bytes);
  (void)stream;
  return SUCCESS;
}

CUresult cuStreamSynchronize(void *stream) {
  printf("stub: cuStreamSynchronize: stream %p\n", stream);
  return SUCCESS;
}

// Events: two tokens; the elapsed time is a fixed 0.25 ms, so a test can see it reach the report.
static int event_tokens[2];
static unsigned event_count;

CUresult cuEventCreate(void **event, unsigned flags) {
  if (event_count == 2 || flags != 0)
    return INVALID_VALUE;
  *event = &event_tokens[event_count++];
  return SUCCESS;
}

CUresult cuEventRecord(void *event, void *stream) {
  printf("stub: cuEventRecord: event %d, stream %p\n", (int)((int *)event - event_tokens), stream);
  return SUCCESS;
}

CUresult cuEventSynchronize(void *event) {
  printf("stub: cuEventSynchronize: event %d\n", (int)((int *)event - event_tokens));
  return SUCCESS;
}

CUresult cuEventElapsedTime(float *milliseconds, void *start, void *stop) {
  if (start != &event_tokens[0] || stop != &event_tokens[1])
    return INVALID_VALUE;
  *milliseconds = 0.25f;
  return SUCCESS;
}

CUresult cuEventDestroy_v2(void *event) {
  (void)event;
  --event_count;
  return SUCCESS;
}

CUresult cuLaunchKernel(void *function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                        unsigned blockY, unsigned blockZ, unsigned sharedBytes, void *stream, void **params,
                        void **extra) {
  if (function != &function_token)
    return INVALID_VALUE;
  printf("stub: cuLaunchKernel: grid %u,%u,%u block %u,%u,%u shared %u stream %p extra %p\n", gridX, gridY, gridZ,
         blockX, blockY, blockZ, sharedBytes, stream, (void *)extra);
  const char *count = getenv("LA_STUB_PARAMS");
  for (int i = 0; count && i < atoi(count); ++i)
    printf("stub:   param %d = allocation #%d\n", i, find_allocation(*(CUdeviceptr *)params[i]));
  return SUCCESS;
}
