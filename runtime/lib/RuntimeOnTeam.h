//===- RuntimeOnTeam.h - runtimes that share one team of worker threads -*- C++ -*-===//
//
// Runtime::create gives each runtime a team of its own (ForkJoinTeam.h). The tuner keeps one runtime per
// contender and calls them in turn, interleaved call for call; with a team each, 2 threads became 2 per
// contender, and the worker of the runtime just called was still spinning while the next one's call ran.
// That disturbed whole measurements: at 2 threads, the default's interleaved time doubled in bursts (0.71–0.85
// ms, then 1.55 ms for one candidate's 50 ms), which made a candidate with the same speed look 1.6–1.9×
// faster (docs/BENCHMARKS.md, session 31). Runtimes on one team run as a deployment would, on as many threads
// as it has.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_RUNTIMEONTEAM_H
#define LA_RUNTIME_RUNTIMEONTEAM_H

#include "la/runtime/Runtime.h"

#include <memory>

namespace la {

class ForkJoinTeam;

/// The threads a runtime with `options` runs slices on, the caller's included: numThreads, or one per
/// hardware thread for 0.
unsigned resolvedThreadCount(const RuntimeOptions &options);

/// The team of worker threads a runtime with `options` would own (null for one thread), to share among
/// runtimes that are never called at the same time (a call that finds the team busy runs on its own thread).
std::shared_ptr<ForkJoinTeam> makeWorkerTeam(const RuntimeOptions &options);

/// Runtime::create, with every call's slices run on `team` (from makeWorkerTeam for the same thread count)
/// instead of a team of its own.
llvm::Expected<std::unique_ptr<Runtime>> createRuntimeOnTeam(RuntimeOptions options,
                                                             std::shared_ptr<ForkJoinTeam> team);

} // namespace la

#endif // LA_RUNTIME_RUNTIMEONTEAM_H
