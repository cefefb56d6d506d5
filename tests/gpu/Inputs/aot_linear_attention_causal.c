/* Drives the AOT launcher lac writes for linear_attention_causal (tests/gpu/cuda-aot-c.test) against the stub
   driver: fake device pointers in, and the launches the stub records out. The arguments are how many
   parameters each launch passes, in launch order. */
#include "la_linear_attention_causal.h"

#include <stdio.h>
#include <stdlib.h>

extern const int *stub_parameter_counts;
extern int stub_parameter_kinds;

int main(int argc, char **argv) {
  size_t one = la_linear_attention_causal_scratch_bytes(1, 1), six = la_linear_attention_causal_scratch_bytes(2, 3);
  printf("scratch bytes: 1x1 slices %zu, 2x3 slices %zu\n", one, six);
  int counts[16];
  for (int i = 1; i < argc && i <= 16; ++i)
    counts[i - 1] = atoi(argv[i]);
  stub_parameter_counts = counts;
  stub_parameter_kinds = argc - 1;
  CUstream stream = (CUstream)0x5eed;
  CUresult first = la_linear_attention_causal(stream, 0x1000, 0x2000, 0x3000, 0x4000, 0x90000, 2, 3);
  printf("second call\n");
  CUresult second = la_linear_attention_causal(stream, 0x1000, 0x2000, 0x3000, 0x4000, 0x90000, 2, 3);
  CUresult none = la_linear_attention_causal(stream, 0x1000, 0x2000, 0x3000, 0x4000, 0x90000, 2, 0);
  CUresult unload = la_linear_attention_causal_unload();
  printf("results: %d %d %d %d\n", first, second, none, unload);
  return first || second || none || unload;
}
