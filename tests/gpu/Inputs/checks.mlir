// Kernels for the emulator's checks, each faulty one beside its correct twin (tests/gpu/gpu-run-checks.test).
// 64 threads in one block; %out is memref<64xf32>.
module attributes {gpu.container_module} {
gpu.module @bounds {
  // Thread t stores to out[t + 1]: thread 63 writes one past the end.
  gpu.func @store_past_end(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %i = arith.addi %t, %c1 : index
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%i] : memref<64xf32>
    gpu.return
  }
  gpu.func @store_in_bounds(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%t] : memref<64xf32>
    gpu.return
  }
}

gpu.module @barriers {
  // Only the first warp reaches the barrier: a divergent barrier.
  gpu.func @barrier_in_branch(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %first = arith.cmpi ult, %t, %c32 : index
    scf.if %first {
      gpu.barrier
    }
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%t] : memref<64xf32>
    gpu.return
  }
  gpu.func @barrier_for_all(%out: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    gpu.barrier
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%t] : memref<64xf32>
    gpu.return
  }
}

gpu.module @shared {
  // Each thread reads its neighbour's slot. Without the barrier: a race, and reads of slots not yet written.
  gpu.func @neighbour_without_barrier(%out: memref<64xf32>)
      workgroup(%s: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %tf = arith.index_cast %t : index to i32
    %v = arith.sitofp %tf : i32 to f32
    memref.store %v, %s[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    %n0 = arith.addi %t, %c1 : index
    %n = arith.remui %n0, %c64 : index
    %w = memref.load %s[%n] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %out[%t] : memref<64xf32>
    gpu.return
  }
  gpu.func @neighbour_with_barrier(%out: memref<64xf32>)
      workgroup(%s: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %tf = arith.index_cast %t : index to i32
    %v = arith.sitofp %tf : i32 to f32
    memref.store %v, %s[%t] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %n0 = arith.addi %t, %c1 : index
    %n = arith.remui %n0, %c64 : index
    %w = memref.load %s[%n] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %out[%t] : memref<64xf32>
    gpu.return
  }
}

gpu.module @async {
  // Each thread copies 4 floats of %in into shared memory with cp.async and reads them back. Without the
  // wait the data is read before it has arrived.
  gpu.func @copy_without_wait(%in: memref<256xf32>, %out: memref<256xf32>)
      workgroup(%s: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %c4 = arith.constant 4 : index
    %i = arith.muli %t, %c4 : index
    %token = nvgpu.device_async_copy %in[%i], %s[%i], 4 : memref<256xf32> to memref<256xf32, #gpu.address_space<workgroup>>
    %group = nvgpu.device_async_create_group %token
    %v = vector.load %s[%i] : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    vector.store %v, %out[%i] : memref<256xf32>, vector<4xf32>
    gpu.return
  }
  gpu.func @copy_then_wait(%in: memref<256xf32>, %out: memref<256xf32>)
      workgroup(%s: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
    %t = gpu.thread_id x
    %c4 = arith.constant 4 : index
    %i = arith.muli %t, %c4 : index
    %token = nvgpu.device_async_copy %in[%i], %s[%i], 4 : memref<256xf32> to memref<256xf32, #gpu.address_space<workgroup>>
    %group = nvgpu.device_async_create_group %token
    nvgpu.device_async_wait %group
    %v = vector.load %s[%i] : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    vector.store %v, %out[%i] : memref<256xf32>, vector<4xf32>
    gpu.return
  }
}
}
