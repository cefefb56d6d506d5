/* Drives the AOT launcher lac writes for linear_attention_causal (tests/gpu/cuda-aot-c.test) against the stub
   driver: fake device pointers in, and the launch the stub records out. */
#include "la_linear_attention_causal.h"

#include <stdio.h>

extern int stub_parameter_count;

int main(void) {
  size_t one = la_linear_attention_causal_scratch_bytes(1, 1), six = la_linear_attention_causal_scratch_bytes(2, 3);
  printf("scratch bytes: 1x1 slices %zu, 2x3 slices %zu\n", one, six);
  if (one == 0 || six != 6 * one)
    return 1;
  stub_parameter_count = 5;
  CUstream stream = (CUstream)0x5eed;
  CUresult first = la_linear_attention_causal(stream, 0x1000, 0x2000, 0x3000, 0x4000, 0x9000, 2, 3);
  CUresult second = la_linear_attention_causal(stream, 0x1000, 0x2000, 0x3000, 0x4000, 0x9000, 2, 3);
  CUresult none = la_linear_attention_causal(stream, 0x1000, 0x2000, 0x3000, 0x4000, 0x9000, 2, 0);
  CUresult unload = la_linear_attention_causal_unload();
  printf("results: %d %d %d %d\n", first, second, none, unload);
  return first || second || none || unload;
}
