//===- ABI.h - The C ABI a kernel calls to run on the GPU emulator --------===//
//
// Every NVVM operation of a kernel becomes a call to one of these functions (the NVVM -> emulator rewrite
// generates them; the tests write them by hand). They act on the calling CUDA thread, which is the fiber
// the emulator is running: calling them outside a launch is a programming error (they abort).
//
// Conventions:
//  - `loc` is the source location of the operation, "file:line:col" (any string; kept by pointer for the
//    duration of the launch, so pass a string literal or a string that outlives the launch). Findings name it.
//  - Global memory is addressed by host pointers; each access is checked against the launch's buffers.
//  - Shared memory is addressed by byte offsets into the block's arena (PTX's shared window), of
//    LaunchConfig::sharedBytes bytes.
//  - Warp collectives take the PTX membermask; every lane named in it must reach the same collective.
//  - f16/bf16 values travel as their bits (uint16_t), two per uint32_t (low half first), as in PTX registers.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_ABI_H
#define LA_EMULATOR_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Special registers (PTX %tid, %ntid, %ctaid, %nctaid, %laneid, %warpid, %nwarpid).
uint32_t __la_emu_tid_x(void);
uint32_t __la_emu_tid_y(void);
uint32_t __la_emu_tid_z(void);
uint32_t __la_emu_ntid_x(void);
uint32_t __la_emu_ntid_y(void);
uint32_t __la_emu_ntid_z(void);
uint32_t __la_emu_ctaid_x(void);
uint32_t __la_emu_ctaid_y(void);
uint32_t __la_emu_ctaid_z(void);
uint32_t __la_emu_nctaid_x(void);
uint32_t __la_emu_nctaid_y(void);
uint32_t __la_emu_nctaid_z(void);
uint32_t __la_emu_laneid(void);
// The warp of the thread in its block: the linear thread id / 32 (what %warpid is on every current GPU).
uint32_t __la_emu_warpid(void);
uint32_t __la_emu_nwarpid(void);
// The lanes of the calling warp that have not exited.
uint32_t __la_emu_activemask(void);

// Barriers. barrier0 is `bar.sync 0` (every thread of the block). `bar.sync id, count` waits for `count`
// threads at barrier `id` (count 0: every thread of the block). `bar.warp.sync mask` (__syncwarp).
void __la_emu_barrier0(const char *loc);
void __la_emu_bar_sync(uint32_t id, uint32_t count, const char *loc);
void __la_emu_bar_warp_sync(uint32_t membermask, const char *loc);

// shfl.sync.{up,down,bfly,idx}.b32 d|p, a, b, c, membermask. `c` packs the clamp value (bits 4:0) and the
// segment mask (bits 12:8) as in PTX. Returns d; *pred (may be null) receives p.
enum {
  LA_EMU_SHFL_UP = 0,
  LA_EMU_SHFL_DOWN = 1,
  LA_EMU_SHFL_BFLY = 2,
  LA_EMU_SHFL_IDX = 3,
};
uint32_t __la_emu_shfl_sync(uint32_t mode, uint32_t membermask, uint32_t a, uint32_t b, uint32_t c, int32_t *pred,
                            const char *loc);

// vote.sync.{all,any,uni}.pred and vote.sync.ballot.b32.
enum {
  LA_EMU_VOTE_ALL = 0,
  LA_EMU_VOTE_ANY = 1,
  LA_EMU_VOTE_UNI = 2,
  LA_EMU_VOTE_BALLOT = 3,
};
uint32_t __la_emu_vote_sync(uint32_t mode, uint32_t membermask, int32_t pred, const char *loc);

// redux.sync.{add,min,max}.{u32,s32} and redux.sync.{and,or,xor}.b32.
enum {
  LA_EMU_REDUX_ADD = 0,
  LA_EMU_REDUX_UMIN = 1,
  LA_EMU_REDUX_UMAX = 2,
  LA_EMU_REDUX_MIN = 3, // signed
  LA_EMU_REDUX_MAX = 4, // signed
  LA_EMU_REDUX_AND = 5,
  LA_EMU_REDUX_OR = 6,
  LA_EMU_REDUX_XOR = 7,
};
uint32_t __la_emu_redux_sync(uint32_t op, uint32_t membermask, uint32_t value, const char *loc);

// Loads and stores of `bytes` bytes (any size) through the emulator: counted and checked. An out-of-bounds
// store is dropped, an out-of-bounds load gives zeros.
void __la_emu_ld_global(void *dst, const void *addr, uint32_t bytes, const char *loc);
void __la_emu_st_global(void *addr, const void *src, uint32_t bytes, const char *loc);
void __la_emu_ld_shared(void *dst, uint32_t offset, uint32_t bytes, const char *loc);
void __la_emu_st_shared(uint32_t offset, const void *src, uint32_t bytes, const char *loc);

