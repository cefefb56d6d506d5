// Standalone timing driver for one kernel object built by `lac compile --emit=obj` (used by scripts/profile).
// It calls `la_call_<entry>` the way the runtime does: one memref descriptor per argument and result
// ({allocated, aligned, offset, sizes[rank], strides[rank]}, row-major), SLICES calls spread over THREADS
// pthreads in contiguous ranges, and prints the median wall time of REPEAT calls. Each operand is given by
// its shape in one call (a slice); an operand of the first operand's shape gets a fresh slice of its buffer
// per call, any other (AFT's [T, T] bias, AFT-conv's kernels) is shared by every call, as the runtime's batch
// slicing passes it. A plain C program keeps the kernel's code at a fixed address in a normal ELF, so
// `perf record` / `perf annotate` can read it.
//
// Build: clang -O2 -DENTRY=la_call_<entry> profile-driver.c kernel.o -lpthread
// Run:   ./driver SLICES THREADS REPEAT SHAPE...      SHAPE: sizes joined by x, e.g. 1x1x4096x64 or 4096x4096
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OPERANDS 16
#define MAX_RANK 8

void ENTRY(void **descriptors);

// The lowered kernels allocate temporaries through these (MLIR's memref-to-LLVM with use-generic-functions).
// As the runtime's (runtime/lib/KernelMemory.cpp), freed blocks stay with their thread and serve the next
// request of the same size: malloc would hand blocks of a MiB back to the system at each free, and every
// call would then page-fault its temporaries in again (a cost the runtime does not have: Flow-Attention's
// first feature-map loop took 14% of the samples here against 5% for the second).
#define CACHED_BLOCKS 64
typedef struct {
  size_t size, alignment; // in the 16 bytes below each block; the raw allocation starts `alignment` below it
} BlockHeader;
static __thread void *cached[CACHED_BLOCKS];
static __thread int cachedCount;

static BlockHeader *headerOf(void *block) { return (BlockHeader *)((char *)block - sizeof(BlockHeader)); }

static void *cachedAllocate(size_t alignment, size_t size) {
  if (alignment < 64)
    alignment = 64;
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  for (int i = 0; i < cachedCount; ++i)
    if (headerOf(cached[i])->size == rounded && headerOf(cached[i])->alignment == alignment) {
      void *block = cached[i];
      cached[i] = cached[--cachedCount];
      return block;
    }
  char *raw = aligned_alloc(alignment, rounded + alignment);
  if (!raw)
    return NULL;
  *headerOf(raw + alignment) = (BlockHeader){rounded, alignment};
  return raw + alignment;
}
void *_mlir_memref_to_llvm_alloc(size_t size) { return cachedAllocate(64, size); }
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) { return cachedAllocate(alignment, size); }
void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  if (cachedCount < CACHED_BLOCKS) {
    cached[cachedCount++] = pointer;
    return;
  }
  free((char *)pointer - headerOf(pointer)->alignment);
}

typedef struct {
  int rank;
  int64_t sizes[MAX_RANK], elements;
  int sliced; // a fresh part of the buffer per call
  float *buffer;
} Operand;

static int64_t slices, threads;
static int operands;
static Operand operand[MAX_OPERANDS];

// A descriptor is 3 + 2·rank 8-byte words: the two pointers, the offset, the sizes, the strides.
static void describe(int64_t *words, const Operand *op, float *data) {
  words[0] = words[1] = (int64_t)(intptr_t)data;
  words[2] = 0;
  int64_t stride = 1;
  for (int d = op->rank - 1; d >= 0; --d) {
    words[3 + d] = op->sizes[d];
    words[3 + op->rank + d] = stride;
    stride *= op->sizes[d];
  }
}

