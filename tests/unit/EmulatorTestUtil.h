//===- EmulatorTestUtil.h - Helpers for hand-written emulator kernels -----===//
#ifndef LA_TESTS_UNIT_EMULATORTESTUTIL_H
#define LA_TESTS_UNIT_EMULATORTESTUTIL_H

#include "la/emulator/ABI.h"
#include "la/emulator/Launch.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace la::emu::test {

template <typename T> T ldGlobal(const T *p, const char *loc) {
  T v;
  __la_emu_ld_global(&v, p, sizeof(T), loc);
  return v;
}
template <typename T> void stGlobal(T *p, T v, const char *loc) { __la_emu_st_global(p, &v, sizeof(T), loc); }
template <typename T> T ldShared(uint32_t offset, const char *loc) {
  T v;
  __la_emu_ld_shared(&v, offset, sizeof(T), loc);
  return v;
}
template <typename T> void stShared(uint32_t offset, T v, const char *loc) {
  __la_emu_st_shared(offset, &v, sizeof(T), loc);
}

inline uint32_t linearTid() {
  return __la_emu_tid_x() + __la_emu_ntid_x() * (__la_emu_tid_y() + __la_emu_ntid_y() * __la_emu_tid_z());
}

template <typename T> Buffer buffer(const char *name, std::vector<T> &v) {
  return Buffer{name, v.data(), v.size() * sizeof(T)};
}

/// Runs the launch and returns its report (the launch itself must be valid).
inline LaunchReport run(const Kernel &kernel, const LaunchConfig &config) {
  llvm::Expected<LaunchReport> report = launch(kernel, config);
  if (!report) {
    ADD_FAILURE() << llvm::toString(report.takeError());
    return {};
  }
  return std::move(*report);
}

/// The findings as one text, for failure messages and substring checks.
inline std::string text(const LaunchReport &report) {
  std::string all;
  for (const Finding &f : report.findings)
    all += f.str() + "\n";
  return all;
}

inline const Finding *find(const LaunchReport &report, FindingKind kind) {
  for (const Finding &f : report.findings)
    if (f.kind == kind)
      return &f;
  return nullptr;
}

} // namespace la::emu::test

#endif // LA_TESTS_UNIT_EMULATORTESTUTIL_H