// atom.{global,shared}.<op>.<type>: returns the old value (zero-extended to 64 bits; f32/f64 as their bits).
// `compare` is read by CAS only. Atomics never race with each other.
enum {
  LA_EMU_ATOM_ADD = 0,
  LA_EMU_ATOM_MIN = 1,
  LA_EMU_ATOM_MAX = 2,
  LA_EMU_ATOM_EXCH = 3,
  LA_EMU_ATOM_CAS = 4,
  LA_EMU_ATOM_AND = 5,
  LA_EMU_ATOM_OR = 6,
  LA_EMU_ATOM_XOR = 7,
};
enum {
  LA_EMU_TYPE_U32 = 0,
  LA_EMU_TYPE_S32 = 1,
  LA_EMU_TYPE_U64 = 2,
  LA_EMU_TYPE_S64 = 3,
  LA_EMU_TYPE_F32 = 4,
  LA_EMU_TYPE_F64 = 5,
};
uint64_t __la_emu_atom_global(uint32_t op, uint32_t type, void *addr, uint64_t value, uint64_t compare,
                              const char *loc);
uint64_t __la_emu_atom_shared(uint32_t op, uint32_t type, uint32_t offset, uint64_t value, uint64_t compare,
                              const char *loc);

// fence.{cta,gpu,sys} / membar: orders this thread's memory accesses (and is a scheduling point).
void __la_emu_fence(const char *loc);

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: `rowOffset` is this lane's row address (lanes
// 0..8*num-1 give the rows of the num 8x8 matrices); dst[i] receives this lane's part of matrix i.
void __la_emu_ldmatrix(uint32_t *dst, uint32_t num, int32_t trans, uint32_t rowOffset, const char *loc);

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32: this lane's fragments in the PTX ISA
// layout: a[4] (8 halves), b[2] (4 halves), c[4] and d[4] f32. d may alias c.
void __la_emu_mma_m16n8k16_f32_f16(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc);
void __la_emu_mma_m16n8k16_f32_bf16(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc);
// mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32: a[2], b[1]; and .f32.tf32.tf32.f32: a[4], b[2] (f32 bits;
// the low 13 mantissa bits are ignored, as by the tensor core).
void __la_emu_mma_m16n8k8_f32_f16(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc);
void __la_emu_mma_m16n8k8_f32_tf32(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc);

// wmma m16n16k16 with f16 inputs (wmma.load.{a,b,c}, wmma.mma, wmma.store.d). PTX leaves the fragment layout
// unspecified, so the emulator has its own (docs/gpu-emulator.md); only these functions read fragments.
// Fragment sizes per lane are NVVM's: A and B 8 registers (16 f16), C/D 8 f32 or 4 registers (8 f16).
// `ptr` is a host pointer (space 0, global) or a shared offset (space 1); `stride` counts elements;
// `colMajor` 0 for .row, 1 for .col.
enum {
  LA_EMU_WMMA_A = 0,
  LA_EMU_WMMA_B = 1,
  LA_EMU_WMMA_C = 2,
};
enum {
  LA_EMU_SPACE_GLOBAL = 0,
  LA_EMU_SPACE_SHARED = 1,
};
// `f32`: the C fragment is f32 (else f16); ignored for A and B.
void __la_emu_wmma_load(uint32_t *frag, uint32_t which, int32_t colMajor, int32_t f32, uint32_t space, uint64_t ptr,
                        uint32_t stride, const char *loc);
// D = A * B + C; `f32`: C and D are f32 (else f16).
void __la_emu_wmma_mma(uint32_t *d, const uint32_t *a, const uint32_t *b, const uint32_t *c, int32_t f32,
                       const char *loc);
void __la_emu_wmma_store(const uint32_t *frag, int32_t colMajor, int32_t f32, uint32_t space, uint64_t ptr,
                         uint32_t stride, const char *loc);

// cp.async.{ca,cg}.shared.global [sharedDst], [globalSrc], bytes, srcBytes: copies srcBytes bytes and fills
// the rest of `bytes` with zeros. The destination is written only when a cp.async.wait_group that covers it
// returns; reading it before is a finding.
void __la_emu_cp_async(uint32_t sharedDst, const void *globalSrc, uint32_t bytes, uint32_t srcBytes, const char *loc);
void __la_emu_cp_async_commit_group(void);
// cp.async.wait_group n: waits until at most n of this thread's committed groups are pending.
void __la_emu_cp_async_wait_group(uint32_t n, const char *loc);
// cp.async.wait_all: commits the pending copies and waits for every group.
void __la_emu_cp_async_wait_all(const char *loc);

// Counts `n` fused multiply-adds for the launch counters (the rewrite calls it for each FMA it sees; the
// arithmetic itself runs natively).
void __la_emu_count_fma(uint64_t n);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // LA_EMULATOR_ABI_H
