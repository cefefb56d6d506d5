//===- Findings.h - Collects a launch's findings, counting repeats --------===//
//
// A kernel that races usually races in every warp of every block: the same two operations thousands of
// times. A finding is kept once per kind and set of (location, role) and counted after that, so a report
// stays readable and still says how often it happened.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIB_FINDINGS_H
#define LA_EMULATOR_LIB_FINDINGS_H

#include "la/emulator/LaunchReport.h"

#include "llvm/ADT/StringMap.h"

#include <vector>

namespace la::emu {

class FindingSink {
public:
  void add(Finding finding);
  /// Adds every finding of another sink (another block's), counting repeats.
  void merge(FindingSink &&other);
  std::vector<Finding> take() { return std::move(findings); }
  bool empty() const { return findings.empty(); }

private:
  std::vector<Finding> findings;
  llvm::StringMap<size_t> index; // key -> position in `findings`
};

} // namespace la::emu

#endif // LA_EMULATOR_LIB_FINDINGS_H
