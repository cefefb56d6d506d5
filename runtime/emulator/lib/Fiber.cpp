//===- Fiber.cpp - fcontext switches with sanitizer annotations -----------===//
#include "Fiber.h"

#include <boost/context/detail/fcontext.hpp>

#include "llvm/Support/ErrorHandling.h"

#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define LA_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LA_EMU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define LA_EMU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LA_EMU_TSAN 1
#endif
#endif

#ifdef LA_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef LA_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace bctx = boost::context::detail;
using namespace la::emu;

namespace {
size_t pageSize() {
  static const size_t size = sysconf(_SC_PAGESIZE);
  return size;
}

// The first instruction of every fiber: t.fctx is the scheduler's context, t.data the Fiber.
void fiberEntry(bctx::transfer_t t) { static_cast<Fiber *>(t.data)->enter(t.fctx); }
} // namespace

Fiber::Fiber(size_t requested, Entry entry, void *arg) : entry(entry), arg(arg) {
  // Pages are committed on first touch, so a large stack costs only what the thread uses; the lowest page is
  // a guard, so an overflow faults instead of corrupting the next fiber's stack.
  stackBytes = (requested + pageSize() - 1) / pageSize() * pageSize() + pageSize();
  stack =
      mmap(nullptr, stackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    llvm::report_fatal_error("GPU emulator: cannot map a fiber stack");
  mprotect(stack, pageSize(), PROT_NONE);
  context = bctx::make_fcontext(static_cast<char *>(stack) + stackBytes, stackBytes - pageSize(), fiberEntry);
#ifdef LA_EMU_TSAN
  tsanFiber = __tsan_create_fiber(0);
#endif
}

Fiber::~Fiber() {
#ifdef LA_EMU_TSAN
  __tsan_destroy_fiber(tsanFiber);
#endif
#ifdef LA_EMU_ASAN
  // The frames of enter() never return, so their redzones stay poisoned; the next mapping at this address
  // must not inherit them.
  __asan_unpoison_memory_region(stack, stackBytes);
#endif
  munmap(stack, stackBytes);
}

void Fiber::resume() {
#ifdef LA_EMU_ASAN
  void *fakeStack = nullptr;
  __sanitizer_start_switch_fiber(&fakeStack, static_cast<char *>(stack) + pageSize(), stackBytes - pageSize());
#endif
#ifdef LA_EMU_TSAN
  tsanCaller = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsanFiber, 0);
#endif
  bctx::transfer_t t = bctx::jump_fcontext(context, this);
#ifdef LA_EMU_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, nullptr, nullptr);
#endif
  context = t.fctx;
}

void Fiber::enter(void *callerContext) {
  caller = callerContext;
#ifdef LA_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &callerStackBottom, &callerStackSize);
#endif
  entry(arg);
  done = true;
  switchToCaller(/*final=*/true);
  llvm_unreachable("a finished fiber was resumed");
}

void Fiber::suspend() { switchToCaller(/*final=*/false); }

void Fiber::switchToCaller(bool final) {
#ifdef LA_EMU_ASAN
  // A finished fiber's fake stack is released (null save slot).
  __sanitizer_start_switch_fiber(final ? nullptr : &asanFakeStack, callerStackBottom, callerStackSize);
#endif
#ifdef LA_EMU_TSAN
  __tsan_switch_to_fiber(tsanCaller, 0);
#endif
  bctx::transfer_t t = bctx::jump_fcontext(caller, nullptr);
  // Resumed: the scheduler may run on another part of its stack now.
  caller = t.fctx;
#ifdef LA_EMU_ASAN
  __sanitizer_finish_switch_fiber(asanFakeStack, &callerStackBottom, &callerStackSize);
#endif
  (void) final;
}
