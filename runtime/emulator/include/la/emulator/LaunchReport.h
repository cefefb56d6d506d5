//===- LaunchReport.h - What a launch on the GPU emulator found and counted ===//
//
// A launch returns a LaunchReport: every finding of the checks (races, out-of-bounds accesses, divergent
// barriers, deadlocks, uninitialised shared reads, cp.async data read before its wait) and the counters the
// CUDA backend's performance model reads. takeError() turns the findings into an llvm::Error, one
// EmulatorFinding per finding, so `lac` and tests report them as any other error.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LAUNCHREPORT_H
#define LA_EMULATOR_LAUNCHREPORT_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace la::emu {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
  friend bool operator==(const Dim3 &a, const Dim3 &b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
};

enum class FindingKind {
  SharedRaceRAW,
  SharedRaceWAR,
  SharedRaceWAW,
  OutOfBoundsGlobalLoad,
  OutOfBoundsGlobalStore,
  OutOfBoundsSharedLoad,
  OutOfBoundsSharedStore,
  UninitialisedSharedRead,
  CpAsyncReadBeforeWait,
  MisalignedCpAsync,
  DivergentBarrier,
  DivergentWarpCollective,
  Deadlock,
};

/// The words a report uses for a kind: "shared-memory race (RAW)", "out-of-bounds global store", ...
llvm::StringRef kindName(FindingKind kind);

/// One thread at one operation: who did what where.
struct ThreadSite {
  Dim3 block;
  Dim3 thread;
  std::string loc;  // file:line:col as the kernel passed it
  std::string what; // "write", "read", "waits at barrier 0", ...
};

struct Finding {
  FindingKind kind;
  std::string detail;            // the address or barrier involved
  std::vector<ThreadSite> sites; // the operations involved, earliest first
  uint64_t occurrences = 1;      // identical findings (same kind and locations) are counted, not repeated

  /// "shared-memory race (RAW) at shared[0x40]: write at k.mlir:3:5 by block (0,0,0) thread (1,0,0); ..."
  std::string str() const;
  llvm::json::Value toJSON() const;
};

/// Per-launch counters (all threads of all blocks).
struct Counters {
  uint64_t globalBytesLoaded = 0, globalBytesStored = 0;
  uint64_t sharedBytesLoaded = 0, sharedBytesStored = 0;
  uint64_t mmaSync = 0;   // warp-level mma.sync instructions
  uint64_t mmaFlops = 0;  // 2*m*n*k per mma.sync
  uint64_t fma = 0;       // __la_emu_count_fma
  uint64_t shuffles = 0;  // warp-level shfl.sync instructions
  uint64_t barriers = 0;  // completed block barriers (bar.sync / barrier0)
  uint64_t warpSyncs = 0; // completed bar.warp.sync
  uint64_t votes = 0, reductions = 0, ldmatrix = 0, atomics = 0, fences = 0, cpAsyncBytes = 0;

  Counters &operator+=(const Counters &o);
  llvm::json::Value toJSON() const;
};

class LaunchReport {
public:
  std::vector<Finding> findings;
  Counters counters;
  uint64_t seed = 0;

  bool clean() const { return findings.empty(); }
  /// Every finding as one EmulatorFinding error, joined; success when there is none.
  llvm::Error takeError() const;
  /// {"seed": .., "counters": {..}, "findings": [..]}
  llvm::json::Value toJSON() const;
};

/// An llvm::Error payload for one finding.
class EmulatorFinding : public llvm::ErrorInfo<EmulatorFinding> {
public:
  static char ID;
  explicit EmulatorFinding(Finding finding) : finding(std::move(finding)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  const Finding &get() const { return finding; }

private:
  Finding finding;
};

} // namespace la::emu

#endif // LA_EMULATOR_LAUNCHREPORT_H
