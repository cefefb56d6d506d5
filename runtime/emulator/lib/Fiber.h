//===- Fiber.h - One CUDA thread's stack and execution context ------------===//
//
// A fiber is a function with its own stack that the block scheduler resumes and that suspends itself back
// to the scheduler. Switching is boost.context's fcontext (a few instructions, no system call, unlike
// ucontext). The sanitizers are told about every switch: ASan must know which stack is live (else it
// reports the fiber's frames as stack-buffer-overflows and mishandles fake stacks), TSan which fiber runs
// (a switch also orders memory, as the scheduler does).
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIB_FIBER_H
#define LA_EMULATOR_LIB_FIBER_H

#include <cstddef>

namespace la::emu {

class Fiber {
public:
  using Entry = void (*)(void *arg);
  Fiber(size_t stackBytes, Entry entry, void *arg);
  ~Fiber();
  Fiber(const Fiber &) = delete;
  Fiber &operator=(const Fiber &) = delete;

  /// From the scheduler: runs the fiber until it suspends or its entry returns.
  void resume();
  /// From inside the fiber: back to the scheduler (returns at the next resume()).
  void suspend();
  bool finished() const { return done; }

  /// The fiber's first moments on its own stack (called by the fcontext entry point only).
  [[noreturn]] void enter(void *callerContext);

private:
  /// Saves this fiber's context and jumps to the scheduler; `final` when the fiber never runs again.
  void switchToCaller(bool final);

  void *stack = nullptr; // lowest address of the mapping (a guard page)
  size_t stackBytes;
  void *context = nullptr; // the fiber's saved fcontext while it is suspended
  void *caller = nullptr;  // the scheduler's saved fcontext while the fiber runs
  Entry entry;
  void *arg;
  bool done = false;

  // AddressSanitizer: the fiber's fake stack while suspended, and the scheduler's stack.
  void *asanFakeStack = nullptr;
  const void *callerStackBottom = nullptr;
  size_t callerStackSize = 0;
  // ThreadSanitizer: this fiber's and the scheduler's contexts.
  void *tsanFiber = nullptr;
  void *tsanCaller = nullptr;
};

} // namespace la::emu

#endif // LA_EMULATOR_LIB_FIBER_H
