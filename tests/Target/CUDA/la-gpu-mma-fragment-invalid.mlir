// RUN: la-opt %s -split-input-file -verify-diagnostics

func.func @origin_rank(%m: memref<16x64xf16>, %i: index) -> vector<4x2xf16> {
  // expected-error @+1 {{has 1 origin indices for a source of rank 2}}
  %f = la_gpu.mma_fragment %m[%i] lane %i {row_dim = 0, k_dim = 1} : memref<16x64xf16> -> vector<4x2xf16>
  return %f : vector<4x2xf16>
}

// -----

func.func @same_dims(%m: memref<16x64xf16>, %i: index) -> vector<4x2xf16> {
  // expected-error @+1 {{row_dim 1 and k_dim 1 must be two different dimensions of the rank-2 source}}
  %f = la_gpu.mma_fragment %m[%i, %i] lane %i {row_dim = 1, k_dim = 1} : memref<16x64xf16> -> vector<4x2xf16>
  return %f : vector<4x2xf16>
}

// -----

func.func @registers(%m: memref<16x64xf16>, %i: index) -> vector<3x2xf16> {
  // expected-error @+1 {{has 3 registers: an A operand has 4, a B operand 2}}
  %f = la_gpu.mma_fragment %m[%i, %i] lane %i {row_dim = 0, k_dim = 1} : memref<16x64xf16> -> vector<3x2xf16>
  return %f : vector<3x2xf16>
}

// -----

func.func @packing(%m: memref<16x64xf16>, %i: index) -> vector<4x1xf16> {
  // expected-error @+1 {{does not pack 1 elements of 16 bits into each 32-bit register}}
  %f = la_gpu.mma_fragment %m[%i, %i] lane %i {row_dim = 0, k_dim = 1} : memref<16x64xf16> -> vector<4x1xf16>
  return %f : vector<4x1xf16>
}

// -----

func.func @negative_dim(%m: memref<16x64xf16>, %i: index) -> vector<4x2xf16> {
  // expected-error @+1 {{row_dim -1 and k_dim 1 must be two different dimensions of the rank-2 source}}
  %f = la_gpu.mma_fragment %m[%i, %i] lane %i {row_dim = -1, k_dim = 1} : memref<16x64xf16> -> vector<4x2xf16>
  return %f : vector<4x2xf16>
}

// -----

func.func @map_argument(%m: memref<16x64xf16>, %i: index) -> vector<4x2xf16> {
  // expected-error @+1 {{map must be one block with one argument of the source element type 'f16'}}
  %f = la_gpu.mma_fragment %m[%i, %i] lane %i {row_dim = 0, k_dim = 1} : memref<16x64xf16> -> vector<4x2xf16> map {
  ^bb0(%x: f32):
    la_gpu.yield %x : f32
  }
  return %f : vector<4x2xf16>
}
