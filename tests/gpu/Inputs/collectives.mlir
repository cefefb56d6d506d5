// Kernels written with the gpu dialect's collectives, for gpu-run-collectives.test: the lowering tail must
// accept gpu.shuffle in every mode, gpu.lane_id and gpu.subgroup_mma_* on global and shared memory.
module attributes {gpu.container_module} {
gpu.module @reduce {
  // out[0] = sum(in[0..1023]): 256 threads add 4 elements each, warps reduce with shuffle down, the 8 warp
  // sums meet in shared memory, and the first warp adds them with a butterfly (xor).
  gpu.func @block_sum(%in: memref<1024xf32>, %out: memref<1xf32>)
      workgroup(%partial: memref<8xf32, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %t = gpu.thread_id x
    %lane = gpu.lane_id
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c32i = arith.constant 32 : i32
    %zero = arith.constant 0.0 : f32
    %c1i = arith.constant 1 : i32
    %c2i = arith.constant 2 : i32
    %c4i = arith.constant 4 : i32
    %c8i = arith.constant 8 : i32
    %c16i = arith.constant 16 : i32
    %base = arith.muli %t, %c4 : index
    %v4 = vector.load %in[%base] : memref<1024xf32>, vector<4xf32>
    %own = vector.reduction <add>, %v4 : vector<4xf32> into f32
    %s16, %p16 = gpu.shuffle down %own, %c16i, %c32i : f32
    %a16 = arith.addf %own, %s16 : f32
    %s8, %p8 = gpu.shuffle down %a16, %c8i, %c32i : f32
    %a8 = arith.addf %a16, %s8 : f32
    %s4, %p4 = gpu.shuffle down %a8, %c4i, %c32i : f32
    %a4 = arith.addf %a8, %s4 : f32
    %s2, %p2 = gpu.shuffle down %a4, %c2i, %c32i : f32
    %a2 = arith.addf %a4, %s2 : f32
    %s1, %p1 = gpu.shuffle down %a2, %c1i, %c32i : f32
    %warpSum = arith.addf %a2, %s1 : f32
    %warp = arith.divui %t, %c32 : index
    %isLeader = arith.cmpi eq, %lane, %c0 : index
    scf.if %isLeader {
      memref.store %warpSum, %partial[%warp] : memref<8xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %firstWarp = arith.cmpi ult, %t, %c32 : index
    scf.if %firstWarp {
      %inRange = arith.cmpi ult, %lane, %c8 : index
      %p = scf.if %inRange -> f32 {
        %x = memref.load %partial[%lane] : memref<8xf32, #gpu.address_space<workgroup>>
        scf.yield %x : f32
      } else {
        scf.yield %zero : f32
      }
      %x4, %q4 = gpu.shuffle xor %p, %c4i, %c32i : f32
      %b4 = arith.addf %p, %x4 : f32
      %x2, %q2 = gpu.shuffle xor %b4, %c2i, %c32i : f32
      %b2 = arith.addf %b4, %x2 : f32
      %x1, %q1 = gpu.shuffle xor %b2, %c1i, %c32i : f32
      %total = arith.addf %b2, %x1 : f32
      %isFirst = arith.cmpi eq, %t, %c0 : index
      scf.if %isFirst {
        memref.store %total, %out[%c0] : memref<1xf32>
      }
    }
    gpu.return
  }
}

gpu.module @scan {
  // One warp: out[t] = in[0] + ... + in[t] (shuffle up), out[32 + t] = the warp's total (shuffle idx from
  // lane 31).
  gpu.func @warp_scan(%in: memref<32xf32>, %out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %lane = gpu.lane_id
    %c32 = arith.constant 32 : index
    %c32i = arith.constant 32 : i32
    %c31i = arith.constant 31 : i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %c1i = arith.constant 1 : i32
    %x = memref.load %in[%lane] : memref<32xf32>
    %laneI = arith.index_cast %lane : index to i32
    %v = scf.for %step = %c0 to %c5 step %c1 iter_args(%acc = %x) -> (f32) {
      %stepI = arith.index_cast %step : index to i32
      %d = arith.shli %c1i, %stepI : i32
      %y, %valid = gpu.shuffle up %acc, %d, %c32i : f32
      %take = arith.cmpi sge, %laneI, %d : i32
      %sum = arith.addf %acc, %y : f32
      %next = arith.select %take, %sum, %acc : f32
      scf.yield %next : f32
    }
    memref.store %v, %out[%lane] : memref<64xf32>
    %total, %ok = gpu.shuffle idx %v, %c31i, %c32i : f32
    %hi = arith.addi %lane, %c32 : index
    memref.store %total, %out[%hi] : memref<64xf32>
    gpu.return
  }
}

gpu.module @wmma {
  // D = A * B (16x16x16, f16 inputs, f32 accumulators) with the subgroup MMA ops, fragments on global memory.
  gpu.func @tile(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %d: memref<16x16xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %fa = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
    %fb = gpu.subgroup_mma_load_matrix %b[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
    %fc = gpu.subgroup_mma_constant_matrix %zero : !gpu.mma_matrix<16x16xf32, "COp">
    %fd = gpu.subgroup_mma_compute %fa, %fb, %fc : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
    gpu.subgroup_mma_store_matrix %fd, %d[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32>
    gpu.return
  }
}

gpu.module @wmma_shared {
  // The same product with both operands staged in shared memory first (wmma.load from shared).
  gpu.func @tile(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %d: memref<16x16xf32>)
      workgroup(%sa: memref<16x16xf16, #gpu.address_space<workgroup>>, %sb: memref<16x16xf16, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
    %lane = gpu.lane_id
    %row = arith.divui %lane, %c2 : index
    %half = arith.remui %lane, %c2 : index
    %col = arith.muli %half, %c8 : index
    %ra = vector.load %a[%row, %col] : memref<16x16xf16>, vector<8xf16>
    vector.store %ra, %sa[%row, %col] : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<8xf16>
    %rb = vector.load %b[%row, %col] : memref<16x16xf16>, vector<8xf16>
    vector.store %rb, %sb[%row, %col] : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<8xf16>
    gpu.barrier
    %fa = gpu.subgroup_mma_load_matrix %sa[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
    %fb = gpu.subgroup_mma_load_matrix %sb[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
    %fc = gpu.subgroup_mma_constant_matrix %zero : !gpu.mma_matrix<16x16xf32, "COp">
    %fd = gpu.subgroup_mma_compute %fa, %fb, %fc : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
    gpu.subgroup_mma_store_matrix %fd, %d[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32>
    gpu.return
  }
}

gpu.module @math {
  // out[t] = exp(in[t]) * sqrt(|in[t]|): math ops lower to libdevice calls (__nv_expf, __nv_sqrtf or the
  // llvm.sqrt intrinsic), which the emulator defines on the host.
  gpu.func @exp_sqrt(%in: memref<64xf32>, %out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %t = gpu.thread_id x
    %x = memref.load %in[%t] : memref<64xf32>
    %e = math.exp %x : f32
    %a = math.absf %x : f32
    %r = math.sqrt %a : f32
    %y = arith.mulf %e, %r : f32
    memref.store %y, %out[%t] : memref<64xf32>
    gpu.return
  }
}
}
