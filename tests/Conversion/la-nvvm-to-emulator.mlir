// RUN: la-opt %s -split-input-file -la-nvvm-to-emulator -verify-diagnostics | FileCheck %s

// Thread state, barriers and warp collectives become ABI calls that carry the op's location; the kernel
// becomes a host function @<module>.<kernel> with its launch facts and a packed entry point.
module attributes {gpu.container_module} {
  gpu.module @m {
    llvm.func @collectives(%v: f32, %mask: i32) attributes {gpu.kernel, nvvm.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %lane = nvvm.read.ptx.sreg.laneid : i32
      %ws = nvvm.read.ptx.sreg.warpsize : i32
      nvvm.barrier0
      %one = llvm.mlir.constant(1 : i32) : i32
      %clamp = llvm.mlir.constant(31 : i32) : i32
      %s = nvvm.shfl.sync bfly %mask, %v, %one, %clamp : f32 -> f32
      %sp = nvvm.shfl.sync down %mask, %tid, %one, %clamp {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
      %p = llvm.icmp "eq" %lane, %ws : i32
      %b = nvvm.vote.sync ballot %mask, %p -> i32
      %r = nvvm.redux.sync add %tid, %mask : i32 -> i32
      nvvm.bar.warp.sync %mask : i32
      llvm.return
    }
  }
}
// CHECK-NOT: gpu.module
// The locations the findings print, one constant each, e.g. the barrier's:
// CHECK-DAG: llvm.mlir.global private constant @__la_emu_loc.{{[0-9]+}}("{{.*}}la-nvvm-to-emulator.mlir:11:7\00")
// CHECK-LABEL: llvm.func @m.collectives(%{{.*}}: f32, %{{.*}}: i32)
// CHECK-SAME: la_emu.block_size = array<i32: 64, 1, 1>, la_emu.kernel = "m::collectives", la_emu.shared_bytes = 0 : i64
// CHECK-NOT: nvvm.
// CHECK: llvm.call @__la_emu_tid_x() : () -> i32
// CHECK: llvm.call @__la_emu_laneid() : () -> i32
// CHECK: llvm.call @__la_emu_barrier0
// CHECK: %[[BITS:.*]] = llvm.bitcast %{{.*}} : f32 to i32
// CHECK: %[[SH:.*]] = llvm.call @__la_emu_shfl_sync(%{{.*}}, %{{.*}}, %[[BITS]], {{.*}}) : (i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.bitcast %[[SH]] : i32 to f32
// CHECK: llvm.call @__la_emu_shfl_sync
// CHECK: llvm.insertvalue %{{.*}}[1] : !llvm.struct<(i32, i1)>
// CHECK: llvm.icmp "eq" %{{.*}}, %{{.*}} : i32
// CHECK: llvm.call @__la_emu_vote_sync
// CHECK: llvm.call @__la_emu_redux_sync
// CHECK: llvm.call @__la_emu_bar_warp_sync
// CHECK-LABEL: llvm.func @m.collectives.call(%{{.*}}: !llvm.ptr)
// CHECK: llvm.call @m.collectives(%{{.*}}, %{{.*}}) : (f32, i32) -> ()

// -----

// Shared globals become offsets in one arena (16-byte aligned, zero-size dynamic memory last); shared
// accesses become ld/st_shared on those offsets, global ones ld/st_global on the host pointer, and the
// thread's own stack stays native. Address spaces are gone.
module attributes {gpu.container_module} {
  gpu.module @mem {
    llvm.mlir.global internal @dyn() {addr_space = 3 : i32} : !llvm.array<0 x f32>
    llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<10 x f32>
    llvm.mlir.global internal @flag() {addr_space = 3 : i32} : i32
    llvm.func @memory(%in: !llvm.ptr, %out: !llvm.ptr<1>) attributes {gpu.kernel} {
      %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
      %flag = llvm.mlir.addressof @flag : !llvm.ptr<3>
      %x = llvm.load %in : !llvm.ptr -> f32
      %c2 = llvm.mlir.constant(2 : i32) : i32
      %slot = llvm.getelementptr %tile[%c2] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      llvm.store %x, %slot : f32, !llvm.ptr<3>
      %y = llvm.load %slot : !llvm.ptr<3> -> f32
      %one = llvm.mlir.constant(1 : i32) : i32
      %old = llvm.atomicrmw add %flag, %one monotonic : !llvm.ptr<3>, i32
      %stack = llvm.alloca %one x f32 : (i32) -> !llvm.ptr
      llvm.store %y, %stack : f32, !llvm.ptr
      %z = llvm.load %stack : !llvm.ptr -> f32
      %w = llvm.intr.fma(%z, %z, %z) : (f32, f32, f32) -> f32
      llvm.store %w, %out : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
// CHECK-NOT: addr_space = 3
// CHECK-LABEL: llvm.func @mem.memory
// CHECK-SAME: (%[[IN:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr)
// CHECK-SAME: la_emu.shared_bytes = 64 : i64
// CHECK-NOT: !llvm.ptr<
// The arena: @tile at 0 (40 bytes), @flag at 48 (16-byte aligned), the zero-size @dyn at 64, the end.
// CHECK: %[[C0:.*]] = llvm.mlir.constant(0 : i64)
// CHECK-NEXT: %[[TILE:.*]] = llvm.inttoptr %[[C0]] : i64 to !llvm.ptr
// CHECK-NEXT: %[[C48:.*]] = llvm.mlir.constant(48 : i64)
// CHECK-NEXT: %[[FLAG:.*]] = llvm.inttoptr %[[C48]] : i64 to !llvm.ptr
// CHECK: llvm.call @__la_emu_ld_global(%{{.*}}, %[[IN]], %{{.*}}, %{{.*}})
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// CHECK: %[[OFF:.*]] = llvm.ptrtoint %[[SLOT]] : !llvm.ptr to i64
// CHECK: %[[OFF32:.*]] = llvm.trunc %[[OFF]] : i64 to i32
// CHECK: llvm.call @__la_emu_st_shared(%[[OFF32]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.call @__la_emu_ld_shared
// CHECK: llvm.call @__la_emu_atom_shared
// CHECK: %[[STACK:.*]] = llvm.alloca %{{.*}} x f32
// CHECK-NEXT: llvm.store %{{.*}}, %[[STACK]] : f32, !llvm.ptr
// CHECK-NEXT: llvm.load %[[STACK]] : !llvm.ptr -> f32
// CHECK: llvm.call @__la_emu_count_fma
// CHECK-NEXT: llvm.intr.fma
// CHECK: llvm.call @__la_emu_st_global(%[[OUT]], %{{.*}}, %{{.*}}, %{{.*}})

// -----

// A multiply whose one use is an add counts as an FMA (NVPTX contracts the pair into fma.rn); a multiply
// with two uses, or one that feeds no add, does not.
module attributes {gpu.container_module} {
  gpu.module @fused {
    llvm.func @fused(%a: vector<2xf32>, %b: f32, %out: !llvm.ptr<1>) attributes {gpu.kernel} {
      %m = llvm.fmul %a, %a : vector<2xf32>
      %s = llvm.fadd %m, %a : vector<2xf32>
      %n = llvm.fmul %b, %b : f32
      %d = llvm.fsub %n, %b : f32
      %two = llvm.fmul %b, %d : f32
      %u = llvm.fadd %two, %two : f32
      %lone = llvm.fmul %u, %u : f32
      llvm.store %s, %out : vector<2xf32>, !llvm.ptr<1>
      llvm.store %lone, %out : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
// CHECK-LABEL: llvm.func @fused.fused
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-NEXT: llvm.call @__la_emu_count_fma(%[[TWO]])
// CHECK-NEXT: llvm.fmul %{{.*}} : vector<2xf32>
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT: llvm.call @__la_emu_count_fma(%[[ONE]])
// CHECK-NEXT: llvm.fmul
// CHECK-NEXT: llvm.fsub
// CHECK-NOT: __la_emu_count_fma
// CHECK: llvm.return

// -----

// Tensor cores: fragments travel as 32-bit words through stack slots.
module attributes {gpu.container_module} {
  gpu.module @tc {
    llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<256 x f16>
    llvm.func @mma(%c0: f32) attributes {gpu.kernel} {
      %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
      %a = nvvm.ldmatrix %tile {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
      %b = nvvm.ldmatrix %tile {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 2 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
      %a0 = llvm.extractvalue %a[0] : !llvm.struct<(i32, i32, i32, i32)>
      %b0 = llvm.extractvalue %b[0] : !llvm.struct<(i32, i32)>
      %a16 = llvm.bitcast %a0 : i32 to vector<2xf16>
      %b16 = llvm.bitcast %b0 : i32 to vector<2xf16>
      %d = nvvm.mma.sync A[%a16, %a16, %a16, %a16] B[%b16, %b16] C[%c0, %c0, %c0, %c0] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      llvm.return
    }
  }
}
// CHECK-LABEL: llvm.func @tc.mma
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK: llvm.call @__la_emu_ldmatrix(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32, !llvm.ptr) -> ()
// CHECK: llvm.call @__la_emu_ldmatrix
// CHECK: llvm.call @__la_emu_mma_m16n8k16_f32_f16
// CHECK: llvm.insertvalue %{{.*}}[3] : !llvm.struct<(f32, f32, f32, f32)>

// -----

// What the emulator cannot run is an error at the op, every instance, and nothing is rewritten.
module attributes {gpu.container_module} {
  gpu.module @bad {
    llvm.func @unknown_call(f32) -> f32
    llvm.func @kernel(%p: !llvm.ptr<3>, %x: f32) attributes {gpu.kernel} {
      // expected-error @below {{la-nvvm-to-emulator: 'nvvm.read.ptx.sreg.clock' is not emulated}}
      %c = nvvm.read.ptx.sreg.clock : i32
      // expected-error @below {{la-nvvm-to-emulator: inline PTX is not emulated: "mov.u32 $0, 0;"}}
      %a = llvm.inline_asm "mov.u32 $0, 0;", "=r" : () -> i32
      // expected-error @below {{la-nvvm-to-emulator: call to 'unknown_call', which is neither defined in the gpu.module nor a libdevice function the emulator provides}}
      %y = llvm.call @unknown_call(%x) : (f32) -> f32
      // expected-error @below {{la-nvvm-to-emulator: a generic pointer to shared memory (addrspacecast from address space 3) is not emulated}}
      %g = llvm.addrspacecast %p : !llvm.ptr<3> to !llvm.ptr
      // A libdevice call is fine: the emulator defines it on the host.
      %e = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return
    }
    llvm.func @__nv_expf(f32) -> f32
  }
}

// -----

// A shape the tensor-core patterns do not run says which.
module attributes {gpu.container_module} {
  gpu.module @bad_mma {
    llvm.func @kernel(%a: vector<2xf16>, %c: vector<2xf16>) attributes {gpu.kernel} {
      // expected-error @below {{mma.sync.m16n8k16 with f16 inputs and '!llvm.struct<(vector<2xf16>, vector<2xf16>)>' results is not emulated}}
      // expected-error @below {{failed to legalize operation 'nvvm.mma.sync'}}
      %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>
      llvm.return
    }
  }
}
