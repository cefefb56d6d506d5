// C[64x32] += A[64x64] * B[32x64]^T in f16 with f32 accumulators, written as vector.contract on tiles staged
// in shared memory. The tests do not run this file as it is: upstream MLIR's
// convert-vector-to-gpu{use-nvgpu} turns the transfer_reads into nvgpu.ldmatrix and the contraction into
// nvgpu.mma.sync, with its own fragment index math. That generated code is what lac gpu-run executes, so
// its numbers check the emulator's fragment layouts against upstream's (which are the hardware's).
//
// One warp per 16x8 tile of C (grid 4x4), k in steps of 16. Each step: every thread copies its share of the
// A and B tiles into shared memory, a barrier, the contraction, a barrier (so the next step's copy does not
// overwrite what a slower lane still reads).
#mapA = affine_map<(m, n, k) -> (m, k)>
#mapB = affine_map<(m, n, k) -> (n, k)>
#mapC = affine_map<(m, n, k) -> (m, n)>
module attributes {gpu.container_module} {
gpu.module @gemm {
  gpu.func @gemm(%A: memref<64x64xf16>, %B: memref<32x64xf16>, %C: memref<64x32xf32>)
      workgroup(%sa: memref<16x16xf16, #gpu.address_space<workgroup>>,
                %sb: memref<8x16xf16, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %f16zero = arith.constant 0.0 : f16
    %f32zero = arith.constant 0.0 : f32
    %tid = gpu.thread_id x
    %bx = gpu.block_id x
    %by = gpu.block_id y
    %m0 = affine.apply affine_map<()[s0] -> (s0 * 16)>()[%bx]
    %n0 = affine.apply affine_map<()[s0] -> (s0 * 8)>()[%by]
    %acc0 = vector.transfer_read %C[%m0, %n0], %f32zero {in_bounds = [true, true]}
        : memref<64x32xf32>, vector<16x8xf32>
    %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%acc_k = %acc0) -> (vector<16x8xf32>) {
      // Thread t copies 8 halves of A's tile (row t/2, columns 8(t%2)..) and 4 of B's (row t/4, 4(t%4)..).
      %ar = affine.apply affine_map<()[s0] -> (s0 floordiv 2)>()[%tid]
      %ac = affine.apply affine_map<()[s0] -> ((s0 mod 2) * 8)>()[%tid]
      %gar = affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%m0, %ar]
      %gac = affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%k, %ac]
      %va = vector.load %A[%gar, %gac] : memref<64x64xf16>, vector<8xf16>
      vector.store %va, %sa[%ar, %ac] : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      %br = affine.apply affine_map<()[s0] -> (s0 floordiv 4)>()[%tid]
      %bc = affine.apply affine_map<()[s0] -> ((s0 mod 4) * 4)>()[%tid]
      %gbr = affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%n0, %br]
      %gbc = affine.apply affine_map<()[s0, s1] -> (s0 + s1)>()[%k, %bc]
      %vb = vector.load %B[%gbr, %gbc] : memref<32x64xf16>, vector<4xf16>
      vector.store %vb, %sb[%br, %bc] : memref<8x16xf16, #gpu.address_space<workgroup>>, vector<4xf16>
      gpu.barrier // STAGE-BARRIER: the tiles are complete before any lane reads them
      %a = vector.transfer_read %sa[%c0, %c0], %f16zero {in_bounds = [true, true]}
          : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
      %b = vector.transfer_read %sb[%c0, %c0], %f16zero {in_bounds = [true, true]}
          : memref<8x16xf16, #gpu.address_space<workgroup>>, vector<8x16xf16>
      %d = vector.contract {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"],
                            kind = #vector.kind<add>} %a, %b, %acc_k
          : vector<16x16xf16>, vector<8x16xf16> into vector<16x8xf32>
      gpu.barrier
      scf.yield %d : vector<16x8xf32>
    }
    vector.transfer_write %acc, %C[%m0, %n0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<64x32xf32>
    gpu.return
  }
}
}
