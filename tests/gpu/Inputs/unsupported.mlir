// A kernel using an op the emulator does not run (nvvm.read.ptx.sreg.clock), for gpu-run-bad-input.test.
module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @timed(%out: memref<32xi32>) kernel {
    %t = gpu.thread_id x
    %c = nvvm.read.ptx.sreg.clock : i32
    memref.store %c, %out[%t] : memref<32xi32>
    gpu.return
  }
}
}
