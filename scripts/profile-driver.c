// Standalone timing driver for one kernel object built by `lac compile --emit=obj` (used by scripts/profile).
// It calls `la_call_<entry>` the way the runtime does: one memref descriptor per argument and result
// ({allocated, aligned, offset, sizes[4], strides[4]}), SLICES slices of shape 1x1xNxD spread over THREADS
// pthreads in contiguous ranges, and prints the median wall time of REPEAT calls. A plain C program keeps the
// kernel's code at a fixed address in a normal ELF, so `perf record` / `perf annotate` can read it.
//
// Build: clang -O2 -DENTRY=la_call_<entry> -DOPERANDS=<inputs + outputs> profile-driver.c kernel.o -lpthread
// Run:   ./driver SLICES THREADS N D REPEAT
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef OPERANDS
#define OPERANDS 4
#endif

void ENTRY(void **descriptors);

// The lowered kernels allocate temporaries through these (MLIR's memref-to-LLVM with use-generic-functions).
void *_mlir_memref_to_llvm_alloc(size_t size) { return malloc(size); }
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}
void _mlir_memref_to_llvm_free(void *pointer) { free(pointer); }

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} Descriptor;

static int64_t slices, threads, rows, cols;
static float *buffers[OPERANDS];

static void *run_range(void *argument) {
  int64_t worker = (int64_t)(intptr_t)argument;
  int64_t begin = slices * worker / threads, end = slices * (worker + 1) / threads;
  Descriptor descriptors[OPERANDS];
  void *pointers[OPERANDS];
  for (int i = 0; i < OPERANDS; ++i) {
    Descriptor d = {0, 0, 0, {1, 1, rows, cols}, {rows * cols, rows * cols, cols, 1}};
    descriptors[i] = d;
    pointers[i] = &descriptors[i];
  }
  for (int64_t s = begin; s < end; ++s) {
    for (int i = 0; i < OPERANDS; ++i)
      descriptors[i].allocated = descriptors[i].aligned = buffers[i] + s * rows * cols;
    ENTRY(pointers);
  }
  return NULL;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s SLICES THREADS N D REPEAT\n", argv[0]);
    return 2;
  }
  slices = atoll(argv[1]);
  threads = atoll(argv[2]);
  rows = atoll(argv[3]);
  cols = atoll(argv[4]);
  int repeat = atoi(argv[5]);
  if (slices < 1 || threads < 1 || rows < 1 || cols < 1 || repeat < 1) {
    fprintf(stderr, "every argument must be positive\n");
    return 2;
  }
  size_t elements = (size_t)(slices * rows * cols);
  uint32_t state = 1;
  for (int i = 0; i < OPERANDS; ++i) {
    buffers[i] = aligned_alloc(64, elements * sizeof(float));
    for (size_t e = 0; e < elements; ++e) { // uniform in [-0.5, 0.5) from a 32-bit LCG: cheap, reproducible
      state = state * 1664525u + 1013904223u;
      buffers[i][e] = (float)(state >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }
  }
  double *times = calloc(repeat, sizeof(double));
  pthread_t workers[64];
  if (threads > 64)
    threads = 64;
  for (int r = -1; r < repeat; ++r) { // run -1 is the warm-up: pages touched, caches primed
    double start = now_ms();
    for (int64_t w = 1; w < threads; ++w)
      pthread_create(&workers[w], NULL, run_range, (void *)(intptr_t)w);
    run_range((void *)0);
    for (int64_t w = 1; w < threads; ++w)
      pthread_join(workers[w], NULL);
    if (r >= 0)
      times[r] = now_ms() - start;
  }
  qsort(times, repeat, sizeof(double), compare);
  printf("median %.3f ms  min %.3f ms  (%lld slices of %lldx%lld, %lld threads, %d runs)\n", times[repeat / 2],
         times[0], (long long)slices, (long long)rows, (long long)cols, (long long)threads, repeat);
  return 0;
}
