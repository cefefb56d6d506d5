//===- Symbols.cpp - The name and address of every emulator entry point ---===//
//
// The ABI.h functions are listed by hand (a C header has no list to generate them from);
// EmulatorLibdeviceTest parses ABI.h and fails when a function declared there is missing here. The libdevice
// functions come from Libdevice.def, so they cannot drift apart.
//
//===----------------------------------------------------------------------===//
#include "la/emulator/Symbols.h"

#include "la/emulator/ABI.h"

#include "LibdeviceDecls.h"

using namespace la::emu;

// Converting a function pointer to void * is conditionally supported in C++, and supported by every
// compiler for the targets that run the emulator (POSIX requires it for dlsym).
#define LA_EMU_SYMBOL(FN) {#FN, reinterpret_cast<void *>(&FN)}

static const Symbol kSymbols[] = {
    // Special registers
    LA_EMU_SYMBOL(__la_emu_tid_x),
    LA_EMU_SYMBOL(__la_emu_tid_y),
    LA_EMU_SYMBOL(__la_emu_tid_z),
    LA_EMU_SYMBOL(__la_emu_ntid_x),
    LA_EMU_SYMBOL(__la_emu_ntid_y),
    LA_EMU_SYMBOL(__la_emu_ntid_z),
    LA_EMU_SYMBOL(__la_emu_ctaid_x),
    LA_EMU_SYMBOL(__la_emu_ctaid_y),
    LA_EMU_SYMBOL(__la_emu_ctaid_z),
    LA_EMU_SYMBOL(__la_emu_nctaid_x),
    LA_EMU_SYMBOL(__la_emu_nctaid_y),
    LA_EMU_SYMBOL(__la_emu_nctaid_z),
    LA_EMU_SYMBOL(__la_emu_laneid),
    LA_EMU_SYMBOL(__la_emu_warpid),
    LA_EMU_SYMBOL(__la_emu_nwarpid),
    LA_EMU_SYMBOL(__la_emu_activemask),
    // Barriers and warp collectives
    LA_EMU_SYMBOL(__la_emu_barrier0),
    LA_EMU_SYMBOL(__la_emu_bar_sync),
    LA_EMU_SYMBOL(__la_emu_bar_warp_sync),
    LA_EMU_SYMBOL(__la_emu_shfl_sync),
    LA_EMU_SYMBOL(__la_emu_vote_sync),
    LA_EMU_SYMBOL(__la_emu_redux_sync),
    // Memory
    LA_EMU_SYMBOL(__la_emu_ld_global),
    LA_EMU_SYMBOL(__la_emu_st_global),
    LA_EMU_SYMBOL(__la_emu_ld_shared),
    LA_EMU_SYMBOL(__la_emu_st_shared),
    LA_EMU_SYMBOL(__la_emu_atom_global),
    LA_EMU_SYMBOL(__la_emu_atom_shared),
    LA_EMU_SYMBOL(__la_emu_fence),
    // Tensor cores
    LA_EMU_SYMBOL(__la_emu_ldmatrix),
    LA_EMU_SYMBOL(__la_emu_mma_m16n8k16_f32_f16),
    LA_EMU_SYMBOL(__la_emu_mma_m16n8k16_f32_bf16),
    LA_EMU_SYMBOL(__la_emu_mma_m16n8k8_f32_f16),
    LA_EMU_SYMBOL(__la_emu_mma_m16n8k8_f32_tf32),
    LA_EMU_SYMBOL(__la_emu_wmma_load),
    LA_EMU_SYMBOL(__la_emu_wmma_mma),
    LA_EMU_SYMBOL(__la_emu_wmma_store),
    // cp.async
    LA_EMU_SYMBOL(__la_emu_cp_async),
    LA_EMU_SYMBOL(__la_emu_cp_async_commit_group),
    LA_EMU_SYMBOL(__la_emu_cp_async_wait_group),
    LA_EMU_SYMBOL(__la_emu_cp_async_wait_all),
    // Counters
    LA_EMU_SYMBOL(__la_emu_count_fma),
// libdevice
#define LA_EMU_LIBDEVICE(NAME, HOST, RESULT, ...) LA_EMU_SYMBOL(NAME),
#include "la/emulator/Libdevice.def"
};

llvm::ArrayRef<Symbol> la::emu::abiSymbols() { return kSymbols; }
