//===- NativeTarget.h - register the host's LLVM target once -----*- C++ -*-===//
//
// Internal to the runtime. LLVM's target registration is not thread-safe (TargetRegistry::RegisterTarget
// checks and links the target into a global list without a lock), so the compiler and the JIT loader must
// share one std::once_flag: with one each, a compile on one thread and a disk-cache load on another could
// register the same target at the same time in a fresh process.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_NATIVETARGET_H
#define LA_RUNTIME_LIB_NATIVETARGET_H

namespace la {

/// Registers the host target and its asm printer, once per process, whoever asks first.
void initializeNativeTarget();

} // namespace la

#endif // LA_RUNTIME_LIB_NATIVETARGET_H