static void *run_range(void *argument) {
  int64_t worker = (int64_t)(intptr_t)argument;
  int64_t begin = slices * worker / threads, end = slices * (worker + 1) / threads;
  int64_t words[MAX_OPERANDS][3 + 2 * MAX_RANK];
  void *pointers[MAX_OPERANDS];
  for (int i = 0; i < operands; ++i) {
    describe(words[i], &operand[i], operand[i].buffer);
    pointers[i] = words[i];
  }
  for (int64_t s = begin; s < end; ++s) {
    for (int i = 0; i < operands; ++i) // only a sliced operand's data pointers move
      if (operand[i].sliced)
        words[i][0] = words[i][1] = (int64_t)(intptr_t)(operand[i].buffer + s * operand[i].elements);
    ENTRY(pointers);
  }
  return NULL;
}

static int repeats;
static pthread_barrier_t start_line, finish_line;
// A worker other than the main thread: each repeat (and the warm-up) runs its range between the barriers.
static void *worker_loop(void *argument) {
  for (int r = -1; r < repeats; ++r) {
    pthread_barrier_wait(&start_line);
    run_range(argument);
    pthread_barrier_wait(&finish_line);
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

// Parses "AxBxC" into op; 0 on success.
static int parse_shape(const char *text, Operand *op) {
  op->rank = 0;
  op->elements = 1;
  const char *p = text;
  while (*p) {
    char *end;
    long long size = strtoll(p, &end, 10);
    if (end == p || size < 1 || op->rank == MAX_RANK || (*end && *end != 'x'))
      return 1;
    op->sizes[op->rank++] = size;
    op->elements *= size;
    p = *end ? end + 1 : end;
  }
  return op->rank == 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc - 4 > MAX_OPERANDS) {
    fprintf(stderr, "usage: %s SLICES THREADS REPEAT SHAPE... (at most %d operands)\n", argv[0], MAX_OPERANDS);
    return 2;
  }
  slices = atoll(argv[1]);
  threads = atoll(argv[2]);
  int repeat = atoi(argv[3]);
  operands = argc - 4;
  if (slices < 1 || threads < 1 || repeat < 1) {
    fprintf(stderr, "SLICES, THREADS and REPEAT must be positive\n");
    return 2;
  }
  for (int i = 0; i < operands; ++i) {
    if (parse_shape(argv[4 + i], &operand[i])) {
      fprintf(stderr, "operand %d: '%s' is not a shape like 1x1x4096x64\n", i, argv[4 + i]);
      return 2;
    }
    Operand *op = &operand[i];
    op->sliced = op->rank == operand[0].rank && !memcmp(op->sizes, operand[0].sizes, op->rank * sizeof(int64_t));
    size_t elements = (size_t)(op->elements * (op->sliced ? slices : 1));
    op->buffer = aligned_alloc(64, (elements * sizeof(float) + 63) / 64 * 64);
    uint32_t state = 1 + i;
    for (size_t e = 0; e < elements; ++e) { // uniform in [-0.5, 0.5) from a 32-bit LCG: cheap, reproducible
      state = state * 1664525u + 1013904223u;
      op->buffer[e] = (float)(state >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }
  }
  double *times = calloc(repeat, sizeof(double));
  pthread_t workers[64];
  if (threads > 64)
    threads = 64;
  // The workers live for the whole run, as the runtime's pool does: a thread started per repeat would begin
  // with an empty temporaries cache and page-fault its first call's temporaries in at every repeat.
  repeats = repeat;
  pthread_barrier_init(&start_line, NULL, (unsigned)threads);
  pthread_barrier_init(&finish_line, NULL, (unsigned)threads);
  for (int64_t w = 1; w < threads; ++w)
    pthread_create(&workers[w], NULL, worker_loop, (void *)(intptr_t)w);
  for (int r = -1; r < repeat; ++r) { // run -1 is the warm-up: pages touched, caches primed
    pthread_barrier_wait(&start_line);
    double start = now_ms();
    run_range((void *)0);
    pthread_barrier_wait(&finish_line);
    if (r >= 0)
      times[r] = now_ms() - start;
  }
  for (int64_t w = 1; w < threads; ++w)
    pthread_join(workers[w], NULL);
  qsort(times, repeat, sizeof(double), compare);
  printf("median %.3f ms  min %.3f ms  (%lld slices of %s, %lld threads, %d runs)\n", times[repeat / 2], times[0],
         (long long)slices, argv[4], (long long)threads, repeat);
  return 0;
}
